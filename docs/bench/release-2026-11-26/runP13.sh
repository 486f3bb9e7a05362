#!/bin/bash
# Run P13: the build that follows the release by both names and checks the context's id before
# launching the bridge: check-gpu-cbid; rel.c under nvtaskset --priority high, five times by the
# old name (REL_V1=1) and twice by the _v2 form; memdriver.sh.
set -u
J=build/.jsonc
MK=("JSONC_CFLAGS=-I$J/include -I$J/include/json-c" "JSONC_LIBS=$J/lib/libjson-c.a")
make -j16 "${MK[@]}" all >$OUT/build.log 2>&1 || { tail -30 $OUT/build.log; exit 1; }
nvcc -O2 -o build/rel docs/bench/release-2026-11-26/rel.c -lcuda -ldl >>$OUT/build.log 2>&1 || { tail -20 $OUT/build.log; exit 1; }
timeout 60 tests/gpu/cbid.sh 2>&1 | tail -2
for i in 1 2 3 4 5 6 7; do
	v=1; [ $i -gt 5 ] && v=
	if [ -n "$v" ]; then export REL_V1=1; else unset REL_V1; fi
	NVTASKSET_BRIDGE_DEBUG=1 timeout 60 build/bin/nvtaskset --no-mps --priority high build/rel > /tmp/r.txt 2>&1
	echo "${v:+v1}${v:-v2} $i rc $? $(grep -c '^round' /tmp/r.txt) rounds, $(grep -o '[0-9]* waits, [0-9]* bridged' /tmp/r.txt) $(grep -c 'warning' /tmp/r.txt) warnings"
done 2>&1 | tee $OUT/release.txt
timeout 300 tests/gpu/memdriver.sh /tmp/md > $OUT/memdriver.txt 2>&1; echo "memdriver rc $?"
grep "memdriver:" $OUT/memdriver.txt | tail -2
exit 0
