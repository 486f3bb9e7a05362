#!/bin/bash
# Run G18: commit f8e12c8's code (build/dev/new): check-gpu's memory limits (tests/gpu/mem.sh,
# cut at 300 s; tests/gpu/memdriver.sh), then make check-gpu-hostfn (cut at 90 s).
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
timeout 300 bash tests/gpu/mem.sh "$OUT/r/gpu" >"$OUT/r/mem.console" 2>&1
echo "== rc $? $(date +%T)"
grep "FAIL\|passed" "$OUT/r/mem.console" | cut -c1-250
echo "== memdriver $(date +%T)"
timeout 100 bash tests/gpu/memdriver.sh "$OUT/r/gpu" >"$OUT/r/memdriver.console" 2>&1
echo "== rc $? $(date +%T)"
grep "FAIL\|passed" "$OUT/r/memdriver.console" | cut -c1-250
build/bin/nvtaskset --mps stop >/dev/null 2>&1
echo "== check-gpu-hostfn $(date +%T)"
timeout 90 make "${FL[@]}" check-gpu-hostfn GPU_LOG="$OUT/r/gpu" >"$OUT/r/hostfn.console" 2>&1
echo "== rc $? $(date +%T)"
grep "PASS\|FAIL\|passed" "$OUT/r/hostfn.console" | cut -c1-250
build/bin/nvtaskset --mps stop >/dev/null 2>&1
pgrep -a nvidia-cuda-mps | grep -v defunct && echo "MPS daemons still running"
date -u
tar -czf "$OUT/g18.tgz" -C "$OUT" r && rm -rf "$OUT/r"
exit 0
