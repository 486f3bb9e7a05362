#!/bin/bash
# Run C5: PyTorch token-by-token steps waited for by torch.cuda.synchronize() with 6184ae5's keep
# (the last bridge waits for the host's next call until the shim's thread queued the next),
# against by the stream and unbridged, beside GEMM training, in the level servers and outside MPS;
# then make check-gpu-bridge (its context-synchronisation phases among the rest).
set -u
J=$PWD/build/.jsonc
MK=("JSONC_CFLAGS=-I$J/include -I$J/include/json-c" "JSONC_LIBS=$J/lib/libjson-c.a")
make -j16 "${MK[@]}" all >$OUT/build.log 2>&1 || { tail -30 $OUT/build.log; exit 1; }
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
NVT=build/bin/nvtaskset
late() { grep -o "context synchronisations' bridges queued by the shim's thread, within[^;]*" "$1" | sed 's/.*thread, //' | head -1; }
srv() { # LABEL NVTARGS MODE [ENV...]
	local label=$1 args=$2 mode=$3 out
	shift 3
	# shellcheck disable=SC2086 # the form's words
	out=$(env "$@" NVTASKSET_BRIDGE_DEBUG=1 timeout 120 $NVT $args --priority high python3 build/dev/ctxsync.py serve "$mode" 150 2>/tmp/e.txt)
	echo "$label $* rc $?: $out | $(grep -o '[0-9]* waits, [0-9]* bridged' /tmp/e.txt | head -1); $(late /tmp/e.txt); $(grep -c 'not bridged from now on' /tmp/e.txt) off; $(grep -c warning /tmp/e.txt) warnings"
}
{
for form in "" "--no-mps"; do
	rm -f /tmp/stop
	# shellcheck disable=SC2086
	timeout 300 $NVT $form --priority low python3 build/dev/ctxsync.py batch /tmp/stop 2>>$OUT/batch.err &
	bp=$!
	sleep 8
	for round in 1 2; do
		srv "r$round ${form:-mps} beside GEMMs" "$form" ctx X=1
		srv "r$round ${form:-mps} beside GEMMs" "$form" stream X=1
		srv "r$round ${form:-mps} beside GEMMs" "$form" ctx NVTASKSET_BRIDGE=0
	done
	touch /tmp/stop
	wait $bp; echo "batch rc $?"
done
srv "alone mps" "" ctx X=1; srv "alone mps" "" ctx NVTASKSET_BRIDGE=0
} 2>&1 | tee $OUT/c5.txt
$NVT --mps stop
timeout 420 make "${MK[@]}" check-gpu-bridge > $OUT/bridge.txt 2>&1; echo "check-gpu-bridge rc $?"
grep -E '^(PASS|FAIL)|failed' $OUT/bridge.txt | tail -30
$NVT --mps stop 2>/dev/null
pgrep -a nvidia-cuda-mps | grep -v defunct && echo "MPS daemons still running"
exit 0
