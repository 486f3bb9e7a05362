#!/bin/bash
# Run R8: (1) make check-gpu-bridge with the bridge kernel's word 7 cases (bridgeword.c: released
# with the next bridge queued ends at once, record reason 4); (2) context synchronisations whose
# every 4th step ends in a ~12 ms one-thread kernel (the bridge runs beside it and ends at its
# cap well before the wait returns), beside GEMM training: this tree (the clocks tell such a
# bridge from one the wait took in: no stop expected) against build/dev/var3 (the record alone
# judges: stops expected), then this tree alone beside it again.
set -u
J=$PWD/build/.jsonc
MK=("JSONC_CFLAGS=-I$J/include -I$J/include/json-c" "JSONC_LIBS=$J/lib/libjson-c.a")
make -j16 "${MK[@]}" all >$OUT/build.log 2>&1 || { tail -30 $OUT/build.log; exit 1; }
(cd build/dev/var3 && make -j16 "${MK[@]}" all) >>$OUT/build.log 2>&1 || { echo "var3 build failed"; exit 1; }
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
date -u
srv() { # LABEL NVT
	local out
	out=$(LONG=4 NVTASKSET_BRIDGE_DEBUG=1 NVTASKSET_BRIDGE_TRACE=$OUT/tr-$3 timeout 100 $2 --priority high python3 build/dev/ctxsync.py serve ctx 60 2>/tmp/e.txt)
	echo "$1 rc $?: $out | $(grep -o '[0-9]* waits, [0-9]* bridged' /tmp/e.txt | head -1); stops: $(grep -o 'not bridged from now on (for [0-9]* waits)' /tmp/e.txt | tr '\n' ' '); tries: $(grep -c 'bridged again (a try)' /tmp/e.txt); $(grep -o 'bridge trace: of .*;' /tmp/e.txt); $(grep -c warning /tmp/e.txt) warnings"
}
{
rm -f /tmp/stop
timeout 200 build/bin/nvtaskset --priority low python3 build/dev/ctxsync.py batch /tmp/stop 2>>$OUT/batch.err &
bp=$!
sleep 8
srv "this tree, every 4th step ~12 ms" build/bin/nvtaskset new1
srv "var3 (the record alone), every 4th step ~12 ms" build/dev/var3/build/bin/nvtaskset var3
srv "this tree again" build/bin/nvtaskset new2
touch /tmp/stop; wait $bp; echo "batch rc $?"
} 2>&1 | tee $OUT/r8.txt
build/bin/nvtaskset --mps stop
timeout 240 make "${MK[@]}" check-gpu-bridge > $OUT/bridge.txt 2>&1; echo "check-gpu-bridge rc $?"
grep -E 'bridge kernel|^FAIL|failed' $OUT/bridge.txt | tail -30
build/bin/nvtaskset --mps stop 2>/dev/null
pgrep -a nvidia-cuda-mps | grep -v defunct && echo "MPS daemons still running"
date -u
exit 0
