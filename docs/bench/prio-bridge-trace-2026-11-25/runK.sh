#!/bin/bash
# Run K: the bridge held while a replay is queued: check-gpu-bridge (graph56-pre phases), the
# timeline's own bridge released at the first launch beside it; bench-prio tbt, default traced.
set -u
PRIO_T0=$(date +%s.%N)
export PRIO_T0
J=build/.jsonc
make -j16 "JSONC_CFLAGS=-I$J/include -I$J/include/json-c" JSONC_LIBS=$J/lib/libjson-c.a all >$OUT/build.log 2>&1 || { tail -30 $OUT/build.log; exit 1; }
echo "built $(date +%T)"
timeout 280 tests/gpu/bridge.sh /tmp/g > $OUT/check-gpu-bridge.txt 2>&1; echo "check-gpu-bridge rc $? $(date +%T)"
grep -v "^nvtaskset: bridge\|^copyapp" $OUT/check-gpu-bridge.txt | tail -12
timeout 60 tests/bench/timeline/run.sh /tmp/tl gemm-graph56-pre-bridge300-c1 gemm-small-pre40-product > $OUT/tl.out 2>&1
echo "timeline rc $? $(date +%T)"
cat /tmp/tl/timeline.txt; cat /tmp/g/bridge/timeline.txt
mkdir -p /tmp/trace /tmp/nvt-bridge-trace
PRIO_MIN_REQUESTS=400 PRIO_STEP_TRACE=/tmp/trace PRIO_L=torch PRIO_H=llama PRIO_CONFIG_FILE=tests/bench/prio/bridge.json PRIO_KINDS=tbt:poisson PRIO_CASES=L-alone-whole,prio-trace timeout 200 make "JSONC_CFLAGS=-I$J/include -I$J/include/json-c" JSONC_LIBS=$J/lib/libjson-c.a bench-prio PRIO_SET=round5-llama BENCH_OUT=/tmp/b > $OUT/bench.out 2>&1
echo "bench rc $? $(date +%T)"
sed -n '/== L /,/^Cells/p' /tmp/b/prio/summary.txt
mkdir -p /tmp/x && tar -C /tmp/x -xJf /tmp/b/prio/raw.tar.xz && grep -H "bridge" /tmp/x/raw/*/l-*.log
python3 - <<'PY'
import glob
for f in sorted(glob.glob("/tmp/trace/steps-*.txt")):
    rows=[(l.split()[0],list(map(int,l.split()[1:]))) for l in open(f)]
    rr=[st for k,st in rows if k=="tbt"]
    print(f.split("steps-")[1], "later steps paid", sum(x>450000 for st in rr for x in st[1:]), "of", sum(len(st)-1 for st in rr))
    print("".join(str(min(9,sum(x>450000 for x in st[1:]))) for st in rr))
PY
cp /tmp/b/prio/summary.txt $OUT/ 2>/dev/null
tar -C /tmp -cJf $OUT/raw.tar.xz tl g/bridge g/bridge.out trace nvt-bridge-trace b/prio/raw.tar.xz 2>/dev/null
pgrep -a nvidia-cuda-mps && echo "MPS daemons still running"
