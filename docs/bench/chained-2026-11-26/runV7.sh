#!/bin/bash
# Run V7: held steps chained, a request's chain first chained again 150 us after it began: the
# timeline's eager (always held and the default), small, decode phases chained and unchained
# (NVTASKSET_BRIDGE_REARM=0), same build; the launch rate of a bridged task (its kernel launch
# calls followed) against unchained and against the build before the change (build/dev/base).
set -u
J=build/.jsonc
MK=("JSONC_CFLAGS=-I$J/include -I$J/include/json-c" "JSONC_LIBS=$J/lib/libjson-c.a")
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
make -j16 "${MK[@]}" all >$OUT/build.log 2>&1 || { tail -30 $OUT/build.log; exit 1; }
(cd build/dev/base && make -j16 "JSONC_CFLAGS=-I../../../$J/include -I../../../$J/include/json-c" "JSONC_LIBS=$PWD/../../../$J/lib/libjson-c.a" all >$OUT/build-base.log 2>&1) || { tail -20 $OUT/build-base.log; exit 1; }
echo "built $(date +%T)"
P="alone-eager-g5-product gemm-eager-g5-hold1 gemm-eager-g20-hold1 gemm-eager-g40-hold1 gemm-eager-g5-product"
P="$P gemm-eager-g40-product gemm-small-product gemm-decode-product"
# shellcheck disable=SC2086 # the phases' names, one word each
NVTASKSET_BRIDGE_DEBUG=1 timeout 60 tests/bench/timeline/run.sh /tmp/tl $P > $OUT/timeline-run.txt 2>&1
echo "timeline rc $? $(date +%T)"
# shellcheck disable=SC2086
NVTASKSET_BRIDGE_REARM=0 NVTASKSET_BRIDGE_DEBUG=1 timeout 60 tests/bench/timeline/run.sh /tmp/tl0 $P > $OUT/timeline0-run.txt 2>&1
echo "timeline unchained rc $? $(date +%T)"
{ echo "== chained"; cat /tmp/tl/timeline.txt; for f in /tmp/tl/*.log; do echo "== $(basename $f .log): $(grep -h 'bridges held\|median' $f | tr '\n' ' ')"; done | grep "bridge:";
  echo "== unchained (NVTASKSET_BRIDGE_REARM=0)"; cat /tmp/tl0/timeline.txt; for f in /tmp/tl0/*.log; do echo "== $(basename $f .log): $(grep -h 'bridges held\|median' $f | tr '\n' ' ')"; done | grep "bridge:"; } > $OUT/timeline.txt
cut -c1-118 $OUT/timeline.txt | grep -v "^== "
mkdir -p /tmp/lb
/usr/local/cuda/bin/nvcc -O2 -arch=sm_90 -o /tmp/lb/launch tests/bench/launch.cu
timeout 60 build/bin/nvtaskset --calibrate >/dev/null; timeout 60 build/dev/base/build/bin/nvtaskset --calibrate >/dev/null
LAUNCH_BASE=$PWD/build/dev/base LAUNCH_CASES=plain,plain-again,bridged,bridged-unchained,bridged@base LAUNCH_ROUNDS=20 LAUNCH_DEADLINE=200 \
	timeout 230 python3 tests/bench/launchcost.py "$PWD" /tmp/lb /tmp/lc > $OUT/launchcost.txt 2>&1
echo "launchcost rc $? $(date +%T)"
tail -25 $OUT/launchcost.txt
pgrep -a nvidia-cuda-mps | grep -v defunct && echo "MPS daemons still running"
exit 0
