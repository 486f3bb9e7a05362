#!/bin/bash
# Run B: build, check-gpu-bridge (with the kernel copies), timeline copy phases, bench-prio: default vs no bridge vs one queue alone.
set -u
J=build/.jsonc
make -j16 "JSONC_CFLAGS=-I$J/include -I$J/include/json-c" JSONC_LIBS=$J/lib/libjson-c.a all >$OUT/build.log 2>&1 || { tail -30 $OUT/build.log; exit 1; }
echo "built $(date +%T)"
timeout 280 tests/gpu/bridge.sh /tmp/g > $OUT/check-gpu-bridge.txt 2>&1; echo "check-gpu-bridge rc $? $(date +%T)"
cat $OUT/check-gpu-bridge.txt; grep -i "copyapp" /tmp/g/bridge.out
timeout 120 tests/bench/timeline/run.sh /tmp/tl gemm-small-async-copy-product-mps alone-small-async-copy-product gemm-decode-async-copy-product gemm-small-copy-product > $OUT/tl.out 2>&1
echo "timeline rc $? $(date +%T)"
grep -v "^==\|rc 0\|calib\|Killed" $OUT/tl.out | tail -12
grep -h "step_later\|gemm-small-async" /tmp/g/bridge/timeline.txt
cat /tmp/g/bridge/timeline.txt
mkdir -p /tmp/trace
PRIO_T0=$(date +%s.%N)
export PRIO_T0
PRIO_MIN_REQUESTS=200 PRIO_STEP_TRACE=/tmp/trace PRIO_H=llama PRIO_CONFIG_FILE=tests/bench/prio/bridge.json PRIO_KINDS=decode:poisson,tbt:poisson,async:poisson,asyncside:poisson PRIO_CASES=L-alone-whole,static,prio-nopart,prio-nobridge,prio-c1 timeout 360 make "JSONC_CFLAGS=-I$J/include -I$J/include/json-c" JSONC_LIBS=$J/lib/libjson-c.a bench-prio PRIO_SET=round5-llama BENCH_OUT=/tmp/b > $OUT/bench.out 2>&1
echo "bench rc $? $(date +%T)"
tail -3 $OUT/bench.out
sed -n '/== L torch beside/,/^Cells/p' /tmp/b/prio/summary.txt
cp /tmp/b/prio/summary.txt /tmp/b/prio/prio.csv $OUT/ 2>/dev/null
tar -C /tmp -cJf $OUT/raw.tar.xz tl g/bridge g/bridge.out trace b/prio/raw.tar.xz 2>/dev/null
pgrep -a nvidia-cuda-mps && echo "MPS daemons still running"
