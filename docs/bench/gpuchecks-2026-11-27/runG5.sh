#!/bin/bash
# Run G5: does a context-synchronised service whose threads share one CPU have its bridges taken
# in? check-gpu-bridge's gemm-small-ctx-product(-mps) cases with the service pinned to CPU 3
# (taskset -c 3; build/dev/head/tests/bench/timeline/run-pin.sh, run.sh with the two pinned
# cases added), in MPS twice and outside once, then the unpinned MPS case once.
set -u
cd build/dev/head || exit 1
J=$PWD/../../.jsonc
FL=("JSONC_CFLAGS=-I$J/include -I$J/include/json-c" "JSONC_LIBS=$J/lib/libjson-c.a")
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
nproc; date -u
mkdir -p "$OUT/r"
make -j16 "${FL[@]}" all >"$OUT/build.log" 2>&1 || { tail -30 "$OUT/build.log"; exit 1; }
echo "built $(date +%T)"
i=0
for c in gemm-small-ctx-product-mps-pin gemm-small-ctx-product-pin gemm-small-ctx-product-mps-pin gemm-small-ctx-product-mps; do
	i=$((i + 1))
	NVTASKSET_BRIDGE_DEBUG=1 timeout 100 tests/bench/timeline/run-pin.sh "$OUT/r/t$i" $c >"$OUT/r/t$i.out" 2>&1
	echo "== $c"
	grep "ctx-product" "$OUT/r/t$i/timeline.txt" | cut -c1-100
	grep -h "bridge" "$OUT/r/t$i/"*.log | grep -v "^nvtaskset: started" | cut -c1-400 | head -4
done
build/bin/nvtaskset --mps stop 2>/dev/null
pgrep -a nvidia-cuda-mps | grep -v defunct && echo "MPS daemons still running"
date -u
find "$OUT/r" \( -name '*.svc' -o -name '*.batch' \) -delete
tar -czf "$OUT/g5.tgz" -C "$OUT" r && rm -rf "$OUT/r"
exit 0
