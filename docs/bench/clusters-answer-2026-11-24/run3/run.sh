#!/bin/bash
# Session run 3/4: every workload at sizes $1, MPS's share against nvtaskset -n (clusters answered).
set -u
R=$OUT/r$2; mkdir -p $R
exec > >(tee $R/run.log) 2>&1
date -u; nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
T0=$(date +%s)
make -j16 all >$R/build.log 2>&1 || { echo build failed; tail -30 $R/build.log; exit 1; }
python3 -c 'import jax; print("jax", jax.__version__, jax.devices())' 2>&1 | tail -1
SMCOUNT_SIZES=$1 SMCOUNT_CONFIGS=mps,told SMCOUNT_ROUNDS=3 SMCOUNT_STALE=0 \
 SMCOUNT_WORK=cublas,fp32,conv,triton,train,jax SMCOUNT_BUDGET_S=$(( 560 - ($(date +%s) - T0) )) SMCOUNT_TIMEOUT=$(( 575 - ($(date +%s) - T0) )) \
 BENCH_OUT=$R make bench-smcount 2>&1 | tail -75
echo "all done at $(( $(date +%s) - T0 )) s"
cd $OUT && tar czf r$2.tgz r$2 && rm -rf r$2
