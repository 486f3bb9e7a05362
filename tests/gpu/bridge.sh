#!/usr/bin/env bash
# make check-gpu-bridge: nvtaskset's bridge between a high time-sliced task's synchronised steps
# (docs/priorities.md, "Preemption") by its effect on the GPU's timeline (tests/bench/timeline):
# a service of small synchronised steps beside GEMMs in the low level, with the bridge off
# (NVTASKSET_BRIDGE=0) and as nvtaskset starts it by default, outside MPS and in the level
# servers. Checks: without the bridge a later step waits for two context switches (p50 over
# 250 us); with it, outside and inside MPS, it does not (p50 under 120 us: 56 us on an H100,
# docs/bench/timeline-2026-11-25 runs 11-12), and alone the bridge costs a later step at most
# 40 us; a step whose token is copied to the host on its stream (ASYNC=1 COPY=1: the next step
# queued behind the copy) pays no switch at its 90th percentile either (the shim's kernel
# copies it: p90 under 300 us against ~480 with a copy engine, docs/bench/prio-bridge-2026-11-25);
# a step of an empty kernel, 40 us of the host, then a graph replay (small work queued before
# a replay, a slow host between) does not pay either (p50 within 80 us of alone's); steps waited for by the context
# (cudaDeviceSynchronize) pay the switches unbridged and not bridged (p50 under 120 us), outside
# and inside MPS, also where the shim's thread was pinned to the waiting thread's CPU (it moves
# off it), and a service on one CPU (not bridged) has its later steps at p90 under 1500 us, as
# unbridged (a wait that took a bridge in lasts 5 ms); nor does a step
# whose host is busy 40 us after its replay, before its wait (p90 under 200 us: 96 on an H200,
# 414 with a bridge that ends at the replay); steps of plain launches whose host leaves gaps
# (an empty kernel, 40 us, the step; or 16 short kernels 10 us apart) pay the two switches once
# at most (p50 under 700 us: 420-454 on an H200);
# and copies to the host of every size and kind arrive whole under the bridge, outside and inside
# MPS (tests/gpu/copyapp.cu); and the bridge's kernel itself, driven by its words, ends a margin
# after its release, waits for the host's next call after a replay at most the late bound, ends
# a margin after that call, and unreleased ends its linger after the wait returned or after a
# held step's last launch, at most the held bound (tests/gpu/bridgeword.c). Every program has a time limit; the
# level daemons are stopped (run.sh). Needs an NVIDIA Hopper GPU, nvcc, cuBLAS, nvtaskset built (make all).
#
# Usage: tests/gpu/bridge.sh [LOGDIR]   (default: build/gpu)
set -u
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
LOG=${1:-$ROOT/build/gpu}
OUT=$LOG/bridge
rm -rf "$OUT"
mkdir -p "$OUT"
timeout 420 "$ROOT/tests/bench/timeline/run.sh" "$OUT" alone-small alone-small-product gemm-small \
	gemm-small-product gemm-small-product-mps gemm-small-ctx gemm-small-ctx-product gemm-small-ctx-product-mps \
	gemm-small-ctx-product-met gemm-small-ctx-product-met-mps gemm-small-ctx-product-self gemm-small-ctx-product-pin \
	gemm-small-ctx-product-pin-mps \
	gemm-small-async-copy-product alone-small-graph-pre40-product \
	gemm-small-graph-pre40-product gemm-small-graph-post40-product gemm-small-pre40-product \
	gemm-eager-g10-product >"$LOG/bridge.out" 2>&1
NVT=$ROOT/build/bin/nvtaskset
words=0
if nvcc -O2 -I"$ROOT/src" -o "$OUT/bridgeword" "$ROOT/tests/gpu/bridgeword.c" "$ROOT/src/shim/shimbridgeptx.c" \
	-lcuda >>"$LOG/bridge.out" 2>&1; then
	timeout 60 "$OUT/bridgeword" || words=1
else
	echo "FAIL bridgeword.c did not build ($LOG/bridge.out)"
	words=1
fi
copies=0
if nvcc -O2 -arch=sm_90 -o "$OUT/copyapp" "$ROOT/tests/gpu/copyapp.cu" >>"$LOG/bridge.out" 2>&1; then
	W=$(mktemp -d /tmp/nvt-bridge.XXXXXX)
	for how in "--no-mps --priority high" "--priority high"; do
		# shellcheck disable=SC2086 # the form's words
		if CUDA_MPS_PIPE_DIRECTORY=$W/mps CUDA_MPS_LOG_DIRECTORY=$W/mpslog NVTASKSET_BRIDGE_DEBUG=1 \
			timeout 120 "$NVT" $how "$OUT/copyapp" >"$W/copyapp.out" 2>&1; then
			echo "PASS copies to the host arrive whole: nvtaskset $how"
		else
			echo "FAIL copies to the host arrive whole: nvtaskset $how ($LOG/bridge.out)"
			copies=1
		fi
		cat "$W/copyapp.out" >>"$LOG/bridge.out"
		# The shim's report at exit: its kernel did the small copies to cudaHostAlloc's memory.
		n=$(sed -n 's/.*; \([0-9]*\) copies by its kernel.*/\1/p' "$W/copyapp.out")
		if [ "${n:-0}" -ge 1680 ]; then
			echo "PASS the bridge's kernel did $n of them: nvtaskset $how"
		else
			echo "FAIL the bridge's kernel did ${n:-none} of them, not 1680 or more: nvtaskset $how"
			copies=1
		fi
	done
	for l in low high; do
		echo quit | CUDA_MPS_PIPE_DIRECTORY=$W/mps-$l timeout 10 nvidia-cuda-mps-control >/dev/null 2>&1
	done
	echo quit | CUDA_MPS_PIPE_DIRECTORY=$W/mps timeout 10 nvidia-cuda-mps-control >/dev/null 2>&1
	rm -rf "$W"
else
	echo "FAIL copyapp.cu did not build ($LOG/bridge.out)"
	copies=1
fi
python3 - "$OUT/timeline.json" <<'PY'
import json, sys
try:
    res = json.load(open(sys.argv[1]))
except OSError as e:
    sys.exit("FAIL no timeline: %s" % e)
fails = 0
def later(name):
    return ((res.get(name) or {}).get("step_later") or {}).get("p50")
def check(ok, what):
    global fails
    print("PASS" if ok else "FAIL", what)
    fails += not ok
raw, alone, alone_b = later("gemm-small"), later("alone-small"), later("alone-small-product")
check(raw is not None and raw > 250, "without the bridge a later step pays the switches: p50 %s us" % raw)
for name in ("gemm-small-product", "gemm-small-product-mps"):
    v = later(name)
    check(v is not None and v < 120, "%s: a later step does not: p50 %s us" % (name, v))
def p90(name):
    return ((res.get(name) or {}).get("step_later") or {}).get("p90")
# Steps waited for by the context (cudaDeviceSynchronize): unbridged they pay the switches; the
# shim's thread queues their bridge just after the wait began, and they do not.
v = later("gemm-small-ctx")
check(v is not None and v > 250, "gemm-small-ctx: waited for by the context, unbridged, a later step pays: p50 %s us" % v)
# ... also where the shim's thread was pinned to the waiting thread's CPU (it moves off it), or
# the waiting thread alone to one CPU (the shim's thread runs on the CPUs of the program's others).
for name in ("gemm-small-ctx-product", "gemm-small-ctx-product-mps", "gemm-small-ctx-product-met",
             "gemm-small-ctx-product-met-mps", "gemm-small-ctx-product-self"):
    v = later(name)
    check(v is not None and v < 120, "%s: bridged, a later step does not: p50 %s us" % (name, v))
# A service on one CPU is not bridged: its later steps at p90 as unbridged, not a bridge's cap (5 ms).
for name in ("gemm-small-ctx-product-pin", "gemm-small-ctx-product-pin-mps"):
    v = p90(name)
    check(v is not None and v < 1500, "%s: on one CPU, unbridged, its later steps as unbridged: p90 %s us" % (name, v))
# A step of an empty kernel, 40 us of the host, then a graph replay (PyTorch's replay with a
# slow host): the bridge waits for the step's replay, and the channel does not run dry.
v, a = later("gemm-small-graph-pre40-product"), later("alone-small-graph-pre40-product")
check(v is not None and a is not None and v - a < 80,
      "gemm-small-graph-pre40-product: a later step does not pay either: p50 %s us (alone %s)" % (v, a))
# Plain launches with the host busy between them: the channel runs dry once and the step pays
# the two switches (420-454 us on the H200, docs/hardware-facts.md), never the milliseconds of a
# context left waiting for its next turn (20.8 ms a step: docs/bench/eager-2026-11-26).
for name in ("gemm-small-pre40-product", "gemm-eager-g10-product"):
    v = later(name)
    check(v is not None and v < 700, "%s: a step whose host leaves gaps pays the switches once at most: p50 %s us" % (name, v))
# A replay, then 40 us of the host before its wait: the bridge goes on until the host's next
# call after the replay, so the step has not run dry when the wait queues the next bridge.
v = p90("gemm-small-graph-post40-product")
check(v is not None and v < 200, "gemm-small-graph-post40-product: a host busy after its replay does not pay: p90 %s us" % v)
v = p90("gemm-small-async-copy-product")
check(v is not None and v < 300, "gemm-small-async-copy-product: a step queued behind its copy does not: p90 %s us" % v)
check(alone is not None and alone_b is not None and alone_b - alone <= 40,
      "alone the bridge costs a later step %s us (%s against %s)" %
      (None if alone is None or alone_b is None else round(alone_b - alone, 1), alone_b, alone))
print("bridge: %d failed" % fails)
sys.exit(1 if fails else 0)
PY
rc=$?
[ "$copies" = 0 ] && [ "$words" = 0 ] && exit $rc
exit 1
