#!/bin/bash
# Run G46 (commit d1ba81ae): make check-gpu-preempt killed by a timeout mid-run (build/dev/new: the commit under
# test); every MPS daemon it started must be gone after.
set -u
cd build/dev/new || exit 1
J=$PWD/../../.jsonc
FL=("JSONC_CFLAGS=-I$J/include -I$J/include/json-c" "JSONC_LIBS=$J/lib/libjson-c.a")
date -u
make -j16 "${FL[@]}" all >"$OUT/build.log" 2>&1 || { tail -30 "$OUT/build.log"; exit 1; }
pgrep -a nvidia-cuda-mps-control | grep -v defunct || echo "before: no MPS daemon"
timeout 75 make "${FL[@]}" check-gpu-preempt GPU_LOG="$OUT/pre" >"$OUT/preempt.console" 2>&1
echo "rc $? $(date +%T)"
sleep 5
pgrep -a nvidia-cuda-mps | grep -v defunct || echo "after the kill: no MPS daemon"
tail -3 "$OUT/pre/preempt.out" 2>/dev/null
date -u
