#!/bin/bash
# Run T7: commit 0a27a02 (the tree as committed): make check-gpu-hostfn and check-gpu-bridge; the
# JAX service (300 requests, ready and item) beside ctxsync.py's GEMM batch, the default and
# NVTASKSET_BRIDGE=0, once each.
set -u
J=$PWD/build/.jsonc
make -j16 "JSONC_CFLAGS=-I$J/include -I$J/include/json-c" JSONC_LIBS=$J/lib/libjson-c.a all >$OUT/build.log 2>&1 || { tail -30 $OUT/build.log; exit 1; }
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
date -u
git log --oneline -1 2>/dev/null
N=$PWD/build/bin/nvtaskset
R=$OUT/r; mkdir -p $R
echo "== make check-gpu-hostfn"; timeout 150 make check-gpu-hostfn GPU_LOG=$R/gpu 2>&1 | tail -11
echo "== make check-gpu-bridge"; timeout 200 make check-gpu-bridge GPU_LOG=$R/gpu 2>&1 | tail -25
date -u
{
rm -f /tmp/stop
timeout 300 $N --priority low python3 build/dev/ctxsync.py batch /tmp/stop 2>>$R/batch.err & bp=$!
sleep 8
for m in ready item; do
	echo "default $m: $(NVTASKSET_BRIDGE_DEBUG=1 timeout 120 $N --priority high python3 build/dev/jaxsvc.py $m 300 2>$R/d-$m.err | tail -1) | $(grep -o '[0-9]* copies by its kernel' $R/d-$m.err)"
	echo "NVTASKSET_BRIDGE=0 $m: $(NVTASKSET_BRIDGE=0 timeout 120 $N --priority high python3 build/dev/jaxsvc.py $m 300 2>&1 | tail -1)"
	$N -l --json > $R/l-$m.json
done
touch /tmp/stop; wait $bp; echo "batch rc $?"
} 2>&1 | tee $OUT/t7.txt
$N --mps stop
pgrep -a nvidia-cuda-mps | grep -v defunct && echo "MPS daemons still running"
date -u
tar -czf $OUT/r.tgz -C $OUT r && rm -rf $R
exit 0
