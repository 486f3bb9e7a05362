#!/bin/bash
# Run G13: make check-gpu-bridge of commit f982f3c (build/dev/new: the shim's thread starts on the
# task's CPUs; case gemm-small-ctx-product-self added), then the timeline's self case (the
# service's thread pinned to its CPU before its first CUDA call) with 5aba389 (build/dev/old)
# and f982f3c in turn, twice, the service's bridge report kept.
set -u
cd build/dev || exit 1
J=$PWD/../.jsonc
FL=("JSONC_CFLAGS=-I$J/include -I$J/include/json-c" "JSONC_LIBS=$J/lib/libjson-c.a")
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
nproc; date -u
mkdir -p "$OUT/r"
for t in old new; do
	make -C "$t" -j16 "${FL[@]}" all >"$OUT/build-$t.log" 2>&1 || { tail -30 "$OUT/build-$t.log"; exit 1; }
done
echo "built $(date +%T)"
echo "== make check-gpu-bridge $(date +%T)"
NVTASKSET_BRIDGE_DEBUG=1 timeout 300 make -C new "${FL[@]}" check-gpu-bridge GPU_LOG="$OUT/r/gpu" >"$OUT/r/bridge.console" 2>&1
echo "rc $?"
grep -v "^nvtaskset: bridge\|^copyapp" "$OUT/r/bridge.console" | grep "PASS\|FAIL\|passed\|failed" | tail -32
new/build/bin/nvtaskset --mps stop >/dev/null 2>&1
cut -c1-130 "$OUT/r/gpu/bridge/timeline.txt"
grep -h "bridge: [0-9]* context\|not bridged\|pinned" "$OUT/r/gpu/bridge/"*ctx*.log | cut -c1-300
i=0
for tc in old new old new; do
	c=gemm-small-ctx-product-self
	i=$((i + 1))
	NVTASKSET_BRIDGE_DEBUG=1 timeout 100 "$tc/tests/bench/timeline/run.sh" "$OUT/r/t$i" "$c" >"$OUT/r/t$i.out" 2>&1
	echo "== $i $tc $c $(date +%T)"
	grep "ctx-product" "$OUT/r/t$i/timeline.txt" | cut -c1-110
	grep -h "bridge: [0-9]* context\|pinned\|not bridged" "$OUT/r/t$i/"*.log | cut -c1-400 | head -4
	"$tc/build/bin/nvtaskset" --mps stop >/dev/null 2>&1
done
pgrep -a nvidia-cuda-mps | grep -v defunct && echo "MPS daemons still running"
date -u
rm -rf "$OUT/r/gpu/bridge/bridgeword" "$OUT/r/gpu/bridge/copyapp"
find "$OUT/r" \( -name '*.svc' -o -name '*.batch' \) -delete
tar -czf "$OUT/g13.tgz" -C "$OUT" r && rm -rf "$OUT/r"
exit 0
