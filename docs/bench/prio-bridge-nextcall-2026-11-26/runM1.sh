#!/bin/bash
# Run M1: check-gpu-bridge on the rule as built (not yet run on a GPU); timeline: a slow host after
# a step's replay (POST_US), with a query of the stream after it (FLUSH), without the bridge; the
# 7B-sized steps in requests of 8 (22 ms) and 6 (16.5 ms) against the high level's 20 ms.
set -u
J=build/.jsonc
make -j16 "JSONC_CFLAGS=-I$J/include -I$J/include/json-c" JSONC_LIBS=$J/lib/libjson-c.a all >$OUT/build.log 2>&1 || { tail -30 $OUT/build.log; exit 1; }
echo "built $(date +%T)"
timeout 280 tests/gpu/bridge.sh /tmp/g > $OUT/check-gpu-bridge.txt 2>&1; echo "check-gpu-bridge rc $? $(date +%T)"
grep -v "^nvtaskset: bridge\|^copyapp" $OUT/check-gpu-bridge.txt | tail -12
grep -h "tl batch" /tmp/g/bridge/*.blog | head -8
cat /tmp/g/bridge/timeline.txt
timeout 200 tests/bench/timeline/run.sh /tmp/tl alone-small-graph-post40-product gemm-small-graph-post40-product gemm-small-graph-post40-flush-product gemm-small-graph-post40-nobridge gemm-small-post40-product gemm-long8-product gemm-long6-product > $OUT/tl.out 2>&1
echo "timeline rc $? $(date +%T)"
cat /tmp/tl/timeline.txt
grep -h "tl batch\|batch rc" /tmp/tl/*.blog | sort | uniq -c | head
tar -C /tmp -cJf $OUT/raw.tar.xz tl g/bridge g/bridge.out 2>/dev/null
pgrep -a nvidia-cuda-mps && echo "MPS daemons still running"
