#!/bin/bash
# Run V8: the code of V7 again: check-gpu-bridge; the timeline's eager-g40 and eager-g5 default
# phases chained three times and unchained once (the learner's choice); the eager PyTorch
# service beside Llama and GEMM training: L alone, static, the default chained and unchained.
set -u
PRIO_T0=$(date +%s.%N)
export PRIO_T0
J=build/.jsonc
MK=("JSONC_CFLAGS=-I$J/include -I$J/include/json-c" "JSONC_LIBS=$J/lib/libjson-c.a")
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
make -j16 "${MK[@]}" all >$OUT/build.log 2>&1 || { tail -30 $OUT/build.log; exit 1; }
echo "built $(date +%T)"
timeout 150 tests/gpu/bridge.sh /tmp/g > $OUT/check-gpu-bridge.txt 2>&1; echo "check-gpu-bridge rc $? $(date +%T)"
grep -v "^nvtaskset: bridge\|^copyapp" $OUT/check-gpu-bridge.txt | tail -4
for r in 1 2 3; do
	NVTASKSET_BRIDGE_DEBUG=1 timeout 30 tests/bench/timeline/run.sh /tmp/tl$r gemm-eager-g40-product gemm-eager-g5-product > /dev/null 2>&1
done
NVTASKSET_BRIDGE_REARM=0 NVTASKSET_BRIDGE_DEBUG=1 timeout 30 tests/bench/timeline/run.sh /tmp/tl0 gemm-eager-g40-product gemm-eager-g5-product > /dev/null 2>&1
echo "timelines $(date +%T)"
for d in /tmp/tl1 /tmp/tl2 /tmp/tl3 /tmp/tl0; do echo "== $d"; cut -c1-118 $d/timeline.txt | tail -2
	for f in $d/*.log; do echo "   $(basename $f .log): $(grep -h 'bridges held\|median' $f | sed 's/nvtaskset: bridge: //' | tr '\n' ' ' | cut -c1-230)"; done; done | tee $OUT/timeline.txt
mkdir -p /tmp/steps
PRIO_T0=$(date +%s.%N)
PRIO_STEP_TRACE=/tmp/steps PRIO_MIN_REQUESTS=160 PRIO_ROUNDS=1 PRIO_L=torch PRIO_H=llama,torch PRIO_CONFIG_FILE=tests/bench/prio/bridge.json PRIO_KINDS=eager PRIO_CASES=L-alone-whole,static,prio-debug,prio-unchained timeout 330 make "${MK[@]}" bench-prio PRIO_SET=round5-llama PRIO_BUDGET_S=300 PRIO_TIMEOUT_S=320 BENCH_OUT=/tmp/b > $OUT/bench.out 2>&1
echo "bench rc $? $(date +%T)"
sed -n '/== L /,/^Cells/p' /tmp/b/prio/summary.txt | grep -v "^Cells"
grep -A6 "L's p50 / p99" /tmp/b/prio/summary.txt | head -16
cp /tmp/b/prio/summary.txt $OUT/ 2>/dev/null
mkdir -p /tmp/x && tar -C /tmp/x -xJf /tmp/b/prio/raw.tar.xz && grep -H "bridges held\|median" /tmp/x/raw/*/l-*.log | sed 's/nvtaskset: bridge: //; s|/tmp/x/raw/||' | cut -c1-300 > $OUT/bridge.txt
cat $OUT/bridge.txt
python3 docs/bench/shipped-2026-11-26/steps.py /tmp/steps | tee $OUT/steps.txt
tar -C /tmp -cJf $OUT/raw.tar.xz steps b/prio/raw.tar.xz tl1 tl2 tl3 tl0 2>/dev/null
pgrep -a nvidia-cuda-mps | grep -v defunct && echo "MPS daemons still running"
exit 0
