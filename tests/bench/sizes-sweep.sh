#!/usr/bin/env bash
# One device call of the partition-size benchmark, within ~560 s:
#   1. SIZES_A (default 4,6,...,66): all workloads, mps and sm-limit, one round;
#   2. SIZES_B (default 4,8,16,24,32,42,50,66): the decode GEMM alone, mps,
#      sm-limit, spread and nvtaskset, DECODE_ROUNDS rounds (default 1).
# Writes OUTDIR/run.tgz (device.txt, build.log, sweep/ and decode/ as
# tests/bench/sizes.py writes them, and their logs): the device tool brings
# back at most 8 files.
# Usage: tests/bench/sizes-sweep.sh OUTDIR   (on the GPU machine, as root)
set -u
OUT=${1:?usage: sizes-sweep.sh OUTDIR}
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
W=$(mktemp -d /tmp/nvt-sweep.XXXX) || exit 1
cd "$ROOT" || exit 1
{ nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; date -u; } >"$W/device.txt"
make -s -j16 all >"$W/build.log" 2>&1 || { tail -20 "$W/build.log"; exit 1; }
timeout 60 build/bin/nvtaskset --calibrate >>"$W/device.txt" 2>&1
SIZES=${SIZES_A:-$(seq -s, 4 2 66)} SIZES_ROUNDS=1 SIZES_PROFILE=0 SIZES_CONFIGS=mps,sm-limit \
	SIZES_BUDGET_S=${BUDGET_A:-330} timeout 380 python3 tests/bench/sizes.py "$ROOT" "$W/sweep" >"$W/sweep.log" 2>&1
echo "sweep rc=$?"
date -u >>"$W/device.txt"
SIZES=${SIZES_B:-4,8,16,24,32,42,50,66} SIZES_ROUNDS=${DECODE_ROUNDS:-1} SIZES_ONLY=decode SIZES_PROFILE=0 \
	SIZES_CONFIGS=mps,sm-limit,spread,nvtaskset SIZES_BUDGET_S=${BUDGET_B:-150} \
	timeout 180 python3 tests/bench/sizes.py "$ROOT" "$W/decode" >"$W/decode.log" 2>&1
echo "decode rc=$?"
date -u >>"$W/device.txt"
mkdir -p "$OUT" && tar czf "$OUT/run.tgz" -C "$W" . && rm -rf "$W"
