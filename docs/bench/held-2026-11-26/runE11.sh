#!/bin/bash
# Run E11 (E7 again on the learner whose steps are timed whole, a try that would turn the way tried again): the previous default (NVTASKSET_BRIDGE_HOLD=0) beside the learnt one on the same
# phases, then make check-gpu-bridge.
set -u
J=build/.jsonc
make -j16 "JSONC_CFLAGS=-I$J/include -I$J/include/json-c" JSONC_LIBS=$J/lib/libjson-c.a all >$OUT/build.log 2>&1 || { tail -30 $OUT/build.log; exit 1; }
echo "built $(date +%T)"
P=""
for ph in eager-g5 eager-g10 eager-g20 eager-g40 small-pre40 small decode long8; do
	P="$P gemm-$ph-product gemm-$ph-hold0"
done
P="$P alone-eager-g10-product alone-eager-g10-hold0 static-eager-g10 static-alone-eager-g10 alone-eager-g5-product static-eager-g5 alone-small-pre40-product alone-long8-product"
NVTASKSET_BRIDGE_DEBUG=1 timeout 300 tests/bench/timeline/run.sh $OUT/tl $P > $OUT/run.txt 2>&1
echo "rc $? $(date +%T)"
cat $OUT/tl/timeline.txt
for f in $OUT/tl/*.log; do echo "== $(basename $f .log): $(grep -h 'bridges held' $f | cut -c1-200)"; done
grep -h "rc" $OUT/tl/*.log $OUT/tl/*.blog | sort | uniq -c | head
cd $OUT && tar czf tl.tgz tl && rm -rf tl && cd - >/dev/null || exit 1
timeout 280 make check-gpu-bridge GPU_LOG=$OUT/gpu > $OUT/check-gpu-bridge.txt 2>&1; echo "check-gpu-bridge rc $?"
grep -E "PASS|FAIL|failed|ok|not ok" $OUT/check-gpu-bridge.txt | tail -40
pgrep -a nvidia-cuda-mps; nvidia-smi --query-gpu=name --format=csv,noheader
