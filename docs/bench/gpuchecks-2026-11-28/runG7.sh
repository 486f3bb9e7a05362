#!/bin/bash
# Run G7: the shim's thread on the waiting thread's CPU, before and after it moves off it.
# build/dev/old: commit afefaf2 (the thread stays where the scheduler woke it); build/dev/new:
# commit e0e62e4 (it moves off the waiting thread's CPU); both with e0e62e4's
# tests/bench/timeline. The timeline cases gemm-small-ctx-product-met (the shim's thread pinned
# to the waiting thread's CPU after the first request), its MPS form, and
# gemm-small-ctx-product-hog4 (the service on CPUs 3-4, a busy loop on CPU 4), old then new,
# twice; the service's bridge report in each log.
set -u
cd build/dev || exit 1
J=$PWD/../.jsonc
FL=("JSONC_CFLAGS=-I$J/include -I$J/include/json-c" "JSONC_LIBS=$J/lib/libjson-c.a")
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
nproc; date -u
mkdir -p "$OUT/r"
for t in old new; do
	make -C "$t" -j16 "${FL[@]}" all >"$OUT/build-$t.log" 2>&1 || { tail -30 "$OUT/build-$t.log"; exit 1; }
done
echo "built $(date +%T)"
i=0
for round in 1 2; do
	for c in gemm-small-ctx-product-met gemm-small-ctx-product-met-mps gemm-small-ctx-product-hog4; do
		for t in old new; do
			i=$((i + 1))
			NVTASKSET_BRIDGE_DEBUG=1 timeout 100 "$t/tests/bench/timeline/run.sh" "$OUT/r/t$i" $c >"$OUT/r/t$i.out" 2>&1
			echo "== $i round $round $t $c $(date +%T)"
			grep "ctx-product" "$OUT/r/t$i/timeline.txt" | cut -c1-110
			grep -h "bridge: [0-9]* context\|pinned\|not bridged" "$OUT/r/t$i/"*.log | cut -c1-400 | head -4
			"$t/build/bin/nvtaskset" --mps stop >/dev/null 2>&1
			find "$OUT/r/t$i" \( -name '*.svc' -o -name '*.batch' \) -delete
		done
	done
done
pgrep -a nvidia-cuda-mps | grep -v defunct && echo "MPS daemons still running"
date -u
exit 0
