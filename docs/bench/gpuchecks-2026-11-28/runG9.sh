#!/bin/bash
# Run G9: the GPU checks of commit 3781535 (build/dev/new: the bridge queued 20 us after the
# waiting thread left the shim's callback, the CPUs read again, the move that keeps outside
# affinities): make check-gpu-bridge, check-gpu-preempt and check-gpu-hostfn, each under a
# timeout; then the timeline's hog4 case with afefaf2 (build/dev/old, as in G7) and 3781535 in
# turn, and met with 3781535, the service's bridge report kept.
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
for c in bridge preempt hostfn; do
	echo "== make check-gpu-$c $(date +%T)"
	NVTASKSET_BRIDGE_DEBUG=1 timeout 300 make -C new "${FL[@]}" check-gpu-$c GPU_LOG="$OUT/r/gpu" >"$OUT/r/$c.console" 2>&1
	echo "rc $?"
	grep -v "^nvtaskset: bridge\|^copyapp" "$OUT/r/$c.console" | grep "PASS\|FAIL\|passed\|failed" | tail -32
	new/build/bin/nvtaskset --mps stop >/dev/null 2>&1
done
cut -c1-130 "$OUT/r/gpu/bridge/timeline.txt"
grep -h "bridge: [0-9]* context\|not bridged" "$OUT/r/gpu/bridge/"*ctx*.log | cut -c1-300
i=0
for tc in "old gemm-small-ctx-product-hog4" "new gemm-small-ctx-product-hog4" "new gemm-small-ctx-product-met"; do
	read -r t c <<<"$tc"
	i=$((i + 1))
	NVTASKSET_BRIDGE_DEBUG=1 timeout 100 "$t/tests/bench/timeline/run.sh" "$OUT/r/t$i" "$c" >"$OUT/r/t$i.out" 2>&1
	echo "== $i $t $c $(date +%T)"
	grep "ctx-product" "$OUT/r/t$i/timeline.txt" | cut -c1-110
	grep -h "bridge: [0-9]* context\|pinned\|not bridged" "$OUT/r/t$i/"*.log | cut -c1-400 | head -4
	"$t/build/bin/nvtaskset" --mps stop >/dev/null 2>&1
done
pgrep -a nvidia-cuda-mps | grep -v defunct && echo "MPS daemons still running"
date -u
rm -rf "$OUT/r/gpu/bridge/bridgeword" "$OUT/r/gpu/bridge/copyapp"
find "$OUT/r" \( -name '*.svc' -o -name '*.batch' \) -delete
tar -czf "$OUT/g9.tgz" -C "$OUT" r && rm -rf "$OUT/r"
exit 0
