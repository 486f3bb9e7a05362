#!/bin/bash
# Run G39: commit b53d1d3 (build/dev/new) on an H200: generate() beside Llama training, 63 requests a
# configuration: the default, never held, unbridged, MPS client priority: what the
# default's holds cost the batch, and what they give the service.
set -u
PRIO_T0=$(date +%s.%N)
export PRIO_T0
# build/dev/g39.json: this directory's g39/configs.json
CF=$PWD/build/dev/g39.json
cd build/dev/new || exit 1
J=$PWD/../../.jsonc
FL=("JSONC_CFLAGS=-I$J/include -I$J/include/json-c" "JSONC_LIBS=$J/lib/libjson-c.a")
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
date -u
make -j16 "${FL[@]}" all >"$OUT/build.log" 2>&1 || { tail -30 "$OUT/build.log"; exit 1; }
timeout 580 make "${FL[@]}" bench-prio PRIO_SET=round5-llama PRIO_KINDS=generate:poisson \
	PRIO_CONFIG_FILE="$CF" PRIO_MIN_REQUESTS=100,generate=60 \
	PRIO_CASES=L-alone-whole,H-alone-whole,prio-nopart,nopart-nohold,nopart-nobridge,mps-cp \
	BENCH_OUT="$OUT" >"$OUT/console.txt" 2>&1
echo "rc $?"
build/bin/nvtaskset --mps stop >/dev/null 2>&1
pgrep -a nvidia-cuda-mps | grep -v defunct && echo "MPS daemons still running"
tail -40 "$OUT/console.txt" | cut -c1-220
date -u
exit 0
