#!/bin/bash
# Run PM1: does the batch's compute preemption mode (CILP, CTA, WFI) change what a switch costs?
set -u
J=build/.jsonc
make -j16 "JSONC_CFLAGS=-I$J/include -I$J/include/json-c" JSONC_LIBS=$J/lib/libjson-c.a all >$OUT/build.log 2>&1 || { tail -30 $OUT/build.log; exit 1; }
echo "built $(date +%T)"
timeout 500 tests/bench/timeline/run.sh $OUT/tl spin2ms-small spin2ms-small-cta spin30-small spin30-small-cta spin30-small-wfi spin30-one spin30-one-cta heavy30-small heavy30-small-cta gemm2k-small-nowatch gemm2k-small-nowatch-cta gemm-small-nowatch gemm-small-nowatch-cta > $OUT/run.txt 2>&1
echo "rc $? $(date +%T)"
cat $OUT/tl/timeline.txt
for f in $OUT/tl/pm-*; do echo "== $f"; grep -i "preemption\|start" $f | head -8; done
grep -h "rc\|gaps" $OUT/tl/*.log $OUT/tl/*.blog | sort | uniq -c | head -20
pgrep -a nvidia-cuda-mps
