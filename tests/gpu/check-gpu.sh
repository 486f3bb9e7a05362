#!/usr/bin/env bash
# nvtaskset's GPU tests (make check-gpu): calibration, the TPC map, and that
# real programs run on exactly the SMs of their partition. Needs an NVIDIA
# GPU of compute capability 9.0 (Hopper), nvcc, and python3 with PyTorch for
# the PyTorch step. Runs outside MPS; starts no daemon. Every step has a time
# limit. Asserts structure, not one chip's map: another H100 has another one.
#
# Usage: tests/gpu/check-gpu.sh [LOGDIR]   (default: build/gpu)
# SKIP_SMCTRL=1 skips libsmctrl's interface (tests/gpu/smctrl.sh: plainly started
# programs, PyTorch's GEMMs through ctypes; LIBSMCTRL_SRC=DIR, a libsmctrl
# checkout, also builds its own tests unchanged against the installed library
# and runs them, which is skipped, and said so, without it).
# ONLY_E2E=1 runs only the end-to-end part; SKIP_E2E=1 skips it; SKIP_GRAPHS=1
# skips the CUDA graph part (tests/gpu/graphs.sh); SKIP_SMCOUNT=1 the SM count's
# (tests/gpu/smcount.sh); SKIP_MEM=1 the GPU memory limits' (tests/gpu/mem.sh,
# tests/gpu/memdriver.sh); SKIP_CBID=1 the callback ids' check against the toolkit's CUPTI
# headers (tests/gpu/cbid.sh: a toolkit older than CUDA 13 lacks some of them).
set -u
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
NVT=$ROOT/build/bin/nvtaskset
WRAPDIR=$ROOT/build/lib/nvtaskset/wrapper
G=$ROOT/build/gpu
LOG=${1:-$G}
mkdir -p "$G" "$LOG"
PASS=0 FAIL=0

pass() { PASS=$((PASS + 1)); echo "PASS $1"; }
fail() { FAIL=$((FAIL + 1)); echo "FAIL $1: $2"; }
T() { timeout "${LIMIT:-120}" "$@"; }
# suite NAME LIMIT SCRIPT ARGS...: the suite SCRIPT (bash, under LIMIT seconds), its lines kept
# in LOG/NAME-run.txt, its PASS and FAIL lines counted; one FAIL more when it did not reach its
# summary line ("NAME: N passed, ...").
suite() {
	local name=$1 limit=$2
	shift 2
	LIMIT=$limit T bash "$@" | tee "$LOG/$name-run.txt"
	PASS=$((PASS + $(grep -c '^PASS' "$LOG/$name-run.txt")))
	FAIL=$((FAIL + $(grep -c '^FAIL' "$LOG/$name-run.txt")))
	grep -q "^$name: [0-9]* passed" "$LOG/$name-run.txt" || { FAIL=$((FAIL + 1)); echo "FAIL ${1##*/} did not finish"; }
}

echo "== $(date -u '+%Y-%m-%d %H:%M UTC') on $(nvidia-smi --query-gpu=name,driver_version,uuid --format=csv,noheader 2>/dev/null)"

# ---- The callback ids the shim follows, against the toolkit's CUPTI headers (tests/gpu/cbid.sh)
if [ -z "${ONLY_E2E:-}" ] && [ -z "${SKIP_CBID:-}" ]; then
	suite cbid 30 "$ROOT/tests/gpu/cbid.sh"
fi

# ---- Build the test programs ------------------------------------------------
NVCC=${NVCC:-$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)}
T "$NVCC" -O2 -arch=sm_90 -o "$G/smid" "$ROOT/tests/gpu/smid.cu" || { echo "nvcc failed"; exit 1; }
T "$NVCC" -O2 -arch=sm_90 -cudart shared -o "$G/smid-shared" "$ROOT/tests/gpu/smid.cu" || exit 1
T gcc -O2 -I/usr/local/cuda/include -o "$G/drvapi" "$ROOT/tests/gpu/drvapi.c" \
	-L/usr/local/cuda/lib64/stubs -lcuda || exit 1
T "$NVCC" -O2 -arch=sm_90 -o "$G/loop" "$ROOT/tests/gpu/loop.cu" || exit 1
T "$NVCC" -O2 -arch=sm_90 -o "$G/oob" "$ROOT/tests/gpu/oob.cu" || exit 1

if [ -n "${ONLY_E2E:-}" ]; then
	"$NVT" --topology >/dev/null || exit 1 # calibrates if needed
else
# ---- Calibration ---------------------------------------------------------------
times=()
for i in 1 2 3; do
	out=$(LIMIT=60 T "$NVT" --calibrate 2>&1)
	echo "$out" | tee -a "$LOG/calibrate.txt"
	times+=("$(sed -n 's/.*calibrated in \([0-9.]*\) s.*/\1/p' <<<"$out" | head -1)")
done
echo "calibration seconds: ${times[*]}"
best=$(printf '%s\n' "${times[@]}" | sort -n | head -1)
if [ -n "$best" ] && python3 -c "import sys; sys.exit(0 if float('$best') < 2.0 else 1)"; then
	pass "calibration under 2 s (runs: ${times[*]} s)"
else
	fail calibration "took ${times[*]} s"
fi
T "$NVT" --topology | tee "$LOG/topology.txt"
T "$NVT" --topology --json >"$LOG/topology.json"
cache=$(sed -n 's/.*saved in \(.*\)$/\1/p' "$LOG/calibrate.txt" | tail -1)
cp "$cache" "$LOG/cache.topo" 2>/dev/null

# Structure: a bijection from the logical TPCs to distinct bits, GPCs that
# cover every TPC once, and SMs 2t, 2t+1 per TPC.
if python3 - "$LOG/topology.json" "$LOG/cache.topo" >"$LOG/structure.txt" 2>&1 <<'PY'; then
import json, sys
g = json.load(open(sys.argv[1]))["gpus"][0]
n = g["tpcs"]
assert n * 2 == g["sms"], "TPCs are SM pairs"
line = [l for l in open(sys.argv[2]) if l.startswith("nvtaskset-topology")][0]
fields = dict(f.split("=", 1) for f in line.split()[2:])
bits = [int(b) for b in fields["map"].split(",")]
assert len(bits) == n and len(set(bits)) == n and max(bits) < 128, "map is a bijection into 128 bits"
gpc = [int(x) for x in fields["gpc"].split(",")]
assert len(gpc) == n and set(gpc) == set(range(len(g["gpcs"]))), "every GPC holds a TPC"
def expand(text):
    out = []
    for part in text.split(","):
        a, _, b = part.partition("-")
        out += range(int(a), int(b or a) + 1)
    return out
covered = sorted(t for x in g["gpcs"] for t in expand(x["tpcs"]))
assert covered == list(range(n)), "GPCs cover every TPC exactly once"
lone = [x["tpcs"] for x in g["gpcs"] if x["own_cluster_domain"]]
facts = [0,9,18,27,36,45,54,63,1,10,19,28,37,46,55,64,2,11,20,29,38,47,56,65,3,12,21,30,39,48,57,66,13,22,31,40,49,58,67,14,23,32,41,50,59,68,15,24,33,42,51,60,69,16,25,34,43,52,61,70,62,71,75,78,81,83]
assert fields["tmd"] != "none" and fields["tmd"] == g["tmd_layout"], "calibration verified a TMD layout"
print("tpcs=%d gpcs=%d lone=%s same_map_as_HARDWARE_FACTS=%s tmd=%s cc=%s" % (n, len(g["gpcs"]), lone, bits == facts, fields["tmd"], fields["cc"]))
PY
	pass "map is a bijection; GPCs cover all TPCs ($(cat "$LOG/structure.txt"))"
else
	fail structure "$(cat "$LOG/structure.txt")"
fi

# ---- Programs run on exactly their partition's SMs -------------------------------
sms_of() { # TPC list -> SM list
	python3 -c '
import sys
t = []
for p in sys.argv[1].split(","):
    a, _, b = p.partition("-"); t += range(int(a), int(b or a) + 1)
s = sorted(x for v in t for x in (2 * v, 2 * v + 1)); out = []; i = 0
while i < len(s):
    j = i
    while j + 1 < len(s) and s[j + 1] == s[j] + 1: j += 1
    out.append(str(s[i]) if i == j else "%d-%d" % (s[i], s[j])); i = j + 1
print(",".join(out))' "$1"
}
gpc_tpcs() { python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["gpus"][0]["gpcs"][int(sys.argv[2])]["tpcs"])' "$LOG/topology.json" "$1"; }
SEED=${SEED:-$RANDOM}
RAND20=$(python3 -c "import random; random.seed($SEED); print(','.join(map(str, sorted(random.sample(range(66), 20)))))")
echo "random set (seed $SEED): $RAND20"
sets=("0" "37" "$(gpc_tpcs 1)" "62-65" "$RAND20")
names=("one TPC (0)" "one TPC (37)" "one GPC (GPC 1)" "TPCs 62-65" "20 random TPCs")
for i in "${!sets[@]}"; do
	want=$(sms_of "${sets[$i]}")
	for prog in smid smid-shared drvapi; do
		out=$(LIMIT=60 T "$NVT" --no-mps -c "${sets[$i]}" "$G/$prog" 2>&1)
		echo "$prog -c ${sets[$i]}: $out" >>"$LOG/smid.txt"
		if grep -qx "sms=$want" <<<"$out"; then
			pass "$prog on ${names[$i]}: SMs $want only"
		else
			fail "$prog on ${names[$i]}" "want sms=$want, got: $out"
		fi
	done
done
out=$(LIMIT=60 LD_BIND_NOW=1 T "$NVT" --no-mps -c 5-6 "$G/smid" 2>&1)
[ "$out" == "sms=$(sms_of 5-6)" ] && pass "LD_BIND_NOW=1" || fail "LD_BIND_NOW=1" "$out"
out=$(LIMIT=60 T env LD_LIBRARY_PATH="$WRAPDIR" "$G/smid" 2>&1)
[ "$out" == "sms=0-131" ] && pass "wrapper, not partitioned: all SMs, program unchanged" ||
	fail "wrapper without nvtaskset" "$out"
out=$(LIMIT=60 T env LD_LIBRARY_PATH="$WRAPDIR" "$G/drvapi" 2>&1)
[ "$out" == "sms=0-131" ] && pass "wrapper with a driver-API program" || fail "wrapper drvapi" "$out"

# ---- Thread-block clusters inside a one-GPC partition ----------------------------
for gpc in 1 6; do
	tpcs=$(gpc_tpcs $gpc)
	out=$(LIMIT=60 T "$NVT" --no-mps -g $gpc "$G/smid" cluster 8 2>&1)
	echo "cluster 8 in GPC $gpc ($tpcs): $out" >>"$LOG/cluster.txt"
	got=$(sed -n 's/^cluster=8 sms=//p' <<<"$out")
	if [ -n "$got" ] && python3 -c '
import sys
def ex(t):
    o = []
    for p in t.split(","):
        a, _, b = p.partition("-"); o += range(int(a), int(b or a) + 1)
    return set(o)
sys.exit(0 if ex(sys.argv[1]) <= {s for t in ex(sys.argv[2]) for s in (2*t, 2*t+1)} else 1)' "$got" "$tpcs"; then
		pass "clusters of 8 run inside GPC $gpc (SMs $got)"
	else
		fail "clusters in GPC $gpc" "$out"
	fi
done

# ---- Clusters a partition cannot hold: run on its whole GPCs, never hang ----------
# (Before: cuBLAS's clusters of 4 waited forever on TPC 62 alone, 2026-11-22.)
subset() { python3 -c '
import sys
def ex(t):
    o = []
    for p in t.split(","):
        a, _, b = p.partition("-"); o += range(int(a), int(b or a) + 1)
    return set(o)
sys.exit(0 if ex(sys.argv[1]) <= ex(sys.argv[2]) else 1)' "$1" "$2"; }
out=$(LIMIT=60 T "$NVT" --no-mps -c 0-1 "$G/smid" cluster 4 2>&1)
echo "cluster 4 on TPCs 0-1: $out" >>"$LOG/cluster.txt"
got=$(sed -n 's/^cluster=4 sms=//p' <<<"$out")
if [ -n "$got" ] && subset "$got" "$(sms_of "$(gpc_tpcs 0),$(gpc_tpcs 1)")" &&
	grep -q "such kernels run on the whole GPCs its partition touches" <<<"$out"; then
	pass "clusters of 4 on TPCs 0-1 (one TPC in each of two GPCs): ran on GPCs 0-1 (SMs $got), warned"
else
	fail "clusters of 4 on TPCs 0-1" "$out"
fi
out=$(LIMIT=60 T "$NVT" --no-mps -c 62 "$G/smid" cluster 4 2>&1)
echo "cluster 4 on TPC 62: $out" >>"$LOG/cluster.txt"
if grep -q "^cluster=4 sms=" <<<"$out" && grep -q "every TPC of the GPU" <<<"$out"; then
	pass "clusters of 4 on lone TPC 62: ran (on every TPC), warned, no hang"
else
	fail "clusters of 4 on TPC 62" "$out"
fi
if python3 -c 'import torch' 2>/dev/null; then
	for n in 1 2; do
		out=$(LIMIT=120 T env SIZES_ONLY=decode SIZES_PROFILE=0 SIZES_REPS=3 "$NVT" --no-mps -n $n \
			python3 "$ROOT/tests/bench/sizes_worker.py" 2>&1)
		echo "cuBLAS bf16 64x8192x28672 on $n TPCs: $out" >>"$LOG/cluster.txt"
		grep -q '"bf16 64x8192x28672 (decode)"' <<<"$out" &&
			pass "cuBLAS bf16 64x8192x28672 (clusters of 4) on -n $n: finished" ||
			fail "cuBLAS decode GEMM on -n $n" "$(tail -3 <<<"$out")"
	done
fi

# ---- Time follows the TPCs given (spin kernel, and PyTorch) ----------------------
for n in 66 33 16 8 1; do
	out=$(LIMIT=60 T "$NVT" --no-mps -n $n "$G/smid" time 5 2>&1)
	echo "spin kernel, $n TPCs: $out" | tee -a "$LOG/scaling.txt"
done
if python3 -c 'import torch; assert torch.cuda.is_available()' 2>/dev/null; then
	for n in 66 33 8; do
		out=$(LIMIT=180 T "$NVT" --no-mps -n $n python3 "$ROOT/tests/gpu/torch_matmul.py" 2>&1)
		echo "torch bf16 8192^3 matmul, $n TPCs: $out" | tee -a "$LOG/scaling.txt"
		grep -q "torch_ok=1" <<<"$out" && pass "PyTorch correct on $n TPCs" || fail "PyTorch on $n TPCs" "$out"
	done
else
	echo "SKIP PyTorch: not installed"
fi

fi # ONLY_E2E

# ---- Several GPUs: each its own partition, through its own map ---------------------
n_gpus=$(nvidia-smi -L 2>/dev/null | grep -c '^GPU ')
if [ -z "${ONLY_E2E:-}" ] && [ "${n_gpus:-0}" -ge 2 ]; then
	T "$NVT" --topology >"$LOG/topology-all.txt" 2>&1
	maps=$(for f in "$(dirname "$(sed -n 's/.*saved in \(.*\)$/\1/p' "$LOG/calibrate.txt" | tail -1)")"/GPU-*.topo; do
		sed -n 's/.* map=\([0-9,]*\).*/\1/p' "$f"; done | sort -u | wc -l)
	echo "GPUs: $n_gpus; distinct TPC maps among them: $maps" | tee -a "$LOG/multigpu.txt"
	# expect "LABEL" "NVTASKSET ARGS" "dev=0 SMs" "dev=1 SMs" [env...]
	expect() {
		local label=$1 args=$2 want0=$3 want1=$4 out
		shift 4
		# shellcheck disable=SC2086
		out=$(LIMIT=60 T env "$@" "$NVT" --no-mps $args "$G/smid" devices 2>&1)
		echo "$label: $out" >>"$LOG/multigpu.txt"
		if [ "$(grep -c "^dev=0 sms=$want0\$" <<<"$out")" == 2 ] &&
			{ [ -z "$want1" ] || [ "$(grep -c "^dev=1 sms=$want1\$" <<<"$out")" == 2 ]; }; then
			pass "$label"
		else
			fail "$label" "want dev=0 sms=$want0 dev=1 sms=$want1, got: $(tr '\n' ' ' <<<"$out")"
		fi
	}
	all_sms=$(python3 -c 'import json,sys; print("0-%d" % (json.load(open(sys.argv[1]))["gpus"][0]["sms"] - 1))' "$LOG/topology.json")
	expect "two GPUs, a partition each (--gpu 0=0-32 --gpu 1=40-65), launches from two threads" \
		"-c --gpu 0=0-32 --gpu 1=40-65" "$(sms_of 0-32)" "$(sms_of 40-65)" A=1
	expect "two GPUs, the same list on each (-c 5,37)" "-c 5,37" "$(sms_of 5,37)" "$(sms_of 5,37)" A=1
	expect "two GPUs, GPU 1 only (--gpu 1 -c 62-65): GPU 0 unpartitioned" "--gpu 1 -c 62-65" \
		"$all_sms" "$(sms_of 62-65)" A=1
	uuid1=$(nvidia-smi --query-gpu=uuid --format=csv,noheader -i 1)
	expect "CUDA_VISIBLE_DEVICES=1: nvidia-smi's GPU 1 is the task's device 0 (--gpu $uuid1=3)" \
		"-c --gpu $uuid1=3" "$(sms_of 3)" "" CUDA_VISIBLE_DEVICES=1
	expect "CUDA_VISIBLE_DEVICES=1,0 (-c --gpu 0=7 --gpu 1=9)" "-c --gpu 0=7 --gpu 1=9" \
		"$(sms_of 9)" "$(sms_of 7)" CUDA_VISIBLE_DEVICES=1,0
fi

# ---- End to end under MPS (co-running, live changes, real programs, faults) ----
if [ -z "${SKIP_E2E:-}" ]; then
	LIMIT=540 T python3 "$ROOT/tests/gpu/e2e.py" "$ROOT" "$G" "$LOG" | tee "$LOG/e2e.txt"
	PASS=$((PASS + $(grep -c '^PASS' "$LOG/e2e.txt")))
	FAIL=$((FAIL + $(grep -c '^FAIL' "$LOG/e2e.txt")))
	grep -q ' passed, ' "$LOG/e2e.txt" || { FAIL=$((FAIL + 1)); echo "FAIL e2e.py did not finish"; }
	# Never leave an MPS daemon behind, even if e2e.py was killed.
	for d in /tmp/nvt-e2e.*/mps; do
		[ -e "$d/nvidia-cuda-mps-control.pid" ] &&
			echo quit | CUDA_MPS_PIPE_DIRECTORY=$d timeout 20 nvidia-cuda-mps-control
	done
fi

# ---- CUDA graphs follow -p (tests/gpu/graphs.sh) ------------------------------
if [ -z "${SKIP_GRAPHS:-}" ]; then
	suite graphs 580 "$ROOT/tests/gpu/graphs.sh" "$LOG"
fi

# ---- The SM count a program is told, cooperative grids (tests/gpu/smcount.sh) -------
if [ -z "${SKIP_SMCOUNT:-}" ]; then
	suite smcount 400 "$ROOT/tests/gpu/smcount.sh" "$LOG"
fi

# ---- GPU memory limits (tests/gpu/mem.sh, tests/gpu/memdriver.sh) --------------------
if [ -z "${SKIP_MEM:-}" ]; then
	suite mem 600 "$ROOT/tests/gpu/mem.sh" "$LOG"
	# What the driver frees with a context, as the fake driver does (tests/gpu/memdriver.sh).
	suite memdriver 120 "$ROOT/tests/gpu/memdriver.sh" "$LOG"
fi

# ---- libsmctrl's interface (tests/gpu/smctrl.sh) --------------------------------
# LIBSMCTRL_SRC: a libsmctrl checkout, whose own tests run against the installed library.
if [ -z "${SKIP_SMCTRL:-}" ]; then
	suite smctrl 480 "$ROOT/tests/gpu/smctrl.sh" "$LOG" "${LIBSMCTRL_SRC:-}"
fi

echo "$PASS passed, $FAIL failed"
[ $FAIL == 0 ]
