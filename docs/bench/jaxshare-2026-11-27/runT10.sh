#!/bin/bash
# Run T10: this tree (w[5] a token; ctx_bridger clears the one its wait kept by compare-and-swap):
# make check-gpu-bridge and make check-gpu-hostfn.
set -u
J=$PWD/build/.jsonc
make -j16 "JSONC_CFLAGS=-I$J/include -I$J/include/json-c" JSONC_LIBS=$J/lib/libjson-c.a all >$OUT/build.log 2>&1 || { tail -30 $OUT/build.log; exit 1; }
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
date -u
echo "== make check-gpu-bridge"; timeout 240 make check-gpu-bridge GPU_LOG=$OUT/gpu 2>&1 | tail -25
echo "== make check-gpu-hostfn"; timeout 150 make check-gpu-hostfn GPU_LOG=$OUT/gpu 2>&1 | tail -11
build/bin/nvtaskset --mps stop 2>/dev/null
pgrep -a nvidia-cuda-mps | grep -v defunct && echo "MPS daemons still running"
date -u
tar -czf $OUT/gpu.tgz -C $OUT gpu && rm -rf $OUT/gpu
exit 0
