#!/bin/bash
# Run G37: the memory limit's stream-ordered allocations on an H200 (build/dev/new: the commit under
# test): tests/gpu/memdriver.sh (memapp under nvtaskset --mem 2G: a created stream's cuMemAllocAsync,
# whose device the shim asks in the allocation's callback, and each kind of pool), and PyTorch's
# cudaMallocAsync backend under --mem 4G allocating on a side stream and inside a CUDA graph's
# capture (build/dev/captureprobe.py), then filling to the limit.
set -u
cd build/dev/new || exit 1
J=$PWD/../../.jsonc
FL=("JSONC_CFLAGS=-I$J/include -I$J/include/json-c" "JSONC_LIBS=$J/lib/libjson-c.a")
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
date -u
make -j16 "${FL[@]}" all >"$OUT/build.log" 2>&1 || { tail -30 "$OUT/build.log"; exit 1; }
echo "== memdriver $(date +%T)"
[ -n "${SKIP_MEMDRIVER:-}" ] || timeout 240 tests/gpu/memdriver.sh "$OUT/memdriver" >"$OUT/memdriver.console" 2>&1
echo "rc $?"
tail -14 "$OUT/memdriver.console"
echo "== capture probe $(date +%T)"
echo "== mem.sh $(date +%T)"
ROUNDS=1 timeout 300 tests/gpu/mem.sh "$OUT/mem" >"$OUT/mem.console" 2>&1
echo "rc $?"
grep -c PASS "$OUT/mem.console"; grep "FAIL\|capture\|passed" "$OUT/mem.console"
for conf in backend:cudaMallocAsync backend:native; do
	for how in plain nvtaskset; do
		echo "-- $conf $how"
		pre=()
		[ "$how" = nvtaskset ] && pre=(build/bin/nvtaskset --no-mps --mem 4G)
		PYTORCH_CUDA_ALLOC_CONF=$conf timeout 180 "${pre[@]}" python3 ../captureprobe.py \
			>"$OUT/capture-$how-${conf#backend:}.txt" 2>&1
		echo "rc $?"
		grep -v "^ *File\|^    " "$OUT/capture-$how-${conf#backend:}.txt" | tail -4 | cut -c1-300
	done
done
date -u
