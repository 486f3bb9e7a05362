#!/bin/bash
# Run B3 (and B6 on an H100): the default with the learnt linger (the commit as built, no experiment patch):
# make check-gpu-bridge, then bench-prio round5 (beside GEMM training, or SET=round5-llama):
# L alone, static, MPS client priority, prio-nopart (the default).
set -u
PRIO_T0=$(date +%s.%N)
export PRIO_T0
J=build/.jsonc
make -j16 "JSONC_CFLAGS=-I$J/include -I$J/include/json-c" JSONC_LIBS=$J/lib/libjson-c.a all >$OUT/build.log 2>&1 || { tail -30 $OUT/build.log; exit 1; }
echo "built $(date +%T) $(git log --oneline -1 | cut -c1-60)"
if [ -z "${NOGPUTEST:-}" ]; then
timeout 200 tests/gpu/bridge.sh /tmp/g > $OUT/check-gpu-bridge.txt 2>&1; echo "check-gpu-bridge rc $? $(date +%T)"
grep -v "^nvtaskset: bridge\|^copyapp" $OUT/check-gpu-bridge.txt | tail -8
fi
mkdir -p /tmp/trace
PRIO_MIN_REQUESTS=${MINR:-400,tbt=250,async=250,tbt7b=60} PRIO_STEP_TRACE=/tmp/trace PRIO_KINDS=${KINDS:-decode,tbt:poisson,async:poisson,tbt7b:poisson} PRIO_CASES=L-alone-whole,static,mps-cp,prio-nopart timeout ${BT:-400} make "JSONC_CFLAGS=-I$J/include -I$J/include/json-c" JSONC_LIBS=$J/lib/libjson-c.a bench-prio PRIO_SET=${SET:-round5} BENCH_OUT=/tmp/b > $OUT/bench.out 2>&1
echo "bench rc $? $(date +%T)"
tail -3 $OUT/bench.out
sed -n '/^Overview/,/^Cells/p' /tmp/b/prio/summary.txt
grep -A6 "L's p50 / p99" /tmp/b/prio/summary.txt | head -40
cp /tmp/b/prio/summary.txt $OUT/ 2>/dev/null
tar -C /tmp -cJf $OUT/raw.tar.xz trace b/prio/raw.tar.xz g/bridge 2>/dev/null
pgrep -a nvidia-cuda-mps | grep -v defunct && echo "MPS daemons still running"
exit 0
