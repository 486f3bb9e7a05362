#!/bin/bash
# Run G20: commit 83fbdf8 (build/dev/new) on an H200: check-gpu without its end-to-end, graph,
# SM-count and memory parts (callback ids, calibration, exact SMs for every form, libsmctrl's
# interface), then check-gpu-mpsbind, check-gpu-preempt and check-gpu-bridge, each cut.
set -u
cd build/dev/new || exit 1
J=$PWD/../../.jsonc
FL=("JSONC_CFLAGS=-I$J/include -I$J/include/json-c" "JSONC_LIBS=$J/lib/libjson-c.a")
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
nproc; date -u
mkdir -p "$OUT/r"
make -j16 "${FL[@]}" all >"$OUT/build.log" 2>&1 || { tail -30 "$OUT/build.log"; exit 1; }
echo "built $(date +%T)"
one() { # name cut make-args...
	local n=$1 t=$2; shift 2
	echo "== $n $(date +%T)"
	timeout "$t" env "$@" >"$OUT/r/$n.console" 2>&1
	echo "rc $? $(date +%T)"
	grep -c "^PASS" "$OUT/r/$n.console"
	grep "^FAIL\|passed\|failed\|^SKIP" "$OUT/r/$n.console" | cut -c1-250 | tail -12
	build/bin/nvtaskset --mps stop >/dev/null 2>&1
}
one check-gpu 190 SKIP_E2E=1 SKIP_GRAPHS=1 SKIP_SMCOUNT=1 SKIP_MEM=1 make "${FL[@]}" check-gpu GPU_LOG="$OUT/r/gpu"
one mpsbind 80 make "${FL[@]}" check-gpu-mpsbind GPU_LOG="$OUT/r/gpu"
one preempt 100 make "${FL[@]}" check-gpu-preempt GPU_LOG="$OUT/r/gpu"
one bridge 120 make "${FL[@]}" check-gpu-bridge GPU_LOG="$OUT/r/gpu"
grep -v "^nvtaskset: bridge\|^copyapp" "$OUT/r/bridge.console" | grep "PASS\|FAIL" | cut -c1-200 | tail -20
pgrep -a nvidia-cuda-mps | grep -v defunct && echo "MPS daemons still running"
date -u
rm -rf "$OUT/r/gpu/bridge/bridgeword" "$OUT/r/gpu/bridge/copyapp"
find "$OUT/r" \( -name '*.svc' -o -name '*.batch' -o -name '*.so' -o -perm -u+x -type f \) -delete
tar -czf "$OUT/g20.tgz" -C "$OUT" r && rm -rf "$OUT/r"
exit 0
