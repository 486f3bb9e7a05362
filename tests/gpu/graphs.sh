#!/usr/bin/env bash
# nvtaskset's GPU tests of CUDA graphs following partition changes (part of
# make check-gpu; alone: tests/gpu/graphs.sh [LOGDIR]). Needs a Hopper GPU,
# nvcc, PyTorch (and JAX for its step). Outside MPS the SMs of each replay are
# read back; under MPS (where %smid is virtual) replay times must follow.
# Every step has a time limit; every MPS daemon started is stopped.
set -u
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
NVT=$ROOT/build/bin/nvtaskset
G=$ROOT/build/gpu
LOG=${1:-$G}
mkdir -p "$G" "$LOG"
PASS=0 FAIL=0
pass() { PASS=$((PASS + 1)); echo "PASS $1"; }
fail() { FAIL=$((FAIL + 1)); echo "FAIL $1: $2"; }
T() { timeout "${LIMIT:-120}" "$@"; }
WATCH=
watchdog() { (sleep "$2"; echo "graphs.sh: pid $1 ran past $2 s: killed" >&2; kill -9 "$1") 2>/dev/null & WATCH=$!; }
unwatch() { [ -n "$WATCH" ] && kill "$WATCH" 2>/dev/null; WATCH=; }
mono() { python3 -c 'import time; print(time.monotonic_ns())'; }
lines_after() { awk -v t="$2" '$1 > t' "$1" 2>/dev/null | wc -l; }
wait_lines() { # FILE AFTER_NS COUNT: waits (30 s at most) for COUNT lines starting after AFTER_NS
	local i
	for ((i = 0; i < 300; i++)); do
		[ "$(lines_after "$1" "$2")" -ge "$3" ] && return 0
		sleep 0.1
	done
	return 1
}

NVCC=${NVCC:-$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)}
T "$NVCC" -O2 -arch=sm_90 -o "$G/graphloop" "$ROOT/tests/gpu/graphloop.cu" -lcuda || { echo "nvcc failed"; exit 1; }
"$NVT" --topology >/dev/null || exit 1

# ---- SMs of replays before and after -p (outside MPS) ------------------------
# CASE ARGS...: a graph replays under -c 0-3; -p moves it to 40-41, then 8-15.
graph_case() {
	local name=$1; shift
	local out=$LOG/graph-$name.log stop=$G/graph-$name.stop pid t1 t2 t3 t4 verdict
	rm -f "$out" "$stop"
	# No timeout(1) in front: -p must name the program's own PID. A watchdog instead.
	"$NVT" --no-mps -c 0-3 "$G/graphloop" "$@" --stop "$stop" --out "$out" 2>"$LOG/graph-$name.err" &
	pid=$!
	watchdog $pid 120
	wait_lines "$out" 0 10 || { fail "graph $name" "no replays ($(head -c 300 "$LOG/graph-$name.err"))"; touch "$stop"; wait $pid; unwatch; return; }
	t1=$(mono); T "$NVT" -p -c 40-41 $pid >"$LOG/graph-$name.p1" 2>&1; t2=$(mono)
	wait_lines "$out" "$t2" 10
	t3=$(mono); T "$NVT" -p -c 8-15 $pid >"$LOG/graph-$name.p2" 2>&1; t4=$(mono)
	wait_lines "$out" "$t4" 10
	touch "$stop"; wait $pid; unwatch
	verdict=$(python3 - "$out" "$t1" "$t2" "$t3" "$t4" <<'PY'
import sys
rows = [l.split() for l in open(sys.argv[1]) if l.strip()]
t1, t2, t3, t4 = map(int, sys.argv[2:6])
bad = []
def want(rows, tpcs, what):
    for r in rows:
        if r[3] != tpcs or r[4] != tpcs or r[5].split("=")[1] != r[6].split("=")[1]:
            bad.append("%s: %s" % (what, " ".join(r[3:])))
want([r for r in rows if int(r[1]) < t1], "0-3", "before")
want([r for r in rows if t2 < int(r[0]) and int(r[1]) < t3], "40-41", "after 1st -p")
want([r for r in rows if int(r[0]) > t4], "8-15", "after 2nd -p")
first = [float(r[2]) for r in rows if int(r[0]) > t2][:1]
med = sorted(float(r[2]) for r in rows if t2 < int(r[0]) and int(r[1]) < t3)
print("ok" if not bad else "bad " + "; ".join(bad[:3]),
      "| replays %d, first after -p %.3f ms, median %.3f ms" % (len(rows), first[0] if first else -1, med[len(med)//2] if med else -1))
PY
)
	echo "graph $name: $verdict" | tee -a "$LOG/graphs.txt"
	case "$verdict" in ok*) pass "graph $name follows -p" ;; *) fail "graph $name" "$verdict" ;; esac
}
graph_case runtime --nodes 3
graph_case driver --nodes 3 --driver
graph_case child --nodes 3 --child
graph_case driver-child --nodes 2 --driver --child
graph_case exec-update --nodes 3 --update 4
graph_case set-params --nodes 1 --setparams 3

# ---- PyTorch CUDAGraph (and JAX) replay times follow 66 -> 8 -> 66 TPCs ------
# MODE (mps|no-mps) KIND (torch|jax)
replay_case() {
	local mode=$1 kind=$2 out=$LOG/replay-$1-$2.log stop=$G/replay-$1-$2.stop pid t1 t2 t3 t4 verdict mps=()
	[ "$mode" = no-mps ] && mps=(--no-mps)
	rm -f "$out" "$stop"
	NVTASKSET_GRAPH_DEBUG=1 "$NVT" "${mps[@]}" -c 0-65 python3 "$ROOT/tests/gpu/graph_replay.py" "$kind" "$out" "$stop" \
		2>"$LOG/replay-$mode-$kind.err" &
	pid=$!
	watchdog $pid 240
	wait_lines "$out" 0 20 || { fail "replay $mode $kind" "no replays ($(tail -c 300 "$LOG/replay-$mode-$kind.err"))"; touch "$stop"; wait $pid; unwatch; return; }
	sleep 1
	# A whole GPC: cuBLAS launches clusters, which a scattered partition
	# would run on whole GPCs anyway (the shim's cluster guard).
	t1=$(mono); T "$NVT" -p -g 0 $pid >"$LOG/replay-$mode-$kind.p1" 2>&1; t2=$(mono)
	wait_lines "$out" "$t2" 20; sleep 1
	t3=$(mono); T "$NVT" -p -c 0-65 $pid >"$LOG/replay-$mode-$kind.p2" 2>&1; t4=$(mono)
	wait_lines "$out" "$t4" 20; sleep 1
	touch "$stop"; wait $pid; unwatch
	verdict=$(python3 - "$out" "$t1" "$t2" "$t3" "$t4" <<'PY'
import statistics as st, sys
rows = [tuple(map(float, l.split())) for l in open(sys.argv[1]) if l.strip()]
t1, t2, t3, t4 = map(int, sys.argv[2:6])
a = st.median(r[1] for r in rows if r[0] < t1)
b = st.median(r[1] for r in rows if t2 < r[0] < t3)
c = st.median(r[1] for r in rows if r[0] > t4)
ok = b / a > 3 and abs(c / a - 1) < 0.1
print("%s | 66 TPCs %.3f ms, GPC 0 %.3f ms (x%.2f), 66 again %.3f ms (x%.3f)" % ("ok" if ok else "bad", a, b, b / a, c, c / a))
PY
)
	echo "replay $mode $kind: $verdict" | tee -a "$LOG/graphs.txt"
	case "$verdict" in ok*) pass "replay $mode $kind follows -p" ;; *) fail "replay $mode $kind" "$verdict" ;; esac
}
replay_case no-mps torch
replay_case mps torch
replay_case no-mps jax
T "$NVT" --mps stop >/dev/null 2>&1

# ---- Costs -----------------------------------------------------------------
# Replays with no change, in and out of nvtaskset, interleaved; and the first
# replay after a change.
for r in 1 2 3 4 5 6 7 8; do
	T "$G/graphloop" --cost | sed "s/^/plain /" >>"$LOG/graph-cost.txt"
	T "$NVT" --no-mps -c 0-65 "$G/graphloop" --cost | sed "s/^/nvtaskset /" >>"$LOG/graph-cost.txt"
	NVTASKSET_GRAPHS=0 T "$NVT" --no-mps -c 0-65 "$G/graphloop" --cost | sed "s/^/unfollowed /" >>"$LOG/graph-cost.txt"
done
NVTASKSET=$NVT T "$NVT" --no-mps -c 0-65 "$G/graphloop" --cost | grep change | tee -a "$LOG/graph-cost.txt"
python3 - "$LOG/graph-cost.txt" <<'PY' | tee -a "$LOG/graphs.txt"
import re, statistics as st, sys
v = {}
for l in open(sys.argv[1]):
    m = re.match(r"(plain|nvtaskset|unfollowed) cost replay1_us=([\d.]+) replay20_us=([\d.]+)", l)
    if m:
        v.setdefault(m[1], []).append((float(m[2]), float(m[3])))
for i, name in ((0, "replay of 1 kernel"), (1, "replay of 20 kernels")):
    p, n = st.median(x[i] for x in v["plain"]), st.median(x[i] for x in v["nvtaskset"])
    u = st.median(x[i] for x in v["unfollowed"])
    print("cost %s: plain %.3f us, nvtaskset %.3f us (rate ratio %.4f), NVTASKSET_GRAPHS=0 %.3f us (%.4f)" % (name, p, n, p / n, u, p / u))
PY

echo "graphs: $PASS passed, $FAIL failed"
[ "$FAIL" -eq 0 ]
