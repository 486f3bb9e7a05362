#!/bin/bash
# Run A: build, check-gpu-bridge, the copy probes on the timeline, bench-prio with the shipped default.
set -u
PRIO_T0=$(date +%s.%N)
export PRIO_T0
J=build/.jsonc
make -j16 "JSONC_CFLAGS=-I$J/include -I$J/include/json-c" JSONC_LIBS=$J/lib/libjson-c.a all >$OUT/build.log 2>&1 || { tail -30 $OUT/build.log; exit 1; }
echo "built $(date +%T)"
timeout 200 tests/gpu/bridge.sh /tmp/g > $OUT/check-gpu-bridge.txt 2>&1; echo "check-gpu-bridge rc $? $(date +%T)"
cat $OUT/check-gpu-bridge.txt
timeout 150 tests/bench/timeline/run.sh /tmp/tl alone-small-async-copy gemm-small-async-copy gemm-small-async-kcopy gemm-small-async-copy-product gemm-small-async-kcopy-product gemm-small-async-kcopy0-product gemm-small-copy-product gemm-decode-async-copy-product gemm-decode-async-kcopy0-product > $OUT/tl.out 2>&1
echo "timeline rc $? $(date +%T)"
grep -v "^==\|rc 0\|calib" $OUT/tl.out | tail -40
mkdir -p /tmp/trace
PRIO_T0=$(date +%s.%N)
export PRIO_T0
PRIO_STEP_TRACE=/tmp/trace PRIO_H=llama PRIO_CONFIG_FILE=tests/bench/prio/bridge.json PRIO_KINDS=decode:poisson,tbt:poisson,tbt7b:poisson,async:poisson,asyncside:poisson PRIO_CASES=L-alone-whole,static,prio-nopart,prio-nobridge timeout 330 make "JSONC_CFLAGS=-I$J/include -I$J/include/json-c" JSONC_LIBS=$J/lib/libjson-c.a bench-prio PRIO_SET=round5-llama BENCH_OUT=/tmp/b > $OUT/bench.out 2>&1
echo "bench rc $? $(date +%T)"
tail -5 $OUT/bench.out
cat /tmp/b/prio/summary.txt 2>/dev/null | head -60
cp /tmp/b/prio/summary.txt /tmp/b/prio/prio.csv $OUT/ 2>/dev/null
tar -C /tmp -cJf $OUT/raw.tar.xz tl g/bridge trace b/prio/raw.tar.xz 2>/dev/null
pgrep -a nvidia-cuda-mps && echo "MPS daemons still running"
