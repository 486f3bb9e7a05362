#!/bin/bash
# Run S7: as S6 beside Hugging Face Llama training (AdamW), 2 rounds of 200 requests: L alone,
# static, the default (held steps chained once seen), never chained (0).
set -u
J=$PWD/build/.jsonc
MK=("JSONC_CFLAGS=-I$J/include -I$J/include/json-c" "JSONC_LIBS=$J/lib/libjson-c.a")
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
make -j16 "${MK[@]}" all >$OUT/build.log 2>&1 || { tail -30 $OUT/build.log; exit 1; }
PRIO_T0=$(date +%s.%N)
export PRIO_T0
PRIO_MIN_REQUESTS=200 PRIO_ROUNDS=2 PRIO_L=torch PRIO_H=llama PRIO_CONFIG_FILE=tests/bench/prio/bridge.json \
	PRIO_KINDS=eager PRIO_CASES=L-alone-whole,static,prio-debug,prio-unchained timeout 560 \
	make "${MK[@]}" bench-prio PRIO_SET=round5-llama PRIO_BUDGET_S=520 PRIO_TIMEOUT_S=550 BENCH_OUT=/tmp/b > $OUT/bench.out 2>&1
echo "bench rc $? $(date +%T)"
sed -n '/== L /,/^Cells/p' /tmp/b/prio/summary.txt | grep -v "^Cells"
grep -A8 "L's p50 / p99" /tmp/b/prio/summary.txt | grep -v "^--\|targets" | head -12
cp /tmp/b/prio/summary.txt $OUT/summary.txt 2>/dev/null
rm -rf /tmp/x; mkdir -p /tmp/x && tar -C /tmp/x -xJf /tmp/b/prio/raw.tar.xz && grep -H "launch calls\|held steps seen\|chained behind" /tmp/x/raw/*/l-*.log | sed 's/nvtaskset: bridge: //; s|/tmp/x/raw/||' | cut -c1-220 | tee $OUT/bridge.txt
cp /tmp/b/prio/raw.tar.xz $OUT/raw.tar.xz
pgrep -a nvidia-cuda-mps | grep -v defunct && echo "MPS daemons still running"
exit 0
