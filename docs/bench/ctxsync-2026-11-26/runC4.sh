#!/bin/bash
# Run C4: why PyTorch's steps waited for by torch.cuda.synchronize() in the level MPS servers kept
# only about half their bridges in C3: C2's probe as an MPS client (does its context
# synchronisation wait for a kernel another thread queues after it began? how long does that
# launch take?), C2's steps under the shim in the level servers, PyTorch's outside MPS, and
# PyTorch's in the level servers again, with when the shim's thread queued each bridge.
set -u
J=$PWD/build/.jsonc
MK=("JSONC_CFLAGS=-I$J/include -I$J/include/json-c" "JSONC_LIBS=$J/lib/libjson-c.a")
make -j16 "${MK[@]}" all >$OUT/build.log 2>&1 || { tail -30 $OUT/build.log; exit 1; }
nvcc -O2 -o build/ctxbridge build/dev/ctxbridge.cu >>$OUT/build.log 2>&1 || { tail -20 $OUT/build.log; exit 1; }
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
NVT=build/bin/nvtaskset
late() { grep -o "context synchronisations' bridges queued by the shim's thread, within[^;]*" "$1" | sed 's/.*thread, //' | head -1; }
{
echo "== snap as a client of the high level's MPS server (no batch)"
NVTASKSET_BRIDGE=0 timeout 60 $NVT --priority high build/ctxbridge snap x 2>&1 | grep -v calibrat
echo "== C2's steps in the level servers, beside C2's batch"
rm -f /tmp/stop
timeout 200 $NVT --priority low build/ctxbridge batch /tmp/stop 2>>$OUT/batch.err &
bp=$!
sleep 3
for m in ctx stream ctx; do
	echo "$(NVTASKSET_BRIDGE_DEBUG=1 timeout 60 $NVT --priority high build/ctxbridge steps $m 150 2>/tmp/e.txt | tail -1) | $(late /tmp/e.txt)"
done
touch /tmp/stop; wait $bp; echo "batch rc $?"
echo "== PyTorch outside MPS, beside GEMMs outside MPS"
rm -f /tmp/stop
timeout 200 $NVT --no-mps --priority low python3 build/dev/ctxsync.py batch /tmp/stop 2>>$OUT/batch.err &
bp=$!
sleep 8
for m in ctx stream ctx; do
	echo "$(NVTASKSET_BRIDGE_DEBUG=1 timeout 120 $NVT --no-mps --priority high python3 build/dev/ctxsync.py serve $m 150 2>/tmp/e.txt) | $(late /tmp/e.txt)"
done
touch /tmp/stop; wait $bp; echo "batch rc $?"
echo "== PyTorch in the level servers, beside GEMMs"
rm -f /tmp/stop
timeout 200 $NVT --priority low python3 build/dev/ctxsync.py batch /tmp/stop 2>>$OUT/batch.err &
bp=$!
sleep 8
for m in ctx ctx; do
	echo "$(NVTASKSET_BRIDGE_DEBUG=1 timeout 120 $NVT --priority high python3 build/dev/ctxsync.py serve $m 150 2>/tmp/e.txt) | $(late /tmp/e.txt)"
done
touch /tmp/stop; wait $bp; echo "batch rc $?"
} 2>&1 | tee $OUT/c4.txt
$NVT --mps stop
pgrep -a nvidia-cuda-mps | grep -v defunct && echo "MPS daemons still running"
exit 0
