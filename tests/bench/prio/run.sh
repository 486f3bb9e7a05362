#!/usr/bin/env bash
# make bench-prio: the priorities benchmark (issue 26) on an H100, under one
# MPS daemon; raw logs, prio.csv, summary.txt and prio.png in OUTDIR.
#   tests/bench/prio/run.sh OUTDIR [full|guard]
# guard: the guard sweep and MPS's client priority (~60 s); full: L at 10/30/70%
# duty beside the GEMM loop and the streaming hog in every configuration
# (PRIO_ROUNDS=2: ~7.5 min, ~50 configurations x rounds). See prio.py for the settings (environment).
set -u
ROOT=$(cd "$(dirname "$0")/../../.." && pwd)
OUTDIR=${1:?usage: run.sh OUTDIR [full|guard]}
MODE=${2:-full}
B=$ROOT/build/bench/prio
mkdir -p "$B" "$OUTDIR"
NVCC=${NVCC:-$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)}
echo "== $(date -u '+%Y-%m-%d %H:%M UTC') on $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>/dev/null)" |
	tee -a "$OUTDIR/driver.log"
"$NVCC" -O2 -arch=sm_90 -o "$B/lat" "$ROOT/tests/bench/prio/lat.cu" &&
	"$NVCC" -O2 -arch=sm_90 -o "$B/hog" "$ROOT/tests/bench/prio/hog.cu" || exit 1
timeout 60 "$ROOT/build/bin/nvtaskset" --calibrate >/dev/null || exit 1
if [ "$MODE" = guard ]; then
	# Does this driver know MPS client priorities? The strings in libcuda and the MPS binaries.
	for f in $(ldconfig -p | awk '/libcuda.so.1 /{print $NF}') $(command -v nvidia-cuda-mps-server) \
		/usr/local/nvidia/bin/nvidia-cuda-mps-server /usr/local/nvidia/bin/nvidia-cuda-mps-control; do
		[ -f "$f" ] || continue
		echo "$f: $(python3 -c 'import re,sys; print(sorted(set(x.decode() for x in re.findall(rb"[A-Za-z_]*(?:PRIORITY|[Pp]riority)[A-Za-z_]*", open(sys.argv[1],"rb").read()))))' "$f")"
	done >"$OUTDIR/mps-priority-strings.txt" 2>&1
fi
rc=0
timeout "${PRIO_TIMEOUT_S:-570}" python3 "$ROOT/tests/bench/prio/prio.py" "$ROOT" "$B" "$OUTDIR" "$MODE" || rc=1
timeout 120 python3 "$ROOT/tests/bench/prio/prio_report.py" "$OUTDIR" || rc=1
exit $rc
