#!/bin/bash
# Run R2: a host-bound eager service (bench-prio's eager kind: 8 steps of 16 small linear layers
# launched op by op, each step's argmax read by .item()) beside GEMM training, periodic and
# Poisson arrivals, two rounds: L alone on the whole GPU, static (GPCs 0-1 / 2-11), the default
# with its bridge trace (prio-trace), its steps never held (prio-hold0) and always held
# (prio-hold1); every request's steps timed (PRIO_STEP_TRACE). Built from build/dev/head (a
# git archive of HEAD).
set -u
cd build/dev/head || exit 1
J=$PWD/../../.jsonc
FL=("JSONC_CFLAGS=-I$J/include -I$J/include/json-c" "JSONC_LIBS=$J/lib/libjson-c.a")
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
date -u
make -j16 "${FL[@]}" all >"$OUT/build.log" 2>&1 || { tail -30 "$OUT/build.log"; exit 1; }
echo "built $(date +%T)"
mkdir -p "$OUT/r/steps" /tmp/nvt-bridge-trace
PRIO_T0=$(date +%s.%N)
export PRIO_T0
PRIO_STEP_TRACE=$OUT/r/steps PRIO_CONFIG_FILE=$PWD/tests/bench/prio/bridge.json PRIO_MIN_REQUESTS=150 PRIO_ROUNDS=2 \
	PRIO_L=torch PRIO_H=torch PRIO_KINDS=eager PRIO_ARRIVALS=periodic,poisson \
	PRIO_CASES=L-alone-whole,H-alone-whole,static,prio-trace,prio-hold0,prio-hold1 timeout 420 make "${FL[@]}" bench-prio \
	PRIO_SET=round5 PRIO_BUDGET_S=390 PRIO_TIMEOUT_S=410 BENCH_OUT=/tmp/b >"$OUT/r/bench.out" 2>&1
echo "bench rc $? $(date +%T)"
sed -n '/== L /,/^Cells/p' /tmp/b/prio/summary.txt
cp /tmp/b/prio/summary.txt /tmp/b/prio/prio.csv /tmp/b/prio/raw.tar.xz "$OUT/r/" 2>/dev/null
tar -czf "$OUT/r/bridgetrace.tgz" -C /tmp nvt-bridge-trace 2>/dev/null
build/bin/nvtaskset --mps stop 2>/dev/null
pgrep -a nvidia-cuda-mps | grep -v defunct && echo "MPS daemons still running"
date -u
tar -czf "$OUT/r2.tgz" -C "$OUT" r && rm -rf "$OUT/r"
exit 0
