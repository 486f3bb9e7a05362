#!/bin/bash
set -u
R=$OUT/r5; mkdir -p $R
exec > >(tee $R/run.log) 2>&1
date -u; nvidia-smi --query-gpu=name,driver_version,uuid --format=csv,noheader
T0=$(date +%s)
mkdir -p build/bench-base && git archive --prefix=build/bench-base/ fd69b7a | tar -x
(make -j16 all >$R/build.log 2>&1 && make -C build/bench-base -j16 all >>$R/build.log 2>&1) || { echo build failed; tail -30 $R/build.log; exit 1; }
echo "built in $(( $(date +%s) - T0 )) s"
LAUNCH_ROUNDS=25 LAUNCH_CASES=plain,plain-again,shim-unset,nvtaskset,no-api,priority-high,priority-low \
  BENCH_OUT=$R make bench-launch LAUNCH_BASE=build/bench-base 2>&1 | tail -40
echo "launch done at $(( $(date +%s) - T0 )) s"
STARTUP_PROGRAMS=cuda,torch STARTUP_MODES=mps STARTUP_CASES=plain,shim,nvtaskset STARTUP_ROUNDS=30 TORCH_ROUNDS=12 \
  STARTUP_DEADLINE=$(( 500 - ($(date +%s) - T0) )) BENCH_OUT=$R timeout $(( 570 - ($(date +%s) - T0) )) make bench-startup-parts 2>&1 | tail -40
echo "all done at $(( $(date +%s) - T0 )) s"
cd $OUT && tar czf r5.tgz r5 && rm -rf r5
