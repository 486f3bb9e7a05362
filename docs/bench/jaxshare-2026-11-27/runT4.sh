#!/bin/bash
# Run T4: why bridged JAX steps that read the token are slower than unbridged ones: jaxsvc.py item
# (300 requests) beside ctxsync.py's GEMM batch (level servers), fresh processes, two rounds:
# the default, NVTASKSET_BRIDGE=0, NVTASKSET_BRIDGE_HOLD=0 (steps never held), and a trial tree
# whose small copies to the host are left to the driver (NVT_TRIAL_NOCOPY=1; build/dev/trial:
# HEAD and that one line); NVTASKSET_BRIDGE_DEBUG's report of each.
set -u
J=$PWD/build/.jsonc
(cd build/dev/trial && make -j16 "JSONC_CFLAGS=-I$J/include -I$J/include/json-c" JSONC_LIBS=$J/lib/libjson-c.a all >$OUT/build.log 2>&1) || { tail -30 $OUT/build.log; exit 1; }
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
date -u
N=$PWD/build/dev/trial/build/bin/nvtaskset
R=$OUT/r; mkdir -p $R
srv() { # LABEL FILE ENV...
	local l=$1 f=$2 out
	shift 2
	out=$(env "$@" JAXSVC_OUT=$R/$f.jax NVTASKSET_BRIDGE_DEBUG=1 timeout 120 $N --priority high python3 build/dev/jaxsvc.py item 300 2>$R/$f.err | tail -1)
	echo "$l: $out | $(grep -o '[0-9]* waits, [0-9]* bridged.*' $R/$f.err | head -1 | cut -c1-300)"
}
{
rm -f /tmp/stop
timeout 400 $N --priority low python3 build/dev/ctxsync.py batch /tmp/stop 2>>$R/batch.err & bp=$!
sleep 8
for r in 1 2; do
	srv "r$r default" def$r X=1
	srv "r$r NVTASKSET_BRIDGE=0" nob$r NVTASKSET_BRIDGE=0
	srv "r$r NVTASKSET_BRIDGE_HOLD=0" hold0$r NVTASKSET_BRIDGE_HOLD=0
	srv "r$r trial: copies left to the driver" nocopy$r NVT_TRIAL_NOCOPY=1
done
$N -l --json > $R/l.json
touch /tmp/stop; wait $bp; echo "batch rc $?"
} 2>&1 | tee $OUT/t4.txt
$N --mps stop
pgrep -a nvidia-cuda-mps | grep -v defunct && echo "MPS daemons still running"
date -u
tar -czf $OUT/r.tgz -C $OUT r && rm -rf $R
exit 0
