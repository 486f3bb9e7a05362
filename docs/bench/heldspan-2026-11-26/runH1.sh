#!/bin/bash
# Run H1: a held step's launches restart its bridge's linger (up to 1 ms after the wait
# returned): eager steps whose host outlasts the 300 us linger (g20, g40), and beyond 1 ms (g80),
# default / never held / always held / static / alone; the bridge's trace says how each ended.
set -u
J=build/.jsonc
make -j16 "JSONC_CFLAGS=-I$J/include -I$J/include/json-c" JSONC_LIBS=$J/lib/libjson-c.a all >$OUT/build.log 2>&1 || { tail -30 $OUT/build.log; exit 1; }
echo "built $(date +%T) $(git log --oneline -1 | cut -c1-60)"
P=""
for ph in eager-g20 eager-g40 eager-g80; do
	P="$P gemm-$ph-product gemm-$ph-hold0 gemm-$ph-hold1 static-$ph alone-$ph-product"
done
for ph in eager-g5 eager-g10 small-pre40 small long8; do
	P="$P gemm-$ph-product gemm-$ph-hold0"
done
mkdir -p /tmp/h1tr
NVTASKSET_BRIDGE_TRACE=/tmp/h1tr/tr NVTASKSET_BRIDGE_DEBUG=1 timeout 420 tests/bench/timeline/run.sh $OUT/tl $P > $OUT/run.txt 2>&1
echo "rc $? $(date +%T)"
cat $OUT/tl/timeline.txt
for f in $OUT/tl/*.log; do echo "== $(basename $f .log): $(grep -h 'bridges held\|bridge trace:' $f | cut -c1-220 | tr '\n' ' ')"; done
grep -h "rc" $OUT/tl/*.log $OUT/tl/*.blog 2>/dev/null | sort | uniq -c | head
tar czf $OUT/tr.tgz -C /tmp h1tr 2>/dev/null
cd $OUT && tar czf tl.tgz tl && rm -rf tl && cd - >/dev/null || exit 1
pgrep -a nvidia-cuda-mps; nvidia-smi --query-gpu=name --format=csv,noheader
