#!/bin/bash
# Run G2: the GPU checks of HEAD at the session's end (built from build/dev/head, a git archive
# of it): make check-gpu-preempt, check-gpu-bridge, then check-gpu's end-to-end and CUDA graph
# parts (ONLY_E2E=1), each under a timeout.
set -u
cd build/dev/head || exit 1
J=$PWD/../../.jsonc
FL=("JSONC_CFLAGS=-I$J/include -I$J/include/json-c" "JSONC_LIBS=$J/lib/libjson-c.a")
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
date -u
mkdir -p "$OUT/r"
make -j16 "${FL[@]}" all >"$OUT/build.log" 2>&1 || { tail -30 "$OUT/build.log"; exit 1; }
echo "built $(date +%T)"
for t in preempt bridge; do
	echo "== make check-gpu-$t $(date +%T)"
	timeout 200 make "${FL[@]}" check-gpu-$t GPU_LOG="$OUT/r/gpu" >"$OUT/r/$t.console" 2>&1
	echo "rc $?"
	grep -v "^nvtaskset: bridge\|^copyapp" "$OUT/r/$t.console" | grep "PASS\|FAIL\|passed\|failed" | tail -20
	build/bin/nvtaskset --mps stop 2>/dev/null
done
echo "== ONLY_E2E=1 make check-gpu $(date +%T)"
ONLY_E2E=1 timeout 330 make "${FL[@]}" check-gpu GPU_LOG="$OUT/r/gpu" >"$OUT/r/e2e.console" 2>&1
echo "rc $?"
grep -c "^PASS" "$OUT/r/e2e.console"; grep "FAIL\|passed\|failed" "$OUT/r/e2e.console" | tail -20
build/bin/nvtaskset --mps stop 2>/dev/null
pgrep -a nvidia-cuda-mps | grep -v defunct && echo "MPS daemons still running"
date -u
rm -rf "$OUT/r/gpu/bridge"
tar -czf "$OUT/g2.tgz" -C "$OUT" r && rm -rf "$OUT/r"
exit 0
