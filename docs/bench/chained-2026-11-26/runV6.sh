#!/bin/bash
# Run V6: held steps chained behind a launch (NVTASKSET_BRIDGE_REARM unset) against unchained
# (=0), same build: the timeline's eager, small, decode and long8 phases both ways; the eager
# PyTorch service beside Llama and GEMM training: L alone, static, the default (chained),
# unchained, always held (chained).
set -u
PRIO_T0=$(date +%s.%N)
export PRIO_T0
J=build/.jsonc
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
make -j16 "JSONC_CFLAGS=-I$J/include -I$J/include/json-c" JSONC_LIBS=$J/lib/libjson-c.a all >$OUT/build.log 2>&1 || { tail -30 $OUT/build.log; exit 1; }
echo "built $(date +%T)"
P="alone-eager-g5-product gemm-eager-g5-product gemm-eager-g5-hold1 gemm-eager-g20-product gemm-eager-g20-hold1"
P="$P gemm-eager-g40-product gemm-eager-g40-hold1 gemm-small-product gemm-decode-product gemm-long8-product"
# shellcheck disable=SC2086 # the phases' names, one word each
NVTASKSET_BRIDGE_DEBUG=1 timeout 75 tests/bench/timeline/run.sh /tmp/tl $P > $OUT/timeline-run.txt 2>&1
echo "timeline rc $? $(date +%T)"
# shellcheck disable=SC2086
NVTASKSET_BRIDGE_REARM=0 NVTASKSET_BRIDGE_DEBUG=1 timeout 75 tests/bench/timeline/run.sh /tmp/tl0 $P > $OUT/timeline0-run.txt 2>&1
echo "timeline unchained rc $? $(date +%T)"
{ echo "== chained"; cat /tmp/tl/timeline.txt; for f in /tmp/tl/*.log; do echo "== $(basename $f .log): $(grep -h 'bridges held\|median' $f | tr '\n' ' ')"; done | grep "bridge:";
  echo "== unchained (NVTASKSET_BRIDGE_REARM=0)"; cat /tmp/tl0/timeline.txt; for f in /tmp/tl0/*.log; do echo "== $(basename $f .log): $(grep -h 'bridges held\|median' $f | tr '\n' ' ')"; done | grep "bridge:"; } > $OUT/timeline.txt
cut -c1-118 $OUT/timeline.txt | grep -v "^== "
grep "^== " $OUT/timeline.txt | sed 's/nvtaskset: bridge: //g' | cut -c1-260
mkdir -p /tmp/steps
PRIO_T0=$(date +%s.%N)
PRIO_STEP_TRACE=/tmp/steps PRIO_MIN_REQUESTS=160 PRIO_ROUNDS=1 PRIO_L=torch PRIO_H=llama,torch PRIO_CONFIG_FILE=tests/bench/prio/bridge.json PRIO_KINDS=eager PRIO_CASES=L-alone-whole,static,prio-debug,prio-unchained,prio-hold1 timeout 400 make "JSONC_CFLAGS=-I$J/include -I$J/include/json-c" JSONC_LIBS=$J/lib/libjson-c.a bench-prio PRIO_SET=round5-llama PRIO_BUDGET_S=370 PRIO_TIMEOUT_S=390 BENCH_OUT=/tmp/b > $OUT/bench.out 2>&1
echo "bench rc $? $(date +%T)"
sed -n '/== L /,/^Cells/p' /tmp/b/prio/summary.txt
grep -A8 "L's p50 / p99" /tmp/b/prio/summary.txt | head -20
cp /tmp/b/prio/summary.txt $OUT/ 2>/dev/null
mkdir -p /tmp/x && tar -C /tmp/x -xJf /tmp/b/prio/raw.tar.xz && grep -H "bridges held\|median" /tmp/x/raw/*/l-*.log | sed 's/nvtaskset: bridge: //' | cut -c1-300 > $OUT/bridge.txt
cat $OUT/bridge.txt
python3 docs/bench/shipped-2026-11-26/steps.py /tmp/steps | tee $OUT/steps.txt
tar -C /tmp -cJf $OUT/raw.tar.xz steps b/prio/raw.tar.xz tl tl0 2>/dev/null
pgrep -a nvidia-cuda-mps | grep -v defunct && echo "MPS daemons still running"
exit 0
