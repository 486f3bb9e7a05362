#!/bin/bash
# Run AA: check-gpu-bridge with the bridge's kernel driven by its words (tests/gpu/bridgeword.c);
# then bridgeword with the kernel reading the replay's word at a wrong offset: it must fail.
set -u
J=build/.jsonc
make -j16 "JSONC_CFLAGS=-I$J/include -I$J/include/json-c" JSONC_LIBS=$J/lib/libjson-c.a all >$OUT/build.log 2>&1 || { tail -30 $OUT/build.log; exit 1; }
echo "built $(date +%T)"
timeout 200 tests/gpu/bridge.sh /tmp/g > $OUT/check-gpu-bridge.txt 2>&1; echo "check-gpu-bridge rc $? $(date +%T)"
grep -v "^nvtaskset: bridge\|^copyapp" $OUT/check-gpu-bridge.txt | tail -15
mkdir -p /tmp/planted/shim
sed 's/\[%rd1+20\]/[%rd1+24]/' src/shim/shimbridgeptx.h > /tmp/planted/shim/shimbridgeptx.h
grep -c 'rd1+24' /tmp/planted/shim/shimbridgeptx.h
nvcc -O2 -I/tmp/planted -o /tmp/planted/bridgeword tests/gpu/bridgeword.c -lcuda && { timeout 60 /tmp/planted/bridgeword; echo "planted: bridgeword rc $?"; } | tee $OUT/bridgeword-planted.txt
