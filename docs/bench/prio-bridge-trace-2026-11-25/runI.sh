#!/bin/bash
# Run I: the timeline of 7B-sized steps (tl LONG8: 56 kernels on every SM a step) bridged and not,
# beside cuBLAS GEMMs; bench-prio decode/tbt/tbt7b/generate: default (traced) vs static vs mps-cp.
set -u
PRIO_T0=$(date +%s.%N)
export PRIO_T0
J=build/.jsonc
make -j16 "JSONC_CFLAGS=-I$J/include -I$J/include/json-c" JSONC_LIBS=$J/lib/libjson-c.a all >$OUT/build.log 2>&1 || { tail -30 $OUT/build.log; exit 1; }
echo "built $(date +%T)"
timeout 150 tests/bench/timeline/run.sh /tmp/tl alone-long8-product gemm-long8 gemm-long8-product gemm-long8-product-mps gemm-small-product > $OUT/tl.out 2>&1
echo "timeline rc $? $(date +%T)"
cat /tmp/tl/timeline.txt
mkdir -p /tmp/trace /tmp/nvt-bridge-trace
nvidia-smi --query-gpu=timestamp,clocks.sm,clocks.mem,power.draw,temperature.gpu,clocks_event_reasons.active --format=csv -lms 100 > /tmp/trace/smi.csv 2>&1 &
smi=$!
PRIO_MIN_REQUESTS=300,tbt7b=60,generate=10 PRIO_STEP_TRACE=/tmp/trace PRIO_L=torch PRIO_H=llama PRIO_CONFIG_FILE=tests/bench/prio/bridge.json PRIO_KINDS=decode:poisson,tbt:poisson,tbt7b:poisson,generate:poisson PRIO_CASES=L-alone-whole,static,mps-cp,prio-trace timeout 420 make "JSONC_CFLAGS=-I$J/include -I$J/include/json-c" JSONC_LIBS=$J/lib/libjson-c.a bench-prio PRIO_SET=round5-llama BENCH_OUT=/tmp/b > $OUT/bench.out 2>&1
echo "bench rc $? $(date +%T)"
kill $smi; wait $smi 2>/dev/null
tail -3 $OUT/bench.out
sed -n '/== L /,/^Cells/p' /tmp/b/prio/summary.txt
mkdir -p /tmp/x && tar -C /tmp/x -xJf /tmp/b/prio/raw.tar.xz && grep -H "bridge" /tmp/x/raw/*/l-*.log
cp /tmp/b/prio/summary.txt $OUT/ 2>/dev/null
tar -C /tmp -cJf $OUT/raw.tar.xz tl trace nvt-bridge-trace b/prio/raw.tar.xz 2>/dev/null
pgrep -a nvidia-cuda-mps && echo "MPS daemons still running"
