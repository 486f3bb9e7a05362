#!/bin/bash
# Run B11: what the queued one-step requests that still pay the switches had as a bridge (trace).
set -u
PRIO_T0=$(date +%s.%N)
export PRIO_T0
J=build/.jsonc
make -j16 "JSONC_CFLAGS=-I$J/include -I$J/include/json-c" JSONC_LIBS=$J/lib/libjson-c.a all >$OUT/build.log 2>&1 || { tail -30 $OUT/build.log; exit 1; }
echo "built $(date +%T)"
mkdir -p /tmp/nvt-bridge-trace
PRIO_MIN_REQUESTS=450 PRIO_CONFIG_FILE=docs/bench/prio-linger-2026-11-26/runB11-configs.json PRIO_KINDS=decode:poisson PRIO_CASES=L-alone-whole,br-trace timeout 300 make "JSONC_CFLAGS=-I$J/include -I$J/include/json-c" JSONC_LIBS=$J/lib/libjson-c.a bench-prio PRIO_SET=round5 BENCH_OUT=/tmp/b > $OUT/bench.out 2>&1
echo "bench rc $? $(date +%T)"
sed -n '/^Overview/,/^Cells/p' /tmp/b/prio/summary.txt
mkdir -p /tmp/x && tar -C /tmp/x -xJf /tmp/b/prio/raw.tar.xz && grep -h "bridge" /tmp/x/raw/br-trace*/l-torch.log | cut -c1-300
python3 docs/bench/prio-linger-2026-11-26/queued.py /tmp/x/raw
python3 docs/bench/prio-linger-2026-11-26/queued_trace.py /tmp/x/raw/br-trace.torch.r1/l-torch.csv /tmp/nvt-bridge-trace/t.* 2>&1 | head -90
tar -C /tmp -cJf $OUT/raw.tar.xz b/prio/raw.tar.xz nvt-bridge-trace 2>/dev/null
cp /tmp/b/prio/summary.txt $OUT/
