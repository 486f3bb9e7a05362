#!/bin/bash
# Run M1: one process with steps on two GPUs (launches on GPU 0 then GPU 1, a wait on each in
# turn) beside a time-sliced batch on both GPUs: this build (a held bridge ends when its thread
# waits on the other GPU) against ce39827's (held until the thread's wait on its own GPU).
set -u
J=$PWD/build/.jsonc
MK=("JSONC_CFLAGS=-I$J/include -I$J/include/json-c" "JSONC_LIBS=$J/lib/libjson-c.a")
make -j16 "${MK[@]}" all >$OUT/build.log 2>&1 || { tail -30 $OUT/build.log; exit 1; }
(cd build/dev/head && make -j16 "${MK[@]}" all) >>$OUT/build.log 2>&1 || { echo "head build failed"; tail -20 $OUT/build.log; exit 1; }
nvcc -O2 -o build/spmd build/dev/spmd.cu -lcuda >>$OUT/build.log 2>&1 || { tail -20 $OUT/build.log; exit 1; }
nvidia-smi --query-gpu=index,name,driver_version --format=csv,noheader
echo "new build: working tree (09c19b7), head: ce39827"
run() { # LABEL NVT ENV... -- shape args
	local label=$1 nvt=$2; shift 2
	local envs=()
	while [ "$1" != -- ]; do envs+=("$1"); shift; done
	shift
	local out
	out=$(env "${envs[@]}" NVTASKSET_BRIDGE_DEBUG=1 timeout 60 $nvt --no-mps --priority high build/spmd serve "$@" 2>/tmp/err.txt)
	echo "$label [$*] rc $?: $out | $(grep -o '[0-9]* waits, [0-9]* bridged' /tmp/err.txt | head -1); $(grep -o '[0-9]* bridges held' /tmp/err.txt | head -1); $(grep -o 'slot [0-9]: the median of its last measured steps [0-9]* us released, [0-9]* us held' /tmp/err.txt | sed 's/the median of its last measured steps //' | tr '\n' ' ') $(grep -c warning /tmp/err.txt) warnings"
}
NEW=build/bin/nvtaskset OLD=build/dev/head/build/bin/nvtaskset
for shape in "16 2 10 300" "8 30 0 300" "16 10 5 300"; do
	# shellcheck disable=SC2086
	run alone "$NEW" X=1 -- $shape
done | tee $OUT/m1.txt
rm -f /tmp/stop
timeout 400 build/bin/nvtaskset --no-mps --priority low build/spmd batch /tmp/stop 2>$OUT/batch.err &
bp=$!
sleep 3
for round in 1 2; do
	for shape in "16 2 10 300" "8 30 0 300" "16 10 5 300"; do
		# shellcheck disable=SC2086
		{
		run "r$round new default" "$NEW" X=1 -- $shape
		run "r$round old default" "$OLD" X=1 -- $shape
		run "r$round new held" "$NEW" NVTASKSET_BRIDGE_HOLD=1 -- $shape
		run "r$round old held" "$OLD" NVTASKSET_BRIDGE_HOLD=1 -- $shape
		run "r$round new released" "$NEW" NVTASKSET_BRIDGE_HOLD=0 -- $shape
		run "r$round new nobridge" "$NEW" NVTASKSET_BRIDGE=0 -- $shape
		}
	done
done 2>&1 | tee -a $OUT/m1.txt
touch /tmp/stop
wait $bp; echo "batch rc $?"
cat /tmp/err.txt | tail -5 > $OUT/last-err.txt
exit 0
