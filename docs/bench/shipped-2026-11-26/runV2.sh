#!/bin/bash
# Run V2: check-gpu-bridge, then bench-prio's round5 set beside Hugging Face Llama training with
# eager added: L alone, static, MPS client priority, the default with its bridge's debug lines
# (prio-debug); one round, fresh processes.
set -u
PRIO_T0=$(date +%s.%N)
export PRIO_T0
J=build/.jsonc
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
make -j16 "JSONC_CFLAGS=-I$J/include -I$J/include/json-c" JSONC_LIBS=$J/lib/libjson-c.a all >$OUT/build.log 2>&1 || { tail -30 $OUT/build.log; exit 1; }
echo "built $(date +%T) $(git rev-parse --short HEAD 2>/dev/null)"
timeout 150 tests/gpu/bridge.sh /tmp/g > $OUT/check-gpu-bridge.txt 2>&1; echo "check-gpu-bridge rc $? $(date +%T)"
grep -v "^nvtaskset: bridge\|^copyapp" $OUT/check-gpu-bridge.txt | tail -8
PRIO_T0=$(date +%s.%N)
PRIO_MIN_REQUESTS=150,tbt7b=80 PRIO_ROUNDS=1 PRIO_L=torch PRIO_H=llama PRIO_CONFIG_FILE=tests/bench/prio/bridge.json PRIO_KINDS=decode,prefill:poisson,tbt:poisson,tbt7b:poisson,async:poisson,asyncside:poisson,eager PRIO_CASES=L-alone-whole,static,mps-cp,prio-debug timeout 405 make "JSONC_CFLAGS=-I$J/include -I$J/include/json-c" JSONC_LIBS=$J/lib/libjson-c.a bench-prio PRIO_SET=round5-llama PRIO_BUDGET_S=380 PRIO_TIMEOUT_S=395 BENCH_OUT=/tmp/b > $OUT/bench.out 2>&1
echo "bench rc $? $(date +%T)"
sed -n '/== L /,/^Cells/p' /tmp/b/prio/summary.txt
cp /tmp/b/prio/summary.txt $OUT/ 2>/dev/null
mkdir -p /tmp/x && tar -C /tmp/x -xJf /tmp/b/prio/raw.tar.xz && grep -H "bridges held\|median" /tmp/x/raw/*/l-*.log | cut -c1-300 > $OUT/bridge.txt
cp /tmp/b/prio/raw.tar.xz $OUT/raw.tar.xz
pgrep -a nvidia-cuda-mps | grep -v defunct && echo "MPS daemons still running"
exit 0
