#!/bin/bash
# Session run 2: the clusters answer (this tree) against the tree before it (base), MPS's share.
set -u
mkdir -p $OUT/r2
exec > >(tee $OUT/r2/run2.log) 2>&1
date -u; nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
T0=$(date +%s)
git log -1 --format=%h; git status --short | head
mkdir -p build/bench-base && git archive --prefix=build/bench-base/ fd69b7a | tar -x
(make -j16 all >$OUT/r2/build.log 2>&1 && make -C build/bench-base -j16 all >>$OUT/r2/build.log 2>&1) || { echo build failed; tail -30 $OUT/r2/build.log; exit 1; }
echo "built in $(( $(date +%s) - T0 )) s"
# The answers read back: plain, this tree's and base's, for clusters of 1-16.
nvcc -O2 -arch=sm_90 -o /tmp/clusters tests/bench/probe/clusters.cu || exit 1
build/bin/nvtaskset --calibrate >/dev/null 2>&1
for n in 40 46 54 60; do
  echo "plain:      $(/tmp/clusters)"
  echo "-n $n this: $(build/bin/nvtaskset --no-mps -n $n /tmp/clusters 2>&1 | tail -1)"
  echo "-n $n base: $(build/bench-base/build/bin/nvtaskset --no-mps -n $n /tmp/clusters 2>&1 | tail -1)"
  echo "-n $n fit : $(build/bin/nvtaskset --sm-count fit --no-mps -n $n /tmp/clusters 2>&1 | tail -1)"
done
SMCOUNT_SIZES=40,46,54,60 SMCOUNT_CONFIGS=mps,told,base SMCOUNT_BASE=build/bench-base SMCOUNT_ROUNDS=3 SMCOUNT_STALE=0 \
 SMCOUNT_WORK=cublas,conv,triton,train SMCOUNT_BUDGET_S=$(( 540 - ($(date +%s) - T0) )) SMCOUNT_TIMEOUT=$(( 560 - ($(date +%s) - T0) )) \
 BENCH_OUT=$OUT/r2 make bench-smcount 2>&1 | tail -60
echo "all done at $(( $(date +%s) - T0 )) s"
cd $OUT && tar czf r2.tgz r2 && rm -rf r2
