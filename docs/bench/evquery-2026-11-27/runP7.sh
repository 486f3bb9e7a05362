#!/bin/bash
# Run P7: the final tree (commit 0203a78): ctxsync.py's poll, repoll and stream services beside a
# time-sliced GEMM batch with the shim's bridge report; make check-gpu-hostfn; make
# check-gpu-bridge.
set -u
J=$PWD/build/.jsonc
MK=(make -j16 "JSONC_CFLAGS=-I$J/include -I$J/include/json-c" "JSONC_LIBS=$J/lib/libjson-c.a" all)
"${MK[@]}" >"$OUT/build.log" 2>&1 || { tail -30 "$OUT/build.log"; exit 1; }
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
date -u
mkdir -p "$OUT/r"
N=build/bin/nvtaskset
for mode in poll repoll stream; do
	rm -f /tmp/stop
	timeout 120 "$N" --no-mps --priority low --yield slice python3 build/dev/ctxsync.py batch /tmp/stop >"$OUT/r/$mode.batch" 2>&1 &
	bp=$!
	sleep 4
	NVTASKSET_BRIDGE_DEBUG=1 timeout 100 "$N" --no-mps --priority high python3 build/dev/ctxsync.py serve "$mode" 300 >"$OUT/r/$mode.serve" 2>&1
	echo "$mode: rc $? $(grep -v 'bridge:' "$OUT/r/$mode.serve" | tail -1)"
	echo "$mode: $(grep -o 'bridge: [0-9]* waits, [0-9]* bridged' "$OUT/r/$mode.serve" | head -1)"
	touch /tmp/stop; wait $bp
done
echo "== make check-gpu-hostfn"; timeout 150 make check-gpu-hostfn GPU_LOG="$OUT/r/gpu" 2>&1 | tail -14
echo "== make check-gpu-bridge"; timeout 240 make check-gpu-bridge GPU_LOG="$OUT/r/gpu" 2>&1 | tail -25
"$N" --mps stop 2>/dev/null
pgrep -a nvidia-cuda-mps | grep -v defunct && echo "MPS daemons still running"
date -u
rm -rf "$OUT/r/gpu/hostfn/hostfn" "$OUT/r/gpu/bridge"
tar -czf "$OUT/p7.tgz" -C "$OUT" r && rm -rf "$OUT/r"
exit 0
