#!/bin/bash
# Run P1: what following the launch calls costs a launch (runtime launches of a 10-argument,
# long-named kernel; PyTorch eager ops), alone, by NVTASKSET_BRIDGE_REARM (0, 1, unset: followed
# once held steps are seen), plain too; the default's launch calls enabled at run time (held
# steps forced, NVTASKSET_BRIDGE_HOLD=1); check-gpu-bridge; the timeline's eager phases default
# against REARM=0.
set -u
J=build/.jsonc
MK=("JSONC_CFLAGS=-I$J/include -I$J/include/json-c" "JSONC_LIBS=$J/lib/libjson-c.a")
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
make -j16 "${MK[@]}" all >$OUT/build.log 2>&1 || { tail -30 $OUT/build.log; exit 1; }
nvcc -O2 -arch=sm_90 -o build/lc docs/bench/chainseen-2026-11-26/lc.cu >>$OUT/build.log 2>&1 || { tail -30 $OUT/build.log; exit 1; }
echo "built $(date +%T)"
NVT=build/bin/nvtaskset
run() { # MODE TAG CMD...
	local mode=$1 tag=$2; shift 2
	local pre=()
	[ "$mode" != plain ] && pre=("$NVT" --no-mps --priority high)
	local env=(NVTASKSET_BRIDGE_DEBUG=1)
	[ "$mode" = 0 ] || [ "$mode" = 1 ] && env+=("NVTASKSET_BRIDGE_REARM=$mode")
	[[ $tag == *gap* ]] && env+=(NVTASKSET_BRIDGE_HOLD=1)
	local out
	out=$(env "${env[@]}" timeout 60 "${pre[@]}" "$@" 2>&1)
	echo "$mode $tag rc=$? $(grep -h 'launch_ns\|step_us' <<<"$out") | $(grep -o 'launch calls [a-z ]*[0-9(]*[a-z ]*' <<<"$out" | head -1) | $(grep -o 'chained behind a launch: [0-9]* in a step, [0-9]*' <<<"$out")"
	grep -i "error\|warn\|hang" <<<"$out" | grep -v "^nvtaskset: bridge:" | head -3
}
for r in 1 2; do
	modes="plain 0 1 unset"; [ $r = 2 ] && modes="unset 1 0 plain"
	for m in $modes; do
		run $m lc-tight build/lc 3000 16 0
		run $m lc-gap10 build/lc 1000 16 10
		run $m pt-tight python3 docs/bench/chainseen-2026-11-26/pt.py 1500 8 0
		run $m pt-gap10 python3 docs/bench/chainseen-2026-11-26/pt.py 800 8 10
	done
done 2>&1 | tee $OUT/launch.txt
echo "launch done $(date +%T)"
timeout 200 tests/gpu/bridge.sh /tmp/g > $OUT/check-gpu-bridge.txt 2>&1; echo "check-gpu-bridge rc $? $(date +%T)"
grep -v "^nvtaskset: bridge\|^copyapp" $OUT/check-gpu-bridge.txt | tail -12 | cut -c1-140
P="alone-small-product gemm-small-product gemm-eager-g5-hold1 gemm-eager-g20-hold1 gemm-eager-g40-product gemm-eager-g40-hold1 gemm-decode-product"
# shellcheck disable=SC2086 # the phases' names, one word each
NVTASKSET_BRIDGE_DEBUG=1 timeout 60 tests/bench/timeline/run.sh /tmp/tl $P > /dev/null 2>&1
echo "timeline rc $? $(date +%T)"
# shellcheck disable=SC2086
NVTASKSET_BRIDGE_REARM=0 NVTASKSET_BRIDGE_DEBUG=1 timeout 60 tests/bench/timeline/run.sh /tmp/tl0 $P > /dev/null 2>&1
echo "timeline unchained rc $? $(date +%T)"
for d in /tmp/tl /tmp/tl0; do echo "== $d"; cut -c1-118 $d/timeline.txt
	for f in $d/*.log; do echo "   $(basename $f .log): $(grep -h 'bridges held\|median\|launch calls' $f | sed 's/nvtaskset: bridge: //' | tr '\n' ' ' | cut -c1-300)"; done; done | grep -v "   run: " | tee $OUT/timeline.txt | cut -c1-118
tar -C /tmp -cJf $OUT/raw.tar.xz g tl tl0 2>/dev/null
pgrep -a nvidia-cuda-mps | grep -v defunct && echo "MPS daemons still running"
exit 0
