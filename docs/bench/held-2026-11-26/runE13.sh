#!/bin/bash
# Run E13: the eager service's periodic requests beside GEMM training with each step's time
# recorded (PRIO_STEP_TRACE): where the default's tail comes from. L alone, the default (debug
# report), never held; one round, 400 requests.
set -u
PRIO_T0=$(date +%s.%N)
export PRIO_T0
J=build/.jsonc
make -j16 "JSONC_CFLAGS=-I$J/include -I$J/include/json-c" JSONC_LIBS=$J/lib/libjson-c.a all >$OUT/build.log 2>&1 || { tail -30 $OUT/build.log; exit 1; }
echo "built $(date +%T)"
mkdir -p /tmp/steps
PRIO_STEP_TRACE=/tmp/steps PRIO_MIN_REQUESTS=eager=400 PRIO_ROUNDS=1 PRIO_L=torch PRIO_H=torch PRIO_CONFIG_FILE=tests/bench/prio/bridge.json PRIO_KINDS=eager:periodic PRIO_CASES=L-alone-whole,prio-debug,prio-hold0 timeout 400 make "JSONC_CFLAGS=-I$J/include -I$J/include/json-c" JSONC_LIBS=$J/lib/libjson-c.a bench-prio PRIO_SET=round5 PRIO_BUDGET_S=330 PRIO_TIMEOUT_S=380 BENCH_OUT=/tmp/b > $OUT/bench.out 2>&1
echo "bench rc $? $(date +%T)"
sed -n '/== L /,/^Cells/p' /tmp/b/prio/summary.txt
ls /tmp/steps
tar -C /tmp -czf $OUT/steps.tgz steps
cp /tmp/b/prio/summary.txt $OUT/ 2>/dev/null
pgrep -a nvidia-cuda-mps | grep -v defunct && echo "MPS daemons still running"
exit 0
