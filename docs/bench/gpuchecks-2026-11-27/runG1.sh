#!/bin/bash
# Run G1: what the driver answers a control naming a gone client, another file's client or no
# such object (build/dev/rmgone.c), then the GPU checks of HEAD (built from build/dev/head, a
# git archive of it): make check-gpu-preempt (timeslices read back and by their effect, through
# the shim's ioctl hook), check-gpu-bridge, check-gpu-hostfn.
set -u
cd build/dev/head || exit 1
J=$PWD/../../.jsonc
FL=("JSONC_CFLAGS=-I$J/include -I$J/include/json-c" "JSONC_LIBS=$J/lib/libjson-c.a")
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
date -u
mkdir -p "$OUT/r"
gcc -O1 -Wall -Isrc -Iinclude -o /tmp/rmgone ../rmgone.c && /tmp/rmgone | tee "$OUT/r/rmgone.txt"
make -j16 "${FL[@]}" all >"$OUT/build.log" 2>&1 || { tail -30 "$OUT/build.log"; exit 1; }
echo "built $(date +%T)"
for t in preempt bridge hostfn; do
	echo "== make check-gpu-$t $(date +%T)"
	timeout 330 make "${FL[@]}" check-gpu-$t GPU_LOG="$OUT/r/gpu" >"$OUT/r/$t.console" 2>&1
	echo "rc $?"
	grep -v "^nvtaskset: bridge\|^copyapp" "$OUT/r/$t.console" | grep "PASS\|FAIL\|passed\|failed" | tail -30
	build/bin/nvtaskset --mps stop 2>/dev/null
done
pgrep -a nvidia-cuda-mps | grep -v defunct && echo "MPS daemons still running"
date -u
rm -rf "$OUT/r/gpu/hostfn/hostfn" "$OUT/r/gpu/bridge"
tar -czf "$OUT/g1.tgz" -C "$OUT" r && rm -rf "$OUT/r"
exit 0
