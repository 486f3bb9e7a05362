#!/bin/bash
# Run G10: check-gpu's end-to-end and CUDA graph parts (ONLY_E2E=1) of commit 3781535
# (build/dev/new), under a timeout.
set -u
cd build/dev/new || exit 1
J=$PWD/../../.jsonc
FL=("JSONC_CFLAGS=-I$J/include -I$J/include/json-c" "JSONC_LIBS=$J/lib/libjson-c.a")
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
date -u
mkdir -p "$OUT/r"
make -j16 "${FL[@]}" all >"$OUT/build.log" 2>&1 || { tail -30 "$OUT/build.log"; exit 1; }
echo "built $(date +%T)"
ONLY_E2E=1 timeout 480 make "${FL[@]}" check-gpu GPU_LOG="$OUT/r/gpu" >"$OUT/r/e2e.console" 2>&1
echo "rc $?"
grep -c "^PASS" "$OUT/r/e2e.console"; grep "FAIL\|passed\|failed" "$OUT/r/e2e.console" | tail -20
build/bin/nvtaskset --mps stop 2>/dev/null
pgrep -a nvidia-cuda-mps | grep -v defunct && echo "MPS daemons still running"
date -u
tar -czf "$OUT/g10.tgz" -C "$OUT" r/e2e.console && rm -rf "$OUT/r"
exit 0
