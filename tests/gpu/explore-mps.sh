#!/usr/bin/env bash
# Exploration probe (kept for the record): what MPS's logs and control
# commands say when a client faults and when 16 clients ask for 8 channels.
# Usage: tests/gpu/explore-mps.sh OUTDIR   (after make check-gpu built build/gpu)
set -u
G=build/gpu
export CUDA_MPS_PIPE_DIRECTORY=/tmp/xm/pipe CUDA_MPS_LOG_DIRECTORY=/tmp/xm/log CUDA_DEVICE_MAX_CONNECTIONS=8
mkdir -p $CUDA_MPS_PIPE_DIRECTORY $CUDA_MPS_LOG_DIRECTORY
nvidia-cuda-mps-control -d
trap 'echo quit | nvidia-cuda-mps-control; sleep 1' EXIT
ctl() { echo "$*" | timeout 10 nvidia-cuda-mps-control; echo "[rc=$?]"; }
$G/loop --iters 2 >/dev/null
echo "== get_server_list"; ctl get_server_list
S=$(echo get_server_list | nvidia-cuda-mps-control | head -1)
rm -f /tmp/xm/stop
for i in 1 2 3; do $G/loop --stop /tmp/xm/stop --sleep-us 50000 --blocks 8 --spin 1000 >/dev/null & done
sleep 3
echo "== get_client_list $S"; ctl get_client_list $S
echo "== ps"; ctl ps
echo "== get_server_status $S"; ctl get_server_status $S
echo "== oob"; $G/oob; sleep 2
echo "== after the fault: get_server_list"; ctl get_server_list
echo "== get_server_status $S"; ctl get_server_status $S
touch /tmp/xm/stop; wait
echo "== log dir"; ls -la $CUDA_MPS_LOG_DIRECTORY
for f in $CUDA_MPS_LOG_DIRECTORY/*; do echo "== $f"; tail -40 $f; done
