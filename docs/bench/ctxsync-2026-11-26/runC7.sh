#!/bin/bash
# Run C7: why bench-prio's tbtsync (C6) lost more than its tbt: ctxsync.py's steps read by .item()
# (item: tbt's), waited for by torch.cuda.synchronize() and then read (ctxitem: tbtsync's), and
# ctx alone, beside GEMM training in the level servers, with the bridge's counts and when the
# shim's thread queued its bridges; two rounds.
set -u
J=$PWD/build/.jsonc
MK=("JSONC_CFLAGS=-I$J/include -I$J/include/json-c" "JSONC_LIBS=$J/lib/libjson-c.a")
make -j16 "${MK[@]}" all >$OUT/build.log 2>&1 || { tail -30 $OUT/build.log; exit 1; }
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
NVT=build/bin/nvtaskset
late() { grep -o "context synchronisations' bridges queued by the shim's thread, within[^;]*" "$1" | sed 's/.*thread, //' | head -1; }
srv() { # MODE [ENV...]
	local mode=$1 out
	shift
	out=$(env "$@" NVTASKSET_BRIDGE_DEBUG=1 timeout 120 $NVT --priority high python3 build/dev/ctxsync.py serve "$mode" 150 2>/tmp/e.txt)
	echo "$* rc $?: $out | $(grep -o '[0-9]* waits, [0-9]* bridged[^;]*; [0-9]* copies by its kernel' /tmp/e.txt | head -1); gaps $(grep -o 'came within 50/100/300/1000/10000 us: [0-9/]*, later: [0-9]*' /tmp/e.txt | head -1); $(late /tmp/e.txt); $(grep -c warning /tmp/e.txt) warnings"
}
{
rm -f /tmp/stop
timeout 300 $NVT --priority low python3 build/dev/ctxsync.py batch /tmp/stop 2>>$OUT/batch.err &
bp=$!
sleep 8
for round in 1 2; do
	srv item X=1; srv ctxitem X=1; srv ctx X=1; srv ctxitem NVTASKSET_BRIDGE=0
done
touch /tmp/stop
wait $bp; echo "batch rc $?"
srv item X=1; srv ctxitem X=1
} 2>&1 | tee $OUT/c7.txt
$NVT --mps stop
exit 0
