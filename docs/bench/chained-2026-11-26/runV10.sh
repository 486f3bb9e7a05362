#!/bin/bash
# Run V10: held steps chained (the code of V9): bench-prio's round5 set beside GEMM training with
# eager added, as run V1: L alone, static, MPS client priority, the default (prio-nopart).
set -u
PRIO_T0=$(date +%s.%N)
export PRIO_T0
J=build/.jsonc
MK=("JSONC_CFLAGS=-I$J/include -I$J/include/json-c" "JSONC_LIBS=$J/lib/libjson-c.a")
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
make -j16 "${MK[@]}" all >$OUT/build.log 2>&1 || { tail -30 $OUT/build.log; exit 1; }
echo "built $(date +%T)"
PRIO_MIN_REQUESTS=150,tbt7b=80 PRIO_ROUNDS=1 PRIO_L=torch PRIO_H=torch PRIO_KINDS=decode,prefill:poisson,tbt:poisson,tbt7b:poisson,async:poisson,asyncside:poisson,eager PRIO_CASES=L-alone-whole,static,mps-cp,prio-nopart timeout 420 make "${MK[@]}" bench-prio PRIO_SET=round5 PRIO_BUDGET_S=400 PRIO_TIMEOUT_S=415 BENCH_OUT=/tmp/b > $OUT/bench.out 2>&1
echo "bench rc $? $(date +%T)"
sed -n '/== L /,/^Cells/p' /tmp/b/prio/summary.txt | grep -v "^Cells"
cp /tmp/b/prio/summary.txt $OUT/ 2>/dev/null
cp /tmp/b/prio/raw.tar.xz $OUT/raw.tar.xz
pgrep -a nvidia-cuda-mps | grep -v defunct && echo "MPS daemons still running"
exit 0
