#!/bin/bash
# Run G28: commit bd83fdb (build/dev/new) on an H200: check-gpu's end-to-end part, then
# check-gpu-preempt.
set -u
cd build/dev/new || exit 1
J=$PWD/../../.jsonc
FL=("JSONC_CFLAGS=-I$J/include -I$J/include/json-c" "JSONC_LIBS=$J/lib/libjson-c.a")
NVT=$PWD/build/bin/nvtaskset
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
date -u
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
	"$NVT" --mps stop --force >/dev/null 2>&1
}
one e2e 300 ONLY_E2E=1 SKIP_SMCOUNT=1 SKIP_MEM=1 SKIP_SMCTRL=1 make "${FL[@]}" check-gpu GPU_LOG="$OUT/r/gpu"
one preempt 120 make "${FL[@]}" check-gpu-preempt GPU_LOG="$OUT/r/gpu"
pgrep -a nvidia-cuda-mps | grep -v defunct && echo "MPS daemons still running"
date -u
rm -rf "$OUT/r/gpu/bridge/bridgeword" "$OUT/r/gpu/bridge/copyapp"
