#!/usr/bin/env bash
# Do packed partitions whose GPCs lie in both memory halves (found by
# tests/gpu/probes/gpc-bandwidth: GPCs {1,2,3,7} and {0,4,5,6} on the H100
# of 2026-11-22) close the gap to MPS's share on the size benchmark's
# workloads? Runs tests/bench/sizes_worker.py, --sm-limit, for 24 TPCs as
# GPCs 1,2,3 (one half: what -n 24 picks) and 1,2,4 (both), and 42 TPCs as
# 1,2,3,6,7 (-n 42's pick) and 1,4,5,6,7, beside MPS's share, in interleaved
# rounds. Usage: run.sh OUTDIR (GPU machine, root, PyTorch).
set -u
ROOT=$(cd "$(dirname "$0")/../../../.." && pwd)
OUT=${1:?usage: run.sh OUTDIR}
mkdir -p "$OUT"
NVT=$ROOT/build/bin/nvtaskset
W=$(mktemp -d /tmp/nvt-halves.XXXX)
export CUDA_MPS_PIPE_DIRECTORY=$W/mps CUDA_MPS_LOG_DIRECTORY=$W/log CUDA_DEVICE_MAX_CONNECTIONS=8
export SIZES_PROFILE=0 SIZES_REPS=${SIZES_REPS:-15} PYTHONUNBUFFERED=1
timeout 60 "$NVT" --calibrate >/dev/null 2>&1
timeout 60 "$NVT" --mps start >/dev/null || exit 1
for r in $(seq 1 "${ROUNDS:-2}"); do
	for c in "24 mps 37" "24 one 1,2,3" "24 both 1,2,4" "42 mps 64" "42 one 1,2,3,6,7" "42 both 1,4,5,6,7"; do
		set -- $c
		if [ "$2" = mps ]; then
			line=$(CUDA_MPS_ACTIVE_THREAD_PERCENTAGE=$3 timeout 120 python3 "$ROOT/tests/bench/sizes_worker.py" 2>/dev/null | tail -1)
		else
			line=$(timeout 120 "$NVT" --sm-limit -g "$3" python3 "$ROOT/tests/bench/sizes_worker.py" 2>/dev/null | tail -1)
		fi
		echo "round=$r tpcs=$1 case=$2 gpcs=$3 $line" | tee -a "$OUT/halves.txt"
	done
done
"$NVT" --mps stop >/dev/null
python3 - "$OUT/halves.txt" <<'PY' | tee "$OUT/halves-summary.txt"
import json, re, statistics, sys
ms = {}
for line in open(sys.argv[1]):
    m = re.match(r"round=\d+ tpcs=(\d+) case=(\w+) gpcs=\S+ (\{.*\})", line)
    if not m:
        continue
    for name, t in json.loads(m.group(3))["ms"].items():
        ms.setdefault((int(m.group(1)), name, m.group(2)), []).append(t)
for n in (24, 42):
    for name in sorted({k[1] for k in ms if k[0] == n}):
        med = {c: statistics.median(ms[(n, name, c)]) for c in ("mps", "one", "both") if (n, name, c) in ms}
        if len(med) == 3:
            print("%2d TPCs %-36s mps %.3f ms; one half %.3f (%.3f); both halves %.3f (%.3f)" % (
                n, name, med["mps"], med["one"], med["one"] / med["mps"], med["both"], med["both"] / med["mps"]))
PY
