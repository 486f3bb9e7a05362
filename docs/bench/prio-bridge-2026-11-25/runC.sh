#!/bin/bash
set -u
J=build/.jsonc
make -j16 "JSONC_CFLAGS=-I$J/include -I$J/include/json-c" JSONC_LIBS=$J/lib/libjson-c.a all >$OUT/build.log 2>&1 || { tail -30 $OUT/build.log; exit 1; }
echo "built $(date +%T)"
mkdir -p /tmp/trace
PRIO_T0=$(date +%s.%N)
export PRIO_T0
PRIO_MIN_REQUESTS=200 PRIO_STEP_TRACE=/tmp/trace PRIO_H=llama PRIO_CONFIG_FILE=tests/bench/prio/bridge.json PRIO_KINDS=tbt:poisson PRIO_CASES=prio-debug timeout 300 make "JSONC_CFLAGS=-I$J/include -I$J/include/json-c" JSONC_LIBS=$J/lib/libjson-c.a bench-prio PRIO_SET=round5-llama BENCH_OUT=/tmp/b > $OUT/bench.out 2>&1
echo "bench rc $? $(date +%T)"
sed -n '/== L torch beside/,/^Cells/p' /tmp/b/prio/summary.txt
mkdir -p /tmp/x && tar -C /tmp/x -xJf /tmp/b/prio/raw.tar.xz && cat /tmp/x/raw/prio-debug*/l-torch.log
tar -C /tmp -cJf $OUT/raw.tar.xz trace b/prio/raw.tar.xz 2>/dev/null
pgrep -a nvidia-cuda-mps && echo "MPS daemons still running"
