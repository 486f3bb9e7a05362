#!/usr/bin/env bash
# make bench: builds the benchmark programs and runs tests/bench/bench.py,
# writing CSV, PNG and summary.md into OUTDIR (default docs/bench). Needs an
# NVIDIA Hopper GPU, nvcc with cuBLAS, MPS and python3 with matplotlib.
# BENCH_ONLY=startup,launch,... runs only those benchmarks.
set -u
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
OUTDIR=${1:-$ROOT/docs/bench}
B=$ROOT/build/bench
mkdir -p "$B" "$ROOT/build/gpu"
NVCC=${NVCC:-$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)}
echo "== $(date -u '+%Y-%m-%d %H:%M UTC') on $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>/dev/null)"
"$NVCC" -O2 -arch=sm_90 -o "$B/launch" "$ROOT/tests/bench/launch.cu" &&
	"$NVCC" -O2 -arch=sm_90 -o "$B/gemm" "$ROOT/tests/bench/gemm.cu" -lcublas &&
	"$NVCC" -O2 -arch=sm_90 -o "$B/interfere" "$ROOT/tests/bench/interfere.cu" &&
	"$NVCC" -O2 -arch=sm_90 -o "$ROOT/build/gpu/loop" "$ROOT/tests/gpu/loop.cu" || exit 1
timeout 580 python3 "$ROOT/tests/bench/bench.py" "$ROOT" "$B" "$OUTDIR"
rc=$?
# Never leave an MPS daemon behind.
for d in /tmp/nvt-bench.*/mps; do
	[ -e "$d/nvidia-cuda-mps-control.pid" ] && echo quit | CUDA_MPS_PIPE_DIRECTORY=$d timeout 20 nvidia-cuda-mps-control
done
exit $rc
