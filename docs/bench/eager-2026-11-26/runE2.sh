#!/bin/bash
# Run E2: tails behind an eager step's launches, against the same tree without them (same machine).
set -u
J=build/.jsonc
make -j16 "JSONC_CFLAGS=-I$J/include -I$J/include/json-c" JSONC_LIBS=$J/lib/libjson-c.a all >$OUT/build.log 2>&1 || { tail -30 $OUT/build.log; exit 1; }
rm -rf /tmp/old && mkdir /tmp/old && cp -r src include tests mk Makefile tools man docs /tmp/old/ 2>/dev/null; mkdir -p /tmp/old/build && cp -r build/.jsonc /tmp/old/build/
# the old tree: no tails
sed -i 's/^	if (replay_pm >= NVT_BRIDGE_REPLAY_PM)$/	if (1)/' /tmp/old/src/core/bridge.c
grep -n "if (1)" /tmp/old/src/core/bridge.c
(cd /tmp/old && make -j16 "JSONC_CFLAGS=-I$PWD/build/.jsonc/include -I$PWD/build/.jsonc/include/json-c" JSONC_LIBS=$PWD/build/.jsonc/lib/libjson-c.a all >$OUT/build-old.log 2>&1) || { tail -20 $OUT/build-old.log; exit 1; }
echo "built $(date +%T)"
P="alone-small-product gemm-small-product alone-eager-g5-product alone-eager-g10-product gemm-eager-g0-product gemm-eager-g5-product gemm-eager-g10-product gemm-eager-g20-product gemm-eager-g40-product gemm-small-pre40-product gemm-small-post40-product"
for round in 1 2; do
 timeout 200 tests/bench/timeline/run.sh $OUT/new$round $P > $OUT/new$round.txt 2>&1
 echo "== new (tails) round $round rc $? $(date +%T)"; tail -n 13 $OUT/new$round/timeline.txt
 timeout 200 /tmp/old/tests/bench/timeline/run.sh $OUT/old$round $P > $OUT/old$round.txt 2>&1
 echo "== old (no tails) round $round rc $? $(date +%T)"; tail -n 13 $OUT/old$round/timeline.txt
done
timeout 300 make check-gpu-bridge > $OUT/check-gpu-bridge.txt 2>&1; echo "check-gpu-bridge rc $?"; grep -E "PASS|FAIL|failed" $OUT/check-gpu-bridge.txt | tail -20
mkdir -p $OUT/keep && for d in new1 old1 new2 old2; do tar cJf $OUT/keep/$d.tar.xz -C $OUT $d; rm -rf "${OUT:?}/$d"; done
pgrep -a nvidia-cuda-mps; nvidia-smi --query-gpu=name --format=csv,noheader
