#!/bin/bash
# Run H6: the eager PyTorch service beside GEMM training again, with the learner's report kept:
# L alone, the default, never held, always held; one round, each step's time recorded.
set -u
PRIO_T0=$(date +%s.%N)
export PRIO_T0
J=build/.jsonc
make -j16 "JSONC_CFLAGS=-I$J/include -I$J/include/json-c" JSONC_LIBS=$J/lib/libjson-c.a all >$OUT/build.log 2>&1 || { tail -30 $OUT/build.log; exit 1; }
echo "built $(date +%T)"
mkdir -p /tmp/steps
PRIO_STEP_TRACE=/tmp/steps PRIO_MIN_REQUESTS=eager=300 PRIO_ROUNDS=1 PRIO_L=torch PRIO_H=torch PRIO_CONFIG_FILE=tests/bench/prio/bridge.json PRIO_KINDS=eager PRIO_CASES=L-alone-whole,prio-debug,prio-hold0,prio-hold1 timeout 400 make "JSONC_CFLAGS=-I$J/include -I$J/include/json-c" JSONC_LIBS=$J/lib/libjson-c.a bench-prio PRIO_SET=round5 PRIO_BUDGET_S=330 PRIO_TIMEOUT_S=380 BENCH_OUT=/tmp/b > $OUT/bench.out 2>&1
echo "bench rc $? $(date +%T)"
sed -n '/== L /,/^Cells/p' /tmp/b/prio/summary.txt
sed -n '/^   L.s p50/,/^   targets/p' /tmp/b/prio/summary.txt | head -12
mkdir -p /tmp/x && tar -C /tmp/x -xJf /tmp/b/prio/raw.tar.xz && grep -H "bridge" /tmp/x/raw/*/l-*.log | cut -c1-400
cp /tmp/b/prio/summary.txt $OUT/ 2>/dev/null
tar -C /tmp -czf $OUT/steps.tgz steps
pgrep -a nvidia-cuda-mps | grep -v defunct && echo "MPS daemons still running"
nvidia-smi --query-gpu=name --format=csv,noheader
exit 0
