#!/bin/bash
# Run R: the shipped default (prio-nopart: --priority high / low, no partition: time-sliced and
# bridged) beside GEMM training (H torch) against static partitions and MPS client priority, L alone.
set -u
PRIO_T0=$(date +%s.%N)
export PRIO_T0
J=build/.jsonc
make -j16 "JSONC_CFLAGS=-I$J/include -I$J/include/json-c" JSONC_LIBS=$J/lib/libjson-c.a all >$OUT/build.log 2>&1 || { tail -30 $OUT/build.log; exit 1; }
echo "built $(date +%T)"
mkdir -p /tmp/trace
PRIO_MIN_REQUESTS=250,tbt7b=60 PRIO_STEP_TRACE=/tmp/trace PRIO_KINDS=decode:poisson,tbt:poisson,async:poisson,tbt7b:poisson PRIO_CASES=L-alone-whole,static,mps-cp,prio-nopart timeout 540 make "JSONC_CFLAGS=-I$J/include -I$J/include/json-c" JSONC_LIBS=$J/lib/libjson-c.a bench-prio PRIO_SET=round5 BENCH_OUT=/tmp/b > $OUT/bench.out 2>&1
echo "bench rc $? $(date +%T)"
tail -3 $OUT/bench.out
sed -n '/^Overview/,$p' /tmp/b/prio/summary.txt | head -80
python3 - <<'PY'
import glob
for f in sorted(glob.glob("/tmp/trace/steps-*.txt")):
    rows=[(l.split()[0],list(map(int,l.split()[1:]))) for l in open(f)]
    for kind, lim in (("tbt", 450000), ("tbt7b", 3300000)):
        rr=[st for k,st in rows if k==kind]
        if rr: print(f.split("steps-")[1], kind, "later steps over", lim // 1000, "us:", sum(x>lim for st in rr for x in st[1:]), "of", sum(len(st)-1 for st in rr))
PY
cp /tmp/b/prio/summary.txt $OUT/ 2>/dev/null
tar -C /tmp -cJf $OUT/raw.tar.xz trace b/prio/raw.tar.xz 2>/dev/null
pgrep -a nvidia-cuda-mps && echo "MPS daemons still running"
