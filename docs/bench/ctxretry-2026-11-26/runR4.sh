#!/bin/bash
# Run R4: the parts of make check-gpu that R3's 570 s did not reach: GPU memory limits
# (tests/gpu/mem.sh, memdriver.sh) and libsmctrl's interface (tests/gpu/smctrl.sh).
set -u
J=$PWD/build/.jsonc
MK=("JSONC_CFLAGS=-I$J/include -I$J/include/json-c" "JSONC_LIBS=$J/lib/libjson-c.a")
make -j16 "${MK[@]}" all >$OUT/build.log 2>&1 || { tail -30 $OUT/build.log; exit 1; }
date -u
mkdir -p $OUT/gpu
build/bin/nvtaskset --topology >/dev/null
timeout 330 tests/gpu/mem.sh $OUT/gpu > $OUT/mem.out 2>&1; echo "mem rc $?"
grep -E '^FAIL|passed|failed' $OUT/mem.out | tail -5
timeout 100 tests/gpu/memdriver.sh $OUT/gpu > $OUT/memdriver.out 2>&1; echo "memdriver rc $?"
grep -E '^FAIL|passed|failed' $OUT/memdriver.out | tail -5
timeout 120 tests/gpu/smctrl.sh $OUT/gpu > $OUT/smctrl.out 2>&1; echo "smctrl rc $?"
grep -E '^FAIL|passed|failed' $OUT/smctrl.out | tail -5
build/bin/nvtaskset --mps stop 2>/dev/null
pgrep -a nvidia-cuda-mps | grep -v defunct && echo "MPS daemons still running"
date -u
exit 0
