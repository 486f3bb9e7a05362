#!/usr/bin/env bash
# The callback ids nvtaskset follows (src/gpu/cuda_driver.h, enum nvt_api_cbid) against the
# CUDA toolkit's own CUPTI headers: every NVT_CBID_cuX = N must be
# CUPTI_DRIVER_TRACE_CBID_cuX = N in cupti_driver_cbid.h, every NVT_CBID_cudaX = N
# CUPTI_RUNTIME_TRACE_CBID_cudaX_vVVVV = N in cupti_runtime_cbid.h (the runtime's names carry
# the version that brought them). A wrong id makes the shim take one call for another on the
# real driver while the fake driver, which reports ids from the same enum, agrees with it.
# Needs no GPU, only the toolkit's headers (CUPTI_INCLUDE=DIR, else found under
# /usr/local/cuda).
#
# Usage: tests/gpu/cbid.sh [HEADER]   (default: src/gpu/cuda_driver.h)
set -u
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
HDR=${1:-$ROOT/src/gpu/cuda_driver.h}
# The directory that holds both headers (one toolkit's): CUPTI_INCLUDE, else the first found.
INC=
for d in "${CUPTI_INCLUDE:-}" /usr/local/cuda/extras/CUPTI/include /usr/local/cuda/include \
	/usr/local/cuda/targets/x86_64-linux/include /usr/include; do
	[ -n "$d" ] && [ -r "$d/cupti_driver_cbid.h" ] && [ -r "$d/cupti_runtime_cbid.h" ] && { INC=$d; break; }
done
[ -n "$INC" ] || { echo "FAIL cbid: no cupti_driver_cbid.h and cupti_runtime_cbid.h (set CUPTI_INCLUDE)"; echo "cbid: 0 passed, 1 failed"; exit 1; }
DRV=$INC/cupti_driver_cbid.h RT=$INC/cupti_runtime_cbid.h
PASS=0 FAIL=0
# ids FILE PREFIX: "NAME VALUE" for each "PREFIXNAME = VALUE," in FILE.
ids() { sed -n "s/^[[:space:]]*$2\([A-Za-z0-9_]*\)[[:space:]]*=[[:space:]]*\([0-9][0-9]*\),.*/\1 \2/p" "$1"; }
ours=$(ids "$HDR" NVT_CBID_)
# Every id of the enum read: one written otherwise (hex, an expression, no comma) is not skipped.
lines=$(grep -c '^[[:space:]]*NVT_CBID_' "$HDR")
if [ -z "$ours" ] || [ "$(wc -l <<<"$ours")" != "$lines" ]; then
	echo "FAIL cbid: $lines NVT_CBID_ lines in $HDR, $(grep -c . <<<"$ours") read as NAME = DECIMAL,"
	echo "cbid: 0 passed, 1 failed"
	exit 1
fi
drv=$(ids "$DRV" CUPTI_DRIVER_TRACE_CBID_)
rt=$(ids "$RT" CUPTI_RUNTIME_TRACE_CBID_)
while read -r name val; do
	case $name in
	cuda*) want=$(awk -v n="$name" '$1 ~ "^" n "_v[0-9]+$" { print $2; exit }' <<<"$rt") ;;
	*) want=$(awk -v n="$name" '$1 == n { print $2; exit }' <<<"$drv") ;;
	esac
	if [ -z "$want" ]; then
		FAIL=$((FAIL + 1)); echo "FAIL cbid: $name is not in CUPTI's headers"
	elif [ "$want" != "$val" ]; then
		FAIL=$((FAIL + 1)); echo "FAIL cbid: $name = $val, CUPTI says $want"
	else
		PASS=$((PASS + 1))
	fi
done <<<"$ours"
echo "cbid: $DRV, $RT"
[ $FAIL = 0 ] && echo "PASS cbid: $PASS ids agree with CUPTI's"
echo "cbid: $((FAIL == 0)) passed, $FAIL failed ($((PASS + FAIL)) ids checked)"
[ $FAIL = 0 ]
