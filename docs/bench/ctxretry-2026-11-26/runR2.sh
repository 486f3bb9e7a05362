#!/bin/bash
# Run R2: whether a context synchronisation took its bridge in, told by the bridge's record (it
# ended at its cap before the wait returned), against the wait's length from the bridge's
# queueing (87cad7e: stopped for good). ctxsync.py's ctx steps beside GEMM training in the level
# servers: WARM=24 long steps first (six 8192^3 GEMMs each, ~10 ms, waited for by the context),
# with this tree and with 87cad7e (build/dev/h87); and a variant of this tree whose context
# synchronisations' bridges are queued before the wait (build/dev/var: the driver takes them in).
set -u
J=$PWD/build/.jsonc
MK=("JSONC_CFLAGS=-I$J/include -I$J/include/json-c" "JSONC_LIBS=$J/lib/libjson-c.a")
make -j16 "${MK[@]}" all >$OUT/build.log 2>&1 || { tail -30 $OUT/build.log; exit 1; }
for t in h87 var; do
	(cd build/dev/$t && make -j16 "${MK[@]}" all) >>$OUT/build.log 2>&1 || { echo "$t build failed"; tail -20 $OUT/build.log; exit 1; }
done
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
date -u
srv() { # LABEL NVT [ENV...]
	local label=$1 nvt=$2 out
	shift 2
	out=$(env "$@" NVTASKSET_BRIDGE_DEBUG=1 LAST=100 timeout 120 $nvt --priority high python3 build/dev/ctxsync.py serve ctx 150 2>/tmp/e.txt)
	echo "$label $* rc $?: $out | $(grep -o '[0-9]* waits, [0-9]* bridged[^;]*' /tmp/e.txt | head -1); stops: $(grep -o 'not bridged from now on[^:]*' /tmp/e.txt | tr '\n' ' '); tries: $(grep -c 'bridged again (a try)' /tmp/e.txt); at exit: $(grep -c 'not bridged now' /tmp/e.txt) off; $(grep -c warning /tmp/e.txt) warnings"
}
NEW=build/bin/nvtaskset OLD=build/dev/h87/build/bin/nvtaskset VAR=build/dev/var/build/bin/nvtaskset
{
rm -f /tmp/stop
timeout 300 $NEW --priority low python3 build/dev/ctxsync.py batch /tmp/stop 2>>$OUT/batch.err &
bp=$!
sleep 8
for round in 1 2; do
	srv "r$round this tree, warm-up" $NEW WARM=24
	srv "r$round 87cad7e, warm-up" $OLD WARM=24
	srv "r$round this tree, no warm-up" $NEW WARM=0
	srv "r$round variant (bridges queued before the wait)" $VAR WARM=0
done
touch /tmp/stop; wait $bp; echo "batch rc $?"
} 2>&1 | tee $OUT/r2.txt
$NEW --mps stop
pgrep -a nvidia-cuda-mps | grep -v defunct && echo "MPS daemons still running"
date -u
exit 0
