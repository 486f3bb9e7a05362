#!/bin/bash
# Run E6: held steps (learnt, and forced either way) and static partitions on eager steps.
set -u
J=build/.jsonc
make -j16 "JSONC_CFLAGS=-I$J/include -I$J/include/json-c" JSONC_LIBS=$J/lib/libjson-c.a all >$OUT/build.log 2>&1 || { tail -30 $OUT/build.log; exit 1; }
echo "built $(date +%T)"
export NVTASKSET_BRIDGE_DEBUG=1
P=""
for g in 5 10 20; do P="$P alone-eager-g$g-product gemm-eager-g$g-product gemm-eager-g$g-hold1"; done
P="$P gemm-eager-g40-product gemm-eager-g10-hold0 alone-eager-g10-hold1 alone-eager-g10-hold0"
P="$P alone-small-pre40-product gemm-small-pre40-product alone-small-pre40-hold1 gemm-small-pre40-hold1"
P="$P alone-small-product gemm-small-product gemm-decode-product alone-long8-product gemm-long8-product gemm-long8-hold1"
for g in 0 5 10 20 40; do P="$P static-eager-g$g"; done
P="$P static-alone-eager-g5 static-alone-eager-g10 static-alone-eager-g20 static-small static-alone-small"
timeout 540 tests/bench/timeline/run.sh $OUT/tl $P > $OUT/run.txt 2>&1
echo "rc $? $(date +%T)"
cat $OUT/tl/timeline.txt
for f in $OUT/tl/*.log; do echo "== $(basename $f .log): $(grep -h 'bridges held\|bridge: [0-9]* waits' $f | cut -c1-260 | tr '\n' ' ')"; done
grep -h "rc" $OUT/tl/*.log $OUT/tl/*.blog | sort | uniq -c | head -20
cd $OUT && tar czf tl.tgz tl && rm -rf tl
pgrep -a nvidia-cuda-mps
nvidia-smi --query-gpu=name --format=csv,noheader
