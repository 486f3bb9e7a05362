#!/bin/bash
# Run V1: the shipped learner on the GPU: four of the timeline's phases (debug lines), then
# bench-prio's round5 set beside GEMM training with eager added: L alone, static, MPS client
# priority, the default (prio-nopart); one round, fresh processes.
set -u
PRIO_T0=$(date +%s.%N)
export PRIO_T0
J=build/.jsonc
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
make -j16 "JSONC_CFLAGS=-I$J/include -I$J/include/json-c" JSONC_LIBS=$J/lib/libjson-c.a all >$OUT/build.log 2>&1 || { tail -30 $OUT/build.log; exit 1; }
echo "built $(date +%T) $(git rev-parse --short HEAD 2>/dev/null)"
NVTASKSET_BRIDGE_DEBUG=1 timeout 60 tests/bench/timeline/run.sh /tmp/tl gemm-eager-g5-product gemm-eager-g40-product gemm-long8-product gemm-small-product > $OUT/timeline-run.txt 2>&1
echo "timeline rc $? $(date +%T)"
cat /tmp/tl/timeline.txt > $OUT/timeline.txt 2>&1
for f in /tmp/tl/*.log; do echo "== $(basename $f .log): $(grep -h 'bridges held\|median' $f | tr '\n' ' ')"; done | cut -c1-400 | tee -a $OUT/timeline.txt
PRIO_MIN_REQUESTS=150,tbt7b=80 PRIO_ROUNDS=1 PRIO_L=torch PRIO_H=torch PRIO_KINDS=decode,prefill:poisson,tbt:poisson,tbt7b:poisson,async:poisson,asyncside:poisson,eager PRIO_CASES=L-alone-whole,static,mps-cp,prio-nopart timeout 420 make "JSONC_CFLAGS=-I$J/include -I$J/include/json-c" JSONC_LIBS=$J/lib/libjson-c.a bench-prio PRIO_SET=round5 PRIO_BUDGET_S=480 PRIO_TIMEOUT_S=520 BENCH_OUT=/tmp/b > $OUT/bench.out 2>&1
echo "bench rc $? $(date +%T)"
sed -n '/== L /,/^Cells/p' /tmp/b/prio/summary.txt
cp /tmp/b/prio/summary.txt $OUT/ 2>/dev/null
mkdir -p /tmp/x && tar -C /tmp/x -xJf /tmp/b/prio/raw.tar.xz && grep -H "bridges held" /tmp/x/raw/*/l-*.log | cut -c1-300 > $OUT/bridge.txt
cp /tmp/b/prio/raw.tar.xz $OUT/raw.tar.xz
pgrep -a nvidia-cuda-mps | grep -v defunct && echo "MPS daemons still running"
exit 0
