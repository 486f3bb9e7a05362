#!/usr/bin/env bash
# make check-gpu-hostfn: a service that waits for its requests by host functions (as JAX does:
# cuLaunchHostFunc or cuStreamAddCallback, then no driver call) or by polling an event
# (cuEventQuery; tests/gpu/hostfn.c) beside a time-sliced batch job that never idles, both
# outside MPS (--no-mps). Its requests end when their host functions run or a query finds the
# event done (docs/priorities.md, "Yielding"), so the batch takes no share of the
# GPU (a 2048 us timeslice after two windows of 500 ms in which the service looked busy
# throughout): read back through -l --json 2.5 s into the service's run, and by its effect, the
# service's wait (median under 1 ms: 506-690 us on an H100, 1350-1516 us where the batch took its
# share). The program's own function runs for every request, every query ends in success (its
# exit status). Every program has
# a time limit. Needs an NVIDIA Hopper GPU, gcc and the CUDA headers, nvtaskset built (make all).
#
# Usage: tests/gpu/hostfn.sh [LOGDIR]   (default: build/gpu)
set -u
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
LOG=${1:-$ROOT/build/gpu}
NVT=${NVT:-$ROOT/build/bin/nvtaskset}
W=$LOG/hostfn
rm -rf "$W"
mkdir -p "$W"
PASS=0 FAIL=0
check() { # check OK WHAT
	if [ "$1" = 1 ]; then PASS=$((PASS + 1)); echo "PASS $2"; else FAIL=$((FAIL + 1)); echo "FAIL $2"; fi
}
INC=
for d in "${CUDA_INCLUDE:-}" /usr/local/cuda/include /usr/local/cuda/targets/x86_64-linux/include /usr/include; do
	[ -n "$d" ] && [ -r "$d/cuda.h" ] && { INC=$d; break; }
done
if [ -z "$INC" ] || ! gcc -O2 -Wall -I"$INC" -o "$W/hostfn" "$ROOT/tests/gpu/hostfn.c" -lcuda 2>"$W/build.log"; then
	echo "FAIL hostfn: cannot build tests/gpu/hostfn.c: $(tail -3 "$W/build.log")"
	echo "hostfn: 0 passed, 1 failed"
	exit 1
fi
# read_list: "LOW_TIMESLICE HIGH_REQUESTS" from -l --json (the batch's groups' timeslice, the
# service's requests begun).
read_list() {
	timeout 20 "$NVT" -l --json | python3 -c 'import json, sys
lo = hi = None
for t in json.load(sys.stdin)["tasks"]:
    g = t["gpus"][0]
    if g.get("priority") == "low":
        lo = (g.get("yield") or {}).get("timeslice_us")
    elif g.get("priority") == "high":
        hi = (g.get("requests") or {}).get("count")
print(lo, hi)'
}
for form in fn callback query; do
	timeout 60 "$NVT" --no-mps --priority low --yield slice "$W/hostfn" batch 12 1000 >"$W/batch-$form.out" 2>&1 &
	bp=$!
	for _ in $(seq 100); do [ "$(read_list | cut -d' ' -f1)" = 5 ] && break; sleep 0.1; done
	timeout 60 "$NVT" --no-mps --priority high "$W/hostfn" serve 400 10000 300 "$form" >"$W/serve-$form.out" 2>&1 &
	sp=$!
	# 2.5 s into its run (250 requests at 10 ms): past the share's two windows.
	got="- -"
	for _ in $(seq 200); do
		got=$(read_list)
		[ "$(cut -d' ' -f2 <<<"$got")" != None ] && [ "$(cut -d' ' -f2 <<<"$got")" -ge 250 ] 2>/dev/null && break
		sleep 0.05
	done
	wait "$sp"
	src=$?
	wait "$bp"
	brc=$?
	out=$(cat "$W/serve-$form.out")
	echo "$form: -l (low timeslice us, high requests): $got; $out; batch rc $brc"
	check "$([ $src = 0 ] && echo 1)" "$form: the service's every wait ended by its host function or query (rc $src)"
	check "$([ "$(cut -d' ' -f1 <<<"$got")" = 5 ] && echo 1)" "$form: the batch's timeslice 5 us 2.5 s into the service's run (-l: $got)"
	c=$(cut -d' ' -f2 <<<"$got")
	check "$([ "$c" != None ] && [ "$c" -ge 250 ] 2>/dev/null && echo 1)" "$form: the service's requests end (-l counts $c)"
	p50=$(sed -n 's/.*wait p50 \([0-9]*\) us.*/\1/p' <<<"$out")
	check "$([ -n "$p50" ] && [ "$p50" -lt 1000 ] && echo 1)" "$form: the service's median wait $p50 us, under 1000"
done
echo "hostfn: $PASS passed, $FAIL failed"
[ "$FAIL" = 0 ]
