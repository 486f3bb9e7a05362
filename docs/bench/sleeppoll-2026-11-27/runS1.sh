#!/bin/bash
# Run S1: a PyTorch service that polls an event with a sleep between its looks (ctxsync.py
# sleeppoll: 8 graph steps a request every 10 ms, time.sleep(0.0004) between queries) beside a
# time-sliced GEMM batch (ctxsync.py batch, 8192^3 bf16, BATCH_LOG): this tree's shim (a wait
# begun at the first look once the thread's looks came <= 600 us apart), the tree before it
# (build/dev/old, 7d96f1d: the second look), this tree with NVTASKSET_BRIDGE=0; the service
# alone; the batch alone; poll (no sleep) on both trees; two rounds.

set -u
J=$PWD/build/.jsonc
FL=("JSONC_CFLAGS=-I$J/include -I$J/include/json-c" "JSONC_LIBS=$J/lib/libjson-c.a")
make -j16 "${FL[@]}" all >"$OUT/build.log" 2>&1 || { tail -30 "$OUT/build.log"; exit 1; }
make -C build/dev/old -j16 "${FL[@]}" all >"$OUT/build-old.log" 2>&1 || { tail -30 "$OUT/build-old.log"; exit 1; }
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
date -u
mkdir -p "$OUT/r"
D=build/dev
batch_alone() { # round
	rm -f /tmp/stop
	BATCH_LOG=$OUT/r/alone-batch-$1.log timeout 60 build/bin/nvtaskset --no-mps --priority low --yield slice python3 $D/ctxsync.py batch /tmp/stop >/dev/null 2>&1 &
	local bp=$!
	sleep 10; touch /tmp/stop; wait $bp
	local a b; a=$(sed -n 3p "$OUT/r/alone-batch-$1.log"); b=$(tail -1 "$OUT/r/alone-batch-$1.log")
	echo "batch alone r$1: $(python3 $D/batchrate.py "$OUT/r/alone-batch-$1.log" "$a" "$b") GEMMs/s"
}
one() { # tag nvtaskset mode env...
	local tag=$1 n=$2 mode=$3 bp; shift 3
	rm -f /tmp/stop
	if [ "$tag" != alone ]; then
		BATCH_LOG=$OUT/r/$tag-$mode-batch.log timeout 120 "$n" --no-mps --priority low --yield slice python3 $D/ctxsync.py batch /tmp/stop >"$OUT/r/$tag-$mode.batch" 2>&1 &
		bp=$!
		sleep 4
	fi
	env "$@" NVTASKSET_BRIDGE_DEBUG=1 timeout 100 "$n" --no-mps --priority high python3 $D/ctxsync.py serve "$mode" 300 >"$OUT/r/$tag-$mode.serve" 2>&1
	local rc=$? rate=
	touch /tmp/stop
	[ "$tag" != alone ] && { wait "$bp"; rate=$(python3 $D/batchrate.py "$OUT/r/$tag-$mode-batch.log" $(sed -n 's/^span //p' "$OUT/r/$tag-$mode.serve")); }
	echo "$tag $mode: rc $rc $(grep '^[a-z]*poll:' "$OUT/r/$tag-$mode.serve") | batch ${rate:-} GEMMs/s | $(grep -o 'bridge: [0-9]* waits, [0-9]* bridged' "$OUT/r/$tag-$mode.serve" | head -1)"
}
for r in 1 2; do
	echo "== round $r"
	batch_alone $r
	one alone build/bin/nvtaskset sleeppoll
	one new build/bin/nvtaskset sleeppoll
	one old $D/old/build/bin/nvtaskset sleeppoll
	one unbridged build/bin/nvtaskset sleeppoll NVTASKSET_BRIDGE=0
	one new build/bin/nvtaskset poll
	one old $D/old/build/bin/nvtaskset poll
done


build/bin/nvtaskset --mps stop 2>/dev/null
pgrep -a nvidia-cuda-mps | grep -v defunct && echo "MPS daemons still running"
date -u
rm -rf "$OUT/r/gpu/hostfn/hostfn" "$OUT/r/gpu/bridge"
tar -czf "$OUT/s1.tgz" -C "$OUT" r && rm -rf "$OUT/r"
exit 0
