#!/bin/bash
# Run T8: this tree (host-function waits bridged: a bridge queued at the call's return, its linger
# from the function's run): make check-gpu-hostfn and check-gpu-bridge; the JAX cell (jaxsvc.py ready /
# item, 300 requests) beside ctxsync.py's GEMM batch, which logs each of its waits (its rate
# during each run): the default and NVTASKSET_BRIDGE=0 in two rounds, static partitions once;
# PyTorch's token-by-token service bridged, as a check.
set -u
J=$PWD/build/.jsonc
make -j16 "JSONC_CFLAGS=-I$J/include -I$J/include/json-c" JSONC_LIBS=$J/lib/libjson-c.a all >$OUT/build.log 2>&1 || { tail -30 $OUT/build.log; exit 1; }
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
date -u
N=$PWD/build/bin/nvtaskset
R=$OUT/r; mkdir -p $R
echo "== make check-gpu-hostfn"; timeout 150 make check-gpu-hostfn GPU_LOG=$R/gpu 2>&1 | tail -11
echo "== make check-gpu-bridge"; timeout 200 make check-gpu-bridge GPU_LOG=$R/gpu 2>&1 | tail -25
date -u
srv() { # LABEL MODE FILE CMD...
	local l=$1 m=$2 f=$3 out
	shift 3
	out=$(JAXSVC_OUT=$R/$f.jax NVTASKSET_BRIDGE_DEBUG=1 timeout 120 "$@" python3 build/dev/jaxsvc.py $m 300 2>$R/$f.err | tail -1)
	echo "$l: $out | $(grep -o '[0-9]* waits, [0-9]* bridged.*' $R/$f.err | head -1 | cut -c1-330)"
}
batch() { rm -f /tmp/stop; BATCH_LOG=$R/$1.blog timeout 400 "${@:2}" python3 build/dev/ctxsync.py batch /tmp/stop 2>>$R/batch.err & bp=$!; sleep 10; python3 -c 'import time; print(time.monotonic_ns())' >$R/$1.alone0; sleep 3; python3 -c 'import time; print(time.monotonic_ns())' >$R/$1.alone1; }
endbatch() { touch /tmp/stop; wait $bp; echo "batch rc $?"; }
{
batch ts $N --priority low
for r in 1 2; do
	for m in ready item; do
		srv "r$r default $m" $m def-$m-$r $N --priority high
		srv "r$r NVTASKSET_BRIDGE=0 $m" $m nob-$m-$r env NVTASKSET_BRIDGE=0 $N --priority high
	done
done
echo "trace, default ready: $(NVTASKSET_BRIDGE_TRACE=$R/tr JAXSVC_OUT=$R/trace.jax NVTASKSET_BRIDGE_DEBUG=1 timeout 120 $N --priority high python3 build/dev/jaxsvc.py ready 300 2>$R/trace.err | tail -1)"
grep 'bridge trace: \|bridge: ' $R/trace.err | cut -c1-400
echo "torch item default: $(timeout 100 $N --priority high python3 build/dev/ctxsync.py serve item 300 2>&1 | tail -1)"
endbatch
$N --mps start
batch st $N -g 2-11
for m in ready item; do srv "static $m" $m st-$m $N -g 0-1; done
endbatch
} 2>&1 | tee $OUT/t6.txt
$N --mps stop
pgrep -a nvidia-cuda-mps | grep -v defunct && echo "MPS daemons still running"
date -u
tar -czf $OUT/r.tgz -C $OUT r && rm -rf $R
exit 0
