#!/usr/bin/env bash
# Memory halves on the GPU. 1) --calibrate three times: the
# bandwidth probe's halves and what it measured (JSON). 2) A memory-bound
# task L (tests/bench/prio/lat.cu, memory mode: 16 blocks copying 64 MB, jobs
# back to back, each timed) alone and beside nvtaskset-hog streaming on two
# GPCs, under MPS: L on GPC 1 or GPC 4 (8 TPCs each), the hog on GPCs 2-3 or
# 5-6, interleaved rounds; the halves of docs/hardware-facts.md section 14
# put GPCs 1-3 and 7 in one half. 3) When the probe found halves: the hog
# picked with -n 16 --memory-half H, and L with -n 8 --exclude-running, with
# --memory-half auto, and in the hog's half. Usage: tests/gpu/halves/run.sh
# OUTDIR (on the GPU machine, after make; about 3 minutes). Stops the MPS
# daemon it starts and every hog. PROBES=N calibrations (3), NAMED (below),
# SKIP_PICKS=1 leaves out part 3, ROUNDS=N (3).
set -u
ROOT=$(cd "$(dirname "$0")/../../.." && pwd)
NVT=$ROOT/build/bin/nvtaskset
HOG=$ROOT/build/lib/nvtaskset/nvtaskset-hog
OUT=${1:?OUTDIR}
ROUNDS=${ROUNDS:-3}
mkdir -p "$OUT/l"
export NVTASKSET_CACHE_DIR=$OUT/cache
CUDA_MPS_PIPE_DIRECTORY=$(mktemp -d /tmp/nvt-halves-pipe.XXXX) || exit 1
CUDA_MPS_LOG_DIRECTORY=$(mktemp -d /tmp/nvt-halves-log.XXXX) || exit 1
export CUDA_MPS_PIPE_DIRECTORY CUDA_MPS_LOG_DIRECTORY
HOGPID=
stop_hog() {
	[ -n "$HOGPID" ] && kill "$HOGPID" 2>/dev/null && wait "$HOGPID" 2>/dev/null
	pkill -f nvtaskset-hog 2>/dev/null
	HOGPID=
}
trap 'stop_hog; timeout 20 "$NVT" --mps stop >/dev/null 2>&1' EXIT
echo "== $(date -u '+%Y-%m-%d %H:%M UTC') on $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader)"
UUID=$(nvidia-smi --query-gpu=uuid --format=csv,noheader | head -1)
NVCC=${NVCC:-$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)}
timeout 120 "$NVCC" -O2 -arch=sm_90 -o "$OUT/lat" "$ROOT/tests/bench/prio/lat.cu" || { echo "nvcc failed"; exit 1; }

# ---- 1. The probe ----------------------------------------------------------------
for ((i = 1; i <= ${PROBES:-3}; i++)); do
	timeout 120 "$NVT" --calibrate --json >"$OUT/calibrate$i.json" 2>"$OUT/calibrate$i.err"
	echo "calibrate $i: rc $?"
	python3 - "$OUT/calibrate$i.json" <<'PY'
import json, sys
g = json.load(open(sys.argv[1]))["gpus"][0]
print("  halves by GPC:", [c["memory_half"] for c in g["gpcs"]])
p = g.get("memory_probe")
if p:
    print("  probe %.2f s: %s" % (p["seconds"], p["why"]))
    for q in p["probes"]:
        print("  reference GPC %d alone %.0f GB/s; beside GPC g (neighbour GB/s): cost" % (q["reference_gpc"], q["alone_gbps"]))
        print("   ", "  ".join("%d(%.0f):%.3f" % (b["gpc"], b["neighbour_gbps"], b["cost"]) for b in q["beside"]))
PY
done
timeout 60 "$NVT" --topology | tee "$OUT/topology.txt" | grep -i "memory halves"

# ---- 2. L beside a neighbour, GPCs named ----------------------------------------
# run_l NAME NVTASKSET-ARGS...: one L process; its jobs' latencies in $OUT/l/NAME.rR.csv
run_l() {
	local name=$1
	shift
	timeout 60 "$NVT" "$@" "$OUT/lat" memory 20 100 25 "$OUT/l/$name.r$R.csv" >/dev/null 2>"$OUT/l/$name.r$R.err" ||
		echo "  L $name round $R failed: $(tail -2 "$OUT/l/$name.r$R.err")"
}
start_hog() { # start_hog NVTASKSET-ARGS...
	timeout 300 "$NVT" "$@" "$HOG" "$UUID" 2>"$OUT/hog.err" &
	HOGPID=$!
	sleep 2
	kill -0 "$HOGPID" 2>/dev/null || echo "  the hog did not start: $(tail -2 "$OUT/hog.err")"
}
# NAMED: "HOG_GPCS/L_GPC ..." ("-" for no hog); by default L on GPC 1 or 4
# beside the hog on GPCs 2-3 or 5-6 (16 and 17 TPCs).
NAMED=${NAMED:--/1 -/4 2,3/1 2,3/4 5,6/1 5,6/4}
for ((R = 1; R <= ROUNDS; R++)); do
	echo "round $R: named GPCs"
	last=
	for pair in $NAMED; do
		h=${pair%/*} l=${pair#*/}
		if [ "$h" != "$last" ]; then
			stop_hog
			[ "$h" == - ] || start_hog -g "$h"
			last=$h
		fi
		if [ "$h" == - ]; then
			run_l "alone-g$l" -g "$l"
		else
			run_l "hog${h//,/}-g$l" -g "$l"
		fi
	done
	stop_hog
done

# ---- 3. nvtaskset's picks ----------------------------------------------------------
if [ -n "${SKIP_PICKS:-}" ]; then
	echo "picks skipped (SKIP_PICKS)"
elif grep -q "Memory halves: 0 = " "$OUT/topology.txt"; then
	for ((R = 1; R <= ROUNDS; R++)); do
		echo "round $R: picks"
		for H in 0 1; do
			start_hog -n 16 --memory-half "$H" --exclude-running
			timeout 20 "$NVT" -l >"$OUT/l/list-hog$H.r$R.txt" 2>&1
			run_l hog$H-default -n 8 --exclude-running
			run_l hog$H-auto -n 8 --exclude-running --memory-half auto
			run_l hog$H-same -n 8 --exclude-running --memory-half "$H"
			stop_hog
			run_l alone$H-auto -n 8 --exclude-running --memory-half $((1 - H))
			run_l alone$H-same -n 8 --exclude-running --memory-half "$H"
		done
	done
else
	echo "no halves found: the picks are not measured"
fi

# ---- Summary -------------------------------------------------------------------------
python3 - "$OUT/l" <<'PY' | tee "$OUT/summary.txt"
import glob, os, re, statistics, sys
d = sys.argv[1]
rows = {}
for f in sorted(glob.glob(os.path.join(d, "*.csv"))):
    name, r = re.match(r"(.*)\.r(\d+)\.csv$", os.path.basename(f)).groups()
    lat, sms = [], ""
    for line in open(f):
        if line.startswith("# sms="):
            sms = line.strip()[6:]
        elif line[0].isdigit():
            lat.append(float(line.split(",")[4]))
    if len(lat) < 50:
        continue
    lat.sort()
    rows.setdefault(name, []).append((lat[len(lat) // 2], lat[int(len(lat) * 0.99)], len(lat), sms))
def med(name, i):
    return statistics.median(x[i] for x in rows[name]) if name in rows else float("nan")
print("L (memory-bound, jobs back to back): median over rounds of each run's p50 / p99, us; ratio to L alone on the same TPCs")
for name in sorted(rows):
    ref = None
    m = re.match(r"hog\d+-(g\d+)$", name)
    if m:
        ref = "alone-" + m.group(1)
    m = re.match(r"hog(\d)-(auto|same)$", name)
    if m:
        ref = "alone%s-%s" % m.groups()
    line = "%-14s p50 %7.1f  p99 %7.1f  (%d runs, %d jobs)" % (name, med(name, 0), med(name, 1), len(rows[name]), rows[name][0][2])
    if ref and ref in rows:
        line += "   x%.2f p50  x%.2f p99 vs %s" % (med(name, 0) / med(ref, 0), med(name, 1) / med(ref, 1), ref)
    print(line)
    print("%-14s SMs %s" % ("", rows[name][0][3][:120]))
PY
pgrep -f nvtaskset-hog && echo "FAIL a hog was left running"
(cd "$OUT" && tar -czf halves-results.tgz --remove-files l calibrate*.json calibrate*.err topology.txt hog.err 2>/dev/null)
echo "done"
