#!/bin/bash
# Run V5: the shipped learner on the timeline: eager steps (5, 20, 40 us apart) alone, static,
# the default, never and always held; small, decode and long8 steps alone and the default.
set -u
J=build/.jsonc
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
make -j16 "JSONC_CFLAGS=-I$J/include -I$J/include/json-c" JSONC_LIBS=$J/lib/libjson-c.a all >$OUT/build.log 2>&1 || { tail -30 $OUT/build.log; exit 1; }
echo "built $(date +%T) $(git rev-parse --short HEAD 2>/dev/null)"
P="alone-eager-g5-product static-eager-g5 gemm-eager-g5-product gemm-eager-g5-hold0 gemm-eager-g5-hold1"
P="$P alone-eager-g20-product static-eager-g20 gemm-eager-g20-product gemm-eager-g20-hold0 gemm-eager-g20-hold1"
P="$P alone-eager-g40-product static-eager-g40 gemm-eager-g40-product gemm-eager-g40-hold0 gemm-eager-g40-hold1"
P="$P alone-small-product gemm-small-product gemm-decode-product alone-long8-product gemm-long8-product"
# shellcheck disable=SC2086 # the phases' names, one word each
NVTASKSET_BRIDGE_DEBUG=1 timeout 240 tests/bench/timeline/run.sh /tmp/tl $P > $OUT/timeline-run.txt 2>&1
echo "timeline rc $? $(date +%T)"
cp /tmp/tl/timeline.txt $OUT/timeline.txt
for f in /tmp/tl/*.log; do echo "== $(basename $f .log): $(grep -h 'bridges held\|median' $f | tr '\n' ' ')"; done | grep "bridge:" | cut -c1-400 | tee -a $OUT/timeline.txt
cut -c1-160 $OUT/timeline.txt | head -24
exit 0
