#!/usr/bin/env bash
# Where generate() alone loses time under --priority high (the default: time-sliced in the
# level's MPS server): tests/bench/prio/genalone.py, fresh processes, ROUNDS rounds in rotated
# order, in each form from nothing to the default: plain (no MPS), a plain MPS client, the shim
# with every TPC in that MPS server, --priority high --yield client there (the shim's priority
# without time-slicing), the default (--priority high: its level's MPS server, time-sliced),
# and --priority high --yield slice --no-mps (its own context, time-sliced). While the default
# runs, -l --json shows its control (the level's server groups' timeslice) taking effect.
# Writes OUT/genalone.txt (one line a run) and OUT/genalone-l.json. MPS daemons it starts are
# stopped on every exit.
#
# Usage: [ROUNDS=3] [REQUESTS=30] tests/bench/prio/genalone.sh OUT
set -u
ROOT=$(cd "$(dirname "$0")/../../.." && pwd)
NVT=$ROOT/build/bin/nvtaskset
OUT=${1:?usage: genalone.sh OUT}
ROUNDS=${ROUNDS:-3} REQUESTS=${REQUESTS:-30}
W=$(mktemp -d /tmp/nvt-genalone.XXXXXX)
mkdir -p "$OUT"
export CUDA_MPS_PIPE_DIRECTORY=$W/mps CUDA_MPS_LOG_DIRECTORY=$W/mpslog
down() {
	timeout 60 "$NVT" --mps stop >>"$OUT/genalone-mps.txt" 2>&1
	echo quit | timeout 20 nvidia-cuda-mps-control >/dev/null 2>&1
	rm -rf "$W"
}
trap down EXIT
timeout 60 "$NVT" --mps start >"$OUT/genalone-mps.txt" 2>&1 || { echo "genalone: no MPS daemon"; exit 1; }
PY=(python3 "$ROOT/tests/bench/prio/genalone.py" "$REQUESTS")
FORMS=(plain mps shim client default noMPS)
run_form() {
	case $1 in
	plain) CUDA_MPS_PIPE_DIRECTORY=$W/none timeout 300 "${PY[@]}" ;;
	mps) timeout 300 "${PY[@]}" ;;
	shim) timeout 300 "$NVT" -c all "${PY[@]}" ;;
	client) timeout 300 "$NVT" --priority high --yield client "${PY[@]}" ;;
	default)
		timeout 300 "$NVT" --priority high "${PY[@]}" &
		local pid=$!
		# Its control, read back while it runs (the level's server and its groups' timeslice).
		for _ in $(seq 100); do
			"$NVT" -l --json >"$W/l.json" 2>&1
			grep -q 'genalone' "$W/l.json" && grep -q 'timeslice' "$W/l.json" && break
			sleep 0.5
		done
		cp "$W/l.json" "$OUT/genalone-l.json"
		wait "$pid"
		;;
	noMPS) timeout 300 "$NVT" --no-mps --priority high --yield slice "${PY[@]}" ;;
	esac
}
: >"$OUT/genalone.txt"
n=${#FORMS[@]}
for r in $(seq 0 $((ROUNDS - 1))); do
	for k in $(seq 0 $((n - 1))); do
		form=${FORMS[$(((k + r) % n))]}
		line=$(run_form "$form" 2>"$W/err" | grep '^generate' | tail -1)
		echo "round=$r form=$form ${line:-failed: $(tail -c 300 "$W/err" | tr '\n' ' ')}" | tee -a "$OUT/genalone.txt"
	done
done
for form in "${FORMS[@]}"; do
	grep " form=$form " "$OUT/genalone.txt" | sed -n 's/.*median_ms=\([0-9.]*\).*/\1/p' |
		sort -n | awk -v f="$form" '{ v[NR] = $1 } END { printf "%s: median of %d rounds %.2f ms\n", f, NR, v[int((NR + 1) / 2)] }'
done | tee "$OUT/genalone-summary.txt"
