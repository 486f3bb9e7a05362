#!/usr/bin/env bash
# Memory bandwidth of each GPC alone and of each pair of GPCs (nvtaskset -g,
# outside MPS), to see whether GPCs share paths to memory (packed
# partitions of 3 GPCs streamed no faster than of 2). Then which SMs a
# kernel gets with --sm-limit on TPC lists other than a packed pick.
# Usage: [TRIPLES=1] run.sh OUTDIR (on the GPU machine, root).
set -u
ROOT=$(cd "$(dirname "$0")/../../../.." && pwd)
OUT=${1:?usage: run.sh OUTDIR}
mkdir -p "$OUT" "$ROOT/build/probe"
B=$ROOT/build/probe
NVT=$ROOT/build/bin/nvtaskset
nvcc -O2 -arch=sm_90 -o "$B/smid" "$ROOT/tests/gpu/smid.cu" &&
	nvcc -O2 -arch=sm_90 -o "$B/gpcbw" "$ROOT/tests/bench/gpcbw.cu" || exit 1
W=$(mktemp -d /tmp/nvt-gpcbw2.XXXX)
export CUDA_MPS_PIPE_DIRECTORY=$W/mps CUDA_MPS_LOG_DIRECTORY=$W/log CUDA_DEVICE_MAX_CONNECTIONS=8
timeout 60 "$NVT" --calibrate >/dev/null 2>&1
timeout 30 "$NVT" --topology --json --gpu 0 >"$OUT/topology.json"
gpcs=$(python3 -c 'import json,sys; d=json.load(open(sys.argv[1]))["gpus"][0]; print(" ".join(str(g["gpc"]) for g in d["gpcs"] if "," in g["tpcs"] or "-" in g["tpcs"]))' "$OUT/topology.json" 2>/dev/null)
[ -n "$gpcs" ] || { echo "no GPC list in topology.json"; cat "$OUT/topology.json"; exit 1; }
bw() { timeout 60 "$NVT" --no-mps -g "$1" "$B/gpcbw" stream 2048 5 2>/dev/null | sed -n 's/.*gbps=//p'; }
for g in $gpcs; do echo "gpcs=$g gbps=$(bw "$g")"; done | tee "$OUT/single.txt"
set -- $gpcs
for a in "$@"; do for b in "$@"; do [ "$a" -lt "$b" ] && echo "gpcs=$a,$b gbps=$(bw "$a,$b")"; done; done | tee "$OUT/pairs.txt"
if [ "${TRIPLES:-0}" = 1 ]; then
	for a in "$@"; do for b in "$@"; do for c in "$@"; do
		[ "$a" -lt "$b" ] && [ "$b" -lt "$c" ] && echo "gpcs=$a,$b,$c gbps=$(bw "$a,$b,$c")"
	done; done; done | tee "$OUT/triples.txt"
	echo "gpcs=1,2,3,4 gbps=$(bw 1,2,3,4)"; echo "gpcs=1,2,6,7 gbps=$(bw 1,2,6,7)"; echo "gpcs=all gbps=$(bw all)"
fi
timeout 60 "$NVT" --mps start >/dev/null || exit 1
sms() { sed -n 's/^sms=//p' | tr ',' '\n' | awk -F- 'NF==2{for(i=$1;i<=$2;i++)print i;next}{print}' | sort -n | uniq | wc -l; }
for spec in "-c 0-7" "-c 58-65" "-c 0-15:2" "-g $1" "-g $2"; do
	s=$(timeout 60 "$NVT" --sm-limit $spec "$B/smid" 2>/dev/null | tail -1)
	echo "--sm-limit $spec: distinct_sms=$(echo "$s" | sms) ($s)"
done | tee "$OUT/smlimit-lists.txt"
"$NVT" --mps stop
