#!/bin/bash
# Run C1: (1) whether cudaDeviceSynchronize waits for work another thread queues after it began;
# (2) token-by-token steps waited for by the stream against by the context (torch.cuda.synchronize()),
# under nvtaskset --priority high, alone and beside GEMM training under --priority low (the
# default: time-sliced in the level MPS servers), with the bridge's counts.
set -u
J=$PWD/build/.jsonc
MK=("JSONC_CFLAGS=-I$J/include -I$J/include/json-c" "JSONC_LIBS=$J/lib/libjson-c.a")
make -j16 "${MK[@]}" all >$OUT/build.log 2>&1 || { tail -30 $OUT/build.log; exit 1; }
nvcc -O2 -o build/ctxsnap build/dev/ctxsnap.cu >>$OUT/build.log 2>&1 || { tail -20 $OUT/build.log; exit 1; }
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
timeout 60 build/ctxsnap 2>&1 | tee $OUT/ctxsnap.txt
NVT=build/bin/nvtaskset
srv() { # LABEL MODE
	local out
	out=$(NVTASKSET_BRIDGE_DEBUG=1 timeout 120 $NVT --priority high python3 build/dev/ctxsync.py serve "$2" 150 2>/tmp/err.txt)
	echo "$1 rc $?: $out | $(grep -o '[0-9]* waits, [0-9]* bridged' /tmp/err.txt | head -1) $(grep -c warning /tmp/err.txt) warnings"
}
{
for round in 1 2; do
	for m in stream ctx; do srv "r$round alone" $m; done
done
rm -f /tmp/stop
timeout 300 $NVT --priority low python3 build/dev/ctxsync.py batch /tmp/stop 2>$OUT/batch.err &
bp=$!
sleep 8
for round in 1 2; do
	for m in stream ctx; do srv "r$round beside GEMMs" $m; done
done
touch /tmp/stop
wait $bp; echo "batch rc $?"
} 2>&1 | tee $OUT/c1.txt
$NVT --list 2>&1 | head -5
pgrep -a nvidia-cuda-mps | grep -v defunct && echo "MPS daemons still running"
exit 0
