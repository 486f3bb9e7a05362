#!/bin/bash
# probe.sh - on the GPU machine: build, sanity of the TSG interposer, then probe.py.
R=$(pwd); T=$R/tests/bench/tslice; W=/tmp/tsw; O=${OUT:-/tmp/tsout}
rm -rf $W; mkdir -p $W/mps $W/mpslog $W/nomps $O; chmod 755 $W
gcc -shared -fPIC -O2 -o $W/tsg.so $T/tsgprobe.c -ldl || exit 1
make -j16 >$O/make.log 2>&1 || { echo make failed; tail $O/make.log; }
NVT=$R/build/bin/nvtaskset
LIB=$(ldconfig -p | awk '/libcuda.so.1 /{print $NF; exit}'); echo "libcuda: $LIB"
nm -D "$LIB" | grep -wE 'ioctl|syscall|__ioctl'
PY="import torch; torch.ones(1,device='cuda'); torch.cuda.synchronize(); print('torch ok')"
if [ "${PROBE_A:-1}" = 1 ]; then
echo "== root, TS 100, level 2, rt"
CUDA_MPS_PIPE_DIRECTORY=$W/nomps LD_PRELOAD=$W/tsg.so TSGP_LOG=1 TSGP_TS_US=100 TSGP_LEVEL=2 TSGP_RT=1 timeout 60 python3 -c "$PY" 2>&1 | tail -12
echo "== nobody, TS 100, level 2, rt"
cd /tmp || exit 1; CUDA_MPS_PIPE_DIRECTORY=$W/nomps HOME=/tmp LD_PRELOAD=$W/tsg.so TSGP_LOG=1 TSGP_TS_US=100 TSGP_LEVEL=2 TSGP_RT=1 timeout 60 setpriv --reuid 65534 --regid 65534 --clear-groups $(command -v python3) -c "$PY" 2>&1 | tail -12
echo "== nobody, TS 1, TS 100000"
for v in 1 100000; do CUDA_MPS_PIPE_DIRECTORY=$W/nomps HOME=/tmp LD_PRELOAD=$W/tsg.so TSGP_LOG=1 TSGP_TS_US=$v timeout 60 setpriv --reuid 65534 --regid 65534 --clear-groups $(command -v python3) -c "$PY" 2>&1 | grep tsgprobe | head -2; done
fi
cd "$R" || exit 1
export CUDA_MPS_PIPE_DIRECTORY=$W/mps CUDA_MPS_LOG_DIRECTORY=$W/mpslog
timeout 60 $NVT --calibrate >/dev/null 2>&1
timeout 30 $NVT --mps start
timeout 470 python3 $T/probe.py $R $O "$@"
timeout 30 $NVT --mps stop
echo quit | CUDA_MPS_PIPE_DIRECTORY=$W/mps2 timeout 10 nvidia-cuda-mps-control 2>/dev/null
pgrep -a nvidia-cuda-mps
