#!/bin/bash
set -u
J=build/.jsonc
make -j16 "JSONC_CFLAGS=-I$J/include -I$J/include/json-c" JSONC_LIBS=$J/lib/libjson-c.a all >$OUT/build.log 2>&1 || { tail -30 $OUT/build.log; exit 1; }
echo "built $(date +%T)"
mkdir -p /tmp/trace
PRIO_T0=$(date +%s.%N)
export PRIO_T0
PRIO_MIN_REQUESTS=200 PRIO_STEP_TRACE=/tmp/trace PRIO_H=llama PRIO_CONFIG_FILE=tests/bench/prio/bridge.json PRIO_KINDS=tbt:poisson PRIO_CASES=prio-debug,prio-nomps-l timeout 250 make "JSONC_CFLAGS=-I$J/include -I$J/include/json-c" JSONC_LIBS=$J/lib/libjson-c.a bench-prio PRIO_SET=round5-llama BENCH_OUT=/tmp/b > $OUT/bench.out 2>&1
echo "bench rc $? $(date +%T)"
sed -n '/== L torch beside/,/^Cells/p' /tmp/b/prio/summary.txt
mkdir -p /tmp/x && tar -C /tmp/x -xJf /tmp/b/prio/raw.tar.xz && grep bridge: /tmp/x/raw/prio-*/l-torch.log
python3 - <<'PY'
import glob
for f in sorted(glob.glob("/tmp/trace/steps-*.txt")):
    rows=[list(map(int,l.split()[1:])) for l in open(f)]
    print(f, "".join(str(sum(x>450000 for x in st[1:])) for st in rows))
PY
tar -C /tmp -cJf $OUT/raw.tar.xz tl trace b/prio/raw.tar.xz 2>/dev/null
pgrep -a nvidia-cuda-mps && echo "MPS daemons still running"
