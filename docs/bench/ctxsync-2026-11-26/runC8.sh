#!/bin/bash
# Run C8: the thread that bridges context synchronisations spinning for the next one where they
# come less than 1 ms apart (this working tree) against asleep on a condition variable (HEAD,
# build/dev/head): ctxsync.py's ctxitem (bench-prio's tbtsync), ctx and item steps, beside GEMM
# training in the level servers and alone, two rounds; the shim's thread's CPU time.
set -u
J=$PWD/build/.jsonc
MK=("JSONC_CFLAGS=-I$J/include -I$J/include/json-c" "JSONC_LIBS=$J/lib/libjson-c.a")
make -j16 "${MK[@]}" all >$OUT/build.log 2>&1 || { tail -30 $OUT/build.log; exit 1; }
(cd build/dev/head && make -j16 "${MK[@]}" all) >>$OUT/build.log 2>&1 || { echo "head build failed"; exit 1; }
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
late() { grep -o "context synchronisations' bridges queued by the shim's thread, within[^;]*" "$1" | sed 's/.*thread, //' | head -1; }
TIMER=()
[ -x /usr/bin/time ] && TIMER=(/usr/bin/time -f "cpu %U+%S s wall %e s")
srv() { # LABEL NVT MODE
	local out
	out=$(NVTASKSET_BRIDGE_DEBUG=1 "${TIMER[@]}" timeout 120 $2 --priority high python3 build/dev/ctxsync.py serve "$3" 150 2>/tmp/e.txt)
	echo "$1 rc $?: $out | $(late /tmp/e.txt); $(grep -o 'cpu [0-9.+]* s wall [0-9.]* s' /tmp/e.txt); $(grep -c warning /tmp/e.txt) warnings"
}
NEW=build/bin/nvtaskset OLD=build/dev/head/build/bin/nvtaskset
{
rm -f /tmp/stop
timeout 300 $NEW --priority low python3 build/dev/ctxsync.py batch /tmp/stop 2>>$OUT/batch.err &
bp=$!
sleep 8
for round in 1 2; do
	for m in ctxitem ctx item; do
		srv "r$round beside spin" $NEW $m
		srv "r$round beside asleep" $OLD $m
	done
done
touch /tmp/stop
wait $bp; echo "batch rc $?"
for m in ctxitem ctx item; do
	srv "alone spin" $NEW $m
	srv "alone asleep" $OLD $m
done
} 2>&1 | tee $OUT/c8.txt
$NEW --mps stop
exit 0
