#!/bin/bash
# Run J6: host functions release the bridge (a trial tree, not kept: its patch is not in the repository) against the tree without (build/dev/cur,
# e69b7e9) and NVTASKSET_BRIDGE=0: the JAX service (jaxsvc.py ready / item) beside GEMM training
# in the level servers, fresh processes, two rounds; the bridge's trace says how bridges ended.
set -u
J=$PWD/build/.jsonc
MK=("JSONC_CFLAGS=-I$J/include -I$J/include/json-c" "JSONC_LIBS=$J/lib/libjson-c.a")
make -j16 "${MK[@]}" all >$OUT/build.log 2>&1 || { tail -30 $OUT/build.log; exit 1; }
(cd build/dev/cur && make -j16 "${MK[@]}" all) >>$OUT/build.log 2>&1 || { echo "cur build failed"; exit 1; }
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
date -u
NEW=build/bin/nvtaskset OLD=build/dev/cur/build/bin/nvtaskset
srv() { # LABEL MODE TAG CMD...
	local l=$1 m=$2 tag=$3 out
	shift 3
	out=$(NVTASKSET_BRIDGE_DEBUG=1 NVTASKSET_BRIDGE_TRACE=$OUT/tr-$tag timeout 120 "$@" python3 build/dev/jaxsvc.py $m 100 2>/tmp/e.txt)
	echo "$l rc $?: $out | $(grep -o '[0-9]* waits, [0-9]* bridged' /tmp/e.txt | head -1); $(grep -o 'bridge trace: of [^;]*' /tmp/e.txt | head -1)"
}
{
rm -f /tmp/stop
timeout 400 $NEW --priority low python3 build/dev/ctxsync.py batch /tmp/stop 2>>$OUT/batch.err &
bp=$!
sleep 8
for r in 1 2; do
	for m in item ready; do
		srv "r$r host functions release" $m new$r$m $NEW --priority high
		srv "r$r e69b7e9" $m old$r$m $OLD --priority high
		srv "r$r NVTASKSET_BRIDGE=0" $m off$r$m env NVTASKSET_BRIDGE=0 $NEW --priority high
	done
done
touch /tmp/stop; wait $bp; echo "batch rc $?"
} 2>&1 | tee $OUT/j6.txt
$NEW --mps stop
pgrep -a nvidia-cuda-mps | grep -v defunct && echo "MPS daemons still running"
date -u
exit 0
