#!/bin/bash
# Run H5: the shipped learner (tries ever further apart) on the
# eager PyTorch service and token by token (tbt) beside GEMM training: L alone, static,
# the default, never held; one round.
set -u
PRIO_T0=$(date +%s.%N)
export PRIO_T0
J=build/.jsonc
make -j16 "JSONC_CFLAGS=-I$J/include -I$J/include/json-c" JSONC_LIBS=$J/lib/libjson-c.a all >$OUT/build.log 2>&1 || { tail -30 $OUT/build.log; exit 1; }
echo "built $(date +%T)"
PRIO_MIN_REQUESTS=eager=300,tbt=300 PRIO_ROUNDS=1 PRIO_L=torch PRIO_H=torch PRIO_CONFIG_FILE=tests/bench/prio/bridge.json PRIO_KINDS=eager,tbt PRIO_CASES=L-alone-whole,static,prio-debug,prio-hold0 timeout 480 make "JSONC_CFLAGS=-I$J/include -I$J/include/json-c" JSONC_LIBS=$J/lib/libjson-c.a bench-prio PRIO_SET=round5 PRIO_BUDGET_S=420 PRIO_TIMEOUT_S=470 BENCH_OUT=/tmp/b > $OUT/bench.out 2>&1
echo "bench rc $? $(date +%T)"
cat /tmp/b/prio/summary.txt | head -80
grep -rh "bridges held\|median of its last" /tmp/b/prio/ 2>/dev/null | sort | uniq -c | head -20
cp /tmp/b/prio/summary.txt $OUT/ 2>/dev/null
pgrep -a nvidia-cuda-mps | grep -v defunct && echo "MPS daemons still running"
nvidia-smi --query-gpu=name --format=csv,noheader
exit 0
