#!/bin/bash
# Run P3: bench-prio's round5 kinds (eager left out) beside GEMM training, one round: L alone,
# the default (prio-debug: held steps chained once seen), never chained (prio-unchained), chained
# from the start (prio-chained); the code of P1.
set -u
PRIO_T0=$(date +%s.%N)
export PRIO_T0
J=build/.jsonc
MK=("JSONC_CFLAGS=-I$J/include -I$J/include/json-c" "JSONC_LIBS=$J/lib/libjson-c.a")
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
make -j16 "${MK[@]}" all >$OUT/build.log 2>&1 || { tail -30 $OUT/build.log; exit 1; }
echo "built $(date +%T)"
PRIO_MIN_REQUESTS=150,tbt7b=80 PRIO_ROUNDS=1 PRIO_L=torch PRIO_H=torch PRIO_CONFIG_FILE=tests/bench/prio/bridge.json PRIO_KINDS=decode,prefill:poisson,tbt:poisson,tbt7b:poisson,async:poisson,asyncside:poisson PRIO_CASES=L-alone-whole,prio-debug,prio-unchained,prio-chained timeout 560 make "${MK[@]}" bench-prio PRIO_SET=round5 PRIO_BUDGET_S=520 PRIO_TIMEOUT_S=550 BENCH_OUT=/tmp/b > $OUT/bench.out 2>&1
echo "bench rc $? $(date +%T)"
sed -n '/== L /,/^Cells/p' /tmp/b/prio/summary.txt | grep -v "^Cells"
grep -A9 "L's p50 / p99" /tmp/b/prio/summary.txt | grep -v "^--\|targets" | head -12
cp /tmp/b/prio/summary.txt $OUT/ 2>/dev/null
mkdir -p /tmp/x && tar -C /tmp/x -xJf /tmp/b/prio/raw.tar.xz && grep -H "bridges held\|median\|launch calls" /tmp/x/raw/*/l-*.log | sed 's/nvtaskset: bridge: //; s|/tmp/x/raw/||' | cut -c1-300 > $OUT/bridge.txt
cut -c1-200 $OUT/bridge.txt | grep "launch calls"
cp /tmp/b/prio/raw.tar.xz $OUT/raw.tar.xz
pgrep -a nvidia-cuda-mps | grep -v defunct && echo "MPS daemons still running"
exit 0
