#!/bin/bash
# Run H4: the shipped learner (held steps' launches restart the linger; a sixteenth; tries ever
# further apart) beside never held on the timeline's phases (requests' p99 and the tries), then
# make check-gpu-bridge (bridgeword's held cases included).
set -u
J=build/.jsonc
make -j16 "JSONC_CFLAGS=-I$J/include -I$J/include/json-c" JSONC_LIBS=$J/lib/libjson-c.a all >$OUT/build.log 2>&1 || { tail -30 $OUT/build.log; exit 1; }
echo "built $(date +%T)"
P=""
for ph in eager-g5 eager-g10 eager-g40 small-pre40 small decode long8; do
	P="$P gemm-$ph-product gemm-$ph-hold0"
done
P="$P alone-eager-g10-product alone-long8-product"
NVTASKSET_BRIDGE_DEBUG=1 timeout 300 tests/bench/timeline/run.sh $OUT/tl $P > $OUT/run.txt 2>&1
echo "rc $? $(date +%T)"
cat $OUT/tl/timeline.txt
for f in $OUT/tl/*.log; do echo "== $(basename $f .log): $(grep -h 'bridges held\|median' $f | cut -c1-200 | tr '\n' ' ')"; done
grep -h "rc" $OUT/tl/*.log $OUT/tl/*.blog 2>/dev/null | sort | uniq -c | head
cd $OUT && tar czf tl.tgz tl && rm -rf tl && cd - >/dev/null || exit 1
timeout 280 make check-gpu-bridge GPU_LOG=/tmp/gpu > $OUT/check-gpu-bridge.txt 2>&1; echo "check-gpu-bridge rc $? $(date +%T)"
grep -E "PASS|FAIL|failed|passed|Error" $OUT/check-gpu-bridge.txt | tail -30
pgrep -a nvidia-cuda-mps | grep -v defunct; nvidia-smi --query-gpu=name --format=csv,noheader
