#!/bin/bash
# Run P5: the tree after the review (a bridge's kernels not counted, a wait at the second "not
# ready" in a row, polled streams bridged). Run P2's PyTorch service (poll, stream) beside a
# time-sliced GEMM batch with the shim's bridge report; make check-gpu-hostfn, make
# check-gpu-bridge; then bench-prio's tbt and tbtpoll at random (run P4's command).
set -u
J=$PWD/build/.jsonc
MK=(make -j16 "JSONC_CFLAGS=-I$J/include -I$J/include/json-c" "JSONC_LIBS=$J/lib/libjson-c.a" all)
"${MK[@]}" >"$OUT/build.log" 2>&1 || { tail -30 "$OUT/build.log"; exit 1; }
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
date -u
mkdir -p "$OUT/r"
N=build/bin/nvtaskset
lowslice() { timeout 20 "$N" -l --json | python3 -c 'import json,sys
for t in json.load(sys.stdin)["tasks"]:
    g=t["gpus"][0]
    if g.get("priority")=="low": print("low timeslice_us", (g.get("yield") or {}).get("timeslice_us"))
    if g.get("priority")=="high": print("high requests", (g.get("requests") or {}).get("count"), "busy", (g.get("requests") or {}).get("busy"))'; }
for rnd in 1 2; do
	for mode in poll stream; do
		tag=$mode-$rnd
		rm -f /tmp/stop
		timeout 120 "$N" --no-mps --priority low --yield slice python3 build/dev/ctxsync.py batch /tmp/stop >"$OUT/r/$tag.batch" 2>&1 &
		bp=$!
		sleep 4
		br=1; [ $mode = poll0 ] && br=0
		NVTASKSET_BRIDGE=$br NVTASKSET_BRIDGE_DEBUG=1 timeout 120 "$N" --no-mps --priority high python3 build/dev/ctxsync.py serve "${mode%0}" 600 >"$OUT/r/$tag.serve" 2>&1 &
		sp=$!
		sleep 8
		echo "$tag: $(lowslice | tr '\n' ' ')"
		wait $sp
		touch /tmp/stop; wait $bp
		echo "$tag: $(grep -v 'bridge:' "$OUT/r/$tag.serve" | tail -1)"
		echo "$tag: $(grep -o 'bridge: [0-9]* waits, [0-9]* bridged' "$OUT/r/$tag.serve" | head -1)"
	done
done
echo "== make check-gpu-hostfn"; timeout 150 make check-gpu-hostfn GPU_LOG="$OUT/r/gpu" 2>&1 | tail -14
echo "== make check-gpu-bridge"; timeout 240 make check-gpu-bridge GPU_LOG="$OUT/r/gpu" 2>&1 | tail -25
MK2=("JSONC_CFLAGS=-I$J/include -I$J/include/json-c" "JSONC_LIBS=$J/lib/libjson-c.a")
PRIO_T0=$(date +%s.%N)
export PRIO_T0
PRIO_PHASE_S=1.0 PRIO_MIN_REQUESTS=300 PRIO_ROUNDS=2 PRIO_L=torch PRIO_H=torch PRIO_KINDS=tbt:poisson,tbtpoll:poisson \
	PRIO_CASES=L-alone-whole,H-alone-whole,static,mps-cp,prio-nopart timeout 400 \
	make "${MK2[@]}" bench-prio PRIO_SET=round5 PRIO_BUDGET_S=350 PRIO_TIMEOUT_S=380 BENCH_OUT=/tmp/b > "$OUT/r/bench.out" 2>&1
echo "bench rc $? $(date +%T)"
sed -n '/== L /,/^Cells/p' /tmp/b/prio/summary.txt | grep -v "^Cells"
cp -r /tmp/b/prio "$OUT/r/prio" 2>/dev/null
"$N" --mps stop 2>/dev/null
pgrep -a nvidia-cuda-mps | grep -v defunct && echo "MPS daemons still running"
date -u
rm -rf "$OUT/r/gpu/bridge" "$OUT/r/gpu/hostfn/hostfn"
tar -czf "$OUT/p5.tgz" -C "$OUT" r && rm -rf "$OUT/r"
exit 0
