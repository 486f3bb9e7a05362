#!/bin/bash
# Run L: the bridge waits for its step's replay: timeline phases (an empty kernel, 40 us of the
# host, then the graph) product vs the old rule, alone's cost; bench-prio tbt, default traced.
set -u
PRIO_T0=$(date +%s.%N)
export PRIO_T0
J=build/.jsonc
make -j16 "JSONC_CFLAGS=-I$J/include -I$J/include/json-c" JSONC_LIBS=$J/lib/libjson-c.a all >$OUT/build.log 2>&1 || { tail -30 $OUT/build.log; exit 1; }
echo "built $(date +%T)"
timeout 75 tests/bench/timeline/run.sh /tmp/tl gemm-small-graph-pre40-product alone-small-graph-pre40-product gemm-small-graph-pre40-bridge300-c1 gemm-small-product alone-small-product > $OUT/tl.out 2>&1
echo "timeline rc $? $(date +%T)"
cat /tmp/tl/timeline.txt
mkdir -p /tmp/trace /tmp/nvt-bridge-trace
PRIO_MIN_REQUESTS=200 PRIO_STEP_TRACE=/tmp/trace PRIO_L=torch PRIO_H=llama PRIO_CONFIG_FILE=tests/bench/prio/bridge.json PRIO_KINDS=tbt:poisson PRIO_CASES=L-alone-whole,prio-trace timeout 95 make "JSONC_CFLAGS=-I$J/include -I$J/include/json-c" JSONC_LIBS=$J/lib/libjson-c.a bench-prio PRIO_SET=round5-llama BENCH_OUT=/tmp/b > $OUT/bench.out 2>&1
echo "bench rc $? $(date +%T)"
sed -n '/^   L.s p50/,/^   targets/p' /tmp/b/prio/summary.txt
mkdir -p /tmp/x && tar -C /tmp/x -xJf /tmp/b/prio/raw.tar.xz && grep -h "bridge" /tmp/x/raw/*/l-*.log
python3 - <<'PY'
import glob
for f in sorted(glob.glob("/tmp/trace/steps-*.txt")):
    rows=[(l.split()[0],list(map(int,l.split()[1:]))) for l in open(f)]
    rr=[st for k,st in rows if k=="tbt"]
    print(f.split("steps-")[1], "later steps paid", sum(x>450000 for st in rr for x in st[1:]), "of", sum(len(st)-1 for st in rr))
    print("".join(str(min(9,sum(x>450000 for x in st[1:]))) for st in rr))
PY
cp /tmp/b/prio/summary.txt $OUT/ 2>/dev/null
tar -C /tmp -cJf $OUT/raw.tar.xz tl trace nvt-bridge-trace b/prio/raw.tar.xz 2>/dev/null
pgrep -a nvidia-cuda-mps && echo "MPS daemons still running"
