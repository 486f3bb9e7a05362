#!/bin/bash
# Run S2: this tree's GPU checks of the waits it bridges: make check-gpu-hostfn (a driver-API
# service whose waits are host functions or polled events, its query form included) and make
# check-gpu-bridge.
set -u
J=$PWD/build/.jsonc
FL=("JSONC_CFLAGS=-I$J/include -I$J/include/json-c" "JSONC_LIBS=$J/lib/libjson-c.a")
make -j16 "${FL[@]}" all >"$OUT/build.log" 2>&1 || { tail -30 "$OUT/build.log"; exit 1; }
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
date -u
mkdir -p "$OUT/r"
echo "== make check-gpu-hostfn"; timeout 200 make "${FL[@]}" check-gpu-hostfn GPU_LOG="$OUT/r/gpu" 2>&1 | tail -16
echo "== make check-gpu-bridge"; timeout 280 make "${FL[@]}" check-gpu-bridge GPU_LOG="$OUT/r/gpu" 2>&1 | tail -25
build/bin/nvtaskset --mps stop 2>/dev/null
pgrep -a nvidia-cuda-mps | grep -v defunct && echo "MPS daemons still running"
date -u
rm -rf "$OUT/r/gpu/hostfn/hostfn" "$OUT/r/gpu/bridge"
tar -czf "$OUT/s2.tgz" -C "$OUT" r && rm -rf "$OUT/r"
exit 0
