#!/bin/bash
# Run G43 (commit 6cc26b7a): a layered array's count under --mem against what the driver takes (build/dev/new):
# memapp's 1D layered chains (2048 layers of 16384 floats, 1 and 15 levels) and a 2D layered
# one, plain (the driver's free memory) and under nvtaskset --no-mps --mem 8G (the shim's count,
# its cuMemGetInfo), each in a fresh process.
set -u
cd build/dev/new || exit 1
J=$PWD/../../.jsonc
FL=("JSONC_CFLAGS=-I$J/include -I$J/include/json-c" "JSONC_LIBS=$J/lib/libjson-c.a")
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
date -u
make -j16 "${FL[@]}" all >"$OUT/build.log" 2>&1 || { tail -30 "$OUT/build.log"; exit 1; }
cc -std=gnu11 -O2 -Iinclude -Isrc -o "$OUT/memapp" tests/fake/memapp.c -ldl || exit 1
for shape in layered:16384:0:2048:1 layered:16384:0:2048:15 layered:4096:4:256:1 layered:256:256:8:9; do
	for how in plain limit; do
		pre=()
		[ "$how" = limit ] && pre=(build/bin/nvtaskset --no-mps --mem 8G -c 0-65)
		echo "$shape $how: $(timeout 60 "${pre[@]}" "$OUT/memapp" info "$shape" info 2>&1 | tr '\n' ' ')"
	done
done
rm -f "$OUT/memapp"
date -u
