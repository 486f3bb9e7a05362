#!/bin/bash
# Run V: check-gpu-bridge with its check of a host busy after its replay; then the same with the
# bridge's wait for the next call planted out (the replay's word never set): that check must fail.
set -u
J=build/.jsonc
mk() { make -j16 "JSONC_CFLAGS=-I$J/include -I$J/include/json-c" JSONC_LIBS=$J/lib/libjson-c.a all >$OUT/build.log 2>&1 || { tail -30 $OUT/build.log; exit 1; }; }
mk; echo "built $(date +%T)"
timeout 200 tests/gpu/bridge.sh /tmp/g > $OUT/check-gpu-bridge.txt 2>&1; echo "check-gpu-bridge rc $? $(date +%T)"
grep -v "^nvtaskset: bridge\|^copyapp" $OUT/check-gpu-bridge.txt | tail -12
python3 - <<'PY'
p = "src/shim/shimbridge.c"
s = open(p).read()
old = "\tif (queued)\n\t\t__atomic_store_n(&w[5], 1, __ATOMIC_RELEASE);"
assert old in s
open(p, "w").write(s.replace(old, "\t(void)0; /* planted: no wait for the next call */"))
PY
mk; echo "built with the fault planted $(date +%T)"
timeout 200 tests/gpu/bridge.sh /tmp/g2 > $OUT/check-gpu-bridge-planted.txt 2>&1; echo "planted: check-gpu-bridge rc $? $(date +%T)"
grep -v "^nvtaskset: bridge\|^copyapp" $OUT/check-gpu-bridge-planted.txt | tail -12
git checkout src/shim/shimbridge.c 2>/dev/null || true
pgrep -a nvidia-cuda-mps | grep -v defunct && echo "MPS daemons still running"
