#!/usr/bin/env bash
# GPU memory limits on a GPU (docs/usage.md, "GPU memory"): PyTorch allocating
# 1 MiB tensors in a loop stops at --mem within 2 MiB with its default allocator,
# with expandable_segments:True (cuMemCreate) and with cudaMallocAsync (pools),
# and 2 MiB tensors within the caching allocator's 20 MiB segment (22 MiB);
# torch.cuda.mem_get_info and the device's total_memory say the limit; -p --mem
# raises a running program's limit and it allocates up to the new one; cudart's
# own cudaMalloc (through cuGetProcAddress) stops at it; a neighbour's memory is
# untouched; the cost of counting on many small cudaMalloc/cudaFree
# (PYTORCH_NO_CUDA_MEMORY_CACHING=1), three arms in fresh processes in
# interleaved rounds (no nvtaskset, nvtaskset without --mem, with --mem); a
# limit under MPS (a daemon of the script's own, on its temp directory, stopped
# on every exit). Needs an NVIDIA GPU with MPS, python3 with PyTorch. Called by
# check-gpu.sh (SKIP_MEM=1 skips it); prints PASS/FAIL lines and a "mem:" summary.
#
# Usage: [ROUNDS=9] tests/gpu/mem.sh LOGDIR
set -u
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
NVT=$ROOT/build/bin/nvtaskset
LOG=${1:-$ROOT/build/gpu}
W=$(mktemp -d /tmp/nvt-mem.XXXXXX)
mkdir -p "$LOG"
PASS=0 FAIL=0
pass() { PASS=$((PASS + 1)); echo "PASS mem: $1"; }
fail() { FAIL=$((FAIL + 1)); echo "FAIL mem: $1: $2"; }
T() { timeout "${LIMIT:-120}" "$@"; }
# A program started in the background runs under timeout itself, not T: a function run with &
# is a subshell of its own, whose child is timeout. program_of PID: timeout PID's child, the
# program (nvtaskset execs it), once it has started.
program_of() { pgrep -P "$1" | head -1; }
PY=(python3 "$ROOT/tests/gpu/mem_torch.py")
MIB=1048576
LIM=$((4096 * MIB))
# The MPS check's daemon lives in W (nvtaskset uses these directories as they are, and starts
# its daemon there); every other step runs with --no-mps.
export CUDA_MPS_PIPE_DIRECTORY=$W/mps CUDA_MPS_LOG_DIRECTORY=$W/mpslog
# mps_down: stops the daemon the MPS check started, if one runs there: nvtaskset's own stop,
# then the control's quit if that left one answering. Runs on every exit, a failure's too.
MPS_UP=
mps_down() {
	[ -n "$MPS_UP" ] || return 0
	MPS_UP=
	timeout 60 "$NVT" --mps stop >>"$LOG/mem-mps.txt" 2>&1
	if echo get_server_list | timeout 10 nvidia-cuda-mps-control >/dev/null 2>&1; then
		echo "mem: the daemon still answered after nvtaskset --mps stop; quit" >>"$LOG/mem-mps.txt"
		echo quit | timeout 30 nvidia-cuda-mps-control >>"$LOG/mem-mps.txt" 2>&1
	fi
}
trap 'mps_down; rm -rf "$W"' EXIT
# A stamp per step in mem-times.txt: how long each took.
stamp() { echo "$(date -u +%H:%M:%S) $1" >>"$LOG/mem-times.txt"; }
: >"$LOG/mem-times.txt"
{
	nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader
	python3 -c 'import torch; print("torch", torch.__version__, "cuda", torch.version.cuda)'
} >"$LOG/mem-env.txt" 2>&1
field() { sed -n "s/.*\\b$1=\\([0-9.-]*\\).*/\\1/p" <<<"$2" | head -1; }

# fill NAME STEP_MIB SLACK_MIB ENV...: PyTorch (with ENV) allocates STEP_MIB tensors under
# --mem 4G until out of memory, and must stop at most SLACK_MIB short of the limit and be told
# it. 1 MiB tensors come from the caching allocator's small pool, 2 MiB segments: within 2 MiB.
# 2 MiB tensors from its large pool, which asks for 20 MiB segments: up to 20 MiB can be left
# that no segment fits, plus 2 MiB (22 MiB; 4 GiB holds 204 such segments, 16 MiB short).
fill() {
	local name=$1 step=$2 slack=$3 out got total
	shift 3
	stamp "fill $name"
	out=$(T env "$@" "$NVT" --no-mps --mem 4G -c 0-65 "${PY[@]}" fill "$step" 2>&1 | tee "$LOG/mem-fill-$name.txt" | tail -1)
	got=$(field got "$out")
	total=$(field total "$out")
	[ "$total" == "$LIM" ] && pass "$name: mem_get_info total is the limit" ||
		fail "$name" "mem_get_info total $total, not $LIM ($out)"
	if [ -n "$got" ] && [ "$got" -le "$LIM" ] && [ $((LIM - got)) -le $((slack * MIB)) ]; then
		pass "$name: ${step} MiB tensors stopped at $got bytes of $LIM ($(((LIM - got) / MIB)) MiB short, at most $slack)"
	else
		fail "$name" "${step} MiB tensors: got '$got' bytes of $LIM, more than $slack MiB short or over ($out)"
	fi
}
fill default 2 22
fill expandable 2 22 PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True
fill async 2 22 PYTORCH_CUDA_ALLOC_CONF=backend:cudaMallocAsync
fill default-1m 1 2
fill expandable-1m 1 2 PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True
fill async-1m 1 2 PYTORCH_CUDA_ALLOC_CONF=backend:cudaMallocAsync

# cudaMallocAsync's allocations on a side stream and inside a CUDA graph's capture (the shim asks
# no capturing stream its device): the capture and its replays run, and the fill stops at 4G.
stamp "capture"
out=$(T env PYTORCH_CUDA_ALLOC_CONF=backend:cudaMallocAsync "$NVT" --no-mps --mem 4G -c 0-65 "${PY[@]}" \
	capture 2>&1 | tee "$LOG/mem-capture.txt" | grep '^captured=' | tail -1)
got=$(field got "$out")
if [ "$(field captured "$out")" == 2097152 ] && [ "$(field side "$out")" == 67108864 ] &&
	[ -n "$got" ] && [ "$got" -le "$LIM" ] && [ $((LIM - got)) -le $((512 * MIB)) ]; then
	pass "async: a graph captured with an allocation inside ran under --mem 4G; the fill then stopped at $got bytes"
else
	fail "async capture" "${out:-$(tail -1 "$LOG/mem-capture.txt")}"
fi

# -p --mem on a running program: filled to 2G, raised to 4G, filled again up to 4G.
stamp "-p --mem"
rm -f "$W/go" "$W/go.ready"
# (appended to, by the program and by -p alike: one writing at its own offset would overwrite
# the other's lines)
: >"$LOG/mem-pid.txt"
timeout "${LIMIT:-120}" "$NVT" --no-mps --mem 2G -c 0-65 "${PY[@]}" refill 2 "$W/go" \
	>>"$LOG/mem-pid.txt" 2>&1 &
RP=$!
for _ in $(seq 1200); do [ -s "$W/go.ready" ] && break; sleep 0.1; done
PROG=$(program_of "$RP")
echo "mem: -p --mem 4G on pid ${PROG:-none} (timeout's $RP)" >>"$LOG/mem-pid.txt"
[ -n "$PROG" ] && T "$NVT" -p --mem 4G "$PROG" >>"$LOG/mem-pid.txt" 2>&1
touch "$W/go"
wait "$RP"
out=$(grep '^first=' "$LOG/mem-pid.txt")
first=$(field first "$out") second=$(field second "$out")
if [ -n "$first" ] && [ -n "$second" ] && [ "$(field total "$out")" == "$LIM" ] &&
	[ "$first" -le $((LIM / 2)) ] && [ $((LIM / 2 - first)) -le $((22 * MIB)) ] &&
	[ $((first + second)) -le "$LIM" ] && [ $((LIM - first - second)) -le $((22 * MIB)) ]; then
	pass "-p --mem 4G raised a running program's 2G: it filled $first then $((first + second)) bytes"
else
	fail "-p --mem" "$(cat "$LOG/mem-pid.txt")"
fi

stamp "info, raw"
out=$(T "$NVT" --no-mps --mem 25% -c 0-65 "${PY[@]}" info 2>&1 | tail -1)
echo "mem: 25% told $out" | tee "$LOG/mem-info.txt"
[ "$(field total "$out")" == "$(field props "$out")" ] && pass "total_memory is mem_get_info's total" ||
	fail "total_memory" "$out"

out=$(T "$NVT" --no-mps --mem 1G -c 0-65 "${PY[@]}" raw 2>&1 | tail -1)
echo "mem: cudart raw $out" | tee "$LOG/mem-raw.txt"
got=$(field got "$out")
[ -n "$got" ] && [ "$got" -le $((1024 * MIB)) ] && [ "$(field rc "$out")" == 2 ] &&
	pass "cudaMalloc stops at the limit with cudaErrorMemoryAllocation ($got bytes)" || fail "cudart raw" "$out"

# A neighbour: holds 8 GiB without a limit while a limited task fills its 4 GiB.
stamp "neighbour"
rm -f "$W/held"
: >"$LOG/mem-neighbour.txt"
timeout "${LIMIT:-120}" "$NVT" --no-mps -c 0-31 "${PY[@]}" hold 8192 "$W/held" \
	>>"$LOG/mem-neighbour.txt" 2>&1 &
NB=$!
for _ in $(seq 600); do [ -s "$W/held" ] && break; sleep 0.1; done
NBP=$(program_of "$NB")
echo "mem: the neighbour is pid ${NBP:-none} (timeout's $NB)" >>"$LOG/mem-neighbour.txt"
nvidia-smi --query-compute-apps=pid,used_memory --format=csv,noheader,nounits >>"$LOG/mem-neighbour.txt" 2>&1
before=$(nvidia-smi --query-compute-apps=pid,used_memory --format=csv,noheader,nounits | awk -v p="$NBP" -F', ' '$1 == p {print $2}')
T "$NVT" --no-mps --mem 4G -c 32-65 "${PY[@]}" fill 64 >>"$LOG/mem-neighbour.txt" 2>&1
after=$(nvidia-smi --query-compute-apps=pid,used_memory --format=csv,noheader,nounits | awk -v p="$NBP" -F', ' '$1 == p {print $2}')
# The program itself: timeout passes a TERM on, but ending the program ends it now.
[ -n "$NBP" ] && kill "$NBP" 2>/dev/null
wait "$NB" 2>/dev/null
[ -n "$before" ] && [ "$before" == "$after" ] && pass "a neighbour's memory untouched ($before MiB)" ||
	fail "neighbour" "before '$before' after '$after' MiB"

# The cost of counting: PyTorch with its cache off (every tensor a cudaMalloc and a cudaFree),
# 9 timed loops of 4000 allocations of 64 KiB after a warm-up, in each of three arms: plain (no
# nvtaskset), none (nvtaskset, no --mem), limit (--mem 40G). Fresh processes, ROUNDS rounds,
# the arms' order turned by one each round. Each process reports its loops' median (and the
# loops); memchurn.py judges them.
stamp "churn"
: >"$LOG/mem-churn.txt"
ARMS=(plain none limit)
for r in $(seq "${ROUNDS:-9}"); do
	for i in 0 1 2; do
		how=${ARMS[$(((r + i) % 3))]}
		case $how in
		plain) cmd=("${PY[@]}") ;;
		none) cmd=("$NVT" --no-mps -c 0-65 "${PY[@]}") ;;
		limit) cmd=("$NVT" --no-mps --mem 40G -c 0-65 "${PY[@]}") ;;
		esac
		out=$(T env PYTORCH_NO_CUDA_MEMORY_CACHING=1 "${cmd[@]}" churn 4000 64 9 2>&1 | tail -1)
		echo "round=$r $how $(field seconds "$out") $(sed -n 's/.*loops=\([0-9.,]*\).*/\1/p' <<<"$out")" >>"$LOG/mem-churn.txt"
	done
done
# (tests/gpu/memchurn.py: each arm's first decile of all its loops, limit against none, within
# 1 % and the run's noise floor, none against plain; the paired ratios are printed too)
python3 "$ROOT/tests/gpu/memchurn.py" "$LOG/mem-churn.txt" >"$LOG/mem-churn-verdict.txt"
verdict=$?
tee -a "$LOG/mem-churn.txt" <"$LOG/mem-churn-verdict.txt"
line=$(tail -1 "$LOG/mem-churn-verdict.txt")
[ "$verdict" == 0 ] && pass "counting costs at most 1 % beyond the run's noise floor (${line#mem: churn })" ||
	fail "cost" "${line#mem: churn }"

# A limit under MPS: nvtaskset (without --no-mps) starts the MPS control daemon on W's pipe
# directory and runs the fill as its client; the fill must stop within 2 MiB of --mem 4G and be
# told it, and the daemon must have served it (its control.log says NEW CLIENT). mps_down stops the daemon here and on any exit.
stamp "mps"
: >"$LOG/mem-mps.txt"
MPS_UP=1
out=$(T "$NVT" --mem 4G -c 0-65 "${PY[@]}" fill 1 2>&1 | tee -a "$LOG/mem-mps.txt" | tail -1)
status=$(timeout 60 "$NVT" --mps status 2>&1)
echo "$status" >>"$LOG/mem-mps.txt"
cat "$W/mpslog/control.log" >"$LOG/mem-mps-control.log" 2>&1
cat "$W/mpslog/server.log" >"$LOG/mem-mps-server.log" 2>&1
mps_down
echo "mem: after the stop: $(echo get_server_list | timeout 10 nvidia-cuda-mps-control 2>&1 || echo no daemon answers)" >>"$LOG/mem-mps.txt"
got=$(field got "$out")
total=$(field total "$out")
if grep -q 'NEW CLIENT' "$LOG/mem-mps-control.log"; then
	pass "MPS: the fill ran as a client of the daemon started on $W/mps ($(grep -c 'NEW CLIENT' "$LOG/mem-mps-control.log") NEW CLIENT lines in its control.log)"
else
	fail "MPS" "the daemon's control.log names no client ($status)"
fi
[ "$total" == "$LIM" ] && pass "MPS: mem_get_info total is the limit" ||
	fail "MPS" "mem_get_info total '$total', not $LIM ($out)"
if [ -n "$got" ] && [ "$got" -le "$LIM" ] && [ $((LIM - got)) -le $((2 * MIB)) ]; then
	pass "MPS: 1 MiB tensors stopped at $got bytes of $LIM ($(((LIM - got) / MIB)) MiB short, at most 2)"
else
	fail "MPS" "1 MiB tensors: got '$got' bytes of $LIM ($out)"
fi

stamp "end"
echo "mem: $PASS passed, $FAIL failed"
[ "$FAIL" == 0 ]
