#!/bin/bash
# Run U: which replays reach the GPU late? A step's graph of 16 cuBLAS bf16 layers at batch 1
# (PyTorch's decode) between two stamping kernels, the host busy 40 us after the replay, bridge
# off, alone; beside GEMMs with and without the bridge; and what waiting for the next call costs
# a graph that is not late (the host busy 40 us after its replay).
set -u
J=build/.jsonc
make -j16 "JSONC_CFLAGS=-I$J/include -I$J/include/json-c" JSONC_LIBS=$J/lib/libjson-c.a all >$OUT/build.log 2>&1 || { tail -30 $OUT/build.log; exit 1; }
echo "built $(date +%T)"
timeout 240 tests/bench/timeline/run.sh /tmp/tl alone-small-graph-post40 alone-blas-post40 alone-blas-legacy-post40 gemm-blas-legacy-nobridge gemm-blas-legacy-product alone-small-graph-post40-product gemm-small-graph-post40-product > $OUT/tl.out 2>&1
echo "timeline rc $? $(date +%T)"
cat /tmp/tl/timeline.txt
grep -h "svc rc\|tl:" /tmp/tl/*.log | sort | uniq -c
tar -C /tmp -cJf $OUT/raw.tar.xz tl 2>/dev/null
pgrep -a nvidia-cuda-mps | grep -v defunct && echo "MPS daemons still running"
