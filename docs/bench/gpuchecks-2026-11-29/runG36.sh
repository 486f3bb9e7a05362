#!/bin/bash
# Run G36 (commit d569da5): the memory limits' GPU checks on an H200 (build/dev/new: the commit under test): make
# check-gpu-memdriver (what the driver frees and takes, against the fake's model), make
# check-gpu-cbid, and tests/gpu/mem.sh (PyTorch's allocators under --mem, cudaMallocAsync's pools
# among them; 3 rounds of the counting cost).
set -u
cd build/dev/new || exit 1
J=$PWD/../../.jsonc
FL=("JSONC_CFLAGS=-I$J/include -I$J/include/json-c" "JSONC_LIBS=$J/lib/libjson-c.a")
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
date -u
make -j16 "${FL[@]}" all >"$OUT/build.log" 2>&1 || { tail -30 "$OUT/build.log"; exit 1; }
echo "== check-gpu-memdriver $(date +%T)"
timeout 200 make "${FL[@]}" check-gpu-memdriver GPU_LOG="$OUT/memdriver" >"$OUT/memdriver.console" 2>&1
echo "rc $?"
tail -12 "$OUT/memdriver.console"
echo "== check-gpu-cbid $(date +%T)"
timeout 60 make "${FL[@]}" check-gpu-cbid >"$OUT/cbid.console" 2>&1
echo "rc $?"
tail -3 "$OUT/cbid.console"
echo "== mem.sh $(date +%T)"
ROUNDS=3 timeout 300 tests/gpu/mem.sh "$OUT/mem" >"$OUT/mem.console" 2>&1
echo "rc $?"
tail -30 "$OUT/mem.console"
pgrep -a nvidia-cuda-mps | grep -v defunct && echo "MPS daemons still running"
date -u
