#!/usr/bin/env bash
# make bench-placement: issue 15's placement probes on a Hopper GPU, under 10
# minutes, logs in OUTDIR:
#  1. gpcbw.py: a memory stream and an FMA loop on N TPCs packed, spread and
#     as an MPS share (does a partition's GPC count limit it?);
#  2. launch batches: empty-kernel enqueue time, plain against nvtaskset,
#     pinned to one CPU, interleaved fresh processes (issue 11's launch rate);
#  3. sizes.py at the sizes where --sm-limit missed, with spread partitions.
# PLACEMENT_ONLY=gpcbw,launch,sizes picks parts.
set -u
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
OUTDIR=${1:?usage: placement.sh OUTDIR}
ONLY=${PLACEMENT_ONLY:-gpcbw,launch,sizes}
B=$ROOT/build/bench
mkdir -p "$B" "$OUTDIR"
NVCC=${NVCC:-$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)}
NVT=$ROOT/build/bin/nvtaskset
echo "== $(date -u '+%Y-%m-%d %H:%M UTC') on $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>/dev/null)"
"$NVCC" -O2 -arch=sm_90 -o "$B/gpcbw" "$ROOT/tests/bench/gpcbw.cu" &&
	"$NVCC" -O2 -arch=sm_90 -o "$B/launch" "$ROOT/tests/bench/launch.cu" || exit 1
timeout 60 "$NVT" --calibrate >/dev/null || exit 1
rc=0
case ",$ONLY," in *,gpcbw,*)
	timeout 200 python3 "$ROOT/tests/bench/gpcbw.py" "$ROOT" "$B" "$OUTDIR/gpcbw" || rc=1 ;;
esac
case ",$ONLY," in *,launch,*)
	# CPU 3 for both; no MPS (as bench.py's launch benchmark).
	out=$OUTDIR/launch-batches.csv
	echo "round,case,p10_us,median_us" >"$out"
	for r in $(seq 1 ${LAUNCH_ROUNDS:-15}); do
		for c in plain nvtaskset; do
			if [ $c = plain ]; then cmd=("$B/launch"); else cmd=("$NVT" --no-mps -n 33 "$B/launch"); fi
			line=$(CUDA_MPS_PIPE_DIRECTORY=/dev/null timeout 60 taskset -c 3 "${cmd[@]}" batches 1000 201) || { rc=1; continue; }
			p10=${line#p10_us=}; p10=${p10%% *}; med=${line##*median_us=}
			echo "$r,$c,$p10,$med" >>"$out"
		done
	done
	python3 - "$out" <<'PY' | tee "$OUTDIR/launch-batches.txt"
import csv, statistics, sys
rows = list(csv.DictReader(open(sys.argv[1])))
by = {}
for r in rows:
    by.setdefault(r["round"], {})[r["case"]] = (float(r["p10_us"]), float(r["median_us"]))
pairs = [v for v in by.values() if len(v) == 2]
for i, what in ((0, "10th percentile"), (1, "median")):
    p = [v["plain"][i] for v in pairs]; n = [v["nvtaskset"][i] for v in pairs]
    print("%s enqueue time per launch over %d rounds: plain %.3f us, nvtaskset -n 33 %.3f us; rate ratio "
          "(plain/nvtaskset): median of paired %.4f, of medians %.4f, of minima %.4f; plain spread %.3f-%.3f"
          % (what, len(pairs), statistics.median(p), statistics.median(n),
             statistics.median(a / b for a, b in zip(p, n)), statistics.median(p) / statistics.median(n),
             min(p) / min(n), min(p), max(p)))
PY
	;;
esac
case ",$ONLY," in *,sizes,*)
	SIZES=${SIZES:-8,24,42,50} SIZES_ROUNDS=${SIZES_ROUNDS:-3} SIZES_PROFILE=0 SIZES_REPS=${SIZES_REPS:-15} \
		SIZES_CONFIGS=${SIZES_CONFIGS:-mps,sm-limit,spread-limit} SIZES_BUDGET_S=${SIZES_BUDGET_S:-330} \
		timeout 400 python3 "$ROOT/tests/bench/sizes.py" "$ROOT" "$OUTDIR/sizes" || rc=1 ;;
esac
for d in /tmp/nvt-gpcbw.*/mps /tmp/nvt-sizes.*/mps; do
	[ -e "$d/nvidia-cuda-mps-control.pid" ] && echo quit | CUDA_MPS_PIPE_DIRECTORY=$d timeout 20 nvidia-cuda-mps-control
done
exit $rc
