#!/bin/bash
# Run G19: commit 393ef3b (build/dev/new): tests/gpu/mem.sh with its verdict on the cost of
# counting by tests/gpu/memchurn.py, cut at 290 s.
set -u
cd build/dev/new || exit 1
J=$PWD/../../.jsonc
FL=("JSONC_CFLAGS=-I$J/include -I$J/include/json-c" "JSONC_LIBS=$J/lib/libjson-c.a")
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
date -u
mkdir -p "$OUT/r/gpu"
make -j16 "${FL[@]}" all >"$OUT/build.log" 2>&1 || { tail -30 "$OUT/build.log"; exit 1; }
build/bin/nvtaskset --calibrate >/dev/null 2>&1
echo "== mem $(date +%T)"
timeout 290 bash tests/gpu/mem.sh "$OUT/r/gpu" >"$OUT/r/mem.console" 2>&1
echo "== rc $? $(date +%T)"
grep "FAIL\|passed\|cost\|first deciles\|paired limit/none" "$OUT/r/mem.console" | cut -c1-250
build/bin/nvtaskset --mps stop >/dev/null 2>&1
pgrep -a nvidia-cuda-mps | grep -v defunct && echo "MPS daemons still running"
date -u
tar -czf "$OUT/g19.tgz" -C "$OUT" r && rm -rf "$OUT/r"
exit 0
