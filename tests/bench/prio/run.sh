#!/usr/bin/env bash
# make bench-prio: a latency-critical service L beside a neighbour H, every configuration side
# by side under one MPS daemon (tests/bench/prio/README.md). Builds the CUDA programs, runs
# prio.py, then prio_report.py: prio.csv, summary.txt, prio.png (or prio.svg), raw.tar.xz in
# OUTDIR. Knobs: PRIO_* (README.md); PRIO_DRY=1 prints the plan and its duration only;
# PRIO_FAKE=1 runs stand-ins without a GPU (selftest.sh).
#   tests/bench/prio/run.sh OUTDIR
set -u
export PRIO_T0=${PRIO_T0:-$(date +%s.%N)}
ROOT=$(cd "$(dirname "$0")/../../.." && pwd)
HERE=$ROOT/tests/bench/prio
OUTDIR=${1:?usage: run.sh OUTDIR}
B=${PRIO_BIN:-$ROOT/build/bench/prio}
mkdir -p "$B" "$OUTDIR" || exit 1
if [ "${PRIO_FAKE:-0}" != 1 ] && [ "${PRIO_DRY:-0}" != 1 ]; then
	NVCC=${NVCC:-$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)}
	echo "== $(date -u '+%Y-%m-%d %H:%M UTC') on $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>/dev/null)" |
		tee -a "$OUTDIR/driver.log"
	if v=$(python3 -c 'import importlib.metadata as m; print(m.version("torch"))' 2>/dev/null); then
		echo "PyTorch $v"
	else
		echo "no PyTorch: the torch L and H will fail"
	fi | tee -a "$OUTDIR/driver.log"
	if v=$(python3 -c 'import importlib.metadata as m; print(m.version("transformers"))' 2>/dev/null); then
		echo "transformers $v"
	else
		echo "no transformers: the llama H and the generate kind will fail"
	fi | tee -a "$OUTDIR/driver.log"
	progs=$(python3 "$HERE/prio.py" --programs) || exit 1 # the CUDA programs this run needs
	for prog in $progs; do
		if [ ! -x "$B/$prog" ] || [ "$HERE/$prog.cu" -nt "$B/$prog" ]; then
			"$NVCC" -O3 -arch=sm_90 -o "$B/$prog" "$HERE/$prog.cu" &
		fi
	done
	wait
	for prog in $progs; do
		[ -x "$B/$prog" ] && [ ! "$HERE/$prog.cu" -nt "$B/$prog" ] || { echo "nvcc failed: $prog.cu"; exit 1; }
	done
	timeout 60 "$ROOT/build/bin/nvtaskset" --calibrate >/dev/null || exit 1
fi
rc=0
# prio.py ends by PRIO_TIMEOUT_S (575; the preset's) from the start, leaving the report and tar
# time in 10 min.
limit=$(python3 "$HERE/prio.py" --timeout) || exit 1
left=$(python3 -c "import time; print(max(10, int($limit - (time.time() - $PRIO_T0))))")
timeout -k 20 "$left" python3 "$HERE/prio.py" "$ROOT" "$B" "$OUTDIR" || rc=1
if [ -f "$OUTDIR/.cleanup" ]; then # prio.py was killed before its own clean-up: do it here
	echo "prio.py did not clean up: killing what it started" | tee -a "$OUTDIR/driver.log"
	while read -r what arg; do
		case $what in
		pgid) kill -KILL -- "-$arg" 2>/dev/null ;;
		mps) [ "${PRIO_FAKE:-0}" = 1 ] || echo quit | CUDA_MPS_PIPE_DIRECTORY=$arg timeout 20 nvidia-cuda-mps-control ;;
		esac
	done <"$OUTDIR/.cleanup"
	rm -f "$OUTDIR/.cleanup"
fi
[ "${PRIO_DRY:-0}" = 1 ] && exit $rc
timeout 120 python3 "$HERE/prio_report.py" "$OUTDIR" >/dev/null || rc=1
if [ -d "$OUTDIR/raw" ]; then
	tar -C "$OUTDIR" -cJf "$OUTDIR/raw.tar.xz" raw && rm -rf "$OUTDIR/raw" || rc=1
fi
echo "results in $OUTDIR: $(cd "$OUTDIR" && ls | tr '\n' ' ')"
exit $rc
