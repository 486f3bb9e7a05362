#!/bin/bash
# Run N: why the timeline's batch does not stop within 5 s of SIGTERM.
set -u
J=build/.jsonc
make -j16 "JSONC_CFLAGS=-I$J/include -I$J/include/json-c" JSONC_LIBS=$J/lib/libjson-c.a all >$OUT/build.log 2>&1 || { tail -30 $OUT/build.log; exit 1; }
W=/tmp/tlw; mkdir -p $W
nvcc -O2 -arch=sm_90 -std=c++17 -o "$W/tl" tests/bench/timeline/tl.cu -lcublas -lcuda || exit 1
NVT=$PWD/build/bin/nvtaskset
probe() { # name, launcher...
	local name=$1; shift
	echo "== $name $(date +%T.%N)"
	setsid timeout -k 25 40 env "$@" $W/tl batch gemm 12 /tmp/$name.batch > /tmp/$name.blog 2>&1 &
	local bpid=$!
	for _ in $(seq 100); do grep -q ready /tmp/$name.blog 2>/dev/null && break; sleep 0.1; done
	sleep 2
	local tpid; tpid=$(pgrep -f "tl batch gemm 12 /tmp/$name.batch" | tail -1)
	echo "tl pid $tpid; SigBlk/SigIgn/SigCgt: $(grep -E 'SigBlk|SigIgn|SigCgt' /proc/$tpid/status | tr -s '\t\n' '  ')"
	kill -TERM -- -$bpid
	for i in $(seq 24); do
		sleep 0.5
		[ -d /proc/$tpid ] || { echo "ended after $i half-seconds"; break; }
		[ $((i % 4)) = 1 ] && echo "t+$i/2 s: state $(awk '/State/{print $2}' /proc/$tpid/status) main wchan $(cat /proc/$tpid/wchan) threads $(ls /proc/$tpid/task | wc -l); $(for t in /proc/$tpid/task/*; do cat $t/wchan; echo -n ' '; done)"
	done
	wait $bpid; echo "rc $?"
	cat /tmp/$name.blog
}
probe plain
probe lo $NVT --no-mps --priority low --yield slice
probe lo-default $NVT --no-mps --priority low
pgrep -a nvidia-cuda-mps && echo "MPS daemons still running"
