#!/bin/bash
# Run P10: a primary context's last release by the driver's unversioned export
# (cuDevicePrimaryCtxRelease through dlsym: a call the shim does not follow), rounds of
# synchronised steps between (rel.c with REL_V1=1), plain and under nvtaskset --priority high:
# the bridge's launch in the released context is answered as one of a context that is gone, and
# the bridge is made again at the next wait; the versioned form again for comparison.
set -u
J=build/.jsonc
MK=("JSONC_CFLAGS=-I$J/include -I$J/include/json-c" "JSONC_LIBS=$J/lib/libjson-c.a")
make -j16 "${MK[@]}" all >$OUT/build.log 2>&1 || { tail -30 $OUT/build.log; exit 1; }
nvcc -O2 -o build/rel docs/bench/release-2026-11-26/rel.c -lcuda -ldl >>$OUT/build.log 2>&1 || { tail -20 $OUT/build.log; exit 1; }
echo "built $(date +%T)"
for mode in plain-v1 this-v1 this-v2; do
	case $mode in
	plain-v1) REL_V1=1 timeout 60 build/rel > /tmp/rel-$mode.txt 2>&1 ;;
	this-v1) REL_V1=1 NVTASKSET_BRIDGE_DEBUG=1 timeout 60 build/bin/nvtaskset --no-mps --priority high build/rel > /tmp/rel-$mode.txt 2>&1 ;;
	this-v2) NVTASKSET_BRIDGE_DEBUG=1 timeout 60 build/bin/nvtaskset --no-mps --priority high build/rel > /tmp/rel-$mode.txt 2>&1 ;;
	esac
	echo "== $mode rc $?"
	grep -v "calibrat" /tmp/rel-$mode.txt | cut -c1-230
done | tee $OUT/release.txt
exit 0
