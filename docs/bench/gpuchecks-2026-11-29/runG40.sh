#!/bin/bash
# Run G40 (commit 1079bea2): the memory limit's and the ioctl hook's changes on an H200 (build/dev/new: the commit
# under test): tests/gpu/memdriver.sh (memapp under nvtaskset --mem against the real driver's
# free memory: arrays, mipmapped and layered, contexts, pools), tests/gpu/mem.sh (PyTorch and
# CUDA programs under --mem), make check-gpu-preempt (the ioctl hook reads the driver's
# channel-group allocations only on its own nodes: the time-slices still read back and take
# effect), and build/dev/allocprobe.c (this directory's allocprobe.c) (the driver's rounding of small cuMemAlloc sizes, its
# device nodes' numbers, a cuMemCreate handle's retains while mapped).
set -u
cd build/dev/new || exit 1
J=$PWD/../../.jsonc
FL=("JSONC_CFLAGS=-I$J/include -I$J/include/json-c" "JSONC_LIBS=$J/lib/libjson-c.a")
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
date -u
make -j16 "${FL[@]}" all >"$OUT/build.log" 2>&1 || { tail -30 "$OUT/build.log"; exit 1; }
echo "== allocprobe $(date +%T)"
gcc -O1 -Isrc -Iinclude -o "$OUT/allocprobe" ../allocprobe.c -ldl >"$OUT/allocprobe.build" 2>&1 &&
	timeout 120 "$OUT/allocprobe" >"$OUT/allocprobe.txt" 2>&1
echo "rc $?"
cut -c1-200 "$OUT/allocprobe.txt" | head -40
rm -f "$OUT/allocprobe"
echo "== memdriver $(date +%T)"
timeout 240 tests/gpu/memdriver.sh "$OUT/memdriver" >"$OUT/memdriver.console" 2>&1
echo "rc $?"
tail -14 "$OUT/memdriver.console"
echo "== mem.sh $(date +%T)"
ROUNDS=1 timeout 300 tests/gpu/mem.sh "$OUT/mem" >"$OUT/mem.console" 2>&1
echo "rc $?"
grep -c PASS "$OUT/mem.console"; grep "FAIL\|passed" "$OUT/mem.console"
echo "== preempt $(date +%T)"
timeout 450 make "${FL[@]}" check-gpu-preempt GPU_LOG="$OUT/gpu" >"$OUT/preempt.console" 2>&1
echo "rc $?"
tail -12 "$OUT/preempt.console"
build/bin/nvtaskset --mps stop >/dev/null 2>&1
pgrep -a nvidia-cuda-mps | grep -v defunct && echo "MPS daemons still running"
date -u
exit 0
