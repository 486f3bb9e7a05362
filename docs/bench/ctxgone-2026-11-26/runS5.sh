#!/bin/bash
# Run S5: the final build (86ed0fe): the bounded lower task under the release by both names,
# cap step (a reset beside another thread's global capture), rel.c, check-gpu-bridge.
set -u
J=$PWD/build/.jsonc
MK=("JSONC_CFLAGS=-I$J/include -I$J/include/json-c" "JSONC_LIBS=$J/lib/libjson-c.a")
make -j16 "${MK[@]}" all >$OUT/build.log 2>&1 || { tail -30 $OUT/build.log; exit 1; }
nvcc -O2 -o build/cap docs/bench/ctxgone-2026-11-26/cap.c -lcuda -lpthread >>$OUT/build.log 2>&1 || exit 1
nvcc -O2 -o build/lowrel docs/bench/ctxgone-2026-11-26/lowrel.c -lcuda -ldl >>$OUT/build.log 2>&1 || exit 1
nvcc -O2 -o build/rel docs/bench/release-2026-11-26/rel.c -lcuda -ldl >>$OUT/build.log 2>&1 || exit 1
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
{
	for i in 1 2; do
		NVTASKSET_BRIDGE_DEBUG=1 timeout 60 build/bin/nvtaskset --no-mps --priority high build/cap step 2>&1 |
			grep -E "warning|waits"
		echo "cap step rc $?"
	done
	for v in v2 v1; do
		timeout 60 build/bin/nvtaskset --no-mps --priority high -c 0-8 build/lowrel serve 9 > /tmp/hi.txt 2>&1 &
		hp=$!
		sleep 1
		timeout 60 build/bin/nvtaskset --no-mps --priority low --yield bound=1000,any,duty=100 -c 9-65 build/lowrel low $v > /tmp/lo.txt 2>&1
		rc=$?
		wait $hp
		echo "lowrel $v rc $rc: $(grep '^round' /tmp/lo.txt | sed 's/context 0x[0-9a-f]* //' | tr '\n' ';')"
	done
	for v in 1 ""; do
		if [ -n "$v" ]; then export REL_V1=1; else unset REL_V1; fi
		NVTASKSET_BRIDGE_DEBUG=1 timeout 60 build/bin/nvtaskset --no-mps --priority high build/rel > /tmp/r.txt 2>&1
		echo "rel ${v:+old name}${v:-_v2} rc $? $(grep -c '^round' /tmp/r.txt) rounds, $(grep -o '[0-9]* waits, [0-9]* bridged' /tmp/r.txt) $(grep -c 'warning' /tmp/r.txt) warnings"
	done
	unset REL_V1
} 2>&1 | tee $OUT/runS5.txt
timeout 400 make "${MK[@]}" check-gpu-bridge > $OUT/check-gpu-bridge.txt 2>&1; echo "check-gpu-bridge rc $?"
tail -2 $OUT/check-gpu-bridge.txt
exit 0
