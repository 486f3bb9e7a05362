#!/bin/bash
# Run E4: which part of the tails change made a plain step after 40 us of the host take 20 ms:
# commit b8b692a's tree (base), with only the launch callbacks followed (base-cb), with only the
# bridge kernel's new parameter (base-ptx).
set -u
J=$PWD/build/.jsonc
for t in base base-cb base-ptx; do
 (cd build/dev/$t && make -j16 "JSONC_CFLAGS=-I$J/include -I$J/include/json-c" JSONC_LIBS=$J/lib/libjson-c.a all >$OUT/build-$t.log 2>&1) || { tail -20 $OUT/build-$t.log; exit 1; }
done
echo "built $(date +%T)"
for r in 1 2; do for t in base base-cb base-ptx; do
 timeout 100 build/dev/$t/tests/bench/timeline/run.sh $OUT/$t$r gemm-small-pre40-product gemm-small-product alone-small-pre40-product > $OUT/$t$r.txt 2>&1
 echo "== $t round $r rc $? $(date +%T)"; tail -n 3 $OUT/$t$r/timeline.txt
done; done
pgrep -a nvidia-cuda-mps
