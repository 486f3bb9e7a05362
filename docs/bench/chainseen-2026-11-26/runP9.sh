#!/bin/bash
# Run P9: the shipped rule (rule 3: 28 of a window of 32 held steps): check-gpu-bridge; the
# timeline's eager phases, the default against NVTASKSET_BRIDGE_REARM=0; bench-prio beside GEMM
# training, one round: graph-replay kinds alone (decode, prefill, token by token, async: the
# default against 0, are the launch calls ever followed?), then the eager kind alone (L alone,
# static, the default, 0).
set -u
J=build/.jsonc
MK=("JSONC_CFLAGS=-I$J/include -I$J/include/json-c" "JSONC_LIBS=$J/lib/libjson-c.a")
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
make -j16 "${MK[@]}" all >$OUT/build.log 2>&1 || { tail -30 $OUT/build.log; exit 1; }
echo "built $(date +%T)"
timeout 200 tests/gpu/bridge.sh /tmp/g > $OUT/check-gpu-bridge.txt 2>&1; echo "check-gpu-bridge rc $? $(date +%T)"
grep -v "^nvtaskset: bridge\|^copyapp" $OUT/check-gpu-bridge.txt | tail -3 | cut -c1-140
P="gemm-eager-g5-hold1 gemm-eager-g20-hold1 gemm-eager-g40-product gemm-eager-g40-hold1"
# shellcheck disable=SC2086 # the phases' names, one word each
NVTASKSET_BRIDGE_DEBUG=1 timeout 60 tests/bench/timeline/run.sh /tmp/tl $P > /dev/null 2>&1
echo "timeline rc $? $(date +%T)"
# shellcheck disable=SC2086
NVTASKSET_BRIDGE_REARM=0 NVTASKSET_BRIDGE_DEBUG=1 timeout 60 tests/bench/timeline/run.sh /tmp/tl0 $P > /dev/null 2>&1
echo "timeline unchained rc $? $(date +%T)"
for d in /tmp/tl /tmp/tl0; do echo "== $d"; cut -c1-118 $d/timeline.txt
	for f in $d/*.log; do echo "   $(basename $f .log): $(grep -h 'launch calls\|held steps seen' $f | sed 's/nvtaskset: bridge: //' | tr '\n' ' ' | cut -c1-300)"; done; done | grep -v "   run: " | tee $OUT/timeline.txt | cut -c1-160
for part in graphs eager; do
	if [ $part = graphs ]; then
		k=decode,prefill:poisson,tbt:poisson,async:poisson c=L-alone-whole,prio-debug,prio-unchained
	else
		k=eager c=L-alone-whole,static,prio-debug,prio-unchained
	fi
	PRIO_T0=$(date +%s.%N)
	export PRIO_T0
	PRIO_MIN_REQUESTS=150 PRIO_ROUNDS=1 PRIO_L=torch PRIO_H=torch PRIO_CONFIG_FILE=tests/bench/prio/bridge.json PRIO_KINDS=$k PRIO_CASES=$c timeout 250 make "${MK[@]}" bench-prio PRIO_SET=round5 PRIO_BUDGET_S=220 PRIO_TIMEOUT_S=240 BENCH_OUT=/tmp/b-$part > $OUT/bench-$part.out 2>&1
	echo "bench $part rc $? $(date +%T)"
	sed -n '/== L /,/^Cells/p' /tmp/b-$part/prio/summary.txt | grep -v "^Cells"
	grep -A6 "L's p50 / p99" /tmp/b-$part/prio/summary.txt | grep -v "^--\|targets" | head -16
	cp /tmp/b-$part/prio/summary.txt $OUT/summary-$part.txt 2>/dev/null
	rm -rf /tmp/x; mkdir -p /tmp/x && tar -C /tmp/x -xJf /tmp/b-$part/prio/raw.tar.xz && grep -H "launch calls\|held steps seen" /tmp/x/raw/*/l-*.log | sed 's/nvtaskset: bridge: //; s|/tmp/x/raw/||' | cut -c1-200 | tee $OUT/bridge-$part.txt
	cp /tmp/b-$part/prio/raw.tar.xz $OUT/raw-$part.tar.xz
done
pgrep -a nvidia-cuda-mps | grep -v defunct && echo "MPS daemons still running"
exit 0
