#!/bin/bash
# Run P6: an event recorded again before each query (ctxsync.py repoll) beside a time-sliced GEMM
# batch: this tree (a record during an open polled wait ends its bridge) against HEAD 555628b
# (build/dev/old), whose bridge the re-record queues behind; poll and stream as references; the
# shim's bridge report (NVTASKSET_BRIDGE_DEBUG=1); make check-gpu-hostfn.
set -u
J=$PWD/build/.jsonc
MK=(make -j16 "JSONC_CFLAGS=-I$J/include -I$J/include/json-c" "JSONC_LIBS=$J/lib/libjson-c.a" all)
"${MK[@]}" >"$OUT/build.log" 2>&1 || { tail -30 "$OUT/build.log"; exit 1; }
(cd build/dev/old && "${MK[@]}" >"$OUT/build-old.log" 2>&1) || { tail -30 "$OUT/build-old.log"; exit 1; }
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
date -u
mkdir -p "$OUT/r"
for run in new-repoll old-repoll new-poll new-stream; do
	b=${run%%-*} mode=${run#*-}
	N=build/bin/nvtaskset; [ "$b" = old ] && N=build/dev/old/build/bin/nvtaskset
	rm -f /tmp/stop
	timeout 120 "$N" --no-mps --priority low --yield slice python3 build/dev/ctxsync.py batch /tmp/stop >"$OUT/r/$run.batch" 2>&1 &
	bp=$!
	sleep 4
	n=300; [ "$b" = old ] && n=30 # (30 requests: a stall of 50 ms a step would take 20 s)
	NVTASKSET_BRIDGE_DEBUG=1 timeout 100 "$N" --no-mps --priority high python3 build/dev/ctxsync.py serve "$mode" $n >"$OUT/r/$run.serve" 2>&1
	echo "$run: rc $? $(grep -v 'bridge:' "$OUT/r/$run.serve" | tail -1)"
	echo "$run: $(grep -o 'bridge: [0-9]* waits, [0-9]* bridged' "$OUT/r/$run.serve" | head -1)"
	touch /tmp/stop; wait $bp
done
echo "== make check-gpu-hostfn"; timeout 150 make check-gpu-hostfn GPU_LOG="$OUT/r/gpu" 2>&1 | tail -14
build/bin/nvtaskset --mps stop 2>/dev/null
pgrep -a nvidia-cuda-mps | grep -v defunct && echo "MPS daemons still running"
date -u
rm -f "$OUT/r/gpu/hostfn/hostfn"
tar -czf "$OUT/p6.tgz" -C "$OUT" r && rm -rf "$OUT/r"
exit 0
