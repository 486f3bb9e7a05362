#!/bin/bash
# Run E3: diagnose. The committed base (b8b692a) on pre40/eager; the tails tree on short phases, with debug and trace.
set -u
J=$PWD/build/.jsonc
make -j16 "JSONC_CFLAGS=-I$J/include -I$J/include/json-c" JSONC_LIBS=$J/lib/libjson-c.a all >$OUT/build.log 2>&1 || { tail -30 $OUT/build.log; exit 1; }
(cd build/dev/base && make -j16 "JSONC_CFLAGS=-I$J/include -I$J/include/json-c" JSONC_LIBS=$J/lib/libjson-c.a all >$OUT/build-base.log 2>&1) || { tail -20 $OUT/build-base.log; exit 1; }
echo "built $(date +%T)"
timeout 100 build/dev/base/tests/bench/timeline/run.sh $OUT/base gemm-small-pre40-product gemm-small-product gemm-eager-g5-product > $OUT/base.txt 2>&1
echo "== base rc $? $(date +%T)"; tail -n 4 $OUT/base/timeline.txt
# the tails tree, short
sed -e 's/REQS=150/REQS=6/; s/REQS=100/REQS=6/; s/timeout 60 env/timeout 15 env/' tests/bench/timeline/run.sh > tests/bench/timeline/run-short.sh; chmod +x tests/bench/timeline/run-short.sh
export NVTASKSET_BRIDGE_DEBUG=1 NVTASKSET_BRIDGE_TRACE=$OUT/tr
timeout 120 tests/bench/timeline/run-short.sh $OUT/new alone-small-product gemm-small-product alone-eager-g5-product gemm-eager-g5-product > $OUT/new.txt 2>&1
echo "== new rc $? $(date +%T)"; cat $OUT/new/timeline.txt
for f in $OUT/new/*.log; do echo "== $f"; tail -5 $f; done
ls $OUT/tr.* | head; for f in $OUT/tr.*; do echo "== $f"; head -30 $f | cut -c1-400; done
rm -f tests/bench/timeline/run-short.sh
pgrep -a nvidia-cuda-mps
