#!/bin/bash
# Run G3: check-gpu-bridge's context-synchronisation case inside the level MPS servers
# (gemm-small-ctx-product-mps), which G2 found unbridged (p50 392.7 us), four times with the
# bridge's debug report kept, beside the same case outside MPS; then check-gpu-preempt again.
set -u
cd build/dev/head || exit 1
J=$PWD/../../.jsonc
FL=("JSONC_CFLAGS=-I$J/include -I$J/include/json-c" "JSONC_LIBS=$J/lib/libjson-c.a")
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
date -u
mkdir -p "$OUT/r"
make -j16 "${FL[@]}" all >"$OUT/build.log" 2>&1 || { tail -30 "$OUT/build.log"; exit 1; }
echo "built $(date +%T)"
for i in 1 2 3 4; do
	NVTASKSET_BRIDGE_DEBUG=1 timeout 120 tests/bench/timeline/run.sh "$OUT/r/t$i" gemm-small-ctx-product-mps \
		$([ "$i" = 1 ] && echo gemm-small-ctx-product) >"$OUT/r/t$i.out" 2>&1
	grep "ctx-product" "$OUT/r/t$i/timeline.txt" | cut -c1-110
	grep -h "bridge" "$OUT/r/t$i/"*ctx-product-mps.log | head -5
done
echo "== make check-gpu-preempt $(date +%T)"
timeout 200 make "${FL[@]}" check-gpu-preempt GPU_LOG="$OUT/r/gpu" >"$OUT/r/preempt.console" 2>&1
echo "rc $?"
grep "PASS\|FAIL" "$OUT/r/preempt.console" | tail -12
build/bin/nvtaskset --mps stop 2>/dev/null
pgrep -a nvidia-cuda-mps | grep -v defunct && echo "MPS daemons still running"
date -u
find "$OUT/r" \( -name '*.svc' -o -name '*.batch' \) -delete
tar -czf "$OUT/g3.tgz" -C "$OUT" r && rm -rf "$OUT/r"
exit 0
