#!/bin/bash
# Run G16: commit f8e12c8 (build/dev/new): make check-gpu-bridge (the tree's self case: the
# service's main thread pinned to one CPU after cudaFree(0), before its first context
# synchronisation), the self case twice more with the bridge report kept, then check-gpu's
# end-to-end part (tests/gpu/e2e.py: live changes end a phase when the next change is asked for,
# smid compared at 8 TPCs only), cut at 250 s.
set -u
cd build/dev/new || exit 1
J=$PWD/../../.jsonc
FL=("JSONC_CFLAGS=-I$J/include -I$J/include/json-c" "JSONC_LIBS=$J/lib/libjson-c.a")
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
nproc; date -u
mkdir -p "$OUT/r"
make -j16 "${FL[@]}" all >"$OUT/build.log" 2>&1 || { tail -30 "$OUT/build.log"; exit 1; }
echo "built $(date +%T)"
echo "== make check-gpu-bridge $(date +%T)"
NVTASKSET_BRIDGE_DEBUG=1 timeout 240 make "${FL[@]}" check-gpu-bridge GPU_LOG="$OUT/r/gpu" >"$OUT/r/bridge.console" 2>&1
echo "rc $?"
grep -v "^nvtaskset: bridge\|^copyapp" "$OUT/r/bridge.console" | grep "PASS\|FAIL\|passed\|failed" | tail -32
build/bin/nvtaskset --mps stop >/dev/null 2>&1
cut -c1-130 "$OUT/r/gpu/bridge/timeline.txt"
grep -h "bridge: [0-9]* context\|not bridged\|pinned" "$OUT/r/gpu/bridge/"*ctx*.log | cut -c1-300
for i in 1 2; do
	c=gemm-small-ctx-product-self
	NVTASKSET_BRIDGE_DEBUG=1 timeout 60 tests/bench/timeline/run.sh "$OUT/r/t$i" "$c" >"$OUT/r/t$i.out" 2>&1
	echo "== self $i rc $? $(date +%T)"
	grep "ctx-product" "$OUT/r/t$i/timeline.txt" | cut -c1-110
	grep -h "bridge: [0-9]* context\|pinned\|not bridged" "$OUT/r/t$i/"*.log | cut -c1-400 | head -4
	build/bin/nvtaskset --mps stop >/dev/null 2>&1
done
echo "== e2e $(date +%T)"
ONLY_E2E=1 timeout 250 make "${FL[@]}" check-gpu GPU_LOG="$OUT/r/gpu2" >"$OUT/r/e2e.console" 2>&1
echo "== rc $? $(date +%T)"
grep "live change\|INFO live\|time grows\|scaling" "$OUT/r/e2e.console" | cut -c1-300
grep -c "^PASS" "$OUT/r/e2e.console"; grep "^FAIL" "$OUT/r/e2e.console"
build/bin/nvtaskset --mps stop >/dev/null 2>&1
pgrep -a nvidia-cuda-mps | grep -v defunct && echo "MPS daemons still running"
date -u
rm -rf "$OUT/r/gpu/bridge/bridgeword" "$OUT/r/gpu/bridge/copyapp"
find "$OUT/r" \( -name '*.svc' -o -name '*.batch' \) -delete
tar -czf "$OUT/g16.tgz" -C "$OUT" r && rm -rf "$OUT/r"
exit 0
