#!/bin/bash
# Run P2: held steps chained once seen (the default, prio-debug) against never (prio-unchained),
# side by side with L alone and static partitions: eager (periodic, Poisson) and token by token
# (Poisson) beside Llama and GEMM training, one round, the code of P1.
set -u
PRIO_T0=$(date +%s.%N)
export PRIO_T0
J=build/.jsonc
MK=("JSONC_CFLAGS=-I$J/include -I$J/include/json-c" "JSONC_LIBS=$J/lib/libjson-c.a")
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
make -j16 "${MK[@]}" all >$OUT/build.log 2>&1 || { tail -30 $OUT/build.log; exit 1; }
echo "built $(date +%T)"
mkdir -p /tmp/steps
PRIO_STEP_TRACE=/tmp/steps PRIO_MIN_REQUESTS=160 PRIO_ROUNDS=1 PRIO_L=torch PRIO_H=llama,torch PRIO_CONFIG_FILE=tests/bench/prio/bridge.json PRIO_KINDS=eager,tbt:poisson PRIO_CASES=L-alone-whole,static,prio-debug,prio-unchained timeout 560 make "${MK[@]}" bench-prio PRIO_SET=round5-llama PRIO_BUDGET_S=520 PRIO_TIMEOUT_S=550 BENCH_OUT=/tmp/b > $OUT/bench.out 2>&1
echo "bench rc $? $(date +%T)"
sed -n '/== L /,/^Cells/p' /tmp/b/prio/summary.txt | grep -v "^Cells"
grep -A6 "L's p50 / p99" /tmp/b/prio/summary.txt | grep -v "^--\|targets"
cp /tmp/b/prio/summary.txt $OUT/ 2>/dev/null
mkdir -p /tmp/x && tar -C /tmp/x -xJf /tmp/b/prio/raw.tar.xz && grep -H "bridges held\|median\|launch calls" /tmp/x/raw/*/l-*.log | sed 's/nvtaskset: bridge: //; s|/tmp/x/raw/||' | cut -c1-300 > $OUT/bridge.txt
cut -c1-200 $OUT/bridge.txt | grep "launch calls"
python3 docs/bench/shipped-2026-11-26/steps.py /tmp/steps > $OUT/steps.txt 2>&1; head -40 $OUT/steps.txt
tar -C /tmp -cJf $OUT/raw.tar.xz steps b/prio/raw.tar.xz 2>/dev/null
pgrep -a nvidia-cuda-mps | grep -v defunct && echo "MPS daemons still running"
exit 0
