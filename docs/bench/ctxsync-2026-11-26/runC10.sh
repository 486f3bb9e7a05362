#!/bin/bash
# Run C10: the last commit's shim (b79e2a7): ctxsync.py's ctx and ctxitem steps beside GEMM
# training in the level servers (the bridge's counts), then make check-gpu-bridge.
set -u
J=$PWD/build/.jsonc
MK=("JSONC_CFLAGS=-I$J/include -I$J/include/json-c" "JSONC_LIBS=$J/lib/libjson-c.a")
make -j16 "${MK[@]}" all >$OUT/build.log 2>&1 || { tail -30 $OUT/build.log; exit 1; }
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
NVT=build/bin/nvtaskset
late() { grep -o "context synchronisations' bridges queued by the shim's thread, within[^;]*" "$1" | sed 's/.*thread, //' | head -1; }
{
rm -f /tmp/stop
timeout 200 $NVT --priority low python3 build/dev/ctxsync.py batch /tmp/stop 2>>$OUT/batch.err &
bp=$!
sleep 8
for m in ctx ctxitem item; do
	echo "beside $(NVTASKSET_BRIDGE_DEBUG=1 timeout 120 $NVT --priority high python3 build/dev/ctxsync.py serve $m 150 2>/tmp/e.txt) | $(late /tmp/e.txt); $(grep -c 'not bridged from now on' /tmp/e.txt) off; $(grep -c warning /tmp/e.txt) warnings"
done
touch /tmp/stop; wait $bp; echo "batch rc $?"
} 2>&1 | tee $OUT/c10.txt
$NVT --mps stop
timeout 420 make "${MK[@]}" check-gpu-bridge > $OUT/bridge.txt 2>&1; echo "check-gpu-bridge rc $?"
grep -E '^(PASS|FAIL)|failed' $OUT/bridge.txt | tail -30
$NVT --mps stop 2>/dev/null
pgrep -a nvidia-cuda-mps | grep -v defunct && echo "MPS daemons still running"
exit 0
