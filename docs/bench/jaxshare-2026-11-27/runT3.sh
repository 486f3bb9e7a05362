#!/bin/bash
# Run T3: (A) tests/gpu/hostfn.sh with HEAD before the change (build/dev/cur) and with the working
# tree; (B) the JAX cell again (jaxsvc.py ready / item, 300 requests: past the share's two 500 ms
# windows) beside ctxsync.py's GEMM batch: alone, the default (level servers, bridged),
# NVTASKSET_BRIDGE=0, static partitions; the PyTorch service beside the default's batch; -l --json
# right after each run (the batch's timeslice).
set -u
J=$PWD/build/.jsonc
MK=("JSONC_CFLAGS=-I$J/include -I$J/include/json-c" "JSONC_LIBS=$J/lib/libjson-c.a")
(make -j16 "${MK[@]}" all >$OUT/build.log 2>&1 || { tail -30 $OUT/build.log; exit 1; }) &
(cd build/dev/cur && make -j16 "${MK[@]}" all >$OUT/build-old.log 2>&1 || { tail -30 $OUT/build-old.log; exit 1; }) &
wait
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
date -u
N=$PWD/build/bin/nvtaskset
R=$OUT/r; mkdir -p $R
echo "== hostfn.sh, HEAD before the change"; NVT=$PWD/build/dev/cur/build/bin/nvtaskset timeout 120 tests/gpu/hostfn.sh $R/old 2>&1 | tail -12
echo "== hostfn.sh, this tree"; timeout 120 tests/gpu/hostfn.sh $R/new 2>&1 | tail -12
date -u
srv() { # LABEL MODE FILE CMD...
	local l=$1 m=$2 f=$3 out
	shift 3
	out=$(JAXSVC_OUT=$R/$f.jax NVTASKSET_BRIDGE_DEBUG=1 timeout 120 "$@" python3 build/dev/jaxsvc.py $m 300 2>$R/$f.err | tail -1)
	echo "$l: $out | $(grep -o '[0-9]* waits, [0-9]* bridged' $R/$f.err | head -1)"
	$N -l --json >$R/$f-l.json 2>&1
	echo "   -l after: $(python3 -c 'import json,sys
d=json.load(open(sys.argv[1]))
for t in d["tasks"]:
    g=t["gpus"][0]
    if g.get("priority") in ("low","high"): print(g["priority"], (g.get("yield") or {}).get("timeslice_us"), (g.get("requests") or {}).get("count"), end="; ")' $R/$f-l.json 2>&1)"
}
batch() { rm -f /tmp/stop; timeout 300 "$@" python3 build/dev/ctxsync.py batch /tmp/stop 2>>$R/batch.err & bp=$!; sleep 8; }
endbatch() { touch /tmp/stop; wait $bp; echo "batch rc $?"; }
{
for m in ready item; do srv "alone $m" $m alone-$m env; done
batch $N --priority low
for m in ready item; do
	srv "default $m" $m def-$m $N --priority high
	srv "NVTASKSET_BRIDGE=0 $m" $m nob-$m env NVTASKSET_BRIDGE=0 $N --priority high
done
echo "torch: $(timeout 100 $N --priority high python3 build/dev/ctxsync.py serve stream 300 2>&1 | tail -1)"
endbatch
$N --mps start
batch $N -g 2-11
for m in ready item; do srv "static $m" $m st-$m $N -g 0-1; done
endbatch
} 2>&1 | tee $OUT/t3.txt
$N --mps stop
pgrep -a nvidia-cuda-mps | grep -v defunct && echo "MPS daemons still running"
date -u
tar -czf $OUT/r.tgz -C $OUT r && rm -rf $R
exit 0
