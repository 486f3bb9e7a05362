#!/bin/bash
# Run V3: the eager PyTorch service beside Hugging Face Llama training: L alone, static, the
# default (debug lines), never held, always held; one round, steps traced.
set -u
PRIO_T0=$(date +%s.%N)
export PRIO_T0
J=build/.jsonc
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
make -j16 "JSONC_CFLAGS=-I$J/include -I$J/include/json-c" JSONC_LIBS=$J/lib/libjson-c.a all >$OUT/build.log 2>&1 || { tail -30 $OUT/build.log; exit 1; }
echo "built $(date +%T) $(git rev-parse --short HEAD 2>/dev/null)"
mkdir -p /tmp/steps
PRIO_STEP_TRACE=/tmp/steps PRIO_MIN_REQUESTS=220 PRIO_ROUNDS=1 PRIO_L=torch PRIO_H=llama PRIO_CONFIG_FILE=tests/bench/prio/bridge.json PRIO_KINDS=eager PRIO_CASES=L-alone-whole,static,prio-debug,prio-hold0,prio-hold1 timeout 500 make "JSONC_CFLAGS=-I$J/include -I$J/include/json-c" JSONC_LIBS=$J/lib/libjson-c.a bench-prio PRIO_SET=round5-llama PRIO_BUDGET_S=470 PRIO_TIMEOUT_S=490 BENCH_OUT=/tmp/b > $OUT/bench.out 2>&1
echo "bench rc $? $(date +%T)"
sed -n '/== L /,/^Cells/p' /tmp/b/prio/summary.txt
sed -n '/^   L.s p50/,/^   targets/p' /tmp/b/prio/summary.txt | head -10
cp /tmp/b/prio/summary.txt $OUT/ 2>/dev/null
mkdir -p /tmp/x && tar -C /tmp/x -xJf /tmp/b/prio/raw.tar.xz && grep -H "bridges held\|median" /tmp/x/raw/*/l-*.log | cut -c1-300 > $OUT/bridge.txt
cat $OUT/bridge.txt
cp /tmp/b/prio/raw.tar.xz $OUT/raw.tar.xz
tar -C /tmp -czf $OUT/steps.tgz steps
pgrep -a nvidia-cuda-mps | grep -v defunct && echo "MPS daemons still running"
exit 0
