#!/bin/bash
# Run G: build; check-gpu-bridge (the copy conditions on the real driver, tl.cu's bridge_loop);
# the token-by-token bursts: L torch/cuda x H llama/hog, default bridged (debug report), steps traced.
set -u
J=build/.jsonc
make -j16 "JSONC_CFLAGS=-I$J/include -I$J/include/json-c" JSONC_LIBS=$J/lib/libjson-c.a all >$OUT/build.log 2>&1 || { tail -30 $OUT/build.log; exit 1; }
echo "built $(date +%T)"
timeout 280 tests/gpu/bridge.sh /tmp/g > $OUT/check-gpu-bridge.txt 2>&1; echo "check-gpu-bridge rc $? $(date +%T)"
tail -15 $OUT/check-gpu-bridge.txt; grep -i "copies by its kernel\|wrong" /tmp/g/bridge.out | head
mkdir -p /tmp/trace
PRIO_T0=$(date +%s.%N)
export PRIO_T0
PRIO_MIN_REQUESTS=300 PRIO_STEP_TRACE=/tmp/trace PRIO_L=torch,cuda PRIO_H=llama,hog PRIO_CONFIG_FILE=tests/bench/prio/bridge.json PRIO_KINDS=tbt:poisson PRIO_CASES=L-alone-whole,prio-debug timeout 330 make "JSONC_CFLAGS=-I$J/include -I$J/include/json-c" JSONC_LIBS=$J/lib/libjson-c.a bench-prio PRIO_SET=round5-llama BENCH_OUT=/tmp/b > $OUT/bench.out 2>&1
echo "bench rc $? $(date +%T)"
tail -3 $OUT/bench.out
sed -n '/== L /,/^Cells/p' /tmp/b/prio/summary.txt
mkdir -p /tmp/x && tar -C /tmp/x -xJf /tmp/b/prio/raw.tar.xz && grep -H bridge: /tmp/x/raw/*/l-*.log
python3 - <<'PY'
import glob, os
for f in sorted(glob.glob("/tmp/x/raw/*/*.csv")):
    print(f)
for f in sorted(glob.glob("/tmp/trace/steps-*.txt")):
    rows=[list(map(int,l.split()[1:])) for l in open(f)]
    print(f, "".join(str(sum(x>450000 for x in st[1:])) for st in rows))
PY
cp /tmp/b/prio/summary.txt $OUT/ 2>/dev/null
tar -C /tmp -cJf $OUT/raw.tar.xz g/bridge.out trace b/prio/raw.tar.xz 2>/dev/null
pgrep -a nvidia-cuda-mps && echo "MPS daemons still running"
