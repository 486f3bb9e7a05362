#!/bin/bash
# Run G45 (commit 3fea104c): the session's final code (build/dev/new: a git archive of the commit under test) on
# the GPU: make check-gpu-cbid, check-gpu's end-to-end and CUDA graph parts (ONLY_E2E=1), tests/gpu/memdriver.sh
# (the driver's own answers the fake driver copies), tests/gpu/mem.sh (programs under --mem,
# one round) and make check-gpu-preempt, each under a timeout; in two calls of the device tool:
# bash build/dev/runG45.sh a (memdriver, end to end), then bash build/dev/runG45.sh b (the rest).
set -u
part=${1:-a}
cd build/dev/new || exit 1
J=$PWD/../../.jsonc
FL=("JSONC_CFLAGS=-I$J/include -I$J/include/json-c" "JSONC_LIBS=$J/lib/libjson-c.a")
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
date -u
mkdir -p "$OUT/r"
make -j16 "${FL[@]}" all >"$OUT/build.log" 2>&1 || { tail -30 "$OUT/build.log"; exit 1; }
if [ "$part" = a ]; then
echo "== memdriver $(date +%T)"
timeout 150 tests/gpu/memdriver.sh "$OUT/r/memdriver" >"$OUT/r/memdriver.console" 2>&1
echo "rc $?"
grep "FAIL\|passed" "$OUT/r/memdriver.console" | tail -8
echo "== cbid $(date +%T)"
timeout 60 make "${FL[@]}" check-gpu-cbid 2>&1 | tail -4
echo "== e2e $(date +%T)"
ONLY_E2E=1 timeout 360 make "${FL[@]}" check-gpu GPU_LOG="$OUT/r/gpu" >"$OUT/r/e2e.console" 2>&1
echo "rc $?"
grep -c "^PASS" "$OUT/r/e2e.console"; grep "FAIL\|passed\|failed" "$OUT/r/e2e.console" | tail -10
build/bin/nvtaskset --mps stop >/dev/null 2>&1
tar -czf "$OUT/g45a.tgz" -C "$OUT" r/memdriver.console r/e2e.console
else
echo "== mem.sh $(date +%T)"
ROUNDS=1 timeout 120 tests/gpu/mem.sh "$OUT/r/mem" >"$OUT/r/mem.console" 2>&1
echo "rc $?"
grep -c PASS "$OUT/r/mem.console"; grep "FAIL\|passed" "$OUT/r/mem.console" | tail -6
echo "== preempt $(date +%T)"
timeout 100 make "${FL[@]}" check-gpu-preempt GPU_LOG="$OUT/r/pre" >"$OUT/r/preempt.console" 2>&1
echo "rc $?"
tail -12 "$OUT/r/preempt.console"
build/bin/nvtaskset --mps stop >/dev/null 2>&1
tar -czf "$OUT/g45b.tgz" -C "$OUT" r/mem.console r/preempt.console
fi
pgrep -a nvidia-cuda-mps | grep -v defunct && echo "MPS daemons still running"
date -u
rm -rf "$OUT/r"
exit 0
