#!/bin/bash
# Run G12: make check-gpu-bridge of commit 32efbba (build/dev/new: the bridger waits for the
# latest wait that left the callback, stops at the program's exit), under a timeout.
set -u
cd build/dev/new || exit 1
J=$PWD/../../.jsonc
FL=("JSONC_CFLAGS=-I$J/include -I$J/include/json-c" "JSONC_LIBS=$J/lib/libjson-c.a")
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
date -u
mkdir -p "$OUT/r"
make -j16 "${FL[@]}" all >"$OUT/build.log" 2>&1 || { tail -30 "$OUT/build.log"; exit 1; }
NVTASKSET_BRIDGE_DEBUG=1 timeout 240 make "${FL[@]}" check-gpu-bridge GPU_LOG="$OUT/r/gpu" >"$OUT/r/bridge.console" 2>&1
echo "rc $?"
grep -v "^nvtaskset: bridge\|^copyapp" "$OUT/r/bridge.console" | grep "PASS\|FAIL\|passed\|failed" | tail -20
grep -h "bridge: [0-9]* context\|not bridged" "$OUT/r/gpu/bridge/"*ctx*.log | cut -c1-300
build/bin/nvtaskset --mps stop >/dev/null 2>&1
pgrep -a nvidia-cuda-mps | grep -v defunct && echo "MPS daemons still running"
date -u
exit 0
