#!/bin/bash
# Run M2: PyTorch tbt beside Llama training, the default (traced) against a query of the replay's
# stream at its exit (NVTASKSET_DEV_FLUSH) and a margin of 60 us (NVTASKSET_DEV_MARGIN_US), side by side.
set -u
PRIO_T0=$(date +%s.%N)
export PRIO_T0
J=build/.jsonc
make -j16 "JSONC_CFLAGS=-I$J/include -I$J/include/json-c" JSONC_LIBS=$J/lib/libjson-c.a all >$OUT/build.log 2>&1 || { tail -30 $OUT/build.log; exit 1; }
echo "built $(date +%T)"
mkdir -p /tmp/trace /tmp/nvt-bridge-trace
PRIO_MIN_REQUESTS=250 PRIO_STEP_TRACE=/tmp/trace PRIO_L=torch PRIO_H=llama PRIO_CONFIG_FILE=docs/bench/prio-bridge-nextcall-2026-11-26/runM2-configs.json PRIO_KINDS=tbt:poisson PRIO_CASES=L-alone-whole,prio-trace,prio-flush,prio-m60 timeout 330 make "JSONC_CFLAGS=-I$J/include -I$J/include/json-c" JSONC_LIBS=$J/lib/libjson-c.a bench-prio PRIO_SET=round5-llama BENCH_OUT=/tmp/b > $OUT/bench.out 2>&1
echo "bench rc $? $(date +%T)"
tail -3 $OUT/bench.out
sed -n '/^   L.s p50/,/^   targets/p' /tmp/b/prio/summary.txt
sed -n '/== L /,/^Cells/p' /tmp/b/prio/summary.txt
mkdir -p /tmp/x && tar -C /tmp/x -xJf /tmp/b/prio/raw.tar.xz && grep -H "bridge" /tmp/x/raw/*/l-*.log | cut -c1-400
python3 - <<'PY'
import glob
for f in sorted(glob.glob("/tmp/trace/steps-*.txt")):
    rows=[(l.split()[0],list(map(int,l.split()[1:]))) for l in open(f)]
    rr=[st for k,st in rows if k=="tbt"]
    print(f.split("steps-")[1], "later steps paid", sum(x>450000 for st in rr for x in st[1:]), "of", sum(len(st)-1 for st in rr))
    print("".join(str(min(9,sum(x>450000 for x in st[1:]))) for st in rr))
PY
cp /tmp/b/prio/summary.txt $OUT/ 2>/dev/null
tar -C /tmp -cJf $OUT/raw.tar.xz trace nvt-bridge-trace b/prio/raw.tar.xz 2>/dev/null
pgrep -a nvidia-cuda-mps && echo "MPS daemons still running"
