#!/usr/bin/env bash
# --profile on the GPU: profiles a GEMM, a memory-bound copy and a
# PyTorch inference loop under MPS, the copy also beside nvtaskset-hog, then
# runs each at the size --profile picked and at all TPCs and checks that the
# pick meets its 5% bound. Usage: tests/gpu/profile/run.sh OUTDIR (on the GPU
# machine, after make; about 6 minutes). Stops the MPS daemon it starts.
set -u
ROOT=$(cd "$(dirname "$0")/../../.." && pwd)
NVT=$ROOT/build/bin/nvtaskset
OUT=${1:?OUTDIR}
W=$ROOT/tests/gpu/profile/work.py
mkdir -p "$OUT"
CUDA_MPS_PIPE_DIRECTORY=$(mktemp -d /tmp/nvt-prof-pipe.XXXX) || exit 1
CUDA_MPS_LOG_DIRECTORY=$(mktemp -d /tmp/nvt-prof-log.XXXX) || exit 1
export CUDA_MPS_PIPE_DIRECTORY CUDA_MPS_LOG_DIRECTORY
trap 'timeout 20 "$NVT" --mps stop >/dev/null 2>&1' EXIT
echo "== $(date -u '+%Y-%m-%d %H:%M UTC') on $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader)"
timeout 60 "$NVT" --topology >/dev/null || exit 1
PASS=0 FAIL=0
for kind in gemm stream infer; do
	extra=()
	[ "$kind" = stream ] && extra=(--beside-hog)
	timeout 280 "$NVT" --profile --rounds 2 --timeout 60 "${extra[@]}" --metric 'time: ([0-9.]+)' \
		--plot "$OUT/$kind.svg" --json python3 "$W" "$kind" >"$OUT/$kind.json" 2>"$OUT/$kind.err"
	timeout 60 "$NVT" --profile --help >/dev/null
	python3 - "$OUT/$kind.json" <<'PY' | tee "$OUT/$kind.txt"
import json, sys
d = json.load(open(sys.argv[1]))
print("sizes", [(s["tpcs"], round(s.get("median", 0), 2), round(s.get("ratio", 0), 3)) for s in d["sizes"]])
if "beside_hog" in d:
    print("beside hog", [(s["tpcs"], round(s.get("median", 0), 2), round(s.get("ratio", 0), 3)) for s in d["beside_hog"]])
print("pick", d["pick"])
PY
	pick=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["pick"])' "$OUT/$kind.json")
	[ "$pick" != None ] || { FAIL=$((FAIL + 1)); echo "FAIL $kind: no pick"; continue; }
	# Verification: fresh runs at the pick and at all TPCs, interleaved.
	vals_pick=() vals_all=()
	for r in 1 2 3; do
		vals_pick+=("$(timeout 60 "$NVT" -n "$pick" python3 "$W" "$kind" 2>/dev/null | sed -n 's/time: \([0-9.]*\).*/\1/p')")
		vals_all+=("$(timeout 60 "$NVT" -c all python3 "$W" "$kind" 2>/dev/null | sed -n 's/time: \([0-9.]*\).*/\1/p')")
	done
	verdict=$(python3 - "$kind" "$pick" "${vals_pick[*]}" "${vals_all[*]}" <<'PY'
import statistics, sys
kind, pick, p, a = sys.argv[1], sys.argv[2], [float(x) for x in sys.argv[3].split()], [float(x) for x in sys.argv[4].split()]
r = statistics.median(p) / statistics.median(a)
print("%s pick=%s TPCs: median %.3f ms vs all TPCs %.3f ms: ratio %.3f (runs %s / %s) -> %s"
      % (kind, pick, statistics.median(p), statistics.median(a), r, p, a, "PASS" if r <= 1.05 else "FAIL"))
PY
)
	echo "$verdict" | tee -a "$OUT/verify.txt"
	case "$verdict" in *PASS) PASS=$((PASS + 1)) ;; *) FAIL=$((FAIL + 1)) ;; esac
done
pgrep -f nvtaskset-hog && { echo "FAIL a hog was left running"; FAIL=$((FAIL + 1)); }
# The device returns at most 8 files: everything in one archive.
(cd "$OUT" && tar -czf profile-results.tgz --remove-files ./*.json ./*.svg ./*.txt ./*.err 2>/dev/null)
echo "$PASS passed, $FAIL failed"
