#!/bin/bash
# Run G23: commit 67332fd (build/dev/new) on an H200: check-gpu's end-to-end and graph parts
# (ONLY_E2E), cut at 230 s, then tests/gpu/mem.sh (GPU memory limits), cut at 290 s.
set -u
cd build/dev/new || exit 1
J=$PWD/../../.jsonc
FL=("JSONC_CFLAGS=-I$J/include -I$J/include/json-c" "JSONC_LIBS=$J/lib/libjson-c.a")
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
date -u
mkdir -p "$OUT/r"
make -j16 "${FL[@]}" all >"$OUT/build.log" 2>&1 || { tail -30 "$OUT/build.log"; exit 1; }
echo "== e2e $(date +%T)"
ONLY_E2E=1 timeout 230 make "${FL[@]}" check-gpu GPU_LOG="$OUT/r/gpu" >"$OUT/r/e2e.console" 2>&1
echo "rc $? $(date +%T)"
grep -c "^PASS" "$OUT/r/e2e.console"; grep "^FAIL\|passed, " "$OUT/r/e2e.console" | cut -c1-250
build/bin/nvtaskset --mps stop >/dev/null 2>&1
echo "== mem $(date +%T)"
timeout 290 tests/gpu/mem.sh "$OUT/r/mem" >"$OUT/r/mem.console" 2>&1
echo "rc $? $(date +%T)"
grep -c "^PASS" "$OUT/r/mem.console"; grep "^FAIL\|passed\|first decile\|limit/none" "$OUT/r/mem.console" | cut -c1-250
build/bin/nvtaskset --mps stop >/dev/null 2>&1
pgrep -a nvidia-cuda-mps | grep -v defunct && echo "MPS daemons still running"
date -u
find "$OUT/r" \( -name '*.so' -o -perm -u+x -type f \) -delete
tar -czf "$OUT/g23.tgz" -C "$OUT" r && rm -rf "$OUT/r"
exit 0
