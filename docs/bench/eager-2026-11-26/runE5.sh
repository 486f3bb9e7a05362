#!/bin/bash
# Run E5: make check-gpu-bridge with the plain-launch gap checks.
set -u
J=build/.jsonc
make -j16 "JSONC_CFLAGS=-I$J/include -I$J/include/json-c" JSONC_LIBS=$J/lib/libjson-c.a all >$OUT/build.log 2>&1 || { tail -30 $OUT/build.log; exit 1; }
echo "built $(date +%T)"
timeout 400 make check-gpu-bridge GPU_LOG=$OUT/gpu > $OUT/check-gpu-bridge.txt 2>&1; echo "check-gpu-bridge rc $?"
grep -E "PASS|FAIL|failed" $OUT/check-gpu-bridge.txt
pgrep -a nvidia-cuda-mps; nvidia-smi --query-gpu=name --format=csv,noheader
