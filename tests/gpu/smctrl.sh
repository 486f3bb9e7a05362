#!/usr/bin/env bash
# libsmctrl's interface through nvtaskset on a GPU (include/libsmctrl.h,
# docs/libsmctrl.md): global, next and stream masks in logical TPC IDs read
# back with %smid, TPCs above 63, two streams of one program on disjoint TPCs
# at once, the driver and runtime launch calls, a captured graph, thread-block
# clusters, the queries, masks inside a partition and across a moved
# partition; all of it also in a program started plainly (no nvtaskset), with
# the GPU's map from the calibration cache, or calibrated once; PyTorch's
# GEMMs under masks set through ctypes (tests/gpu/smctrl_torch.py), plainly
# and under MPS. %smid is read outside MPS only (it is virtual inside).
# Needs an H100-shaped GPU (66 TPCs, calibrated by nvtaskset), nvcc, python3
# with PyTorch. Called by check-gpu.sh; prints PASS/FAIL lines and exits
# non-zero on a failure.
#
# Usage: tests/gpu/smctrl.sh LOGDIR [LIBSMCTRL_SRC]
#   LIBSMCTRL_SRC: a checkout of libsmctrl (its test sources libsmctrl_test_*.c,
#   libsmctrl_test_mask_shared.{cu,h}, testbench.h, at its top or in tests/),
#   whose tests are built unchanged against nvtaskset's libsmctrl.h and
#   libsmctrl.so as installed (make install into build/gpu/prefix) and run
#   plainly and under nvtaskset -c all; without it that part says it skipped.
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

# ---- Every scenario, under nvtaskset with every TPC, then started plainly ------------
# (The GPU's map: check-gpu.sh calibrated it into root's cache.)
want() { # want NAME SMS: the line "NAME sms=SMS" (in $out, run $how)
	if grep -qx "$1 sms=$2" <<<"$out"; then pass "$how: $1 on SMs $2"; else
		fail "$how: $1" "expected SMs $2, got '$(grep "^$1 " <<<"$out")'"; fi
}
cluster_want() { # cluster_want NAME: "NAME sms=S want=S", the SMs it ran on the wanted ones
	local l
	l=$(grep "^$1 sms=" <<<"$out")
	if [ -n "$l" ] && [ "$(sed 's/.* sms=\([^ ]*\) want=.*/\1/' <<<"$l")" == "${l##* want=}" ]; then
		pass "$how: $1 (${l#* })"
	else
		fail "$how: $1" "'$l'"
	fi
}
for how in nvtaskset plain; do
if [ "$how" == nvtaskset ]; then
	out=$(NVTASKSET_SMCTRL_DEBUG=1 T "$NVT" --no-mps -c all "$G/smctrl" all 2>&1)
else
	out=$(NVTASKSET_SMCTRL_DEBUG=1 T "$G/smctrl" all 2>&1)
fi
echo "$out" >"$LOG/smctrl-all-$how.txt"
echo "$out"
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
	pass "$how: two streams ran at the same time (overlap, a, b ms: $ov)"
else
	fail "$how: two-streams-overlap" "overlap, a, b ms: '$ov'"
fi
grep -qx 'tpc_info_cuda rc=0 tpcs=66' <<<"$out" && pass "$how: get_tpc_info_cuda: 66" || fail "$how: tpc_info" "$(grep tpc_info_cuda <<<"$out")"
grep -q '^gpc_info_ext rc=0 gpcs=12 ' <<<"$out" && pass "$how: get_gpc_info_ext: 12 GPCs" || fail "$how: gpc_info_ext" "$(grep gpc_info_ext <<<"$out")"
grep -qx 'gpc_info rc=34' <<<"$out" && pass "$how: get_gpc_info: ERANGE (TPCs 64-65)" || fail "$how: gpc_info" "$(grep '^gpc_info rc' <<<"$out")"
grep -qx 'tpc_info_cuda_bad_device rc=22' <<<"$out" && pass "$how: bad device: EINVAL" || fail "$how: bad_device" "$(grep bad_device <<<"$out")"
grep -q 'enables no TPC of this task' <<<"$out" && pass "$how: warned of a mask enabling no TPC" || fail "$how: warn-empty" "no warning"
cluster_want cluster-fits
cluster_want cluster-widened
grep -q 'such launches run on the whole GPCs the mask touches' <<<"$out" && pass "$how: warned once of a widened cluster launch" ||
	fail "$how: warn-cluster" "no warning"
! grep -q 'calibrat' <<<"$out" && pass "$how: the map came from the cache" || fail "$how: cache" "it calibrated"
grep -q 'smctrl: .* launches' <<<"$out" && echo "pairing: $(grep 'smctrl: ' <<<"$out")"
done

# ---- Started plainly on a GPU with no calibration in the cache: calibrated once ------
rm -rf "$G/fresh-cache"
t0=$(date +%s.%N)
out=$(NVTASKSET_CACHE_DIR=$G/fresh-cache T "$G/smctrl" inside 16-19 2>&1)
t1=$(date +%s.%N)
echo "$out" | tee "$LOG/smctrl-calibrate-once.txt"
secs=$(python3 -c "print(f'{$t1 - $t0:.2f}')")
if grep -qx 'inside sms=32-39' <<<"$out" && grep -q 'calibrating GPU' <<<"$out" && ls "$G"/fresh-cache/GPU-*.topo >/dev/null 2>&1; then
	pass "plain start without a map: calibrated once and saved, then masked (the whole run: $secs s)"
else
	fail calibrate-once "$out"
fi
t0=$(date +%s.%N)
out=$(NVTASKSET_CACHE_DIR=$G/fresh-cache T "$G/smctrl" inside 16-19 2>&1)
t1=$(date +%s.%N)
echo "second run: $(python3 -c "print(f'{$t1 - $t0:.2f}')") s" | tee -a "$LOG/smctrl-calibrate-once.txt"
[ "$out" == "inside sms=32-39" ] && pass "and the next start read it" || fail calibrate-once-2 "$out"

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

# ---- nvtaskset installed (a prefix of its own), as libsmctrl's users meet it --------------
P=$G/prefix
rm -rf "$P"
if T make -C "$ROOT" -s -j"$(nproc)" B="$G/ibuild" PREFIX="$P" install >"$LOG/smctrl-install.txt" 2>&1; then
	pass "make install PREFIX=$P"
else
	fail install "$(tail -5 "$LOG/smctrl-install.txt")"
fi
if command -v pkg-config >/dev/null; then
	CFL=$(PKG_CONFIG_PATH=$P/lib/pkgconfig pkg-config --cflags libsmctrl)
	LFL=$(PKG_CONFIG_PATH=$P/lib/pkgconfig pkg-config --libs libsmctrl)
else # (no pkg-config here: what libsmctrl.pc says)
	CFL="-I$P/include" LFL="-L$P/lib -lsmctrl"
fi
echo "libsmctrl's flags: $CFL $LFL"

# ---- libsmctrl's own tests, unchanged, against the installed header and library -------------
# Run plainly and under nvtaskset -c all. On a GPU of more than 64 TPCs (an
# H100 has 66) their global and next-mask cases ask for TPC 64 through the
# 64-bit libsmctrl_set_global_mask/libsmctrl_set_next_mask, which cannot name
# it: C truncates the mask to one that enables no TPC, and the kernel runs on
# every SM (libsmctrl itself would hang there). Those three are expected to
# fail at TPC 64 only, which copies stopping below 64 show (sed, here).
D=$SRC
[ -n "$SRC" ] && [ -d "$SRC/tests" ] && D=$SRC/tests
if [ -z "$SRC" ] || ! ls "$D"/libsmctrl_test_*.c >/dev/null 2>&1; then
	echo "SKIP smctrl: libsmctrl's own tests (give LIBSMCTRL_SRC=DIR, a libsmctrl checkout)"
else
	W=$G/libsmctrl-tests
	rm -rf "$W" && mkdir -p "$W"
	cp "$D"/*.c "$W"/ && cp "$D"/*.cu "$D"/*.h "$W"/ 2>/dev/null
	[ -f "$SRC/testbench.h" ] && cp "$SRC/testbench.h" "$W"/
	rm -f "$W/libsmctrl.h" # theirs: the installed one is under test
	NV=(T "$NVCC" -ccbin g++ -arch=sm_90)
	build() { # build NAME OBJ: one of their mask tests, linked to the installed library
		# shellcheck disable=SC2086 # pkg-config's flags
		(cd "$W" && "${NV[@]}" $CFL -o "$1" "libsmctrl_test_${1#test_}.c" "$2" $LFL -lcuda -Xlinker -rpath="$P/lib")
	}
	judge() { # judge NAME WANT: runs $W/NAME plainly and under nvtaskset; WANT: pass, or tpc64
		local how r rc
		for how in plain nvtaskset; do
			if [ "$how" == plain ]; then r=$(T "$W/$1" 2>&1) && rc=0 || rc=$?
			else r=$(T "$NVT" --no-mps -c all "$W/$1" 2>&1) && rc=0 || rc=$?; fi
			echo "== $1, $how: exit $rc" >>"$LOG/libsmctrl-tests.txt"
			echo "$r" >>"$LOG/libsmctrl-tests.txt"
			if [ "$2" == pass ] && [ "$rc" == 0 ]; then pass "libsmctrl's $1, $how: passed"
			elif [ "$2" == tpc64 ] && [ "$rc" != 0 ] && grep -q "found to run on [0-9]* SMs" <<<"$r"; then
				pass "libsmctrl's $1, $how: failed at TPC 64 as the 64-bit API must ($(grep -o 'found to run on [0-9]* SMs' <<<"$r" | head -1))"
			else fail "libsmctrl's $1, $how" "exit $rc: $(tail -3 <<<"$r")"; fi
		done
	}
	: >"$LOG/libsmctrl-tests.txt"
	if [ -f "$W/libsmctrl_test_mask_shared.cu" ]; then
		# shellcheck disable=SC2086
		(cd "$W" && "${NV[@]}" $CFL -c libsmctrl_test_mask_shared.cu -o shared.o) || fail libsmctrl-build mask_shared
		sed 's/enabled_tpc < 128/enabled_tpc < 64/' "$W/libsmctrl_test_mask_shared.cu" >"$W/shared_lt64.cu"
		# shellcheck disable=SC2086
		(cd "$W" && "${NV[@]}" $CFL -I"$W" -c shared_lt64.cu -o shared_lt64.o) || fail libsmctrl-build "mask_shared below 64"
		for t in stream_mask stream_mask_override global_mask next_mask next_mask_override; do
			[ -f "$W/libsmctrl_test_$t.c" ] || continue
			build "test_$t" shared.o >/dev/null 2>&1 || { fail libsmctrl-build "$t"; continue; }
			case $t in stream_mask*) judge "test_$t" pass ;; *) judge "test_$t" tpc64 ;; esac
			cp "$W/libsmctrl_test_$t.c" "$W/libsmctrl_test_${t}_lt64.c"
			build "test_${t}_lt64" shared_lt64.o >/dev/null 2>&1 && judge "test_${t}_lt64" pass
		done
	fi
	if [ -f "$W/libsmctrl_test_gpc_info.c" ]; then
		# shellcheck disable=SC2086
		(cd "$W" && T gcc $CFL -I/usr/local/cuda/include -o test_gpc_info libsmctrl_test_gpc_info.c $LFL \
			-L/usr/local/cuda/lib64/stubs -lcuda -Wl,-rpath="$P/lib" -lm) >/dev/null 2>&1 && judge test_gpc_info pass ||
			fail libsmctrl-build gpc_info
		grep -A20 "== test_gpc_info, plain" "$LOG/libsmctrl-tests.txt" | head -20
	fi
fi

# ---- PyTorch's GEMMs, masks through ctypes, started plainly: without MPS and under it -------
for how in plain mps; do
	if [ "$how" == mps ]; then
		"$NVT" --mps start >"$LOG/smctrl-torch-mps.txt" 2>&1 || { fail torch-mps "cannot start MPS"; continue; }
		pipe=$("$NVT" --mps status --json | python3 -c 'import json,sys; print(json.load(sys.stdin)["pipe_directory"])')
		out=$(CUDA_MPS_PIPE_DIRECTORY=$pipe PYTHONUNBUFFERED=1 LIMIT=180 T python3 "$ROOT/tests/gpu/smctrl_torch.py" "$P/lib/libsmctrl.so" 2>&1)
		"$NVT" --mps stop >>"$LOG/smctrl-torch-mps.txt" 2>&1
	else
		out=$(PYTHONUNBUFFERED=1 LIMIT=180 T python3 "$ROOT/tests/gpu/smctrl_torch.py" "$P/lib/libsmctrl.so" 2>&1)
	fi
	echo "$out" | tee "$LOG/smctrl-torch-$how.txt" | grep -v '^PASS\|^FAIL'
	while read -r l; do
		case $l in PASS*) pass "$how: ${l#PASS }" ;; FAIL*) fail "$how: ${l#FAIL }" "" ;; esac
	done < <(grep '^PASS\|^FAIL' <<<"$out")
	grep -q '^PASS torch-stream-8-other' <<<"$out" || fail "torch $how" "did not finish: $(tail -3 <<<"$out")"
done

echo "smctrl: $PASS passed, $FAIL failed"
[ "$FAIL" == 0 ]
