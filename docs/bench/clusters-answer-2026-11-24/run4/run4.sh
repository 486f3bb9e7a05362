#!/bin/bash
set -u
R=$OUT/r4; mkdir -p $R
exec > >(tee $R/run.log) 2>&1
date -u; nvidia-smi --query-gpu=name,driver_version,uuid --format=csv,noheader
T0=$(date +%s)
mkdir -p build/bench-base && git archive --prefix=build/bench-base/ fd69b7a | tar -x
(make -j16 all >$R/build.log 2>&1 && make -C build/bench-base -j16 all >>$R/build.log 2>&1) || { echo build failed; tail -30 $R/build.log; exit 1; }
echo "built in $(( $(date +%s) - T0 )) s"
nvcc -O2 -arch=sm_90 -o /tmp/clusters tests/bench/probe/clusters.cu || exit 1
build/bin/nvtaskset --calibrate >/dev/null 2>&1
echo "plain:     $(/tmp/clusters)"
for n in 4 8; do
  echo "-n $n this: $(build/bin/nvtaskset --no-mps -n $n /tmp/clusters 2>&1 | tail -1)"
  echo "-n $n base: $(build/bench-base/build/bin/nvtaskset --no-mps -n $n /tmp/clusters 2>&1 | tail -1)"
  for t in this base; do
    b=build/bin/nvtaskset; [ $t = base ] && b=build/bench-base/build/bin/nvtaskset
    echo "conv -n $n $t: $(SMCOUNT_WORK=conv timeout 120 $b --no-mps -n $n python3 tests/bench/smcount_worker.py 2>/dev/null | tail -1)"
  done
  echo "conv MPS-less plain: $(SMCOUNT_WORK=conv timeout 120 python3 tests/bench/smcount_worker.py | tail -1)"
done
SMCOUNT_SIZES=$1 SMCOUNT_CONFIGS=mps,told SMCOUNT_ROUNDS=3 SMCOUNT_STALE=0 \
 SMCOUNT_WORK=cublas,fp32,conv,triton,train,jax SMCOUNT_BUDGET_S=$(( 555 - ($(date +%s) - T0) )) SMCOUNT_TIMEOUT=$(( 575 - ($(date +%s) - T0) )) \
 BENCH_OUT=$R make bench-smcount 2>&1 | tail -75
echo "all done at $(( $(date +%s) - T0 )) s"
cd $OUT && tar czf r4.tgz r4 && rm -rf r4
