#!/usr/bin/env bash
# GPU memory limits on a GPU (docs/usage.md, "GPU memory"): PyTorch allocating
# in a loop stops at --mem within 2 MiB with its default allocator, with
# expandable_segments:True (cuMemCreate) and with cudaMallocAsync (pools);
# torch.cuda.mem_get_info and the device's total_memory say the limit; -p --mem
# raises a running program's limit and it allocates up to the new one; cudart's
# own cudaMalloc (through cuGetProcAddress) stops at it; a neighbour's memory is
# untouched; the cost of counting on many small cudaMalloc/cudaFree
# (PYTORCH_NO_CUDA_MEMORY_CACHING=1) against no limit, side by side in
# interleaved rounds. Also says whether the driver hands back a result word the
# shim rewrote (arrays). Needs an NVIDIA GPU, python3 with PyTorch. Called by
# check-gpu.sh (SKIP_MEM=1 skips it); prints PASS/FAIL lines and a "mem:" summary.
#
# Usage: tests/gpu/mem.sh LOGDIR
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
export CUDA_MPS_PIPE_DIRECTORY=$W/mps CUDA_MPS_LOG_DIRECTORY=$W/mpslog
field() { sed -n "s/.*\\b$1=\\([0-9.-]*\\).*/\\1/p" <<<"$2" | head -1; }

# fill NAME ENV...: PyTorch (with ENV) allocates 64 MiB at a time under --mem 4G: stops within
# 2 MiB of the limit beyond the allocator's last segment (PyTorch asks for 20 MiB segments for
# 2 MiB tensors: up to 20 MiB can be left that no segment fits), and is told the limit.
fill() {
	local name=$1 out got total
	shift
	out=$(T env "$@" "$NVT" --no-mps --mem 4G -c 0-65 "${PY[@]}" fill 2 2>&1 | tee "$LOG/mem-fill-$name.txt" | tail -1)
	got=$(field got "$out")
	total=$(field total "$out")
	[ "$total" == "$LIM" ] && pass "$name: mem_get_info total is the limit" ||
		fail "$name" "mem_get_info total $total, not $LIM ($out)"
	if [ -n "$got" ] && [ "$got" -le "$LIM" ] && [ $((LIM - got)) -le $((22 * MIB)) ]; then
		pass "$name: stopped at $got bytes of $LIM ($(((LIM - got) / MIB)) MiB short)"
	else
		fail "$name" "got '$got' bytes of $LIM ($out)"
	fi
}
fill default
fill expandable PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True
fill async PYTORCH_CUDA_ALLOC_CONF=backend:cudaMallocAsync

# -p --mem on a running program: filled to 2G, raised to 4G, filled again up to 4G.
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

# The cost of counting: 20000 cudaMalloc/cudaFree of 64 KiB, without and with a limit, 5 interleaved rounds.
for r in 1 2 3 4 5; do
	for how in none limit; do
		args=(--no-mps -c 0-65)
		[ "$how" == limit ] && args=(--no-mps --mem 40G -c 0-65)
		out=$(T env PYTORCH_NO_CUDA_MEMORY_CACHING=1 "$NVT" "${args[@]}" "${PY[@]}" churn 20000 64 2>&1 | tail -1)
		echo "round=$r $how $(field seconds "$out")" >>"$LOG/mem-churn.txt"
	done
done
python3 - "$LOG/mem-churn.txt" <<'PY' | tee -a "$LOG/mem-churn.txt"
import statistics, sys
t = {"none": [], "limit": []}
for line in open(sys.argv[1]):
    w = line.split()
    if len(w) == 3 and w[1] in t and w[2]:
        t[w[1]].append(float(w[2]))
if t["none"] and t["limit"]:
    n, l = statistics.median(t["none"]), statistics.median(t["limit"])
    print(f"mem: churn median none={n:.4f}s limit={l:.4f}s ratio={l / n:.4f} "
          f"(spread none {min(t['none']):.4f}-{max(t['none']):.4f}, limit {min(t['limit']):.4f}-{max(t['limit']):.4f})")
PY
ratio=$(sed -n 's/.*ratio=\([0-9.]*\).*/\1/p' "$LOG/mem-churn.txt" | tail -1)
python3 -c "import sys; sys.exit(0 if float('${ratio:-9}') <= 1.01 else 1)" &&
	pass "counting costs at most 1 % (ratio $ratio)" || fail "cost" "ratio '${ratio:-none}' (target <= 1.01)"

rm -rf "$W"
echo "mem: $PASS passed, $FAIL failed"
[ "$FAIL" == 0 ]
