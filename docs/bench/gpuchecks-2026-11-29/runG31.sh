#!/bin/bash
# Run G31: make check-gpu-bridge on an H200 with the context synchronisations' debug notes (each
# wait that took its bridge in, each stop, with the bridge's number) and the MPS answers cut at
# their last whole row (build/dev/new: the commit under test); the notes seen in its logs.
set -u
cd build/dev/new || exit 1
J=$PWD/../../.jsonc
FL=("JSONC_CFLAGS=-I$J/include -I$J/include/json-c" "JSONC_LIBS=$J/lib/libjson-c.a")
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
date -u
make -j16 "${FL[@]}" all >"$OUT/build.log" 2>&1 || { tail -30 "$OUT/build.log"; exit 1; }
echo "== check-gpu-bridge $(date +%T)"
timeout 480 make "${FL[@]}" check-gpu-bridge GPU_LOG="$OUT/bridge" >"$OUT/bridge.console" 2>&1
echo "rc $?"
tail -40 "$OUT/bridge.console"
echo "== the shim's notes of waits that took their bridges in, and of stops"
grep -rh "took it in\|not bridged from now on\|bridged again" "$OUT/bridge" | sort | uniq -c | sort -rn | head -20
pgrep -a nvidia-cuda-mps | grep -v defunct && echo "MPS daemons still running"
date -u
