#!/bin/bash
# Run P8: memdriver.sh again (its nvtaskset check reads the program's output alone); a driver-API
# program whose primary context is released the last time and retained again between rounds of
# synchronised steps, plain and under nvtaskset --priority high (this build, and a build
# without the release handling in build/base): is the context's handle the same, is the bridge made
# again, does the program go on.
set -u
J=build/.jsonc
MK=("JSONC_CFLAGS=-I$J/include -I$J/include/json-c" "JSONC_LIBS=$J/lib/libjson-c.a")
make -j16 "${MK[@]}" all >$OUT/build.log 2>&1 || { tail -30 $OUT/build.log; exit 1; }
A=$PWD/build/.jsonc
(cd build/base && make -j16 "JSONC_CFLAGS=-I$A/include -I$A/include/json-c" "JSONC_LIBS=$A/lib/libjson-c.a" all >$OUT/build-base.log 2>&1) || { tail -5 $OUT/build-base.log; }
nvcc -O2 -o build/rel docs/bench/release-2026-11-26/rel.c -lcuda >>$OUT/build.log 2>&1 || { tail -20 $OUT/build.log; exit 1; }
echo "built $(date +%T)"
timeout 300 tests/gpu/memdriver.sh /tmp/md > $OUT/memdriver.txt 2>&1; echo "memdriver rc $? $(date +%T)"
grep "PASS\|FAIL\|memdriver:" $OUT/memdriver.txt | grep -i "release\|passed" | cut -c1-160
for mode in plain this base; do
	case $mode in
	plain) timeout 60 build/rel > /tmp/rel-$mode.txt 2>&1 ;;
	this) NVTASKSET_BRIDGE_DEBUG=1 timeout 60 build/bin/nvtaskset --no-mps --priority high build/rel > /tmp/rel-$mode.txt 2>&1 ;;
	base) NVTASKSET_BRIDGE_DEBUG=1 timeout 60 build/base/build/bin/nvtaskset --no-mps --priority high build/rel > /tmp/rel-$mode.txt 2>&1 ;;
	esac
	echo "== $mode rc $?"
	grep -v "calibrat" /tmp/rel-$mode.txt | cut -c1-260
done | tee $OUT/release.txt
exit 0
