#!/bin/bash
# Run P6: the code of P4 (launch calls followed once 75 % of the last ~16 held steps are steps a
# chain would shorten): check-gpu-bridge; the timeline's eager phases, the default against
# NVTASKSET_BRIDGE_REARM=0.
set -u
J=build/.jsonc
MK=("JSONC_CFLAGS=-I$J/include -I$J/include/json-c" "JSONC_LIBS=$J/lib/libjson-c.a")
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
make -j16 "${MK[@]}" all >$OUT/build.log 2>&1 || { tail -30 $OUT/build.log; exit 1; }
echo "built $(date +%T)"
timeout 200 tests/gpu/bridge.sh /tmp/g > $OUT/check-gpu-bridge.txt 2>&1; echo "check-gpu-bridge rc $? $(date +%T)"
grep -v "^nvtaskset: bridge\|^copyapp" $OUT/check-gpu-bridge.txt | tail -12 | cut -c1-140
P="alone-small-product gemm-small-product gemm-eager-g5-hold1 gemm-eager-g20-hold1 gemm-eager-g40-product gemm-eager-g40-hold1 gemm-decode-product"
# shellcheck disable=SC2086 # the phases' names, one word each
NVTASKSET_BRIDGE_DEBUG=1 timeout 60 tests/bench/timeline/run.sh /tmp/tl $P > /dev/null 2>&1
echo "timeline rc $? $(date +%T)"
# shellcheck disable=SC2086
NVTASKSET_BRIDGE_REARM=0 NVTASKSET_BRIDGE_DEBUG=1 timeout 60 tests/bench/timeline/run.sh /tmp/tl0 $P > /dev/null 2>&1
echo "timeline unchained rc $? $(date +%T)"
for d in /tmp/tl /tmp/tl0; do echo "== $d"; cut -c1-118 $d/timeline.txt
	for f in $d/*.log; do echo "   $(basename $f .log): $(grep -h 'bridges held\|median\|launch calls\|held steps seen' $f | sed 's/nvtaskset: bridge: //' | tr '\n' ' ' | cut -c1-400)"; done; done | grep -v "   run: " | tee $OUT/timeline.txt | cut -c1-160
tar -C /tmp -cJf $OUT/raw.tar.xz g tl tl0 2>/dev/null
pgrep -a nvidia-cuda-mps | grep -v defunct && echo "MPS daemons still running"
exit 0
