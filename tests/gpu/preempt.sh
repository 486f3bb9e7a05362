#!/usr/bin/env bash
# make check-gpu-preempt: preemptive priorities on the GPU (docs/priorities.md, "Preemption").
# A service (tests/bench/tslice/lsvc.py: decode, token by token, prefill, at random) beside a
# GEMM training loop, three ways in fresh processes: both in contexts of their own at the
# driver's timeslices; nvtaskset --priority high/low --yield slice outside MPS; the same under
# MPS, where nvtaskset starts each level's daemon with the shim in its server. A timeslice the
# driver only recorded would look like the default: the test reads each task's (or server's)
# channel groups and timeslice back through -l --json, and checks the behaviour they cause, the
# service's wait: p99 at most half the default's. Every program has a time limit; the daemons
# are stopped. Needs an NVIDIA GPU, PyTorch, nvtaskset built (make all).
#
# Usage: tests/gpu/preempt.sh [LOGDIR]   (default: build/gpu)
set -u
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
LOG=${1:-$ROOT/build/gpu}
mkdir -p "$LOG"
OUT=$LOG/preempt
rm -rf "$OUT"
# 600 requests a phase (bench's 150 make a p99 the third-worst request: a few slow ones failed
# the decode check in MPS in 3 of 12 runs, 2.6-2.7 ms against the default's 5.0-5.1 and 3.8)
# The level daemons nvtaskset starts for the time-sliced tasks: stopped however this ends.
stop_levels() {
	for p in /tmp/pw/mpsT-low /tmp/pw/mpsT-high; do
		echo quit | CUDA_MPS_PIPE_DIRECTORY=$p timeout 10 nvidia-cuda-mps-control >/dev/null 2>&1
	done
}
trap stop_levels EXIT
trap 'exit 143' TERM
trap 'exit 130' INT
L_N=${L_N:-600} PREEMPT_SET=gpu PREEMPT_TIMEOUT=300 OUT=$OUT timeout 400 "$ROOT/tests/bench/tslice/preempt.sh" >"$LOG/preempt.out" 2>&1
stop_levels
python3 - "$OUT/preempt.log" <<'PY'
import json, sys
res = {}
for line in open(sys.argv[1]):
    if line.startswith("{"):
        r = json.loads(line)
        res[r["name"]] = r
fails = 0
def check(ok, what):
    global fails
    print("PASS" if ok else "FAIL", what)
    fails += not ok
base = res.get("gpu-default", {})
for name in ("gpu-slice-own", "gpu-slice-mps"):
    r = res.get(name, {})
    rows = [g.get("yield") or {} for t in r.get("list") or [] for g in t.get("gpus", [])]
    ts = sorted(y.get("timeslice_us") for y in rows if y.get("channel_groups"))
    check(5 in ts and 20000 in ts, "%s: channel groups read back at 5 us and 20000 us: %s" % (name, ts))
    check(all(not y.get("driver_status") for y in rows), "%s: no control refused" % name)
    for kind in ("decode", "tbt"):
        d, b = r.get(kind), base.get(kind)
        check(bool(d and b and d[1] * 2 <= b[1]),
              "%s: %s p99 %s ms, at most half the default's %s" % (name, kind, d and d[1], b and b[1]))
    check((r.get("h_rate") or 0) >= 0.85 * (base.get("h_rate") or 1e9),
          "%s: the GEMM loop keeps 0.85 of its rate beside the default's (%s against %s)"
          % (name, r.get("h_rate"), base.get("h_rate")))
sys.exit(1 if fails else 0)
PY
