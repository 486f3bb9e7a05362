#!/bin/bash
# Run G4: make check-gpu-preempt of HEAD (build/dev/head) and of fa0ac18 (build/dev/old, where
# run G1 measured slice decode p99 1.04-1.08 ms), alternated on one machine: HEAD, old, HEAD, old.
set -u
J=$PWD/build/.jsonc
FL=("JSONC_CFLAGS=-I$J/include -I$J/include/json-c" "JSONC_LIBS=$J/lib/libjson-c.a")
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
date -u
mkdir -p "$OUT/r"
for t in head old; do
	(cd build/dev/$t && make -j16 "${FL[@]}" all >"$OUT/build-$t.log" 2>&1) || { tail -30 "$OUT/build-$t.log"; exit 1; }
done
echo "built $(date +%T)"
for t in head old head old; do
	echo "== $t $(date +%T)"
	(cd build/dev/$t && timeout 120 make "${FL[@]}" check-gpu-preempt GPU_LOG="$OUT/r/gpu-$t" >>"$OUT/r/preempt-$t.console" 2>&1)
	grep "decode p99\|tbt p99" "$OUT/r/preempt-$t.console" | tail -4
	build/dev/$t/build/bin/nvtaskset --mps stop 2>/dev/null
done
pgrep -a nvidia-cuda-mps | grep -v defunct && echo "MPS daemons still running"
date -u
tar -czf "$OUT/g4.tgz" -C "$OUT" r && rm -rf "$OUT/r"
exit 0
