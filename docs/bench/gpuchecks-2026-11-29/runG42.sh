#!/bin/bash
# Run G42 (commit 858f4e69): the memory limit on an H200 (build/dev/new): tests/gpu/memdriver.sh
# and tests/gpu/mem.sh (one round: its cost check needs more and is left to a longer run), with
# cuMemAlloc counted as the driver rounds it.
set -u
cd build/dev/new || exit 1
J=$PWD/../../.jsonc
FL=("JSONC_CFLAGS=-I$J/include -I$J/include/json-c" "JSONC_LIBS=$J/lib/libjson-c.a")
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
date -u
make -j16 "${FL[@]}" all >"$OUT/build.log" 2>&1 || { tail -30 "$OUT/build.log"; exit 1; }
echo "== memdriver $(date +%T)"
timeout 240 tests/gpu/memdriver.sh "$OUT/memdriver" >"$OUT/memdriver.console" 2>&1
echo "rc $?"
tail -3 "$OUT/memdriver.console"
echo "== mem.sh $(date +%T)"
ROUNDS=1 timeout 300 tests/gpu/mem.sh "$OUT/mem" >"$OUT/mem.console" 2>&1
echo "rc $?"
grep "PASS\|FAIL\|passed" "$OUT/mem.console" | cut -c1-200
rm -rf "$OUT/mem" "$OUT/memdriver"
build/bin/nvtaskset --mps stop >/dev/null 2>&1
pgrep -a nvidia-cuda-mps | grep -v defunct && echo "MPS daemons still running"
date -u
