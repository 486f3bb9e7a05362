#!/bin/bash
set -u
J=build/.jsonc
make -j16 "JSONC_CFLAGS=-I$J/include -I$J/include/json-c" JSONC_LIBS=$J/lib/libjson-c.a all >$OUT/build.log 2>&1 || { tail -30 $OUT/build.log; exit 1; }
echo "built $(date +%T)"
timeout 200 tests/bench/timeline/run.sh /tmp/tl gemm-small-product gemm-small-product-graph gemm-small-graph-bridge gemm-small-graph-bridgeg gemm-small-graph gemm-small-product-graph-mps > $OUT/tl.out 2>&1
echo "timeline rc $? $(date +%T)"
grep -v "^==\|rc 0\|calib\|Killed" $OUT/tl.out | tail -9
grep -i "error\|tl:" /tmp/tl/*.log | head
tar -C /tmp -cJf $OUT/raw.tar.xz tl 2>/dev/null
pgrep -a nvidia-cuda-mps && echo "MPS daemons still running"
