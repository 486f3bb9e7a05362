#!/bin/bash
# Run B12 (on commit bdcf73c): the learnt linger with a quarter's slack and shares of weight 1/32 (br-slack)
# against that of commit 9eb06b8 (br-prev: weight 1/16, no slack; prevrule.py), static, L alone.
set -u
PRIO_T0=$(date +%s.%N)
export PRIO_T0
J=build/.jsonc
python3 ${PREV:-docs/bench/prio-linger-2026-11-26/prevrule.py} || exit 1
make -j16 "JSONC_CFLAGS=-I$J/include -I$J/include/json-c" JSONC_LIBS=$J/lib/libjson-c.a all >$OUT/build.log 2>&1 || { tail -30 $OUT/build.log; exit 1; }
echo "built $(date +%T)"
mkdir -p /tmp/trace
PRIO_MIN_REQUESTS=450,tbt=200 PRIO_STEP_TRACE=/tmp/trace PRIO_CONFIG_FILE=${CONF:-docs/bench/prio-linger-2026-11-26/runB12-configs.json} PRIO_KINDS=${KINDS:-decode,tbt:poisson} PRIO_CASES=L-alone-whole,static,br-slack,br-prev timeout ${BT:-420} make "JSONC_CFLAGS=-I$J/include -I$J/include/json-c" JSONC_LIBS=$J/lib/libjson-c.a bench-prio PRIO_SET=${SET:-round5} BENCH_OUT=/tmp/b > $OUT/bench.out 2>&1
echo "bench rc $? $(date +%T)"
sed -n '/^Overview/,/^Cells/p' /tmp/b/prio/summary.txt
mkdir -p /tmp/x && tar -C /tmp/x -xJf /tmp/b/prio/raw.tar.xz && grep -H "bridge:" /tmp/x/raw/*/l-*.log | cut -c1-330
python3 ${QUEUED:-docs/bench/prio-linger-2026-11-26/queued.py} /tmp/x/raw | grep poisson
python3 - <<'PY'
import glob
for f in sorted(glob.glob("/tmp/trace/steps-*.txt")):
    rows=[(l.split()[0],list(map(int,l.split()[1:]))) for l in open(f)]
    rr=[st for k,st in rows if k=="tbt"]
    if rr: print(f.split("steps-")[1], "tbt later steps over 450 us:", sum(x>450000 for st in rr for x in st[1:]), "of", sum(len(st)-1 for st in rr))
PY
cp /tmp/b/prio/summary.txt $OUT/ 2>/dev/null
tar -C /tmp -cJf $OUT/raw.tar.xz trace b/prio/raw.tar.xz 2>/dev/null
