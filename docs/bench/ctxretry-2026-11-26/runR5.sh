#!/bin/bash
# Run R5: libsmctrl's interface (tests/gpu/smctrl.sh) again, its `make install` given the
# json-c build this machine has (R4 ran it without: the install failed, and the two PyTorch
# checks with it).
set -u
J=$PWD/build/.jsonc
MK=("JSONC_CFLAGS=-I$J/include -I$J/include/json-c" "JSONC_LIBS=$J/lib/libjson-c.a")
make -j16 "${MK[@]}" all >$OUT/build.log 2>&1 || { tail -30 $OUT/build.log; exit 1; }
date -u
mkdir -p $OUT/gpu
export MAKEFLAGS="JSONC_CFLAGS=-I$J/include JSONC_LIBS=$J/lib/libjson-c.a"
timeout 200 tests/gpu/smctrl.sh $OUT/gpu > $OUT/smctrl.out 2>&1; echo "smctrl rc $?"
grep -E '^FAIL|passed|failed' $OUT/smctrl.out | tail -8
build/bin/nvtaskset --mps stop 2>/dev/null
pgrep -a nvidia-cuda-mps | grep -v defunct && echo "MPS daemons still running"
date -u
exit 0
