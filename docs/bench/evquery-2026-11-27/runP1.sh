#!/bin/bash
# Run P1: a service that polls an event (cuEventQuery) ends its requests: this tree against
# c6979c4 (build/dev/old), make check-gpu-hostfn (forms fn, callback, query) on both, and a
# PyTorch token-by-token service (ctxsync.py: 8 steps of 16 4096^2 layers every 10 ms) waiting by
# polling (poll) or by stream synchronisation (stream) beside a time-sliced GEMM batch.
set -u
J=$PWD/build/.jsonc
MK=(make -j16 "JSONC_CFLAGS=-I$J/include -I$J/include/json-c" "JSONC_LIBS=$J/lib/libjson-c.a" all)
"${MK[@]}" >$OUT/build.log 2>&1 || { tail -30 $OUT/build.log; exit 1; }
(cd build/dev/old && "${MK[@]}" >$OUT/build-old.log 2>&1) || { tail -30 $OUT/build-old.log; exit 1; }
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
date -u
mkdir -p $OUT/r
echo "== new: check-gpu-hostfn"; timeout 200 bash tests/gpu/hostfn.sh $OUT/r/new 2>&1 | tail -14
echo "== old (c6979c4): hostfn.sh"; NVT=$PWD/build/dev/old/build/bin/nvtaskset timeout 200 bash tests/gpu/hostfn.sh $OUT/r/old 2>&1 | tail -14
lowslice() { timeout 20 "$1" -l --json | python3 -c 'import json,sys
for t in json.load(sys.stdin)["tasks"]:
    g=t["gpus"][0]
    if g.get("priority")=="low": print("low timeslice_us", (g.get("yield") or {}).get("timeslice_us"))
    if g.get("priority")=="high": print("high requests", (g.get("requests") or {}).get("count"), "busy", (g.get("requests") or {}).get("busy"))'; }
for rnd in 1 2; do
for b in new old; do
	N=build/bin/nvtaskset; [ $b = old ] && N=build/dev/old/build/bin/nvtaskset
	for mode in poll stream; do
		tag=$b-$mode-$rnd
		rm -f /tmp/stop
		timeout 120 $N --no-mps --priority low --yield slice python3 build/dev/ctxsync.py batch /tmp/stop >$OUT/r/$tag.batch 2>&1 &
		bp=$!
		sleep 4
		timeout 120 $N --no-mps --priority high python3 build/dev/ctxsync.py serve $mode 600 >$OUT/r/$tag.serve 2>&1 &
		sp=$!
		sleep 8
		echo "$tag: $(lowslice $N | tr '\n' ' ')"
		wait $sp
		touch /tmp/stop; wait $bp
		echo "$tag: $(cat $OUT/r/$tag.serve | tail -1)"
	done
done
done
echo "== alone"
for mode in poll stream; do timeout 120 python3 build/dev/ctxsync.py serve $mode 300 2>&1 | tail -1; done
build/bin/nvtaskset --mps stop 2>/dev/null
pgrep -a nvidia-cuda-mps | grep -v defunct && echo "MPS daemons still running"
date -u
tar -czf $OUT/p1.tgz -C $OUT r build.log && rm -rf $OUT/r
exit 0
