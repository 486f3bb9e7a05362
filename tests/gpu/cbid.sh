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
find_hdr() {
	local d
	for d in ${CUPTI_INCLUDE:-} /usr/local/cuda/extras/CUPTI/include /usr/local/cuda/include \
		/usr/local/cuda/targets/x86_64-linux/include /usr/include; do
		[ -r "$d/$1" ] && { echo "$d/$1"; return 0; }
	done
	return 1
}
DRV=$(find_hdr cupti_driver_cbid.h) || { echo "FAIL cbid: no cupti_driver_cbid.h (set CUPTI_INCLUDE)"; echo "cbid: 0 passed, 1 failed"; exit 1; }
RT=$(find_hdr cupti_runtime_cbid.h) || { echo "FAIL cbid: no cupti_runtime_cbid.h (set CUPTI_INCLUDE)"; echo "cbid: 0 passed, 1 failed"; exit 1; }
PASS=0 FAIL=0
# ids FILE PREFIX: "NAME VALUE" for each "PREFIXNAME = VALUE," in FILE.
ids() { sed -n "s/^[[:space:]]*$2\([A-Za-z0-9_]*\)[[:space:]]*=[[:space:]]*\([0-9][0-9]*\),.*/\1 \2/p" "$1"; }
ours=$(ids "$HDR" NVT_CBID_)
[ -n "$ours" ] || { echo "FAIL cbid: no NVT_CBID_ ids in $HDR"; echo "cbid: 0 passed, 1 failed"; exit 1; }
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
echo "cbid: $((FAIL == 0)) passed, $FAIL failed ($PASS ids checked)"
[ $FAIL = 0 ]
