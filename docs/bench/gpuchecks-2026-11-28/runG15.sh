#!/bin/bash
# Run G15: the timeline's self case (the service's thread pinned to its CPU before its first CUDA
# call) with the shim of 5aba389 (build/dev/old, given f982f3c's timeline scripts, which have the
# case) and of f982f3c (build/dev/new), in turn.
set -u
cd build/dev || exit 1
date -u
cp new/tests/bench/timeline/run.sh new/tests/bench/timeline/tl.cu old/tests/bench/timeline/
J=$PWD/../.jsonc
FL=("JSONC_CFLAGS=-I$J/include -I$J/include/json-c" "JSONC_LIBS=$J/lib/libjson-c.a")
for t in old new; do
	make -C "$t" -j16 "${FL[@]}" all >"$OUT/build-$t.log" 2>&1 || { tail -30 "$OUT/build-$t.log"; exit 1; }
done
mkdir -p "$OUT/r"
i=0
for tc in old new; do
	c=gemm-small-ctx-product-self
	i=$((i + 1))
	NVTASKSET_BRIDGE_DEBUG=1 timeout 60 "$tc/tests/bench/timeline/run.sh" "$OUT/r/t$i" "$c" >"$OUT/r/t$i.out" 2>&1
	echo "== $i $tc $c $(date +%T)"
	grep "ctx-product" "$OUT/r/t$i/timeline.txt" | cut -c1-110
	grep -h "bridge: [0-9]* context\|pinned\|not bridged" "$OUT/r/t$i/"*.log | cut -c1-400 | head -4
	"$tc/build/bin/nvtaskset" --mps stop >/dev/null 2>&1
done
pgrep -a nvidia-cuda-mps | grep -v defunct && echo "MPS daemons still running"
date -u
find "$OUT/r" \( -name '*.svc' -o -name '*.batch' \) -delete
tar -czf "$OUT/g15.tgz" -C "$OUT" r && rm -rf "$OUT/r"
exit 0
