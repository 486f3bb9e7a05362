#!/bin/bash
# Run F1: the end of the session's tree: make check-gpu-bridge, then make check-gpu's end-to-end
# part (ONLY_E2E=1).
set -u
J=$PWD/build/.jsonc
MK=("JSONC_CFLAGS=-I$J/include -I$J/include/json-c" "JSONC_LIBS=$J/lib/libjson-c.a")
make -j16 "${MK[@]}" all >$OUT/build.log 2>&1 || { tail -30 $OUT/build.log; exit 1; }
git log --oneline -1 2>/dev/null
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
date -u
timeout 200 make "${MK[@]}" check-gpu-bridge > $OUT/bridge.txt 2>&1; echo "check-gpu-bridge rc $?"
grep -E '^FAIL|failed|alone the bridge' $OUT/bridge.txt | tail -5
build/bin/nvtaskset --mps stop >/dev/null 2>&1
ONLY_E2E=1 timeout 330 make "${MK[@]}" check-gpu > $OUT/e2e.txt 2>&1; echo "check-gpu ONLY_E2E rc $?"
grep -E '^FAIL|passed|failed' $OUT/e2e.txt | tail -8
build/bin/nvtaskset --mps stop 2>/dev/null
pgrep -a nvidia-cuda-mps | grep -v defunct && echo "MPS daemons still running"
date -u
exit 0
