#!/bin/bash
# Run J4: the JAX service (jaxsvc.py ready / item) beside GEMM training in each form: alone (no
# nvtaskset), the default (time-sliced in the level servers), time-sliced outside MPS with the
# high task's timeslice at 20 ms (its default), 2 ms and 0.5 ms, MPS client priority (plain MPS
# clients, the batch at CUDA_MPS_CLIENT_PRIORITY=1), static partitions (-g 0-1 / -g 2-11).
set -u
J=$PWD/build/.jsonc
MK=("JSONC_CFLAGS=-I$J/include -I$J/include/json-c" "JSONC_LIBS=$J/lib/libjson-c.a")
(cd build/dev/cur && make -j16 "${MK[@]}" all) >$OUT/build.log 2>&1 || { tail -30 $OUT/build.log; exit 1; }
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
date -u
N=build/dev/cur/build/bin/nvtaskset
srv() { # LABEL MODE CMD...
	local l=$1 m=$2 out
	shift 2
	out=$(NVTASKSET_BRIDGE_DEBUG=1 timeout 120 "$@" python3 build/dev/jaxsvc.py $m 100 2>/tmp/e.txt)
	echo "$l rc $?: $out | $(grep -o '[0-9]* waits, [0-9]* bridged' /tmp/e.txt | head -1); $(grep -i 'warning' /tmp/e.txt | head -2 | tr '\n' ' ')"
}
batch() { # CMD...: the batch until /tmp/stop
	rm -f /tmp/stop
	timeout 300 "$@" python3 build/dev/ctxsync.py batch /tmp/stop 2>>$OUT/batch.err &
	bp=$!
	sleep 8
}
endbatch() { touch /tmp/stop; wait $bp; echo "batch rc $?"; }
{
for m in ready item; do srv "alone, no nvtaskset" $m env; done
batch $N --priority low
for m in ready item; do srv "default (slice, level servers)" $m $N --priority high; done
endbatch
batch $N --priority low --yield slice --no-mps
for ts in 20000 2000 500; do
	for m in ready item; do srv "slice --no-mps, high timeslice $ts us" $m $N --priority high --yield slice=$ts --no-mps; done
done
endbatch
$N --mps start
batch env CUDA_MPS_CLIENT_PRIORITY=1
for m in ready item; do srv "MPS client priority" $m env; done
endbatch
batch $N -g 2-11
for m in ready item; do srv "static" $m $N -g 0-1; done
endbatch
} 2>&1 | tee $OUT/j4.txt
$N --mps stop
pgrep -a nvidia-cuda-mps | grep -v defunct && echo "MPS daemons still running"
date -u
exit 0
