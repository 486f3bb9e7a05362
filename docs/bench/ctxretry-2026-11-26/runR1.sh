#!/bin/bash
# Run R1 (0a5dda1): a service whose first steps are long (WARM=6 steps of six 8192^3 GEMMs, each
# waited for by torch.cuda.synchronize()) then token-by-token steps waited for the same way,
# beside GEMM training in the level servers: the long waits stop the bridging of context
# synchronisations, which is tried again 256 waits later; the later steps (last 100 requests)
# against the same service without the warm-up and unbridged. Then check-gpu-bridge and
# check-gpu-preempt.
set -u
J=$PWD/build/.jsonc
MK=("JSONC_CFLAGS=-I$J/include -I$J/include/json-c" "JSONC_LIBS=$J/lib/libjson-c.a")
make -j16 "${MK[@]}" all >$OUT/build.log 2>&1 || { tail -30 $OUT/build.log; exit 1; }
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
date -u
NVT=build/bin/nvtaskset
srv() { # LABEL [ENV...]
	local label=$1 out
	shift
	out=$(env "$@" NVTASKSET_BRIDGE_DEBUG=1 LAST=100 timeout 120 $NVT --priority high python3 build/dev/ctxsync.py serve ctx 150 2>/tmp/e.txt)
	echo "$label $* rc $?: $out | $(grep -o '[0-9]* waits, [0-9]* bridged' /tmp/e.txt | head -1); stops: $(grep -o 'not bridged from now on (for [0-9]* waits)' /tmp/e.txt | tr '\n' ' '); tries: $(grep -c 'bridged again (a try)' /tmp/e.txt); at exit: $(grep -c 'not bridged now' /tmp/e.txt) off; $(grep -c warning /tmp/e.txt) warnings"
}
{
rm -f /tmp/stop
timeout 300 $NVT --priority low python3 build/dev/ctxsync.py batch /tmp/stop 2>>$OUT/batch.err &
bp=$!
sleep 8
for round in 1 2; do
	srv "r$round warm-up" WARM=6
	srv "r$round no warm-up" WARM=0
	srv "r$round unbridged" WARM=0 NVTASKSET_BRIDGE=0
done
touch /tmp/stop; wait $bp; echo "batch rc $?"
} 2>&1 | tee $OUT/r1.txt
$NVT --mps stop
timeout 300 make "${MK[@]}" check-gpu-bridge > $OUT/bridge.txt 2>&1; echo "check-gpu-bridge rc $?"
grep -E '^(PASS|FAIL)|failed' $OUT/bridge.txt | tail -30
$NVT --mps stop 2>/dev/null
timeout 200 make "${MK[@]}" check-gpu-preempt > $OUT/preempt.txt 2>&1; echo "check-gpu-preempt rc $?"
grep -E '^(PASS|FAIL)|failed|passed' $OUT/preempt.txt | tail -15
$NVT --mps stop 2>/dev/null
pgrep -a nvidia-cuda-mps | grep -v defunct && echo "MPS daemons still running"
date -u
exit 0
