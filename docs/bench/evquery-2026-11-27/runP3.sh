#!/bin/bash
# Run P3: bench-prio's round5 preset for tbt and tbtpoll (token by token waited for by .item(),
# and by polling an event) at random beside GEMM training: L alone on the whole GPU,
# static partitions, MPS client priority, and the product's default for priorities without a
# partition (prio-nopart: time-sliced, bridged).
set -u
J=$PWD/build/.jsonc
MK=("JSONC_CFLAGS=-I$J/include -I$J/include/json-c" "JSONC_LIBS=$J/lib/libjson-c.a")
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
date -u
make -j16 "${MK[@]}" all >"$OUT/build.log" 2>&1 || { tail -30 "$OUT/build.log"; exit 1; }
PRIO_T0=$(date +%s.%N)
export PRIO_T0
PRIO_PHASE_S=1.0 PRIO_MIN_REQUESTS=150 PRIO_L=torch PRIO_H=torch PRIO_KINDS=tbt:poisson,tbtpoll:poisson \
	PRIO_CASES=L-alone-whole,H-alone-whole,static,mps-cp,prio-nopart timeout 560 \
	make "${MK[@]}" bench-prio PRIO_SET=round5 PRIO_BUDGET_S=500 PRIO_TIMEOUT_S=530 BENCH_OUT=/tmp/b > "$OUT/bench.out" 2>&1
rc=$?
cp -r /tmp/b/prio "$OUT/prio" 2>/dev/null; tar -czf "$OUT/p3.tgz" -C "$OUT" prio 2>/dev/null && rm -rf "$OUT/prio"
echo "bench rc $rc $(date +%T)"
sed -n '/== L /,/^Cells/p' /tmp/b/prio/summary.txt | grep -v "^Cells"
cp /tmp/b/prio/summary.txt "$OUT/summary.txt" 2>/dev/null
cp /tmp/b/prio/prio.csv "$OUT/prio.csv" 2>/dev/null
build/bin/nvtaskset --mps stop 2>/dev/null
pgrep -a nvidia-cuda-mps | grep -v defunct && echo "MPS daemons still running"
exit 0
