#!/usr/bin/env bash
# make check-gpu-bridge: nvtaskset's bridge between a high time-sliced task's synchronised steps
# (docs/priorities.md, "Preemption") by its effect on the GPU's timeline (tests/bench/timeline):
# a service of small synchronised steps beside GEMMs in the low level, with the bridge off
# (NVTASKSET_BRIDGE=0) and as nvtaskset starts it by default, outside MPS and in the level
# servers. Checks: without the bridge a later step waits for two context switches (p50 over
# 250 us); with it, outside and inside MPS, it does not (p50 under 120 us: 56 us on an H100,
# docs/bench/timeline-2026-11-25 runs 11-12), and alone the bridge costs a later step at most
# 40 us. Every program has a time limit; the level daemons are stopped (run.sh). Needs an NVIDIA
# Hopper GPU, nvcc, cuBLAS, nvtaskset built (make all).
#
# Usage: tests/gpu/bridge.sh [LOGDIR]   (default: build/gpu)
set -u
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
LOG=${1:-$ROOT/build/gpu}
OUT=$LOG/bridge
rm -rf "$OUT"
mkdir -p "$OUT"
timeout 300 "$ROOT/tests/bench/timeline/run.sh" "$OUT" alone-small alone-small-product gemm-small \
	gemm-small-product gemm-small-product-mps >"$LOG/bridge.out" 2>&1
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
check(alone is not None and alone_b is not None and alone_b - alone <= 40,
      "alone the bridge costs a later step %s us (%s against %s)" %
      (None if alone is None or alone_b is None else round(alone_b - alone, 1), alone_b, alone))
print("bridge: %d failed" % fails)
sys.exit(1 if fails else 0)
PY
