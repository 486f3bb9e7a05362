#!/bin/bash
# Run J: the bridge waits for a step's launches (NVT_BRIDGE_SPAN_US): check-gpu-bridge with the
# PRE_US phases; the timeline's own bridge (released at the first launch) beside them; what
# PyTorch's replay launches; bench-prio tbt/async/tbt7b: default (traced) vs static.
set -u
PRIO_T0=$(date +%s.%N)
export PRIO_T0
J=build/.jsonc
make -j16 "JSONC_CFLAGS=-I$J/include -I$J/include/json-c" JSONC_LIBS=$J/lib/libjson-c.a all >$OUT/build.log 2>&1 || { tail -30 $OUT/build.log; exit 1; }
echo "built $(date +%T)"
timeout 120 python3 docs/bench/prio-bridge-trace-2026-11-25/replay_kernels.py > $OUT/replay.txt 2>&1; echo "replay rc $?"; grep -i "fill\|Launch\|gemv\|Kernel" $OUT/replay.txt | head -20
timeout 280 tests/gpu/bridge.sh /tmp/g > $OUT/check-gpu-bridge.txt 2>&1; echo "check-gpu-bridge rc $? $(date +%T)"
grep -v "^nvtaskset: bridge" $OUT/check-gpu-bridge.txt | tail -14
timeout 100 tests/bench/timeline/run.sh /tmp/tl alone-small-pre40-product gemm-small-pre100-product gemm-small-pre40-product-mps gemm-small-pre40-bridge300-c1 > $OUT/tl.out 2>&1
echo "timeline rc $? $(date +%T)"
cat /tmp/tl/timeline.txt; cat /tmp/g/bridge/timeline.txt
mkdir -p /tmp/trace /tmp/nvt-bridge-trace
PRIO_MIN_REQUESTS=300,tbt7b=60 PRIO_STEP_TRACE=/tmp/trace PRIO_L=torch PRIO_H=llama PRIO_CONFIG_FILE=tests/bench/prio/bridge.json PRIO_KINDS=tbt:poisson,async:poisson,tbt7b:poisson PRIO_CASES=L-alone-whole,static,prio-trace timeout 330 make "JSONC_CFLAGS=-I$J/include -I$J/include/json-c" JSONC_LIBS=$J/lib/libjson-c.a bench-prio PRIO_SET=round5-llama BENCH_OUT=/tmp/b > $OUT/bench.out 2>&1
echo "bench rc $? $(date +%T)"
tail -2 $OUT/bench.out
sed -n '/== L /,/^Cells/p' /tmp/b/prio/summary.txt
mkdir -p /tmp/x && tar -C /tmp/x -xJf /tmp/b/prio/raw.tar.xz && grep -H "bridge" /tmp/x/raw/*/l-*.log
python3 - <<'PY'
import glob
for f in sorted(glob.glob("/tmp/trace/steps-*.txt")):
    rows=[(l.split()[0],list(map(int,l.split()[1:]))) for l in open(f)]
    for kind,thr in (("tbt",450000),("tbt7b",2950000)):
        rr=[st for k,st in rows if k==kind]
        if rr: print(f.split("steps-")[1], kind, "later steps paid", sum(x>thr for st in rr for x in st[1:]), "of", sum(len(st)-1 for st in rr))
PY
cp /tmp/b/prio/summary.txt $OUT/ 2>/dev/null
tar -C /tmp -cJf $OUT/raw.tar.xz tl g/bridge g/bridge.out trace nvt-bridge-trace b/prio/raw.tar.xz 2>/dev/null
pgrep -a nvidia-cuda-mps && echo "MPS daemons still running"
