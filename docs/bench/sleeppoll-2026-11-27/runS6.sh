#!/bin/bash
# Run S6: the tree of commit 9b2ae27 (a release that read a tentative bridge's seq releases the
# one made full too): ctxsync.py's sleeppoll, and poll with every 4th step ~12 ms (LONG=4), beside
# the batch; make check-gpu-bridge and make check-gpu-hostfn.
set -u
J=$PWD/build/.jsonc
FL=("JSONC_CFLAGS=-I$J/include -I$J/include/json-c" "JSONC_LIBS=$J/lib/libjson-c.a")
make -j16 "${FL[@]}" all >"$OUT/build.log" 2>&1 || { tail -30 "$OUT/build.log"; exit 1; }
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
date -u
mkdir -p "$OUT/r"
D=build/dev
for mode in sleeppoll poll; do
	f=$OUT/r/new-$mode
	rm -f /tmp/stop
	BATCH_LOG=$f-batch.log timeout 120 build/bin/nvtaskset --no-mps --priority low --yield slice python3 $D/ctxsync.py batch /tmp/stop >"$f.batch" 2>&1 &
	bp=$!
	sleep 4
	[ $mode = poll ] && export LONG=4
	NVTASKSET_BRIDGE_DEBUG=1 timeout 100 build/bin/nvtaskset --no-mps --priority high python3 $D/ctxsync.py serve "$mode" 300 >"$f.serve" 2>&1
	rc=$?
	unset LONG
	touch /tmp/stop
	wait "$bp"
	echo "$mode: rc $rc $(grep '^[a-z]*poll:' "$f.serve") | batch $(python3 $D/batchrate.py "$f-batch.log" $(sed -n 's/^span //p' "$f.serve")) GEMMs/s | $(grep -o 'bridge: [0-9]* waits, [0-9]* bridged' "$f.serve") | $(grep -o '[0-9]* tentative polled waits made full' "$f.serve")"
done
echo "== make check-gpu-bridge"; timeout 200 make "${FL[@]}" check-gpu-bridge GPU_LOG="$OUT/r/gpu" 2>&1 | grep -v "^nvtaskset: bridge\|^copyapp" | tail -25
echo "== make check-gpu-hostfn"; timeout 150 make "${FL[@]}" check-gpu-hostfn GPU_LOG="$OUT/r/gpu" 2>&1 | grep "passed\|FAIL"
build/bin/nvtaskset --mps stop 2>/dev/null
pgrep -a nvidia-cuda-mps | grep -v defunct && echo "MPS daemons still running"
date -u
rm -rf "$OUT/r/gpu/hostfn/hostfn" "$OUT/r/gpu/bridge"
tar -czf "$OUT/s6.tgz" -C "$OUT" r && rm -rf "$OUT/r"
exit 0
