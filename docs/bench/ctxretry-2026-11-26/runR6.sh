#!/bin/bash
# Run R6: the bridges before the last end at their release, without their margin, once the next
# bridge is queued (word 7), against the last commit without it (build/dev/h0): ctxsync.py's
# steps waited for by the context (ctx), by the stream (stream) and by .item() (item) beside
# GEMM training in the level servers and alone; then make check-gpu-bridge.
set -u
J=$PWD/build/.jsonc
MK=("JSONC_CFLAGS=-I$J/include -I$J/include/json-c" "JSONC_LIBS=$J/lib/libjson-c.a")
make -j16 "${MK[@]}" all >$OUT/build.log 2>&1 || { tail -30 $OUT/build.log; exit 1; }
(cd build/dev/h0 && make -j16 "${MK[@]}" all) >>$OUT/build.log 2>&1 || { echo "h0 build failed"; exit 1; }
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
date -u
srv() { # LABEL NVT MODE
	local out
	out=$(NVTASKSET_BRIDGE_DEBUG=1 timeout 120 $2 --priority high python3 build/dev/ctxsync.py serve "$3" 100 2>/tmp/e.txt)
	echo "$1 rc $?: $out | $(grep -o '[0-9]* waits, [0-9]* bridged' /tmp/e.txt | head -1); $(grep -c warning /tmp/e.txt) warnings"
}
NEW=build/bin/nvtaskset OLD=build/dev/h0/build/bin/nvtaskset
{
rm -f /tmp/stop
timeout 300 $NEW --priority low python3 build/dev/ctxsync.py batch /tmp/stop 2>>$OUT/batch.err &
bp=$!
sleep 8
for round in 1 2; do
	for m in ctx stream item; do
		srv "r$round beside, word 7" $NEW $m
		srv "r$round beside, without" $OLD $m
	done
done
touch /tmp/stop; wait $bp; echo "batch rc $?"
for m in ctx stream; do
	srv "alone, word 7" $NEW $m
	srv "alone, without" $OLD $m
done
} 2>&1 | tee $OUT/r6.txt
$NEW --mps stop
timeout 200 make "${MK[@]}" check-gpu-bridge > $OUT/bridge.txt 2>&1; echo "check-gpu-bridge rc $?"
grep -E '^(PASS|FAIL)|failed' $OUT/bridge.txt | tail -30
$NEW --mps stop 2>/dev/null
pgrep -a nvidia-cuda-mps | grep -v defunct && echo "MPS daemons still running"
date -u
exit 0
