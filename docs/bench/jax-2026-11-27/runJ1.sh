#!/bin/bash
# Run J1: is a JAX service's step bridged? jaxsvc.py (ready / item) in the high level, alone and
# beside GEMM training in the low level (ctxsync.py batch), with the bridge and without
# (NVTASKSET_BRIDGE=0); the shim's debug report says how many waits it saw and bridged.
set -u
J=$PWD/build/.jsonc
MK=("JSONC_CFLAGS=-I$J/include -I$J/include/json-c" "JSONC_LIBS=$J/lib/libjson-c.a")
make -j16 "${MK[@]}" all >$OUT/build.log 2>&1 || { tail -30 $OUT/build.log; exit 1; }
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
date -u
N=build/bin/nvtaskset
srv() { # LABEL MODE ENV...
	local l=$1 m=$2 out
	shift 2
	out=$(env "$@" NVTASKSET_BRIDGE_DEBUG=1 NVTASKSET_BRIDGE_TRACE=$OUT/tr-$m timeout 120 $N --priority high python3 build/dev/jaxsvc.py $m 100 2>/tmp/e.txt)
	echo "$l rc $?: $out | $(grep -o '[0-9]* waits, [0-9]* bridged[^;]*' /tmp/e.txt | head -1); $(grep -o 'bridge trace: of [^;]*' /tmp/e.txt | head -1); $(grep -c warning /tmp/e.txt) warnings"
	grep -i 'nvtaskset' /tmp/e.txt | grep -v 'bridge trace\|waits,' | head -5
}
{
for m in ready item; do srv "alone" $m X=1; done
rm -f /tmp/stop
timeout 300 $N --priority low python3 build/dev/ctxsync.py batch /tmp/stop 2>>$OUT/batch.err &
bp=$!
sleep 8
for m in ready item; do
	srv "beside GEMMs, bridged" $m X=1
	srv "beside GEMMs, NVTASKSET_BRIDGE=0" $m NVTASKSET_BRIDGE=0
done
touch /tmp/stop; wait $bp; echo "batch rc $?"
} 2>&1 | tee $OUT/j1.txt
$N --mps stop
pgrep -a nvidia-cuda-mps | grep -v defunct && echo "MPS daemons still running"
date -u
exit 0
