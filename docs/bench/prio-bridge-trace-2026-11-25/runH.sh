#!/bin/bash
# Run H: the shipped default beside Llama training (decode, tbt, async, tbt7b at random), against
# static and no bridge, with the bridge's trace (NVTASKSET_BRIDGE_TRACE) and the GPU's clocks.
set -u
J=build/.jsonc
make -j16 "JSONC_CFLAGS=-I$J/include -I$J/include/json-c" JSONC_LIBS=$J/lib/libjson-c.a all >$OUT/build.log 2>&1 || { tail -30 $OUT/build.log; exit 1; }
echo "built $(date +%T)"
mkdir -p /tmp/trace /tmp/nvt-bridge-trace
python3 -c 'import time; print("clocks", time.time_ns(), time.monotonic_ns())' > /tmp/trace/clocks.txt
nvidia-smi --query-gpu=timestamp,clocks.sm,clocks.mem,power.draw,temperature.gpu,clocks_event_reasons.active --format=csv -lms 100 > /tmp/trace/smi.csv 2>&1 &
smi=$!
PRIO_T0=$(date +%s.%N)
export PRIO_T0
PRIO_MIN_REQUESTS=300,tbt7b=60 PRIO_STEP_TRACE=/tmp/trace PRIO_L=torch PRIO_H=llama PRIO_CONFIG_FILE=tests/bench/prio/bridge.json PRIO_KINDS=decode:poisson,tbt:poisson,async:poisson,tbt7b:poisson PRIO_CASES=L-alone-whole,static,prio-nobridge,prio-trace timeout 420 make "JSONC_CFLAGS=-I$J/include -I$J/include/json-c" JSONC_LIBS=$J/lib/libjson-c.a bench-prio PRIO_SET=round5-llama BENCH_OUT=/tmp/b > $OUT/bench.out 2>&1
echo "bench rc $? $(date +%T)"
kill $smi; wait $smi 2>/dev/null
python3 -c 'import time; print("clocks", time.time_ns(), time.monotonic_ns())' >> /tmp/trace/clocks.txt
tail -3 $OUT/bench.out
sed -n '/== L /,/^Cells/p' /tmp/b/prio/summary.txt
mkdir -p /tmp/x && tar -C /tmp/x -xJf /tmp/b/prio/raw.tar.xz && grep -H "bridge" /tmp/x/raw/*/l-*.log
ls -la /tmp/nvt-bridge-trace
awk -F', ' 'NR>1 {print $2, $4, $6}' /tmp/trace/smi.csv | sort | uniq -c | sort -rn | head -8
cp /tmp/b/prio/summary.txt $OUT/ 2>/dev/null
tar -C /tmp -cJf $OUT/raw.tar.xz trace nvt-bridge-trace b/prio/raw.tar.xz 2>/dev/null
pgrep -a nvidia-cuda-mps && echo "MPS daemons still running"
