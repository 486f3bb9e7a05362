#!/bin/bash
# Run C2: a context synchronisation bridged by a kernel another thread queues after it began.
set -u
J=$PWD/build/.jsonc
MK=("JSONC_CFLAGS=-I$J/include -I$J/include/json-c" "JSONC_LIBS=$J/lib/libjson-c.a")
make -j16 "${MK[@]}" all >$OUT/build.log 2>&1 || { tail -30 $OUT/build.log; exit 1; }
nvcc -O2 -o build/ctxbridge build/dev/ctxbridge.cu >>$OUT/build.log 2>&1 || { tail -20 $OUT/build.log; exit 1; }
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
export CUDA_DEVICE_MAX_CONNECTIONS=1
NVT=build/bin/nvtaskset
{
echo "== snap, one hardware queue"
timeout 60 build/ctxbridge snap x
srv() { NVTASKSET_BRIDGE=0 timeout 60 $NVT --no-mps --priority high build/ctxbridge steps "$@" 2>&1 | tail -2; }
echo "== alone"
srv stream 150; srv ctx 150; srv ctxbridge 150 10
rm -f /tmp/stop
timeout 300 $NVT --no-mps --priority low build/ctxbridge batch /tmp/stop 2>$OUT/batch.err &
bp=$!
sleep 3
for r in 1 2; do
	echo "== beside the batch, round $r"
	srv stream 150; srv ctx 150
	for d in 0 5 10 20 50; do srv ctxbridge 150 $d; done
	echo "(the shim's own bridge, stream waits)"
	timeout 60 $NVT --no-mps --priority high build/ctxbridge steps stream 150 2>&1 | tail -1
done
touch /tmp/stop
wait $bp; echo "batch rc $?"
} 2>&1 | tee $OUT/c2.txt
exit 0
