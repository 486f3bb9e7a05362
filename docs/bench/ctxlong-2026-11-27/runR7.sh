#!/bin/bash
# Run R7: (1) does the GPU run a kernel of another stream beside a long last kernel with one
# hardware queue (conc.py: a 12 ms kernel of 1, 264 or 2000 blocks, then a 5 ms one-thread
# kernel on another stream queued 30 us into cuCtxSynchronize); (2) the judgement of taken-in
# bridges with the clocks told apart, on the GPU: a variant of this tree (build/dev/var2) whose
# every other context synchronisation's bridge is queued before the wait (taken in), beside
# GEMM training; this tree alone beside it (no stop expected).
set -u
J=$PWD/build/.jsonc
MK=("JSONC_CFLAGS=-I$J/include -I$J/include/json-c" "JSONC_LIBS=$J/lib/libjson-c.a")
make -j16 "${MK[@]}" all >$OUT/build.log 2>&1 || { tail -30 $OUT/build.log; exit 1; }
(cd build/dev/var2 && make -j16 "${MK[@]}" all) >>$OUT/build.log 2>&1 || { echo "var2 build failed"; exit 1; }
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
date -u
echo "conc, connections 1:"; CUDA_DEVICE_MAX_CONNECTIONS=1 timeout 60 python3 build/dev/conc.py
srv() { # LABEL NVT
	local out
	out=$(NVTASKSET_BRIDGE_DEBUG=1 timeout 100 $2 --priority high python3 build/dev/ctxsync.py serve ctx 100 2>/tmp/e.txt)
	echo "$1 rc $?: $out | $(grep -o '[0-9]* waits, [0-9]* bridged' /tmp/e.txt | head -1); stops: $(grep -o 'not bridged from now on (for [0-9]* waits)' /tmp/e.txt | tr '\n' ' '); tries: $(grep -c 'bridged again (a try)' /tmp/e.txt); $(grep -c warning /tmp/e.txt) warnings"
}
{
rm -f /tmp/stop
timeout 200 build/bin/nvtaskset --priority low python3 build/dev/ctxsync.py batch /tmp/stop 2>>$OUT/batch.err &
bp=$!
sleep 8
srv "variant (every other bridge taken in)" build/dev/var2/build/bin/nvtaskset
srv "this tree" build/bin/nvtaskset
touch /tmp/stop; wait $bp; echo "batch rc $?"
} 2>&1 | tee $OUT/r7.txt
build/bin/nvtaskset --mps stop
pgrep -a nvidia-cuda-mps | grep -v defunct && echo "MPS daemons still running"
date -u
exit 0
