#!/bin/bash
# Run G44: the driver's rounding of cuMemAllocPitch, cuMemAllocManaged and the stream-ordered
# calls, and which cuMemUnmap calls it accepts (this directory's allocprobe2.c, copied to
# build/dev/allocprobe2.c), as the device tool ran it from the repository root with build/dev
# carried: bash build/dev/runG44.sh
set -u
cd build/dev || exit 1
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
date -u
gcc -O1 -I../../src -I../../include -o "$OUT/ap2" allocprobe2.c -ldl || exit 1
timeout 120 "$OUT/ap2" >"$OUT/allocprobe2.txt" 2>&1
echo "rc $?"
cat "$OUT/allocprobe2.txt"
rm -f "$OUT/ap2"
