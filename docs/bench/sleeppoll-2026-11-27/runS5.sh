#!/bin/bash
# Run S5: this tree (commit 7d8c847: a tentative polled wait made full by a bridge of the next seq) against
# commit 7d96f1d (build/dev/old): run S4's services, one round, the long ones (LONG=4) on this
# tree only; then make check-gpu-hostfn and make check-gpu-bridge.
set -u
J=$PWD/build/.jsonc
FL=("JSONC_CFLAGS=-I$J/include -I$J/include/json-c" "JSONC_LIBS=$J/lib/libjson-c.a")
make -j16 "${FL[@]}" all >"$OUT/build.log" 2>&1 || { tail -30 "$OUT/build.log"; exit 1; }
make -C build/dev/old -j16 "${FL[@]}" all >"$OUT/build-old.log" 2>&1 || { tail -30 "$OUT/build-old.log"; exit 1; }
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
date -u
mkdir -p "$OUT/r"
D=build/dev
one() { # round tag nvtaskset mode env...
	local r=$1 tag=$2 n=$3 mode=$4 bp f; shift 4
	f=$OUT/r/$tag-$mode-$r${LONG:+-long}
	rm -f /tmp/stop
	BATCH_LOG=$f-batch.log timeout 120 "$n" --no-mps --priority low --yield slice python3 $D/ctxsync.py batch /tmp/stop >"$f.batch" 2>&1 &
	bp=$!
	sleep 4
	env "$@" NVTASKSET_BRIDGE_DEBUG=1 timeout 100 "$n" --no-mps --priority high python3 $D/ctxsync.py serve "$mode" 300 >"$f.serve" 2>&1
	local rc=$?
	touch /tmp/stop
	wait "$bp"
	echo "$tag $mode ${LONG:+LONG=$LONG }r$r: rc $rc $(grep '^[a-z]*poll:' "$f.serve") | batch $(python3 $D/batchrate.py "$f-batch.log" $(sed -n 's/^span //p' "$f.serve")) GEMMs/s | $(grep -o 'bridge: [0-9]* waits, [0-9]* bridged' "$f.serve" | head -1) | $(grep -o 'steps measured: [0-9]* released, [0-9]* held' "$f.serve" | head -1)"
}
# shellcheck disable=SC2043 # one round
for r in 1; do
	echo "== round $r"
	unset LONG
	one $r new build/bin/nvtaskset sleeppoll
	one $r old $D/old/build/bin/nvtaskset sleeppoll
	export LONG=4
	one $r new build/bin/nvtaskset poll
	one $r new build/bin/nvtaskset sleeppoll
	unset LONG
done
echo "== make check-gpu-hostfn"; timeout 200 make "${FL[@]}" check-gpu-hostfn GPU_LOG="$OUT/r/gpu" 2>&1 | tail -16
echo "== make check-gpu-bridge"; timeout 240 make "${FL[@]}" check-gpu-bridge GPU_LOG="$OUT/r/gpu" 2>&1 | grep -v "^nvtaskset: bridge\|^copyapp" | tail -25
build/bin/nvtaskset --mps stop 2>/dev/null
pgrep -a nvidia-cuda-mps | grep -v defunct && echo "MPS daemons still running"
date -u
rm -rf "$OUT/r/gpu/hostfn/hostfn" "$OUT/r/gpu/bridge"
tar -czf "$OUT/s5.tgz" -C "$OUT" r && rm -rf "$OUT/r"
exit 0
