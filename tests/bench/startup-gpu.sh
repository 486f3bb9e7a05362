#!/bin/bash
# The GPU run behind docs/bench/startup-*/: builds nvtaskset, then
# runs the channel experiment (channels.py) and the start-up benchmark
# (startup.py), each under a time limit, logs and results under OUTDIR.
# Usage: tests/bench/startup-gpu.sh OUTDIR   (SKIP_CHANNELS=1; startup.py's variables)
set -u
OUT=${1:?usage: startup-gpu.sh OUTDIR}
mkdir -p "$OUT"
# Two-GPU machines here: NVLink multicast stays off (/work/.library/device/KINDS.md).
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
{
	date -u
	nvidia-smi -L
	nvidia-smi --query-gpu=driver_version --format=csv,noheader
	nvcc --version | tail -2
	python3 -c 'import torch; print("torch", torch.__version__)'
	git log -1 --format=%H 2>/dev/null
} >"$OUT/machine.txt" 2>&1
if ! make -j16 all >"$OUT/build.log" 2>&1; then
	tail -30 "$OUT/build.log"
	exit 1
fi
rc=0
if [ "${SKIP_CHANNELS:-0}" != 1 ]; then
	timeout 150 python3 tests/bench/channels.py "$OUT/channels" >"$OUT/channels.log" 2>&1 || rc=1
fi
timeout "${STARTUP_TIMEOUT:-300}" python3 tests/bench/startup.py . "$OUT/startup" >"$OUT/startup.log" 2>&1 || rc=1
exit $rc
