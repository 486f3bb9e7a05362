#!/bin/bash
# Run J5: how often a service's unbridged steps pay ~2.6 ms (as beside a batch whose timeslice
# is the driver's 2048 us) instead of ~0.3 ms (two switches), one batch (GEMMs, level servers),
# services in fresh processes alternating: PyTorch ctxsync.py (stream waits) and jaxsvc.py
# (ready), both with NVTASKSET_BRIDGE=0, three rounds; then the same with the batch outside MPS.
set -u
J=$PWD/build/.jsonc
MK=("JSONC_CFLAGS=-I$J/include -I$J/include/json-c" "JSONC_LIBS=$J/lib/libjson-c.a")
(cd build/dev/cur && make -j16 "${MK[@]}" all) >$OUT/build.log 2>&1 || { tail -30 $OUT/build.log; exit 1; }
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
date -u
N=build/dev/cur/build/bin/nvtaskset
{
for form in mps nomps; do
	rm -f /tmp/stop
	if [ $form = mps ]; then F=(); else F=(--yield slice --no-mps); fi
	timeout 300 $N --priority low "${F[@]}" python3 build/dev/ctxsync.py batch /tmp/stop 2>>$OUT/batch.err &
	bp=$!
	sleep 8
	for r in 1 2 3; do
		echo "$form r$r torch: $(NVTASKSET_BRIDGE=0 timeout 100 $N --priority high "${F[@]}" python3 build/dev/ctxsync.py serve stream 60 2>&1 | tail -1)"
		echo "$form r$r jax: $(NVTASKSET_BRIDGE=0 timeout 100 $N --priority high "${F[@]}" python3 build/dev/jaxsvc.py ready 60 2>&1 | tail -1)"
	done
	$N -l --json > $OUT/l-$form.json 2>&1
	touch /tmp/stop; wait $bp; echo "batch rc $?"
done
} 2>&1 | tee $OUT/j5.txt
$N --mps stop
pgrep -a nvidia-cuda-mps | grep -v defunct && echo "MPS daemons still running"
date -u
exit 0
