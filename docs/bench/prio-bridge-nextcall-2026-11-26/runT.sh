#!/bin/bash
# Run T: does the high level's timeslice bound a bridged request? 7B-sized steps beside GEMMs in
# requests of 6 (16.5 ms), 8 (22 ms) at the high's 20 ms, 8 and 12 (33 ms) with --yield slice=100000.
set -u
J=build/.jsonc
make -j16 "JSONC_CFLAGS=-I$J/include -I$J/include/json-c" JSONC_LIBS=$J/lib/libjson-c.a all >$OUT/build.log 2>&1 || { tail -30 $OUT/build.log; exit 1; }
echo "built $(date +%T)"
timeout 240 tests/bench/timeline/run.sh /tmp/tl gemm-long6-product gemm-long8-product gemm-long8-product-ts100 gemm-long12-product-ts100 > $OUT/tl.out 2>&1 &
tlp=$!
# The high task's channel groups as the driver records them, while the ts100 phase runs.
for _ in $(seq 200); do
	sleep 0.5
	if pgrep -f "tl svc /tmp/tl/gemm-long8-product-ts100" >/dev/null; then sleep 1; build/bin/nvtaskset -l --json > $OUT/l-ts100.json 2>&1; break; fi
done
wait $tlp; echo "timeline rc $? $(date +%T)"
python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); print(json.dumps(d)[:1500])' $OUT/l-ts100.json 2>&1 | head -20
cat /tmp/tl/timeline.txt
grep -h "tl batch gemm:" /tmp/tl/*.blog
tar -C /tmp -cJf $OUT/raw.tar.xz tl 2>/dev/null
pgrep -a nvidia-cuda-mps | grep -v defunct && echo "MPS daemons still running"
