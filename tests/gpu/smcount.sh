#!/usr/bin/env bash
# The SM count a program under nvtaskset is told, on a GPU (docs/usage.md, "The
# SM count a program sees"): every way a CUDA program asks (the runtime's
# attribute and device properties, the driver call it links, the entry point
# cuGetProcAddress hands out, PyTorch), TPC and GPC lists, the off switch, the
# drop-in wrapper alone, after a live -p (kept, or followed), under MPS with and
# without --sm-limit; and cooperative grids sized by the count: on the partition
# when they fit, on the whole GPU (never hanging) when they do not. Needs a Hopper
# GPU calibrated by nvtaskset, nvcc, python3 with PyTorch. Called by
# check-gpu.sh (SKIP_SMCOUNT=1 skips it); prints PASS/FAIL lines.
#
# Usage: tests/gpu/smcount.sh LOGDIR
set -u
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
NVT=$ROOT/build/bin/nvtaskset
WRAPDIR=$ROOT/build/lib/nvtaskset/wrapper
LOG=${1:-$ROOT/build/gpu}
G=$ROOT/build/gpu
W=$(mktemp -d /tmp/nvt-smcount.XXXXXX)
mkdir -p "$G" "$LOG"
PASS=0 FAIL=0
pass() { PASS=$((PASS + 1)); echo "PASS smcount: $1"; }
fail() { FAIL=$((FAIL + 1)); echo "FAIL smcount: $1: $2"; }
T() { timeout "${LIMIT:-60}" "$@"; }
NVCC=${NVCC:-$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)}
P=$G/smcount
export CUDA_MPS_PIPE_DIRECTORY=$W/mps CUDA_MPS_LOG_DIRECTORY=$W/mpslog

T "$NVCC" -O2 -arch=sm_90 -o "$P" "$ROOT/tests/gpu/smcount.cu" -lcuda || { echo "nvcc failed"; exit 1; }
TOTAL=$(T "$NVT" --topology --json --gpu 0 | python3 -c 'import json,sys; print(json.load(sys.stdin)["gpus"][0]["sms"])')
GPC1=$(T "$NVT" --topology --json --gpu 0 | python3 -c '
import json, sys
t = json.load(sys.stdin)["gpus"][0]["gpcs"][1]["tpcs"]
print(2 * sum(int(b or a) - int(a) + 1 for a, _, b in (p.partition("-") for p in t.split(","))))')
echo "smcount: the GPU has $TOTAL SMs, GPC 1 $GPC1"

# counts NAME WANT OUT: every way of asking said WANT.
counts() {
	if grep -qx "rt=$2 props=$2 drv=$2 proc=$2" <<<"$3"; then pass "$1: $2 SMs every way"; else
		fail "$1" "expected $2 every way, got '$(grep '^rt=' <<<"$3" | tr '\n' ' ')'"; fi
}

# ---- Outside MPS ------------------------------------------------------------------
out=$(T "$NVT" --no-mps -c 0-3 "$P" 2>&1); echo "$out" >"$LOG/smcount-c0-3.txt"
counts "-c 0-3" 8 "$out"
# Told by the driver's callback (the runtime) but not by the exports (linked), or the other way:
grep -q '^rt=132 .* drv=8 ' <<<"$out" &&
	echo "smcount: the driver did not report cuDeviceGetAttribute to the callback (the preloaded shim's runtime path)"
out=$(T "$NVT" --no-mps -c 0-26 "$P" 2>&1); counts "-c 0-26" 54 "$out"
out=$(T "$NVT" --no-mps -g 1 "$P" 2>&1); counts "-g 1" "$GPC1" "$out"
out=$(T "$NVT" --no-mps -c all "$P" 2>&1); counts "-c all" "$TOTAL" "$out"
out=$(NVTASKSET_SM_COUNT=gpu T "$NVT" --no-mps -c 0-3 "$P" 2>&1); counts "NVTASKSET_SM_COUNT=gpu -c 0-3" "$TOTAL" "$out"
# The drop-in wrapper alone, given a partition in the environment.
rec=$(T "$NVT" --no-mps -c 0-3 /usr/bin/env | sed -n 's/^NVTASKSET_PARTITION=//p')
out=$(CUDA_MPS_PIPE_DIRECTORY=/dev/null LD_LIBRARY_PATH=$WRAPDIR NVTASKSET_PARTITION=$rec T "$P" 2>&1)
counts "wrapper alone, 0-3" 8 "$out"
# PyTorch reads the runtime's device properties.
torch_sms() { T "$@" python3 -c 'import torch; print("torch=%d" % torch.cuda.get_device_properties(0).multi_processor_count)' 2>&1; }
out=$(torch_sms "$NVT" --no-mps -c 0-26)
grep -qx 'torch=54' <<<"$out" && pass "PyTorch under -c 0-26: 54" || fail "PyTorch -c 0-26" "$out"

# After -p: kept by default, followed with NVTASKSET_SM_COUNT=follow.
# The CUDA runtime reads the device properties once (cudaGetDeviceProperties
# answers its first read after), so "follow" reaches every way but props: WANT2P.
after() { # after NAME ENV FROM TO WANT WANT2 [WANT2P]: the counts before and after a -p
	local name=$1 env=$2 from=$3 to=$4 props2=${7:-$6} pid dog
	rm -f "$W/go"
	# No timeout in front: -p needs the program's own PID (env and nvtaskset exec it); a
	# watchdog ends it instead.
	env $env "$NVT" --no-mps -c "$from" "$P" wait "$W/go" >"$W/after.out" 2>&1 &
	pid=$!
	(sleep 90; kill -KILL "$pid" 2>/dev/null) &
	dog=$!
	for _ in $(seq 500); do grep -q '^rt=' "$W/after.out" && break; sleep 0.02; done
	T "$NVT" -p -c "$to" "$pid" >/dev/null
	touch "$W/go"
	wait "$pid"
	kill "$dog" 2>/dev/null
	out=$(cat "$W/after.out")
	if [ "$(grep '^rt=' <<<"$out" | tr '\n' ' ')" == "rt=$5 props=$5 drv=$5 proc=$5 rt=$6 props=$props2 drv=$6 proc=$6 " ]; then
		pass "$name: $5 then $6 (props $props2)"
	else
		fail "$name" "expected $5 then $6 (props $props2): $out"
	fi
}
after "-c 0-3, -p -c 0-26" "" 0-3 0-26 8 8
after "-c 0-26, -p -c 0-3" "" 0-26 0-3 54 54
after "follow: -c 0-3, -p -c 0-26" NVTASKSET_SM_COUNT=follow 0-3 0-26 8 54 8

# ---- Cooperative grids ------------------------------------------------------------------
# coop NAME WANT_SMS OUT: it finished (no HANG) on the SMs WANT_SMS.
coop() {
	if grep -q "^coop grid=[0-9]* ok sms=$2\$" <<<"$3"; then pass "$1: ran on SMs $2"; else
		fail "$1" "expected to run on SMs $2: $(grep -E '^coop|HANG|error' <<<"$3" | head -3)"; fi
}
for ex in "" ex; do
	out=$(T "$NVT" --no-mps -c 0-3 "$P" coop $ex 2>&1); echo "$out" >>"$LOG/smcount-coop.txt"
	coop "cooperative $ex sized by the count, -c 0-3" 0-7 "$out"
	out=$(NVTASKSET_SM_COUNT=gpu T "$NVT" --no-mps -c 0-3 "$P" coop $ex 2>&1); echo "$out" >>"$LOG/smcount-coop.txt"
	coop "cooperative $ex sized by the GPU, -c 0-3" "0-$((TOTAL - 1))" "$out"
	grep -q 'a cooperative kernel launched' <<<"$out" && pass "cooperative $ex: warned" || fail "cooperative $ex" "no warning"
	rm -f "$W/go"
	"$NVT" --no-mps -c 0-26 "$P" coop-wait "$W/go" $ex >"$W/coop.out" 2>&1 &
	pid=$!
	(sleep 90; kill -KILL "$pid" 2>/dev/null) &
	dog=$!
	for _ in $(seq 500); do grep -q '^sized' "$W/coop.out" && break; sleep 0.02; done
	T "$NVT" -p -c 0-3 "$pid" >/dev/null
	touch "$W/go"
	wait "$pid"
	kill "$dog" 2>/dev/null
	coop "cooperative $ex sized on 27 TPCs, launched on 4" "0-$((TOTAL - 1))" "$(cat "$W/coop.out")"
done

# ---- Under MPS ------------------------------------------------------------------------
if T "$NVT" --mps start >/dev/null 2>&1; then
	out=$(T "$NVT" -c 0-26 "$P" 2>&1); counts "MPS, -c 0-26" 54 "$out"
	out=$(T "$NVT" --sm-limit -c 0-26 "$P" 2>&1)
	n=$(sed -n 's/^rt=\([0-9]*\) .*/\1/p' <<<"$out")
	[ -n "$n" ] && [ "$n" -le 54 ] && [ "$n" -gt 0 ] && pass "MPS, -c 0-26 --sm-limit: $n (at most 54)" ||
		fail "MPS --sm-limit" "$out"
	out=$(torch_sms "$NVT" -c 0-26)
	grep -qx 'torch=54' <<<"$out" && pass "PyTorch in MPS under -c 0-26: 54" || fail "PyTorch MPS -c 0-26" "$out"
	out=$(T "$NVT" -c 0-3 "$P" coop ex 2>&1)
	grep -q '^coop grid=[0-9]* ok' <<<"$out" && pass "MPS: cooperative in -c 0-3 finished" || fail "MPS cooperative" "$out"
	T "$NVT" --mps stop >/dev/null 2>&1
else
	fail "MPS" "could not start a daemon"
fi
rm -rf "$W"
echo "smcount: $PASS passed, $FAIL failed"
[ "$FAIL" == 0 ]
