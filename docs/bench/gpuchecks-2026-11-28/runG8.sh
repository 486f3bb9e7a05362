#!/bin/bash
# Run G8: make check-gpu-bridge in build/dev/new (commit e0e62e4: the shim's thread moves off the
# waiting thread's CPU; the check has the met and pin cases), its timeline kept.
set -u
cd build/dev/new || exit 1
J=$PWD/../../.jsonc
FL=("JSONC_CFLAGS=-I$J/include -I$J/include/json-c" "JSONC_LIBS=$J/lib/libjson-c.a")
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
nproc; date -u
mkdir -p "$OUT/r"
make -j16 "${FL[@]}" all >"$OUT/build.log" 2>&1 || { tail -30 "$OUT/build.log"; exit 1; }
echo "built $(date +%T)"
NVTASKSET_BRIDGE_DEBUG=1 timeout 560 make "${FL[@]}" check-gpu-bridge GPU_LOG="$OUT/r/gpu" >"$OUT/r/bridge.console" 2>&1
echo "rc $?"
grep -v "^nvtaskset: bridge\|^copyapp" "$OUT/r/bridge.console" | grep "PASS\|FAIL\|passed\|failed" | tail -30
cut -c1-130 "$OUT/r/gpu/bridge/timeline.txt"
grep -h "bridge: [0-9]* context\|not bridged" "$OUT/r/gpu/bridge/"*ctx*.log | cut -c1-300
build/bin/nvtaskset --mps stop 2>/dev/null
pgrep -a nvidia-cuda-mps | grep -v defunct && echo "MPS daemons still running"
date -u
find "$OUT/r" \( -name '*.svc' -o -name '*.batch' \) -delete
tar -czf "$OUT/g8.tgz" -C "$OUT" r && rm -rf "$OUT/r"
exit 0
