#!/bin/bash
# Run G34: commit bd6df68 (build/dev/new) on an H200: make bench-prio PRIO_SET=round5-llama with
# generate() only, 60 requests a configuration (the PyTorch service's Hugging Face generate() at 10 %
# duty, Poisson arrivals, beside Hugging Face Llama training: alone, static, MPS client priority,
# the default), so that its p99 is not one of eight requests.
set -u
PRIO_T0=$(date +%s.%N)
export PRIO_T0
cd build/dev/new || exit 1
J=$PWD/../../.jsonc
FL=("JSONC_CFLAGS=-I$J/include -I$J/include/json-c" "JSONC_LIBS=$J/lib/libjson-c.a")
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
date -u
make -j16 "${FL[@]}" all >"$OUT/build.log" 2>&1 || { tail -30 "$OUT/build.log"; exit 1; }
timeout 570 make "${FL[@]}" bench-prio PRIO_SET=round5-llama PRIO_KINDS=generate:poisson \
	PRIO_MIN_REQUESTS=100,generate=60 PRIO_CASES=L-alone-whole,H-alone-whole,static,mps-cp,prio-nopart \
	BENCH_OUT="$OUT" >"$OUT/console.txt" 2>&1
echo "rc $?"
build/bin/nvtaskset --mps stop >/dev/null 2>&1
pgrep -a nvidia-cuda-mps | grep -v defunct && echo "MPS daemons still running"
tail -40 "$OUT/console.txt" | cut -c1-220
date -u
exit 0
