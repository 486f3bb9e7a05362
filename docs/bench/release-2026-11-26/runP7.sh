#!/bin/bash
# Run P7: a primary context's last release (cuDevicePrimaryCtxRelease) on the real driver: the
# callback ids against CUPTI's headers (check-gpu-cbid); memdriver.sh (what the last release
# frees, and nvtaskset --mem counting it given back); a numba program that closes CUDA between
# rounds of synchronised steps under nvtaskset --priority high (its bridge made again).
set -u
J=build/.jsonc
MK=("JSONC_CFLAGS=-I$J/include -I$J/include/json-c" "JSONC_LIBS=$J/lib/libjson-c.a")
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
make -j16 "${MK[@]}" all >$OUT/build.log 2>&1 || { tail -30 $OUT/build.log; exit 1; }
echo "built $(date +%T)"
timeout 60 tests/gpu/cbid.sh 2>&1 | tail -3
timeout 300 tests/gpu/memdriver.sh /tmp/md > $OUT/memdriver.txt 2>&1; echo "memdriver rc $? $(date +%T)"
grep "PASS\|FAIL\|memdriver:" $OUT/memdriver.txt | cut -c1-160
cp /tmp/md/memdriver.txt $OUT/memdriver-log.txt 2>/dev/null
python3 -c "import numba, numba.cuda; print('numba', numba.__version__)" 2>&1 | tail -1
for mode in plain nvt; do
	if [ $mode = plain ]; then
		timeout 120 python3 docs/bench/release-2026-11-26/nb.py > /tmp/nb-$mode.txt 2>&1
	else
		NVTASKSET_BRIDGE_DEBUG=1 timeout 120 build/bin/nvtaskset --no-mps --priority high python3 docs/bench/release-2026-11-26/nb.py > /tmp/nb-$mode.txt 2>&1
	fi
	echo "numba $mode rc $? $(date +%T)"
	grep -v "^ *$" /tmp/nb-$mode.txt | grep -iv "numbadeprecation\|warn(" | tail -8 | cut -c1-250
done | tee $OUT/numba.txt
pgrep -a nvidia-cuda-mps | grep -v defunct && echo "MPS daemons still running"
exit 0
