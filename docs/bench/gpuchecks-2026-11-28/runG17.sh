#!/bin/bash
# Run G17: commit f8e12c8's code (build/dev/new): check-gpu without its end-to-end part (the
# callback ids, calibration, exact SMs for every form, graphs, SM counts, memory limits,
# libsmctrl's interface), cut at 400 s, then check-gpu-preempt (cut at 150 s).
set -u
cd build/dev/new || exit 1
J=$PWD/../../.jsonc
FL=("JSONC_CFLAGS=-I$J/include -I$J/include/json-c" "JSONC_LIBS=$J/lib/libjson-c.a")
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
date -u
mkdir -p "$OUT/r"
make -j16 "${FL[@]}" all >"$OUT/build.log" 2>&1 || { tail -30 "$OUT/build.log"; exit 1; }
echo "== check-gpu SKIP_E2E $(date +%T)"
SKIP_E2E=1 timeout 400 make "${FL[@]}" check-gpu GPU_LOG="$OUT/r/gpu" >"$OUT/r/check-gpu.console" 2>&1
echo "== rc $? $(date +%T)"
grep -c "^PASS" "$OUT/r/check-gpu.console"; grep "^FAIL\|passed, \|^SKIP" "$OUT/r/check-gpu.console" | cut -c1-250
build/bin/nvtaskset --mps stop >/dev/null 2>&1
echo "== check-gpu-preempt $(date +%T)"
timeout 150 make "${FL[@]}" check-gpu-preempt GPU_LOG="$OUT/r/gpu" >"$OUT/r/preempt.console" 2>&1
echo "== rc $? $(date +%T)"
grep "PASS\|FAIL\|passed" "$OUT/r/preempt.console" | cut -c1-250
build/bin/nvtaskset --mps stop >/dev/null 2>&1
pgrep -a nvidia-cuda-mps | grep -v defunct && echo "MPS daemons still running"
date -u
tar -czf "$OUT/g17.tgz" -C "$OUT" r && rm -rf "$OUT/r"
exit 0
