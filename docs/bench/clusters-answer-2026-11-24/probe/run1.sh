#!/bin/bash
# Session probe 1: which driver calls cuBLAS/cuDNN/JAX make and what cuOccupancyMaxActiveClusters
# answers in MPS at 100/82/70 %; then bench-smcount at the losing sizes with fit.
set -u
exec > >(tee $OUT/run1.log) 2>&1
date -u; nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
T0=$(date +%s)
make -j16 all >$OUT/build.log 2>&1 || { echo build failed; tail -30 $OUT/build.log; exit 1; }
echo "built in $(( $(date +%s) - T0 )) s"
gcc -O2 -shared -fPIC -Isrc -Iinclude -o /tmp/apiprobe.so tests/bench/probe/apiprobe.c -ldl || exit 1
H=$(find /usr/local/cuda*/ /usr/lib/python3*/ /usr/local/lib/python3*/ -name cupti_driver_cbid.h 2>/dev/null | head -1)
echo "cupti header: $H"
CB=$(grep -E 'CUPTI_DRIVER_TRACE_CBID_cuOccupancyMaxActiveClusters\b' "$H" | grep -o '= [0-9]*' | tr -dc 0-9)
echo "cuOccupancyMaxActiveClusters cbid: $CB"
export CUDA_MPS_PIPE_DIRECTORY=/tmp/p1mps CUDA_MPS_LOG_DIRECTORY=/tmp/p1mpslog
mkdir -p $CUDA_MPS_PIPE_DIRECTORY $CUDA_MPS_LOG_DIRECTORY
nvidia-cuda-mps-control -d
for pct in 100 82 70; do
  for w in cublas fp32 conv triton jax; do
    rm -f /tmp/probe.out
    CUDA_MPS_ACTIVE_THREAD_PERCENTAGE=$pct APIPROBE_OUT=/tmp/probe.out APIPROBE_CLUSTERS=$CB LD_PRELOAD=/tmp/apiprobe.so \
      SMCOUNT_WORK=$w SMCOUNT_REPS=3 timeout 120 python3 tests/bench/smcount_worker.py > /tmp/w.out 2>/tmp/w.err
    echo "== MPS $pct% $w rc=$? $(tail -1 /tmp/w.out)"; tail -2 /tmp/w.err
    grep '^clusters' /tmp/probe.out | sort | uniq -c | head -12
    grep -v '^clusters' /tmp/probe.out | while read id n; do
      name=$(grep -E "= $id,?\s*$" "$H" | grep -o 'CBID_[A-Za-z0-9_]*' | head -1); echo "$id ${name#CBID_} $n"; done > $OUT/calls-$pct-$w.txt
    grep -i 'occup\|attrib\|cluster' $OUT/calls-$pct-$w.txt | head -12
  done
done
echo quit | nvidia-cuda-mps-control
echo "probe done at $(( $(date +%s) - T0 )) s"
SMCOUNT_SIZES=46,54,60 SMCOUNT_CONFIGS=mps,told,fit,clusters SMCOUNT_ROUNDS=3 SMCOUNT_STALE=0 \
 SMCOUNT_WORK=cublas,fp32,conv,triton,train SMCOUNT_BUDGET_S=$(( 560 - ($(date +%s) - T0) )) SMCOUNT_TIMEOUT=$(( 575 - ($(date +%s) - T0) )) \
 BENCH_OUT=$OUT make bench-smcount 2>&1 | tail -60
ls -R $OUT | head -30
echo "all done at $(( $(date +%s) - T0 )) s"
