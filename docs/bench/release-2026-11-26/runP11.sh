#!/bin/bash
# Run P11: what crashes rel.c (REL_V1=1) under nvtaskset --priority high: without the bridge,
# with a build without the release handling (build/base), and a backtrace (gdb).
set -u
J=build/.jsonc
MK=("JSONC_CFLAGS=-I$J/include -I$J/include/json-c" "JSONC_LIBS=$J/lib/libjson-c.a")
make -j16 "${MK[@]}" all >$OUT/build.log 2>&1 || { tail -30 $OUT/build.log; exit 1; }
A=$PWD/build/.jsonc
(cd build/base && make -j16 "JSONC_CFLAGS=-I$A/include -I$A/include/json-c" "JSONC_LIBS=$A/lib/libjson-c.a" all >$OUT/build-base.log 2>&1) || tail -5 $OUT/build-base.log
nvcc -O2 -g -o build/rel docs/bench/release-2026-11-26/rel.c -lcuda -ldl >>$OUT/build.log 2>&1 || { tail -20 $OUT/build.log; exit 1; }
echo "built $(date +%T)"
for mode in nobridge base this; do
	case $mode in
	nobridge) REL_V1=1 NVTASKSET_BRIDGE=0 timeout 60 build/bin/nvtaskset --no-mps --priority high build/rel > /tmp/r-$mode.txt 2>&1 ;;
	base) REL_V1=1 NVTASKSET_BRIDGE_DEBUG=1 timeout 60 build/base/build/bin/nvtaskset --no-mps --priority high build/rel > /tmp/r-$mode.txt 2>&1 ;;
	this) REL_V1=1 NVTASKSET_BRIDGE_DEBUG=1 timeout 60 build/bin/nvtaskset --no-mps --priority high build/rel > /tmp/r-$mode.txt 2>&1 ;;
	esac
	echo "== $mode rc $?"
	grep -v "calibrat" /tmp/r-$mode.txt | cut -c1-200 | head -8
done 2>&1 | tee $OUT/modes.txt
which gdb && REL_V1=1 NVTASKSET_BRIDGE_DEBUG=1 timeout 120 build/bin/nvtaskset --no-mps --priority high gdb -q -batch -ex run -ex bt -ex "info sharedlibrary" --args build/rel > $OUT/gdb.txt 2>&1
tail -30 $OUT/gdb.txt
exit 0
