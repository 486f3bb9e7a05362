#!/bin/bash
# Run B1 (and B4, B5 on an H100): the learnt linger (br-learn) against the half-soon rule (br-oldarm), static and L alone:
# Poisson and periodic decode (one step a request) and tbt, beside GEMM training (H torch).
set -u
PRIO_T0=$(date +%s.%N)
export PRIO_T0
J=build/.jsonc
python3 ${OLDARM:-docs/bench/prio-linger-2026-11-26/oldarm.py} || exit 1
make -j16 "JSONC_CFLAGS=-I$J/include -I$J/include/json-c" JSONC_LIBS=$J/lib/libjson-c.a all >$OUT/build.log 2>&1 || { tail -30 $OUT/build.log; exit 1; }
echo "built $(date +%T)"
mkdir -p /tmp/trace
PRIO_MIN_REQUESTS=400,tbt=200 PRIO_STEP_TRACE=/tmp/trace PRIO_CONFIG_FILE=docs/bench/prio-linger-2026-11-26/runB1-configs.json PRIO_KINDS=${KINDS:-decode,tbt:poisson} PRIO_CASES=L-alone-whole,static,br-learn,br-oldarm timeout ${BT:-420} make "JSONC_CFLAGS=-I$J/include -I$J/include/json-c" JSONC_LIBS=$J/lib/libjson-c.a bench-prio PRIO_SET=${SET:-round5} BENCH_OUT=/tmp/b > $OUT/bench.out 2>&1
echo "bench rc $? $(date +%T)"
tail -3 $OUT/bench.out
sed -n '/^Overview/,/^Cells/p' /tmp/b/prio/summary.txt
grep -A8 "L's p50 / p99" /tmp/b/prio/summary.txt | head -40
mkdir -p /tmp/x && tar -C /tmp/x -xJf /tmp/b/prio/raw.tar.xz && grep -H "bridge:" /tmp/x/raw/*/l-*.log | cut -c1-400
cp /tmp/b/prio/summary.txt $OUT/ 2>/dev/null
tar -C /tmp -cJf $OUT/raw.tar.xz trace b/prio/raw.tar.xz 2>/dev/null
pgrep -a nvidia-cuda-mps && echo "MPS daemons still running"
