#!/bin/bash
# Run G1: bench-prio beside GPT-style training (PRIO_SET=round5-gpt: transformers'
# GPT2LMHeadModel, hidden 2048, 8 layers, AdamW, 8 x 512 tokens), the kinds of the shipped
# default's run beside Llama (decode periodic and Poisson, prefill, tbt, tbt7b, async,
# asyncside, eager periodic and Poisson): L alone on the whole GPU, static (GPCs 0-1 / 2-11),
# MPS client priority, the default; one round, fresh processes.
set -u
J=build/.jsonc
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
date -u
make -j16 "JSONC_CFLAGS=-I$J/include -I$J/include/json-c" JSONC_LIBS=$J/lib/libjson-c.a all >$OUT/build.log 2>&1 || { tail -30 $OUT/build.log; exit 1; }
echo "built $(date +%T)"
PRIO_T0=$(date +%s.%N)
export PRIO_T0
PRIO_MIN_REQUESTS=150,tbt7b=80 PRIO_ROUNDS=1 PRIO_L=torch PRIO_H=gpt PRIO_KINDS=decode,prefill:poisson,tbt:poisson,tbt7b:poisson,async:poisson,asyncside:poisson,eager PRIO_CASES=L-alone-whole,static,mps-cp,prio-nopart timeout 520 make "JSONC_CFLAGS=-I$J/include -I$J/include/json-c" JSONC_LIBS=$J/lib/libjson-c.a bench-prio PRIO_SET=round5-gpt PRIO_BUDGET_S=480 PRIO_TIMEOUT_S=500 BENCH_OUT=/tmp/b > $OUT/bench.out 2>&1
echo "bench rc $? $(date +%T)"
sed -n '/== L /,/^Cells/p' /tmp/b/prio/summary.txt
cp /tmp/b/prio/summary.txt /tmp/b/prio/prio.csv /tmp/b/prio/raw.tar.xz $OUT/ 2>/dev/null
build/bin/nvtaskset --mps stop 2>/dev/null
pgrep -a nvidia-cuda-mps | grep -v defunct && echo "MPS daemons still running"
date -u
exit 0
