#!/bin/bash
# Run J7: a trial learner (not kept: its patch is not in the repository) with a short linger where many gaps come just past the whole linger
# (build/dev/new: HEAD with it) against build/dev/cur (e69b7e9) and NVTASKSET_BRIDGE=0: the JAX
# service (jaxsvc.py item / ready) beside GEMM training in the level servers, two rounds, fresh
# processes; then PyTorch's ctxsync.py (stream / item) with each tree: nothing changes there.
set -u
J=$PWD/build/.jsonc
MK=("JSONC_CFLAGS=-I$J/include -I$J/include/json-c" "JSONC_LIBS=$J/lib/libjson-c.a")
for d in new cur; do (cd build/dev/$d && make -j16 "${MK[@]}" all) >>$OUT/build.log 2>&1 || { echo "$d build failed"; tail -20 $OUT/build.log; exit 1; }; done
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
date -u
NEW=build/dev/new/build/bin/nvtaskset OLD=build/dev/cur/build/bin/nvtaskset
srv() { # LABEL PROG ARGS TAG CMD...
	local l=$1 p=$2 a=$3 tag=$4 out
	shift 4
	out=$(NVTASKSET_BRIDGE_DEBUG=1 NVTASKSET_BRIDGE_TRACE=$OUT/tr-$tag timeout 120 "$@" python3 build/dev/$p $a 2>/tmp/e.txt)
	echo "$l rc $?: $out | $(grep -o '[0-9]* waits, [0-9]* bridged ([0-9]* with a linger below 300 us)' /tmp/e.txt | head -1); $(grep -o 'bridge trace: of [^;]*' /tmp/e.txt | head -1)"
}
{
rm -f /tmp/stop
timeout 400 $NEW --priority low python3 build/dev/ctxsync.py batch /tmp/stop 2>>$OUT/batch.err &
bp=$!
sleep 8
for r in 1 2; do
	for m in item ready; do
		srv "r$r short linger" jaxsvc.py "$m 100" new$r$m $NEW --priority high
		srv "r$r e69b7e9" jaxsvc.py "$m 100" old$r$m $OLD --priority high
		srv "r$r NVTASKSET_BRIDGE=0" jaxsvc.py "$m 100" off$r$m env NVTASKSET_BRIDGE=0 $NEW --priority high
	done
done
for m in stream item; do
	srv "torch short linger" ctxsync.py "serve $m 100" tnew$m $NEW --priority high
	srv "torch e69b7e9" ctxsync.py "serve $m 100" told$m $OLD --priority high
done
touch /tmp/stop; wait $bp; echo "batch rc $?"
} 2>&1 | tee $OUT/j7.txt
$NEW --mps stop
pgrep -a nvidia-cuda-mps | grep -v defunct && echo "MPS daemons still running"
rm -f $OUT/tr-old*.* 2>/dev/null
find $OUT -name 'tr-*' -size -1k -delete
date -u
exit 0
