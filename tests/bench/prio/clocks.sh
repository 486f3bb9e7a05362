#!/usr/bin/env bash
# Probe: the SM clock and power while L runs beside each hog on static partitions
# (is L's p50 shift beside the GEMM loop a clock drop?). nvidia-smi only reads.
#   tests/bench/prio/clocks.sh OUTDIR   (after run.sh has built build/bench/prio)
set -u
ROOT=$(cd "$(dirname "$0")/../../.." && pwd)
OUTDIR=${1:?usage: clocks.sh OUTDIR}
mkdir -p "$OUTDIR"
nvidia-smi --query-gpu=timestamp,clocks.sm,clocks.mem,power.draw,temperature.gpu,clocks_event_reasons.active \
	--format=csv,noheader -lms 100 >"$OUTDIR/smi.csv" 2>&1 &
smi=$!
date -u '+start %F %T.%N' >"$OUTDIR/marks.txt"
PRIO_ROUNDS=1 PRIO_DUTIES=30 PRIO_PERIODS=8 PRIO_CASES=L-alone-part,gemm-static,stream-static,gemm-H-alone \
	timeout 200 python3 "$ROOT/tests/bench/prio/prio.py" "$ROOT" "$ROOT/build/bench/prio" "$OUTDIR" full
date -u '+end %F %T.%N' >>"$OUTDIR/marks.txt"
kill "$smi"
timeout 60 python3 "$ROOT/tests/bench/prio/prio_report.py" "$OUTDIR" >/dev/null
