#!/bin/bash
# Run P12: the CUPTI ids of the primary-context calls; rel.c (REL_V1=1: the unversioned release,
# not followed) under nvtaskset --priority high five times, and a build without the release
# handling five times: how often does the stale bridge launch crash the program?
set -u
J=build/.jsonc
MK=("JSONC_CFLAGS=-I$J/include -I$J/include/json-c" "JSONC_LIBS=$J/lib/libjson-c.a")
grep -n "PrimaryCtx" /usr/local/cuda/include/cupti_driver_cbid.h
make -j16 "${MK[@]}" all >$OUT/build.log 2>&1 || { tail -30 $OUT/build.log; exit 1; }
nvcc -O2 -o build/rel docs/bench/release-2026-11-26/rel.c -lcuda -ldl >>$OUT/build.log 2>&1 || { tail -20 $OUT/build.log; exit 1; }
for i in 1 2 3 4 5; do
	REL_V1=1 NVTASKSET_BRIDGE_DEBUG=1 timeout 60 build/bin/nvtaskset --no-mps --priority high build/rel > /tmp/r.txt 2>&1
	echo "this $i rc $? $(grep -c '^round' /tmp/r.txt) rounds $(grep -o '[0-9]* waits, [0-9]* bridged' /tmp/r.txt)"
	REL_V1=1 NVTASKSET_BRIDGE_DEBUG=1 timeout 60 build/base/build/bin/nvtaskset --no-mps --priority high build/rel > /tmp/r.txt 2>&1
	echo "base $i rc $? $(grep -c '^round' /tmp/r.txt) rounds $(grep -o '[0-9]* waits, [0-9]* bridged' /tmp/r.txt)"
done 2>&1 | tee $OUT/crash.txt
exit 0
