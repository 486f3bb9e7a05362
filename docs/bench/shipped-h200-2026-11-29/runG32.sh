#!/bin/bash
# Run G32: commit 8e8264d (build/dev/new) on an H200: make bench-prio PRIO_SET=round5 (the
# PyTorch service's kinds at 10 % duty beside GEMM training: alone, static, MPS client priority,
# the default).
set -u
PRIO_T0=$(date +%s.%N)
export PRIO_T0
cd build/dev/new || exit 1
J=$PWD/../../.jsonc
FL=("JSONC_CFLAGS=-I$J/include -I$J/include/json-c" "JSONC_LIBS=$J/lib/libjson-c.a")
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
date -u
make -j16 "${FL[@]}" all >"$OUT/build.log" 2>&1 || { tail -30 "$OUT/build.log"; exit 1; }
timeout 560 make "${FL[@]}" bench-prio PRIO_SET=round5 BENCH_OUT="$OUT" >"$OUT/console.txt" 2>&1
echo "rc $?"
build/bin/nvtaskset --mps stop >/dev/null 2>&1
pgrep -a nvidia-cuda-mps | grep -v defunct && echo "MPS daemons still running"
tail -60 "$OUT/console.txt" | cut -c1-220
date -u
exit 0
