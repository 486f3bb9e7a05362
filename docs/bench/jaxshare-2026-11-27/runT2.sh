#!/bin/bash
# Run T2: what brings JAX steps of ~2.6 ms: the batch (ctxsync.py batch, --priority low, level
# servers) waiting for its GEMMs every 8 (as runs J2-J5), every 1, never, and with 4096^3 GEMMs;
# beside each, the JAX service (NVTASKSET_BRIDGE=0, --priority high) twice and the PyTorch one
# once, each step stamped; the batch logs each wait's return.
set -u
J=$PWD/build/.jsonc
make -j16 "JSONC_CFLAGS=-I$J/include -I$J/include/json-c" JSONC_LIBS=$J/lib/libjson-c.a all >$OUT/build.log 2>&1 || { tail -30 $OUT/build.log; exit 1; }
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
date -u
N=$PWD/build/bin/nvtaskset
R=$OUT/r; mkdir -p $R
{
for v in s8 s1 s0 n4k; do
	case $v in
	s8) E=(BATCH_SYNC=8) ;; s1) E=(BATCH_SYNC=1) ;; s0) E=(BATCH_SYNC=0) ;; n4k) E=(BATCH_SYNC=8 BATCH_N=4096) ;;
	esac
	rm -f /tmp/stop
	env "${E[@]}" BATCH_LOG=$R/$v.blog timeout 200 $N --priority low python3 build/dev/ctxsync.py batch /tmp/stop 2>>$R/batch.err &
	bp=$!
	sleep 8
	for r in 1 2; do
		echo "$v r$r jax: $(JAXSVC_OUT=$R/$v-r$r.jax NVTASKSET_BRIDGE=0 timeout 100 $N --priority high python3 build/dev/jaxsvc.py ready 100 2>$R/$v-r$r.err | tail -1)"
		$N -l --json >$R/$v-r$r-l.json 2>&1
	done
	echo "$v torch: $(NVTASKSET_BRIDGE=0 timeout 100 $N --priority high python3 build/dev/ctxsync.py serve stream 100 2>&1 | tail -1)"
	touch /tmp/stop; wait $bp; echo "batch $v rc $?"
done
} 2>&1 | tee $OUT/t2.txt
$N --mps stop
pgrep -a nvidia-cuda-mps | grep -v defunct && echo "MPS daemons still running"
date -u
tar -czf $OUT/r.tgz -C $OUT r && rm -rf $R
exit 0
