#!/bin/bash
# Run T1: (A) tl phases: a step's doorbell before the release of a wait it sits behind
# (WAIT_LATE_US 0/100/300/1000, alone 300, level servers 300); (B) the JAX service (jaxsvc.py,
# NVTASKSET_BRIDGE=0, --priority high) beside tl's GEMM batch with its watcher (--priority low),
# in the level servers and outside MPS, each step stamped; tl svc pings before and after map
# CLOCK_MONOTONIC to %globaltimer; nvtaskset -l --json read during each JAX run.
set -u
J=$PWD/build/.jsonc
make -j16 "JSONC_CFLAGS=-I$J/include -I$J/include/json-c" JSONC_LIBS=$J/lib/libjson-c.a all >$OUT/build.log 2>&1 || { tail -30 $OUT/build.log; exit 1; }
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
date -u
N=$PWD/build/bin/nvtaskset
timeout 170 tests/bench/timeline/run.sh $OUT/tlA gemm-small-wait gemm-small-wait-late100 gemm-small-wait-late300 gemm-small-wait-late1000 alone-small-wait-late300 gemm-small-wait-late300-mps >$OUT/tlA.txt 2>&1
echo "part A rc $?"; tail -12 $OUT/tlA.txt
date -u
TL=/tmp/tlw/tl
cal() { STEPS=1 KERNELS=1 CTAS=1 WORK_NS=1000 REQS=3 PERIOD_US=1000 NVTASKSET_BRIDGE=0 timeout 30 $N --priority high "${F[@]}" $TL svc $1 >/dev/null 2>&1 || echo "cal $1 failed"; }
for form in mps nomps; do
	if [ $form = mps ]; then F=(); else F=(--yield slice --no-mps); fi
	setsid timeout -k 5 240 $N --priority low "${F[@]}" $TL batch gemm 230 $OUT/B-$form.batch >$OUT/B-$form.blog 2>&1 &
	bp=$!
	for _ in $(seq 200); do grep -q ready $OUT/B-$form.blog 2>/dev/null && break; sleep 0.1; done
	sleep 2
	for r in 1 2 3 4; do
		m=ready; [ $((r % 2)) = 0 ] && m=item
		cal $OUT/B-$form-r$r.cal0
		(for s in 10 16 22; do sleep 6; $N -l --json >$OUT/B-$form-r$r-l$s.json 2>&1; done) &
		lp=$!
		echo "$form r$r $m: $(JAXSVC_OUT=$OUT/B-$form-r$r.jax NVTASKSET_BRIDGE=0 timeout 100 $N --priority high "${F[@]}" python3 build/dev/jaxsvc.py $m 80 2>$OUT/B-$form-r$r.err | tail -1)"
		wait $lp
		cal $OUT/B-$form-r$r.cal1
	done
	kill -TERM -- -$bp 2>/dev/null
	wait $bp; echo "batch $form rc $?"; tail -1 $OUT/B-$form.blog
done 2>&1 | tee $OUT/partB.txt
$N --mps stop
pgrep -a nvidia-cuda-mps | grep -v defunct && echo "MPS daemons still running"
date -u
exit 0
