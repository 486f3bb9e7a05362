#!/bin/bash
# Run J2: which driver calls a JAX service's steps make (nsys's CUDA API summary of jaxsvc.py,
# 30 requests, no nvtaskset), and the cell beside GEMM training: alone on the whole GPU (no
# nvtaskset), the default (time-sliced, bridged), NVTASKSET_BRIDGE=0, static partitions
# (-g 0-1 / -g 2-11), each in fresh processes, two rounds.
set -u
J=$PWD/build/.jsonc
MK=("JSONC_CFLAGS=-I$J/include -I$J/include/json-c" "JSONC_LIBS=$J/lib/libjson-c.a")
(cd build/dev/cur && make -j16 "${MK[@]}" all) >$OUT/build.log 2>&1 || { tail -30 $OUT/build.log; exit 1; }
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
date -u
NS=$(command -v nsys || ls /usr/local/cuda*/bin/nsys /opt/nvidia/nsight-systems/*/bin/nsys 2>/dev/null | head -1)
echo "nsys: ${NS:-none}"
if [ -n "$NS" ]; then
	for m in ready item; do
		timeout 120 "$NS" profile -t cuda -o $OUT/j-$m -f true python3 build/dev/jaxsvc.py $m 30 >$OUT/nsys-$m.log 2>&1
		timeout 120 "$NS" stats -r cuda_api_sum -f csv $OUT/j-$m.nsys-rep 2>/dev/null | cut -d, -f1-4,9 | head -30 > $OUT/api-$m.csv
		echo "== $m"; cat $OUT/api-$m.csv
		rm -f $OUT/j-$m.nsys-rep $OUT/j-$m.sqlite
	done
fi
N=build/dev/cur/build/bin/nvtaskset
srv() { # LABEL MODE CMD...
	local l=$1 m=$2 out
	shift 2
	out=$(NVTASKSET_BRIDGE_DEBUG=1 timeout 120 "$@" python3 build/dev/jaxsvc.py $m 100 2>/tmp/e.txt)
	echo "$l rc $?: $out | $(grep -o '[0-9]* waits, [0-9]* bridged[^;]*' /tmp/e.txt | head -1); $(grep -c warning /tmp/e.txt) warnings"
}
{
for m in ready item; do srv "alone, no nvtaskset" $m env; done
for b in slice static; do
	rm -f /tmp/stop
	if [ $b = slice ]; then
		timeout 300 $N --priority low python3 build/dev/ctxsync.py batch /tmp/stop 2>>$OUT/batch.err &
	else
		timeout 300 $N -g 2-11 python3 build/dev/ctxsync.py batch /tmp/stop 2>>$OUT/batch.err &
	fi
	bp=$!
	sleep 8
	for r in 1 2; do
		for m in ready item; do
			if [ $b = slice ]; then
				srv "r$r beside GEMMs, default" $m $N --priority high
				srv "r$r beside GEMMs, NVTASKSET_BRIDGE=0" $m env NVTASKSET_BRIDGE=0 $N --priority high
			else
				srv "r$r beside GEMMs, static" $m $N -g 0-1
			fi
		done
	done
	touch /tmp/stop; wait $bp; echo "batch ($b) rc $?"
done
} 2>&1 | tee $OUT/j2.txt
$N --mps stop
pgrep -a nvidia-cuda-mps | grep -v defunct && echo "MPS daemons still running"
date -u
exit 0
