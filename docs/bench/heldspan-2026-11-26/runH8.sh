#!/bin/bash
# Run H8: the shipped code (held steps' launches restart the linger; a sixteenth, a margin both
# ways; tries ever further apart) on the eager PyTorch service beside GEMM and Llama training:
# L alone, static, the default, never held; one round; the learner's report and steps kept.
set -u
PRIO_T0=$(date +%s.%N)
export PRIO_T0
J=build/.jsonc
make -j16 "JSONC_CFLAGS=-I$J/include -I$J/include/json-c" JSONC_LIBS=$J/lib/libjson-c.a all >$OUT/build.log 2>&1 || { tail -30 $OUT/build.log; exit 1; }
echo "built $(date +%T)"
mkdir -p /tmp/steps
PRIO_STEP_TRACE=/tmp/steps PRIO_MIN_REQUESTS=eager=300 PRIO_ROUNDS=1 PRIO_L=torch PRIO_H=torch,llama PRIO_CONFIG_FILE=tests/bench/prio/bridge.json PRIO_KINDS=eager PRIO_CASES=L-alone-whole,static,prio-debug,prio-hold0 timeout 330 make "JSONC_CFLAGS=-I$J/include -I$J/include/json-c" JSONC_LIBS=$J/lib/libjson-c.a bench-prio PRIO_SET=round5 PRIO_BUDGET_S=290 PRIO_TIMEOUT_S=320 BENCH_OUT=/tmp/b > $OUT/bench.out 2>&1
echo "bench rc $? $(date +%T)"
sed -n '/== L /,/^Cells/p' /tmp/b/prio/summary.txt
sed -n '/^   L.s p50/,/^   targets/p' /tmp/b/prio/summary.txt | head -14
mkdir -p /tmp/x && tar -C /tmp/x -xJf /tmp/b/prio/raw.tar.xz && grep -H "bridges held\|median" /tmp/x/raw/*/l-*.log | cut -c1-300
cp /tmp/b/prio/summary.txt $OUT/ 2>/dev/null
tar -C /tmp -czf $OUT/steps.tgz steps
pgrep -a nvidia-cuda-mps | grep -v defunct && echo "MPS daemons still running"
nvidia-smi --query-gpu=name --format=csv,noheader
exit 0
