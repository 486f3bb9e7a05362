#!/usr/bin/env bash
# Which SMs does a kernel get when MPS's active thread percentage and
# nvtaskset's TPC mask both apply (--sm-limit), for packed and spread
# partitions? (spread partitions under --sm-limit ran fp32 GEMMs 4x
# slower than packed ones.) Prints, per case, the SMs smid's blocks ran on
# and the FMA loop's time. Usage: run.sh OUTDIR (on the GPU machine, root).
set -u
ROOT=$(cd "$(dirname "$0")/../../../.." && pwd)
OUT=${1:?usage: run.sh OUTDIR}
mkdir -p "$OUT" "$ROOT/build/probe"
B=$ROOT/build/probe
NVT=$ROOT/build/bin/nvtaskset
nvcc -O2 -arch=sm_90 -o "$B/smid" "$ROOT/tests/gpu/smid.cu" &&
	nvcc -O2 -arch=sm_90 -o "$B/gpcbw" "$ROOT/tests/bench/gpcbw.cu" || exit 1
W=$(mktemp -d /tmp/nvt-mpslimit.XXXX)
export CUDA_MPS_PIPE_DIRECTORY=$W/mps CUDA_MPS_LOG_DIRECTORY=$W/log CUDA_DEVICE_MAX_CONNECTIONS=8
timeout 60 "$NVT" --calibrate >/dev/null 2>&1
timeout 60 "$NVT" --mps start || exit 1
sms() { tr ' ' '\n' | sed -n 's/^sms=//p' | tr ',' '\n' | awk -F- 'NF==2{for(i=$1;i<=$2;i++)print i;next}{print}' | sort -n | uniq | wc -l; }
for n in 8 24 42; do
	pct=$(( (100 * n + 65) / 66 ))
	for c in mps packed-limit spread-limit spread packed; do
		case $c in
		mps) pre=(env "CUDA_MPS_ACTIVE_THREAD_PERCENTAGE=$pct") ;;
		packed-limit) pre=("$NVT" --sm-limit -n "$n") ;;
		spread-limit) pre=("$NVT" --sm-limit --strategy spread -n "$n") ;;
		spread) pre=("$NVT" --strategy spread -n "$n") ;;
		packed) pre=("$NVT" -n "$n") ;;
		esac
		s=$(timeout 60 "${pre[@]}" "$B/smid" 2>/dev/null | tail -1)
		f=$(timeout 120 "${pre[@]}" "$B/gpcbw" fma 200000 5 2>/dev/null | tail -1)
		echo "tpcs=$n pct=$pct case=$c distinct_sms=$(echo "$s" | sms) $f smid: $s" | tee -a "$OUT/mps-limit.txt"
	done
done
"$NVT" --mps stop
