#!/bin/bash
# Run E12: an eager PyTorch service (8 synchronised steps of 16 linear layers of 1024 at batch 1,
# launched op by op) beside GEMM and Llama training, Poisson and periodic, two rounds: L alone, static, the default
# (held steps learnt; debug report), the default never holding.
set -u
PRIO_T0=$(date +%s.%N)
export PRIO_T0
J=build/.jsonc
make -j16 "JSONC_CFLAGS=-I$J/include -I$J/include/json-c" JSONC_LIBS=$J/lib/libjson-c.a all >$OUT/build.log 2>&1 || { tail -30 $OUT/build.log; exit 1; }
echo "built $(date +%T)"
PRIO_MIN_REQUESTS=eager=300 PRIO_ROUNDS=2 PRIO_L=torch PRIO_H=torch,llama PRIO_CONFIG_FILE=tests/bench/prio/bridge.json PRIO_KINDS=eager PRIO_CASES=L-alone-whole,static,prio-debug,prio-hold0 timeout 560 make "JSONC_CFLAGS=-I$J/include -I$J/include/json-c" JSONC_LIBS=$J/lib/libjson-c.a bench-prio PRIO_SET=round5 PRIO_BUDGET_S=500 PRIO_TIMEOUT_S=545 BENCH_OUT=/tmp/b > $OUT/bench.out 2>&1
echo "bench rc $? $(date +%T)"
tail -3 $OUT/bench.out
sed -n '/== L /,/^Cells/p' /tmp/b/prio/summary.txt
sed -n '/^   L.s p50/,/^   targets/p' /tmp/b/prio/summary.txt | head -12
mkdir -p /tmp/x && tar -C /tmp/x -xJf /tmp/b/prio/raw.tar.xz && grep -H "bridge" /tmp/x/raw/*/l-*.log | cut -c1-300
cp /tmp/b/prio/summary.txt $OUT/ 2>/dev/null
tar -C /tmp -cJf $OUT/raw.tar.xz b/prio/raw.tar.xz 2>/dev/null
pgrep -a nvidia-cuda-mps | grep -v defunct && echo "MPS daemons still running"
exit 0
