#!/bin/bash
# Run E1: does an eager, host-bound step (host gaps between launches) pay switches beside a batch?
set -u
J=build/.jsonc
make -j16 "JSONC_CFLAGS=-I$J/include -I$J/include/json-c" JSONC_LIBS=$J/lib/libjson-c.a all >$OUT/build.log 2>&1 || { tail -30 $OUT/build.log; exit 1; }
echo "built $(date +%T)"
P=""
for g in 0 5 10 20 40; do P="$P alone-eager-g$g-product gemm-eager-g$g-product"; done
timeout 400 tests/bench/timeline/run.sh $OUT/tl $P gemm-eager-g10 gemm-eager-g40 gemm-small-product alone-small-product > $OUT/run.txt 2>&1
echo "rc $? $(date +%T)"
cat $OUT/tl/timeline.txt
grep -h "rc" $OUT/tl/*.log $OUT/tl/*.blog | sort | uniq -c | head -20
pgrep -a nvidia-cuda-mps
nvidia-smi --query-gpu=name --format=csv,noheader
