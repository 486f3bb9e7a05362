#!/usr/bin/env bash
# Do a packed partition's GPCs hold fewer thread-block clusters at once than
# an MPS client's SMs, which lie in every GPC? (under --sm-limit the
# bf16 8192^3 GEMM was 1.11-1.14x MPS's time at 42 and 50 TPCs, the
# transformer block 1.105x at 50; cuBLAS's kernels there run in clusters.)
#
# For N in SIZES (default 24 42 50 66) and each configuration
#   mps           a plain MPS client, CUDA_MPS_ACTIVE_THREAD_PERCENTAGE=ceil(100N/66)
#   packed-limit  nvtaskset --sm-limit --strategy packed -n N
#   clusters-limit nvtaskset --sm-limit -n N (which picks with --strategy clusters)
#   packed        nvtaskset -n N (sees all 132 SMs)
#   gpcs-limit    nvtaskset --sm-limit -g LIST, LIST the fewest GPCs, largest
#                 first, with at least N TPCs (N = 42 and 50 only)
# runs cluster.cu (clusters of 1-16 one-block-per-SM blocks: the occupancy
# API's max active clusters, the SMs used, the time of a many-wave grid and
# of a one-wave persistent grid) and gemm_algo.py (bf16 8192^3 matmul and
# the transformer block, with cuBLASLt logging which algorithm and cluster
# shape it chose), configurations interleaved inside each N, ROUNDS rounds
# (default 2), all under one MPS daemon with 8 channels.
#
# Usage: run.sh OUTDIR (on the GPU machine, root, PyTorch, after make). Writes
#   OUTDIR/cluster-fit.txt       per N, -n's pick and its GPCs (GPC:TAKEN/ALL); then
#                                one line per result: "round= tpcs= pct= config=
#                                tool=cluster" + a line of cluster.cu (its header
#                                says what each key means), "tool=cluster rc=
#                                stderr:", and "tool=gemm rc=" + gemm_algo.py's
#                                line and its --extract summary + "stderr:"
#   OUTDIR/cublaslt-excerpts.txt the cuBLASLt log lines kept, per process
#   OUTDIR/topology.txt          nvtaskset --topology
#   OUTDIR/summary.txt           medians over rounds, and ratios to mps
# Ends within BUDGET_S seconds (default 520; each command's timeout shrinks
# to fit, and configurations left over are skipped, said in cluster-fit.txt)
# and prints its elapsed time. Also: SIZES, ROUNDS, LT_LEVEL (CUBLASLT_LOG_LEVEL,
# default 5), CLUSTER_MAX (largest cluster size cluster.cu tries, default 16),
# CONFIGS (default "mps packed-limit clusters-limit packed gpcs-limit").
set -u
T0=$(date +%s)
ROOT=$(cd "$(dirname "$0")/../../../.." && pwd)
OUT=${1:?usage: run.sh OUTDIR}
P=$ROOT/tests/gpu/probes/cluster-fit
B=$ROOT/build/probe
NVT=$ROOT/build/bin/nvtaskset
ROUNDS=${ROUNDS:-2}
SIZES=${SIZES:-24 42 50 66}
BUDGET_S=${BUDGET_S:-520}
LT_LEVEL=${LT_LEVEL:-5}
CLUSTER_MAX=${CLUSTER_MAX:-16}
RES=$OUT/cluster-fit.txt
EXC=$OUT/cublaslt-excerpts.txt
mkdir -p "$OUT" "$B" || exit 1
rm -f "$RES" "$EXC" "$OUT/summary.txt" "$OUT/topology.txt"
elapsed() { echo $(($(date +%s) - T0)); }

W=$(mktemp -d /tmp/nvt-clusterfit.XXXX) || exit 1
export CUDA_MPS_PIPE_DIRECTORY=$W/mps CUDA_MPS_LOG_DIRECTORY=$W/log CUDA_DEVICE_MAX_CONNECTIONS=8
export PYTHONUNBUFFERED=1
unset CUDA_MPS_ACTIVE_THREAD_PERCENTAGE CUBLASLT_LOG_MASK CUBLASLT_LOG_LEVEL CUBLASLT_LOG_FILE
finish() {
	trap - EXIT INT TERM HUP
	[ -x "$NVT" ] && timeout 15 "$NVT" --mps stop >/dev/null 2>&1
	rm -rf "$W"
	echo "elapsed_s=$(elapsed)"
}
trap finish EXIT
trap 'echo "interrupted"; exit 130' INT TERM HUP

[ -x "$NVT" ] || { echo "no $NVT: build nvtaskset first (make)"; exit 1; }
timeout 180 nvcc -O2 -arch=sm_90 -o "$B/cluster" "$P/cluster.cu" || { echo "nvcc failed"; exit 1; }
timeout 60 "$NVT" --calibrate >/dev/null 2>&1
timeout 30 "$NVT" --topology --gpu 0 >"$OUT/topology.txt" 2>&1
timeout 60 "$NVT" --mps start >/dev/null || { echo "MPS did not start"; exit 1; }

# Counts the TPCs of a list such as 1,9,17 or 0-3,8.
tpc_count() {
	echo "$1" | awk -F, '{ c = 0; for (i = 1; i <= NF; i++) { if (split($i, r, "-") == 2) c += r[2] - r[1] + 1; else if ($i != "") c++ } print c }'
}
# The fewest GPCs of topology.txt, largest first (lower number first among
# equals), with at least $1 TPCs: prints "LIST TPCS" (LIST ascending), or
# nothing. GPC rows: "  GPC  TPCs  mask-bits  SMs".
gpc_pick() {
	awk -v n="$1" '
	$1 ~ /^[0-9]+$/ && $2 ~ /^[0-9][0-9,-]*$/ && NF >= 4 {
		c = 0; k = split($2, parts, ",")
		for (i = 1; i <= k; i++) { if (split(parts[i], r, "-") == 2) c += r[2] - r[1] + 1; else c++ }
		g[m] = $1 + 0; cnt[m] = c; m++
	}
	END {
		for (i = 0; i < m; i++) for (j = i + 1; j < m; j++)
			if (cnt[j] > cnt[i] || (cnt[j] == cnt[i] && g[j] < g[i])) {
				t = g[i]; g[i] = g[j]; g[j] = t; t = cnt[i]; cnt[i] = cnt[j]; cnt[j] = t
			}
		s = 0; k = 0
		for (i = 0; i < m && s < n; i++) { s += cnt[i]; pick[k++] = g[i] }
		if (k == 0 || s < n) exit
		for (i = 0; i < k; i++) for (j = i + 1; j < k; j++) if (pick[j] < pick[i]) { t = pick[i]; pick[i] = pick[j]; pick[j] = t }
		list = pick[0]; for (i = 1; i < k; i++) list = list "," pick[i]
		print list, s
	}' "$OUT/topology.txt"
}
# For a TPC list, each GPC it touches as GPC:TAKEN/ALL (from topology.txt).
gpcs_of() {
	awk -v want="$1" '
	function add(s, set,   k, parts, i, r, t) {
		k = split(s, parts, ",")
		for (i = 1; i <= k; i++)
			if (split(parts[i], r, "-") == 2) { for (t = r[1] + 0; t <= r[2] + 0; t++) set[t] = 1 }
			else if (parts[i] != "") set[parts[i] + 0] = 1
	}
	BEGIN { add(want, w) }
	$1 ~ /^[0-9]+$/ && $2 ~ /^[0-9][0-9,-]*$/ && NF >= 4 {
		split("", s); add($2, s); all = 0; got = 0
		for (t in s) { all++; if (t in w) got++ }
		if (got) out = out (out == "" ? "" : ",") $1 ":" got "/" all
	}
	END { print (out == "" ? "?" : out) }' "$OUT/topology.txt"
}
# Seconds a command may take now: at most $1, so that all ends by BUDGET_S.
limit() {
	local left=$((BUDGET_S - 20 - $(elapsed)))
	[ "$left" -gt "$1" ] && left=$1
	echo "$left"
}
# Up to 6 lines of a command's standard error, on one line.
errs() { grep -v '^[[:space:]]*$' "$1" | tail -6 | cut -c1-300 | tr '\n' '|' | sed 's/|$//'; }

{
	echo "# $(date -u +%FT%TZ) $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>/dev/null | head -1)"
	echo "# rounds=$ROUNDS sizes=$SIZES cublaslt_log_level=$LT_LEVEL cluster_max=$CLUSTER_MAX"
} >>"$RES"
declare -A GL GT
for n in $SIZES; do
	pick=$(timeout 30 "$NVT" --dry-run -n "$n" 2>&1 | sed -n 's/.*: TPCs //p' | head -1)
	echo "tpcs=$n pick=${pick:-?} pick_gpcs=$(gpcs_of "$pick")" | tee -a "$RES"
	if [ "$n" = 42 ] || [ "$n" = 50 ]; then
		read -r l t <<<"$(gpc_pick "$n")"
		if [ -n "${l:-}" ]; then
			GL[$n]=$l GT[$n]=$t
			echo "tpcs=$n gpcs-limit: -g $l ($t TPCs)" | tee -a "$RES"
		else
			echo "tpcs=$n gpcs-limit: no GPC list found in topology.txt; skipped" | tee -a "$RES"
		fi
	fi
done

stop=0
for r in $(seq 1 "$ROUNDS"); do
	for n in $SIZES; do
		pct=$(((100 * n + 65) / 66))
		for c in ${CONFIGS:-mps packed-limit clusters-limit packed gpcs-limit}; do
			case $c in
			mps) pre=(env "CUDA_MPS_ACTIVE_THREAD_PERCENTAGE=$pct") tag="" ;;
			packed-limit) pre=("$NVT" --sm-limit --strategy packed -n "$n") tag="" ;;
			clusters-limit) pre=("$NVT" --sm-limit -n "$n") tag="" ;;
			packed) pre=("$NVT" -n "$n") tag="" ;;
			gpcs-limit)
				[ -n "${GL[$n]:-}" ] || continue
				pre=("$NVT" --sm-limit -g "${GL[$n]}")
				tag=" gpcs=${GL[$n]} gpc_tpcs=${GT[$n]} gpc_pct=$(((100 * GT[$n] + 65) / 66))"
				;;
			esac
			tag="round=$r tpcs=$n pct=$pct config=$c$tag"
			t=$(limit 120)
			if [ "$t" -lt 15 ]; then stop=1; break 3; fi
			timeout "$t" "${pre[@]}" "$B/cluster" "$CLUSTER_MAX" >"$W/out" 2>"$W/err"
			rc=$?
			grep -v '^[[:space:]]*$' "$W/out" | sed "s|^|$tag tool=cluster |" | tee -a "$RES"
			echo "$tag tool=cluster rc=$rc stderr: $(errs "$W/err")" | tee -a "$RES"
			t=$(limit 120)
			if [ "$t" -lt 15 ]; then stop=1; break 3; fi
			log=$W/lt-$r-$n-$c.log
			rm -f "$log"
			timeout "$t" env CUBLASLT_LOG_LEVEL="$LT_LEVEL" CUBLASLT_LOG_FILE="$log" "${pre[@]}" \
				python3 "$P/gemm_algo.py" >"$W/out" 2>"$W/err"
			rc=$?
			line=$(grep '^sms=' "$W/out" | tail -1)
			ext=$(timeout 60 python3 "$P/gemm_algo.py" --extract "$log" "$tag" "$EXC" 2>&1 | tail -1)
			echo "$tag tool=gemm rc=$rc ${line:-no-result} $ext stderr: $(errs "$W/err")" | tee -a "$RES"
			rm -f "$log"
		done
	done
done
[ "$stop" = 1 ] && echo "# stopped at $(elapsed) s: BUDGET_S=$BUDGET_S reached" | tee -a "$RES"

timeout 15 "$NVT" --mps stop >/dev/null 2>&1
timeout 60 python3 - "$RES" <<'PY' >"$OUT/summary.txt" 2>&1
import re, statistics, sys
ORDER = {"mps": 0, "packed-limit": 1, "clusters-limit": 2, "gpcs-limit": 3, "packed": 4}
kv = re.compile(r"(\w+)=(\S+)")
gemm, clus = {}, {}
for line in open(sys.argv[1]):
    if not line.startswith("round="):
        continue
    d = dict(kv.findall(line.split(" stderr:")[0]))
    key = (int(d["tpcs"]), d["config"])
    if d.get("tool") == "gemm" and "gemm_ms" in d:
        for f in ("gemm_ms", "block_ms", "sms"):
            gemm.setdefault(key, {}).setdefault(f, []).append(float(d[f]))
        gemm[key].setdefault("algo", []).append(d.get("lt_gemm", "?"))
    elif d.get("tool") == "cluster" and "cluster" in d:
        c = clus.setdefault(key + (int(d["cluster"]),), {})
        for f in ("max_active_clusters", "wave_ms", "distinct_sms", "wave_peak", "persistent_ms", "p_peak", "p_avg"):
            try:
                c.setdefault(f, []).append(float(d[f]))
            except (KeyError, ValueError):
                pass
med = lambda v: statistics.median(v) if v else float("nan")
print("GEMM and transformer block (median over rounds; ratio = time / mps's time at the same N)")
for key in sorted(gemm, key=lambda k: (k[0], ORDER.get(k[1], 9))):
    g, m = gemm[key], gemm.get((key[0], "mps"))
    rg = med(g["gemm_ms"]) / med(m["gemm_ms"]) if m else float("nan")
    rb = med(g["block_ms"]) / med(m["block_ms"]) if m else float("nan")
    print("tpcs=%-2d %-12s sms=%3d gemm_ms=%7.3f (%.3f) block_ms=%7.3f (%.3f) lt_gemm=%s" % (
        key[0], key[1], med(g["sms"]), med(g["gemm_ms"]), rg, med(g["block_ms"]), rb,
        "|".join(sorted(set(g["algo"])))))
print()
print("Clusters (median over rounds): max active clusters (API), distinct SMs and peak blocks of the wave grid,")
print("persistent grid's time (ratio to mps) and peak / mean blocks running at once")
for key in sorted(clus, key=lambda k: (k[0], k[2], ORDER.get(k[1], 9))):
    c, m = clus[key], clus.get((key[0], "mps", key[2]), {})
    rp = med(c.get("persistent_ms", [])) / med(m["persistent_ms"]) if m.get("persistent_ms") else float("nan")
    rw = med(c.get("wave_ms", [])) / med(m["wave_ms"]) if m.get("wave_ms") else float("nan")
    print("tpcs=%-2d %-12s cluster=%-2d mac=%4.0f wave_ms=%7.3f (%.3f) distinct=%4.0f wave_peak=%4.0f "
          "persistent_ms=%7.3f (%.3f) p_peak=%4.0f p_avg=%6.1f" % (
              key[0], key[1], key[2], med(c.get("max_active_clusters", [])), med(c.get("wave_ms", [])), rw,
              med(c.get("distinct_sms", [])), med(c.get("wave_peak", [])), med(c.get("persistent_ms", [])), rp,
              med(c.get("p_peak", [])), med(c.get("p_avg", []))))
PY
cat "$OUT/summary.txt"
