#!/usr/bin/env bash
# libsmctrl's interface through nvtaskset on a GPU (include/libsmctrl.h,
# docs/libsmctrl.md): global, next and stream masks in logical TPC IDs read
# back with %smid, TPCs above 63, two streams of one program on disjoint TPCs
# at once, the driver and runtime launch calls, a captured graph, the
# queries, masks inside a partition and across a moved partition. Outside
# MPS (%smid is virtual inside it). Needs an H100-shaped GPU (66 TPCs,
# calibrated by nvtaskset), nvcc. Called by check-gpu.sh; prints PASS/FAIL
# lines and exits non-zero on a failure.
#
# Usage: tests/gpu/smctrl.sh LOGDIR [LIBSMCTRL_SRC]
#   LIBSMCTRL_SRC: a directory with libsmctrl's own test sources (its
#   libsmctrl_test_*.c, libsmctrl_test_mask_shared.{cu,h}, testbench.h), built
#   here against nvtaskset's libsmctrl.so and run under nvtaskset -c all;
#   their results are reported, not judged (see docs/libsmctrl.md).
set -u
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
NVT=$ROOT/build/bin/nvtaskset
LIB=$ROOT/build/lib/nvtaskset
LOG=${1:-$ROOT/build/gpu}
SRC=${2:-}
G=$ROOT/build/gpu
mkdir -p "$G" "$LOG"
PASS=0 FAIL=0
pass() { PASS=$((PASS + 1)); echo "PASS smctrl: $1"; }
fail() { FAIL=$((FAIL + 1)); echo "FAIL smctrl: $1: $2"; }
T() { timeout "${LIMIT:-60}" "$@"; }
NVCC=${NVCC:-$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)}

T "$NVCC" -O2 -arch=sm_90 -I"$ROOT/include" -o "$G/smctrl" "$ROOT/tests/gpu/smctrl.cu" \
	-L"$LIB" -lsmctrl -lcuda -Xlinker -rpath="$LIB" || { echo "nvcc failed"; exit 1; }
readelf -d "$G/smctrl" | grep -q 'NEEDED.*libsmctrl.so' || fail link "the program does not load libsmctrl.so"

# ---- Every scenario, under nvtaskset with every TPC ------------------------------
out=$(NVTASKSET_SMCTRL_DEBUG=1 T "$NVT" --no-mps -c all "$G/smctrl" all 2>&1)
echo "$out" >"$LOG/smctrl-all.txt"
echo "$out"
want() { # want NAME SMS: the line "NAME sms=SMS"
	if grep -qx "$1 sms=$2" <<<"$out"; then pass "$1 on SMs $2"; else
		fail "$1" "expected SMs $2, got '$(grep "^$1 " <<<"$out")'"; fi
}
want baseline 0-131
want global64-0-3 0-7
want global-16-19 32-39
want global-60-65 120-131
want next-5 10-11
want after-next 120-131
want next64-40 80-81
want stream-62-65 124-131
want stream64-4-7 8-15
want other-stream-global 120-131
want null-stream-9 18-19
want per-thread-stream-11 22-23
want global-none-enabled 0-131
want global-cleared 0-131
want thread-next-12 24-25
want two-streams-a 0-15
want two-streams-b 16-31
want driver-cuLaunchKernel 60-67
want driver-cuLaunchKernelEx 68-71
want runtime-cudaLaunchKernelEx 72-75
want graph-captured 40-47
want graph-replay 40-47
want stream-after-capture 100-103
ov=$(sed -n 's/^two-streams overlap_ms=\([0-9.]*\) a_ms=\([0-9.]*\) b_ms=\([0-9.]*\)$/\1 \2 \3/p' <<<"$out")
if [ -n "$ov" ] && python3 -c "import sys; o,a,b=map(float,'$ov'.split()); sys.exit(0 if o > 0.5*min(a,b) else 1)"; then
	pass "two streams ran at the same time (overlap, a, b ms: $ov)"
else
	fail two-streams-overlap "overlap, a, b ms: '$ov'"
fi
grep -qx 'tpc_info_cuda rc=0 tpcs=66' <<<"$out" && pass "get_tpc_info_cuda: 66" || fail tpc_info "$(grep tpc_info_cuda <<<"$out")"
grep -q '^gpc_info_ext rc=0 gpcs=12 ' <<<"$out" && pass "get_gpc_info_ext: 12 GPCs" || fail gpc_info_ext "$(grep gpc_info_ext <<<"$out")"
grep -qx 'gpc_info rc=34' <<<"$out" && pass "get_gpc_info: ERANGE (TPCs 64-65)" || fail gpc_info "$(grep '^gpc_info rc' <<<"$out")"
grep -qx 'tpc_info_cuda_bad_device rc=22' <<<"$out" && pass "bad device: EINVAL" || fail bad_device "$(grep bad_device <<<"$out")"
grep -q 'enables no TPC of this task' <<<"$out" && pass "warned of a mask enabling no TPC" || fail warn-empty "no warning"
grep -q 'smctrl: .* launches' <<<"$out" && echo "pairing: $(grep 'smctrl: ' <<<"$out")"

# ---- Launch rate, without and with masks (reported, not judged) ---------------------------
for i in 1 2 3; do T "$NVT" --no-mps -c all "$G/smctrl" rate 200000 2>&1; done | tee "$LOG/smctrl-rate.txt"

# ---- Inside a partition -----------------------------------------------------------------
out=$(T "$NVT" --no-mps -c 0-31 "$G/smctrl" inside 16-47 2>&1)
echo "$out" | tee "$LOG/smctrl-inside.txt"
grep -qx 'inside sms=32-63' <<<"$out" && pass "inside -c 0-31, mask 16-47: SMs 32-63" || fail inside "$out"
out=$(T "$NVT" --no-mps -c 0-31 "$G/smctrl" inside 40-47 2>&1)
echo "$out" | tee -a "$LOG/smctrl-inside.txt"
grep -qx 'inside sms=0-63' <<<"$out" && pass "inside -c 0-31, mask 40-47 (disjoint): the partition" || fail inside-disjoint "$out"

# ---- A moved partition --------------------------------------------------------------------
rm -f "$G/sm.stop" "$G/sm.state"
# Not under timeout: -p needs the task's own PID (nvtaskset execs it).
"$NVT" --no-mps -c 0-31 "$G/smctrl" loop "$G/sm.stop" "$G/sm.state" >"$LOG/smctrl-moved.txt" 2>&1 &
pid=$!
wait_state() { # wait_state SMS
	for ((i = 0; i < 500; i++)); do
		[ "$(cat "$G/sm.state" 2>/dev/null)" == "$1" ] && return 0
		sleep 0.02
	done
	return 1
}
wait_state 0-31 && pass "moved: stream mask 0-15 in -c 0-31: SMs 0-31" || fail moved-start "$(cat "$G/sm.state" 2>/dev/null)"
"$NVT" -p -c 8-40 "$pid" >>"$LOG/smctrl-moved.txt" 2>&1
wait_state 16-31 && pass "moved: -p -c 8-40: SMs 16-31" || fail moved-1 "$(cat "$G/sm.state" 2>/dev/null)"
"$NVT" -p -c 20-30 "$pid" >>"$LOG/smctrl-moved.txt" 2>&1
wait_state 40-61 && pass "moved: -p -c 20-30 (disjoint): the partition, SMs 40-61" || fail moved-2 "$(cat "$G/sm.state" 2>/dev/null)"
"$NVT" -p -c all "$pid" >>"$LOG/smctrl-moved.txt" 2>&1
wait_state 0-31 && pass "moved: -p -c all: SMs 0-31 again" || fail moved-3 "$(cat "$G/sm.state" 2>/dev/null)"
touch "$G/sm.stop"
for ((i = 0; i < 500; i++)); do kill -0 "$pid" 2>/dev/null || break; sleep 0.02; done
kill -KILL "$pid" 2>/dev/null && fail moved-exit "did not stop"
wait "$pid" || fail moved-exit "exit status $?"
cat "$LOG/smctrl-moved.txt"

# ---- libsmctrl's own tests, built against nvtaskset's libsmctrl.so -----------------------------
if [ -n "$SRC" ] && [ -f "$SRC/libsmctrl_test_mask_shared.cu" ]; then
	W=$G/libsmctrl-tests
	mkdir -p "$W"
	cp "$SRC"/*.c "$SRC"/*.cu "$SRC"/*.h "$W"/
	rm -f "$W/libsmctrl.h" # theirs: ours is the one under test
	(cd "$W" && T "$NVCC" -ccbin g++ -I"$ROOT/include" -c libsmctrl_test_mask_shared.cu -o shared.o) ||
		fail libsmctrl-build "mask_shared"
	# Their loop also asks for TPC 64 through the 64-bit global and next
	# masks, which cannot name it: copies that stop below 64 show the rest.
	sed 's/enabled_tpc < 128/enabled_tpc < 64/' "$W/libsmctrl_test_mask_shared.cu" >"$W/shared_lt64.cu"
	(cd "$W" && T "$NVCC" -ccbin g++ -I"$ROOT/include" -I"$W" -c shared_lt64.cu -o shared_lt64.o) ||
		fail libsmctrl-build "mask_shared below 64"
	for t in global_mask next_mask next_mask_override; do
		(cd "$W" && T "$NVCC" -ccbin g++ -I"$ROOT/include" -o "test_${t}_lt64" "libsmctrl_test_$t.c" shared_lt64.o \
			-L"$LIB" -lsmctrl -lcuda -Xlinker -rpath="$LIB") >/dev/null 2>&1 || continue
		r=$(T "$NVT" --no-mps -c all "$W/test_${t}_lt64" 2>&1) && rc=0 || rc=$?
		echo "== libsmctrl_test_$t, TPCs 0 and 32 only: exit $rc" | tee -a "$LOG/libsmctrl-tests.txt"
		echo "$r" | tee -a "$LOG/libsmctrl-tests.txt"
	done
	for t in global_mask stream_mask stream_mask_override next_mask next_mask_override; do
		[ -f "$W/libsmctrl_test_$t.c" ] || continue
		(cd "$W" && T "$NVCC" -ccbin g++ -I"$ROOT/include" -o "test_$t" "libsmctrl_test_$t.c" shared.o \
			-L"$LIB" -lsmctrl -lcuda -Xlinker -rpath="$LIB") >/dev/null 2>&1 || { echo "libsmctrl test $t: build failed"; continue; }
		r=$(T "$NVT" --no-mps -c all "$W/test_$t" 2>&1) && rc=0 || rc=$?
		echo "== libsmctrl_test_$t: exit $rc" | tee -a "$LOG/libsmctrl-tests.txt"
		echo "$r" | tee -a "$LOG/libsmctrl-tests.txt"
	done
	if [ -f "$W/libsmctrl_test_gpc_info.c" ]; then
		(cd "$W" && T gcc -I"$ROOT/include" -I/usr/local/cuda/include -o test_gpc_info libsmctrl_test_gpc_info.c \
			-L"$LIB" -lsmctrl -L/usr/local/cuda/lib64/stubs -lcuda -Wl,-rpath="$LIB" -lm) >/dev/null 2>&1 &&
			{ r=$(T "$NVT" --no-mps -c all "$W/test_gpc_info" 2>&1) && rc=0 || rc=$?
			echo "== libsmctrl_test_gpc_info: exit $rc" | tee -a "$LOG/libsmctrl-tests.txt"
			echo "$r" | tee -a "$LOG/libsmctrl-tests.txt"; } || echo "libsmctrl test gpc_info: build failed"
	fi
fi

echo "smctrl: $PASS passed, $FAIL failed"
[ "$FAIL" == 0 ]
