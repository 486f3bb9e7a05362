#!/bin/bash
# Run Z: the final bridge on the H100: PyTorch tbt and async beside Llama training, the default
# traced, against static, L alone; check-gpu-bridge.
set -u
PRIO_T0=$(date +%s.%N)
export PRIO_T0
J=build/.jsonc
make -j16 "JSONC_CFLAGS=-I$J/include -I$J/include/json-c" JSONC_LIBS=$J/lib/libjson-c.a all >$OUT/build.log 2>&1 || { tail -30 $OUT/build.log; exit 1; }
echo "built $(date +%T)"
timeout 200 tests/gpu/bridge.sh /tmp/g > $OUT/check-gpu-bridge.txt 2>&1; echo "check-gpu-bridge rc $? $(date +%T)"
grep -v "^nvtaskset: bridge\|^copyapp" $OUT/check-gpu-bridge.txt | tail -12
mkdir -p /tmp/trace /tmp/nvt-bridge-trace
PRIO_MIN_REQUESTS=300 PRIO_STEP_TRACE=/tmp/trace PRIO_L=torch PRIO_H=llama PRIO_CONFIG_FILE=tests/bench/prio/bridge.json PRIO_KINDS=tbt:poisson,async:poisson PRIO_CASES=L-alone-whole,static,prio-trace timeout 330 make "JSONC_CFLAGS=-I$J/include -I$J/include/json-c" JSONC_LIBS=$J/lib/libjson-c.a bench-prio PRIO_SET=round5-llama BENCH_OUT=/tmp/b > $OUT/bench.out 2>&1
echo "bench rc $? $(date +%T)"
sed -n '/== L /,/^Cells/p' /tmp/b/prio/summary.txt
mkdir -p /tmp/x && tar -C /tmp/x -xJf /tmp/b/prio/raw.tar.xz && grep -H "bridge" /tmp/x/raw/*/l-*.log | cut -c1-300
python3 - <<'PY'
import glob
for f in sorted(glob.glob("/tmp/trace/steps-*.txt")):
    rows=[(l.split()[0],list(map(int,l.split()[1:]))) for l in open(f)]
    rr=[st for k,st in rows if k=="tbt"]
    if rr: print(f.split("steps-")[1], "tbt later steps over 450 us", sum(x>450000 for st in rr for x in st[1:]), "of", sum(len(st)-1 for st in rr))
PY
cp /tmp/b/prio/summary.txt $OUT/ 2>/dev/null
tar -C /tmp -cJf $OUT/raw.tar.xz g/bridge trace nvt-bridge-trace b/prio/raw.tar.xz 2>/dev/null
pgrep -a nvidia-cuda-mps | grep -v defunct && echo "MPS daemons still running"
