#!/bin/bash
# preempt.sh - on the GPU machine: build rmprobe.so and nvtaskset, then preempt.py's configurations.
#   tests/bench/tslice/preempt.sh [CONFIG...]     (logs in $OUT, or /tmp/pwout)
R=$(pwd); T=$R/tests/bench/tslice; W=/tmp/pw; O=${OUT:-/tmp/pwout}
rm -rf $W; mkdir -p $W/mps $W/mpslog $W/nomps $O; chmod 755 $W
gcc -Wall -shared -fPIC -O2 -o $W/rmprobe.so $T/rmprobe.c -ldl -lpthread || exit 1
make -j16 >$O/make.log 2>&1 || { echo make failed; tail $O/make.log; }
nvidia-smi --query-gpu=name,driver_version,compute_mode --format=csv
NVT=$R/build/bin/nvtaskset
# The daemons this run starts (the shared one, a configuration's own, the levels' of nvtaskset's
# time-sliced tasks under $W) are stopped however it ends: at its end, or killed by a timeout.
stop_daemons() {
	CUDA_MPS_PIPE_DIRECTORY=$W/mps timeout 30 "$NVT" --mps stop --force >/dev/null 2>&1
	for p in "$W"/mps*/; do
		echo quit | CUDA_MPS_PIPE_DIRECTORY=${p%/} timeout 10 nvidia-cuda-mps-control >/dev/null 2>&1
	done
}
trap stop_daemons EXIT
trap 'exit 143' TERM
trap 'exit 130' INT
export CUDA_MPS_PIPE_DIRECTORY=$W/mps CUDA_MPS_LOG_DIRECTORY=$W/mpslog
timeout 60 $NVT --calibrate >/dev/null 2>&1
timeout 30 $NVT --mps start
unset CUDA_MPS_PIPE_DIRECTORY CUDA_MPS_LOG_DIRECTORY
PYTHONUNBUFFERED=1 timeout ${PREEMPT_TIMEOUT:-520} python3 $T/preempt.py $R $O "$@"
stop_daemons
pgrep -a nvidia-cuda-mps
(cd $W && tar czf $O/rmlogs.tgz --exclude='*.so' --exclude='*.steps' --exclude=flag */ 2>/dev/null)
ls -la $O
