#!/bin/bash
# Run G29: commit bd83fdb with tests/gpu/preempt.sh asking 600 requests a phase (build/dev/new)
# on an H200: check-gpu-preempt twice; each run's per-request latencies kept.
set -u
cd build/dev/new || exit 1
J=$PWD/../../.jsonc
FL=("JSONC_CFLAGS=-I$J/include -I$J/include/json-c" "JSONC_LIBS=$J/lib/libjson-c.a")
NVT=$PWD/build/bin/nvtaskset
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
date -u
make -j16 "${FL[@]}" all >"$OUT/build.log" 2>&1 || { tail -30 "$OUT/build.log"; exit 1; }
for t in 1 2; do
	echo "== preempt t$t $(date +%T)"
	timeout 280 make "${FL[@]}" check-gpu-preempt GPU_LOG="$OUT/t$t" >"$OUT/preempt-t$t.console" 2>&1
	echo "rc $? $(date +%T)"
	grep "^PASS\|^FAIL" "$OUT/preempt-t$t.console" | cut -c1-200
	"$NVT" --mps stop --force >/dev/null 2>&1
	for c in /tmp/pw/gpu-*/; do [ -f "$c/l.csv" ] && cp "$c/l.csv" "$OUT/t$t-$(basename "$c").csv"; done
	cp "$OUT/t$t/preempt/preempt.log" "$OUT/t$t-preempt.log" 2>/dev/null
	rm -rf "$OUT/t$t/preempt"
done
pgrep -a nvidia-cuda-mps | grep -v defunct && echo "MPS daemons still running"
date -u
