#!/bin/bash
# Run S1: the build whose yielding tasks' events follow their context (and cuCtxDestroy's old
# name): check-gpu-cbid, cuGetProcAddress for cuCtxDestroy, cuCtxGetId's cost, memdriver.sh,
# a bounded low task whose primary context is released between rounds (new build and HEAD's),
# rel.c's bridge under the release by both names, check-gpu-bridge.
set -u
J=$PWD/build/.jsonc
MK=("JSONC_CFLAGS=-I$J/include -I$J/include/json-c" "JSONC_LIBS=$J/lib/libjson-c.a")
make -j16 "${MK[@]}" all >$OUT/build.log 2>&1 || { tail -30 $OUT/build.log; exit 1; }
(cd build/dev/head && make -j16 "${MK[@]}" all) >>$OUT/build.log 2>&1 || { echo "head build failed"; tail -20 $OUT/build.log; }
nvcc -O2 -o build/lowrel docs/bench/ctxgone-2026-11-26/lowrel.c -lcuda -ldl >>$OUT/build.log 2>&1 || { tail -20 $OUT/build.log; exit 1; }
nvcc -O2 -o build/rel docs/bench/release-2026-11-26/rel.c -lcuda -ldl >>$OUT/build.log 2>&1 || { tail -20 $OUT/build.log; exit 1; }
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
timeout 60 tests/gpu/cbid.sh 2>&1 | tail -2
timeout 30 build/lowrel proc
timeout 30 build/lowrel idcost
for b in new head; do
	NVT=build/bin/nvtaskset
	[ $b = head ] && NVT=build/dev/head/build/bin/nvtaskset
	for v in v2 v1 v2 v1; do
		timeout 60 $NVT --no-mps --priority high -c 0-8 build/lowrel serve 9 > /tmp/hi.txt 2>&1 &
		hp=$!
		sleep 1
		timeout 60 $NVT --no-mps --priority low --yield bound=1000,any,duty=100 -c 9-65 build/lowrel low $v > /tmp/lo.txt 2>&1
		rc=$?
		wait $hp
		echo "$b $v rc $rc: $(grep -c '^round' /tmp/lo.txt) rounds; $(grep '^round' /tmp/lo.txt | sed 's/context 0x[0-9a-f]* //' | tr '\n' ';') $(grep -v '^round' /tmp/lo.txt | tr '\n' ' ') | $(cat /tmp/hi.txt | tr '\n' ' ')"
	done
done 2>&1 | tee $OUT/runS1-lowrel.txt
# the same low task alone (no higher task: not bounded), new build
timeout 60 build/bin/nvtaskset --no-mps --priority low --yield bound=1000,any,duty=100 -c 9-65 build/lowrel low > /tmp/lo.txt 2>&1
echo "alone rc $?: $(grep '^round' /tmp/lo.txt | sed 's/context 0x[0-9a-f]* //' | tr '\n' ';')" | tee -a $OUT/runS1-lowrel.txt
for i in 1 2 3 4; do
	v=1; [ $i -gt 2 ] && v=
	if [ -n "$v" ]; then export REL_V1=1; else unset REL_V1; fi
	NVTASKSET_BRIDGE_DEBUG=1 timeout 60 build/bin/nvtaskset --no-mps --priority high build/rel > /tmp/r.txt 2>&1
	echo "rel ${v:+v1}${v:-v2} $i rc $? $(grep -c '^round' /tmp/r.txt) rounds, $(grep -o '[0-9]* waits, [0-9]* bridged' /tmp/r.txt) $(grep -c 'warning' /tmp/r.txt) warnings"
done 2>&1 | tee $OUT/runS1-release.txt
unset REL_V1
timeout 300 tests/gpu/memdriver.sh /tmp/md > $OUT/runS1-memdriver.txt 2>&1; echo "memdriver rc $?"
grep "memdriver:" $OUT/runS1-memdriver.txt | grep -v "^PASS" | tail -5
grep -c "^PASS" $OUT/runS1-memdriver.txt
timeout 400 make "${MK[@]}" check-gpu-bridge > $OUT/runS1-check-gpu-bridge.txt 2>&1; echo "check-gpu-bridge rc $?"
tail -3 $OUT/runS1-check-gpu-bridge.txt
exit 0
