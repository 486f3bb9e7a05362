#!/bin/bash
# Run C3: the shim's bridge of context synchronisations (c4082c2's): PyTorch token-by-token steps
# waited for by torch.cuda.synchronize() against by the stream, under nvtaskset's defaults
# (--priority high / --priority low: the level MPS servers), alone and beside GEMM training, two
# rounds, with the bridge's counts; then C2's steps under the shim (--no-mps), waited for by the
# context and by the stream, beside its spinning batch.
set -u
J=$PWD/build/.jsonc
MK=("JSONC_CFLAGS=-I$J/include -I$J/include/json-c" "JSONC_LIBS=$J/lib/libjson-c.a")
make -j16 "${MK[@]}" all >$OUT/build.log 2>&1 || { tail -30 $OUT/build.log; exit 1; }
nvcc -O2 -o build/ctxbridge build/dev/ctxbridge.cu >>$OUT/build.log 2>&1 || { tail -20 $OUT/build.log; exit 1; }
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
NVT=build/bin/nvtaskset
srv() { # LABEL MODE [ENV...]
	local label=$1 mode=$2 out
	shift 2
	out=$(env "$@" NVTASKSET_BRIDGE_DEBUG=1 timeout 120 $NVT --priority high python3 build/dev/ctxsync.py serve "$mode" 150 2>/tmp/err.txt)
	echo "$label $* rc $?: $out | $(grep -o '[0-9]* waits, [0-9]* bridged' /tmp/err.txt | head -1); $(grep -o "[0-9]* context synchronisations' bridges queued[^;]*" /tmp/err.txt | head -1) $(grep -c 'not bridged from now on' /tmp/err.txt) off; $(grep -c warning /tmp/err.txt) warnings"
}
{
srv "alone" stream X=1; srv "alone" ctx X=1; srv "alone" ctx NVTASKSET_BRIDGE=0
rm -f /tmp/stop
timeout 300 $NVT --priority low python3 build/dev/ctxsync.py batch /tmp/stop 2>$OUT/batch.err &
bp=$!
sleep 8
for round in 1 2; do
	srv "r$round beside GEMMs" stream X=1
	srv "r$round beside GEMMs" ctx X=1
	srv "r$round beside GEMMs" ctx NVTASKSET_BRIDGE=0
done
touch /tmp/stop
wait $bp; echo "batch rc $?"
rm -f /tmp/stop2
export CUDA_DEVICE_MAX_CONNECTIONS=1
timeout 120 $NVT --no-mps --priority low build/ctxbridge batch /tmp/stop2 2>>$OUT/batch.err &
bp=$!
sleep 3
for m in ctx stream; do
	echo "ctxbridge under the shim: $(NVTASKSET_BRIDGE_DEBUG=1 timeout 60 $NVT --no-mps --priority high build/ctxbridge steps $m 150 2>/tmp/err2.txt | tail -1) | $(grep -o "[0-9]* context synchronisations' bridges queued[^;]*" /tmp/err2.txt | head -1)"
done
touch /tmp/stop2
wait $bp; echo "batch rc $?"
} 2>&1 | tee $OUT/c3.txt
$NVT --mps stop
pgrep -a nvidia-cuda-mps | grep -v defunct && echo "MPS daemons still running"
exit 0
