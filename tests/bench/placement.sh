#!/usr/bin/env bash
# make bench-placement: the placement probes on a Hopper GPU, under 10
# minutes, logs in OUTDIR:
#  1. gpcbw.py: a memory stream and an FMA loop on N TPCs packed, spread and
#     as an MPS share (does a partition's GPC count limit it?);
#  2. launchcost.py: empty-kernel enqueue time, plain, shim without a
#     partition, nvtaskset, without graph following, and (LAUNCH_OLD_ROOT)
#     another build, pinned to one CPU (the launch rate);
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
	timeout 560 python3 "$ROOT/tests/bench/launchcost.py" "$ROOT" "$B" "$OUTDIR/launch" || rc=1 ;;
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
