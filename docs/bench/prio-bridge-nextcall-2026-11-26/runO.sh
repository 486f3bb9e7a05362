#!/bin/bash
# Run O: does a graph replay's work wait for the host's next CUDA call? Alone, bridge off: a step
# launched as a graph, then 40 us of the host before its wait (submit->run), on a created stream and
# on the legacy default stream (PyTorch's); the product beside GEMMs. Then run N (the batch's stop).
set -u
J=build/.jsonc
make -j16 "JSONC_CFLAGS=-I$J/include -I$J/include/json-c" JSONC_LIBS=$J/lib/libjson-c.a all >$OUT/build.log 2>&1 || { tail -30 $OUT/build.log; exit 1; }
timeout 150 tests/bench/timeline/run.sh /tmp/tl alone-small-graph-post40 alone-small-graph-legacy-post40 alone-graph56-post40 alone-graph56-legacy-post40 alone-small-graph-legacy-post40-product gemm-small-graph-legacy-post40-product gemm-small-graph-legacy-product > $OUT/tl.out 2>&1
echo "timeline rc $? $(date +%T)"
cat /tmp/tl/timeline.txt
tar -C /tmp -cJf $OUT/raw.tar.xz tl 2>/dev/null
timeout 200 bash docs/bench/prio-bridge-nextcall-2026-11-26/runN.sh > $OUT/runN.txt 2>&1; echo "runN rc $?"
cat $OUT/runN.txt
