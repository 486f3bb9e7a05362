#!/bin/bash
# Run R1: HEAD's GPU checks (make check-gpu-bridge, make check-gpu-hostfn), then bench-prio's
# tbtsleep (a token-by-token service that sleeps 0.4 ms between its event queries) and tbtpoll
# beside GEMM training: L alone on the whole GPU, static (GPCs 0-1 / 2-11), MPS client priority,
# the default of a priority without a partition; one round, fresh processes.
set -u
J=$PWD/build/.jsonc
FL=("JSONC_CFLAGS=-I$J/include -I$J/include/json-c" "JSONC_LIBS=$J/lib/libjson-c.a")
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
date -u
pgrep -a nvidia-cuda-mps | grep -v defunct && echo "MPS daemons found running at the start"
make -j16 "${FL[@]}" all >"$OUT/build.log" 2>&1 || { tail -30 "$OUT/build.log"; exit 1; }
echo "built $(date +%T)"
mkdir -p "$OUT/r"
echo "== make check-gpu-bridge"; timeout 240 make "${FL[@]}" check-gpu-bridge GPU_LOG="$OUT/r/gpu" >"$OUT/r/bridge.console" 2>&1; echo "rc $?"
grep -v "^nvtaskset: bridge\|^copyapp" "$OUT/r/bridge.console" | tail -25
echo "== make check-gpu-hostfn $(date +%T)"; timeout 150 make "${FL[@]}" check-gpu-hostfn GPU_LOG="$OUT/r/gpu" >"$OUT/r/hostfn.console" 2>&1; echo "rc $?"
grep "passed\|FAIL" "$OUT/r/hostfn.console"
build/bin/nvtaskset --mps stop 2>/dev/null
echo "== bench-prio $(date +%T)"
PRIO_T0=$(date +%s.%N)
export PRIO_T0
PRIO_MIN_REQUESTS=150 PRIO_ROUNDS=1 PRIO_L=torch PRIO_H=torch PRIO_KINDS=tbtsleep,tbtpoll:poisson \
	PRIO_CASES=L-alone-whole,H-alone-whole,static,mps-cp,prio-nopart timeout 300 make "${FL[@]}" bench-prio \
	PRIO_SET=round5 PRIO_BUDGET_S=270 PRIO_TIMEOUT_S=290 BENCH_OUT=/tmp/b >"$OUT/r/bench.out" 2>&1
echo "bench rc $? $(date +%T)"
sed -n '/== L /,/^Cells/p' /tmp/b/prio/summary.txt
cp /tmp/b/prio/summary.txt /tmp/b/prio/prio.csv /tmp/b/prio/raw.tar.xz "$OUT/r/" 2>/dev/null
build/bin/nvtaskset --mps stop 2>/dev/null
pgrep -a nvidia-cuda-mps | grep -v defunct && echo "MPS daemons still running"
date -u
rm -rf "$OUT/r/gpu/hostfn/hostfn" "$OUT/r/gpu/bridge"
tar -czf "$OUT/r1.tgz" -C "$OUT" r && rm -rf "$OUT/r"
exit 0
