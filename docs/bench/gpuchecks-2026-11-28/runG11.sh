#!/bin/bash
# Run G11: check-gpu's end-to-end part of commit 3781535 (build/dev/new) twice, each cut at 150 s
# (past its live re-partitioning checks), to see whether G10's one failed live change comes again.
set -u
cd build/dev/new || exit 1
J=$PWD/../../.jsonc
FL=("JSONC_CFLAGS=-I$J/include -I$J/include/json-c" "JSONC_LIBS=$J/lib/libjson-c.a")
date -u
mkdir -p "$OUT/r"
make -j16 "${FL[@]}" all >"$OUT/build.log" 2>&1 || { tail -30 "$OUT/build.log"; exit 1; }
for i in 1 2; do
	ONLY_E2E=1 timeout 150 make "${FL[@]}" check-gpu GPU_LOG="$OUT/r/gpu$i" >"$OUT/r/e2e$i.console" 2>&1
	echo "== $i rc $? $(date +%T)"
	grep "live change\|INFO live" "$OUT/r/e2e$i.console" | cut -c1-200
	grep -c "^PASS" "$OUT/r/e2e$i.console"; grep "^FAIL" "$OUT/r/e2e$i.console"
	build/bin/nvtaskset --mps stop >/dev/null 2>&1
done
pgrep -a nvidia-cuda-mps | grep -v defunct && echo "MPS daemons still running"
date -u
tar -czf "$OUT/g11.tgz" -C "$OUT" r/e2e1.console r/e2e2.console && rm -rf "$OUT/r"
exit 0
