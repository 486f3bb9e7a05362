#!/bin/bash
# Run R3: make check-gpu on this tree (calibration, exact SMs, end to end, CUDA graphs, SM count,
# libsmctrl), as the acceptance runs it.
set -u
J=$PWD/build/.jsonc
MK=("JSONC_CFLAGS=-I$J/include -I$J/include/json-c" "JSONC_LIBS=$J/lib/libjson-c.a")
make -j16 "${MK[@]}" all >$OUT/build.log 2>&1 || { tail -30 $OUT/build.log; exit 1; }
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
date -u
timeout 570 make "${MK[@]}" check-gpu GPU_LOG=$OUT/gpu > $OUT/check-gpu.out 2>&1; echo "check-gpu rc $?"
grep -E '^(FAIL)|passed|failed' $OUT/check-gpu.out | tail -20
build/bin/nvtaskset --mps stop 2>/dev/null
pgrep -a nvidia-cuda-mps | grep -v defunct && echo "MPS daemons still running"
date -u
exit 0
