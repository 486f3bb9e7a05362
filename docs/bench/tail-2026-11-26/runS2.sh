#!/bin/bash
# Run S2: the token-by-token tail with the launch calls followed (no chain): bench-prio's tbt at
# random beside GEMM training, 2 rounds of 300 requests, the launch calls followed from the start
# (NVTASKSET_BRIDGE_REARM=1) and never (=0), each with the bridge's trace.
set -u
PRIO_T0=$(date +%s.%N)
export PRIO_T0
J=$PWD/build/.jsonc
MK=("JSONC_CFLAGS=-I$J/include -I$J/include/json-c" "JSONC_LIBS=$J/lib/libjson-c.a")
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
make -j16 "${MK[@]}" all >$OUT/build.log 2>&1 || { tail -30 $OUT/build.log; exit 1; }
rm -rf /tmp/nvt-bridge-trace; mkdir -p /tmp/nvt-bridge-trace
PRIO_MIN_REQUESTS=300 PRIO_ROUNDS=2 PRIO_L=torch PRIO_H=torch PRIO_CONFIG_FILE=docs/bench/tail-2026-11-26/tail.json \
	PRIO_KINDS=tbt:poisson PRIO_CASES=L-alone-whole,p-chained-trace,p-unchained-trace \
	timeout 500 make "${MK[@]}" bench-prio PRIO_SET=round5 PRIO_BUDGET_S=450 PRIO_TIMEOUT_S=480 \
	BENCH_OUT=/tmp/b > $OUT/bench.out 2>&1
echo "bench rc $? $(date +%T)"
sed -n '/== L /,/^Cells/p' /tmp/b/prio/summary.txt | grep -v "^Cells"
cp /tmp/b/prio/summary.txt $OUT/ 2>/dev/null
cp /tmp/b/prio/raw.tar.xz $OUT/raw.tar.xz
tar -C /tmp -cJf $OUT/traces.tar.xz nvt-bridge-trace
ls -la /tmp/nvt-bridge-trace
pgrep -a nvidia-cuda-mps | grep -v defunct && echo "MPS daemons still running"
exit 0
