#!/usr/bin/env bash
# run.sh - the GPU timeline of a service's steps beside a batch (make bench-timeline): builds tl.cu
# and tests/bench/tslice/rmprobe.c, then runs each phase of TL_PHASES in fresh processes and
# writes OUTDIR/PHASE.svc / .batch / .log, OUTDIR/timeline.json and timeline.txt (analyze.py).
# Every program runs under `timeout`; the level MPS daemons it makes nvtaskset start are stopped.
#   tests/bench/timeline/run.sh OUTDIR [PHASE...]
set -u
ROOT=$(cd "$(dirname "$0")/../../.." && pwd)
T=$ROOT/tests/bench/timeline
O=${1:-/tmp/tlout}; shift || true
W=/tmp/tlw
NVT=$ROOT/build/bin/nvtaskset
rm -rf "$W"; mkdir -p "$W/nomps" "$O"; chmod 755 "$W"
nvcc -O2 -arch=sm_90 -std=c++17 -o "$W/tl" "$T/tl.cu" -lcublas -lcuda || exit 1
gcc -Wall -shared -fPIC -O2 -o "$W/rmprobe.so" "$ROOT/tests/bench/tslice/rmprobe.c" -ldl -lpthread || exit 1
[ -x "$NVT" ] || { echo "build nvtaskset first (make)"; exit 1; }
nvidia-smi --query-gpu=name,driver_version,clocks.sm --format=csv,noheader | tee "$O/gpu.txt"
export CUDA_MPS_PIPE_DIRECTORY=$W/nomps CUDA_MPS_LOG_DIRECTORY=$W/nomps
timeout 120 "$NVT" --calibrate >/dev/null 2>&1
# The raw probes' service: nvtaskset's own bridge off (NVTASKSET_BRIDGE=0), so that what a
# phase measures is the GPU's behaviour and the phase's own knobs; HIB: nvtaskset's default.
HI="NVTASKSET_BRIDGE=0 $NVT --no-mps --priority high --yield slice"
HIB="$NVT --no-mps --priority high"
LO="$NVT --no-mps --priority low --yield slice"
LO200="$NVT --no-mps --priority low --yield slice=200"
# Static partitions under one MPS daemon (the service on GPCs 0-1, the batch on 2-11, no priority:
# neither is time-sliced), as bench-prio's static configuration.
STMPS="CUDA_MPS_PIPE_DIRECTORY=$W/mpsS CUDA_MPS_LOG_DIRECTORY=$W/mpsSlog"
STS="$STMPS $NVT -g 0-1"
STB="$STMPS $NVT -g 2-11"
# The batch's stream gate (SGATE) is a page the GPU reads: on tmpfs, so that it can be pinned.
F=/dev/shm/tlflag.$$
trap 'rm -f "$F"' EXIT
SMALL="STEPS=8 KERNELS=4 CTAS=1 WORK_NS=5000 PERIOD_US=8000 REQS=150"
DEC="STEPS=8 KERNELS=16 CTAS=0 WORK_NS=10000 PERIOD_US=12000 REQS=120"
ONE="STEPS=1 KERNELS=4 CTAS=1 WORK_NS=5000 PERIOD_US=3000 REQS=300"
LONG="STEPS=1 KERNELS=1 CTAS=1 WORK_NS=300000 PERIOD_US=4000 REQS=200"
# An empty kernel, then a graph of 56 short kernels (small work before a replay)
G56="STEPS=8 KERNELS=56 CTAS=1 WORK_NS=500 PERIOD_US=8000 REQS=150 GRAPH=1 PRE_US=1"
# Steps as long as a 7B-sized decode's (56 kernels on every SM, ~2.7 ms a step)
LONG8="STEPS=8 KERNELS=56 CTAS=0 WORK_NS=47000 PERIOD_US=40000 REQS=40"
# An eager, host-bound step: 16 short kernels, the host busy LGAP_US between its launches
EAGER="STEPS=8 KERNELS=16 CTAS=1 WORK_NS=2000 PERIOD_US=10000 REQS=100"
# name | batch (mode, or -) | batch's launcher and environment | service's launcher and environment
PHASES=(
"alone-small|-||$SMALL $HI"
"alone-small-plain|-||$SMALL"
"spin-small|spin|$LO|$SMALL $HI"
"spin-one|spin|$LO|$ONE $HI"
"spin-small-block|spin|$LO|$SMALL SYNC=block $HI"
"spin-small-poll|spin|$LO|$SMALL SYNC=poll $HI"
"spin-small-pin|spin|taskset -c 6 $LO|$SMALL taskset -c 2 $HI"
"spin-small-copy|spin|$LO|$SMALL COPY=1 $HI"
"spin-small-async|spin|$LO|$SMALL ASYNC=1 $HI"
"spin-small-ts500|spin|$NVT --no-mps --priority low --yield slice=500|$SMALL $HI"
"spin-small-gate|spin|LD_PRELOAD=$W/rmprobe.so RMP_GATE=$W/flag RMP_LOG=$W/gate $LO|$SMALL GATE=$W/flag $HI"
"spin-small-mps|spin|CUDA_MPS_PIPE_DIRECTORY=$W/mpsT CUDA_MPS_LOG_DIRECTORY=$W/mpsTlog $NVT --priority low --yield slice|$SMALL CUDA_MPS_PIPE_DIRECTORY=$W/mpsT CUDA_MPS_LOG_DIRECTORY=$W/mpsTlog NVTASKSET_BRIDGE=0 $NVT --priority high --yield slice"
"spin-small-default|spin||$SMALL"
"heavy-small|heavy|$LO|$SMALL $HI"
"gemm-small|gemm|$LO|$SMALL $HI"
"spin-small-tail|spin|$LO|$SMALL TAIL_US=300 $HI"
"alone-small-tail|-||$SMALL TAIL_US=300 $HI"
"gemm-small-tail|gemm|$LO|$SMALL TAIL_US=300 $HI"
"alone-decode|-||$DEC $HI"
"spin-decode|spin|$LO|$DEC $HI"
"gemm-decode|gemm|$LO|$DEC $HI"
"spin-decode-tail|spin|$LO|$DEC TAIL_US=300 $HI"
"gemm-small-gate|gemm|LD_PRELOAD=$W/rmprobe.so RMP_GATE=$W/flag RMP_GATE_LOG=1 RMP_LINGER_US=1000 RMP_LOG=$W/gate $LO|$SMALL GATE=$W/flag $HI"
"gemm-small16-gate|gemm|LD_PRELOAD=$W/rmprobe.so RMP_GATE=$W/flag RMP_GATE_LOG=1 RMP_LINGER_US=1000 RMP_LOG=$W/gate16 $LO|$SMALL STEPS=16 PERIOD_US=12000 GATE=$W/flag $HI"
"gemm-small16-gatep|gemm|LD_PRELOAD=$W/rmprobe.so RMP_GATE=$W/flag RMP_GATE_MODE=preempt RMP_GATE_LOG=1 RMP_LINGER_US=1000 RMP_LOG=$W/gatep $LO|$SMALL STEPS=16 PERIOD_US=12000 GATE=$W/flag $HI"
"gemm-small16|gemm|$LO|$SMALL STEPS=16 PERIOD_US=12000 $HI"
"gemm-small-bridge300-c1|gemm|$LO|$SMALL TAIL_US=300 TAIL_MODE=bridge CUDA_DEVICE_MAX_CONNECTIONS=1 $HI"
"gemm-small-bridge300-c1m2|gemm|$LO|$SMALL TAIL_US=300 TAIL_MODE=bridge BRIDGE_MARGIN_US=2 CUDA_DEVICE_MAX_CONNECTIONS=1 $HI"
"alone-small-bridge300-c1m2|-||$SMALL TAIL_US=300 TAIL_MODE=bridge BRIDGE_MARGIN_US=2 CUDA_DEVICE_MAX_CONNECTIONS=1 $HI"
"gemm-decode-bridge300-c1m2|gemm|$LO|$DEC TAIL_US=300 TAIL_MODE=bridge BRIDGE_MARGIN_US=2 CUDA_DEVICE_MAX_CONNECTIONS=1 $HI"
"gemm-small-bridge300-c1m2-mps|gemm|CUDA_MPS_PIPE_DIRECTORY=$W/mpsT CUDA_MPS_LOG_DIRECTORY=$W/mpsTlog $NVT --priority low --yield slice|$SMALL TAIL_US=300 TAIL_MODE=bridge BRIDGE_MARGIN_US=2 CUDA_DEVICE_MAX_CONNECTIONS=1 CUDA_MPS_PIPE_DIRECTORY=$W/mpsT CUDA_MPS_LOG_DIRECTORY=$W/mpsTlog NVTASKSET_BRIDGE=0 $NVT --priority high --yield slice"
"gemm-small-tflag2-300-mps|gemm|CUDA_MPS_PIPE_DIRECTORY=$W/mpsT CUDA_MPS_LOG_DIRECTORY=$W/mpsTlog $NVT --priority low --yield slice|$SMALL TAIL_US=300 TAIL_MODE=flag2 CUDA_MPS_PIPE_DIRECTORY=$W/mpsT CUDA_MPS_LOG_DIRECTORY=$W/mpsTlog NVTASKSET_BRIDGE=0 $NVT --priority high --yield slice"
"gemm-small-bridge300-c1-mps|gemm|CUDA_MPS_PIPE_DIRECTORY=$W/mpsT CUDA_MPS_LOG_DIRECTORY=$W/mpsTlog $NVT --priority low --yield slice|$SMALL TAIL_US=300 TAIL_MODE=bridge CUDA_DEVICE_MAX_CONNECTIONS=1 CUDA_MPS_PIPE_DIRECTORY=$W/mpsT CUDA_MPS_LOG_DIRECTORY=$W/mpsTlog NVTASKSET_BRIDGE=0 $NVT --priority high --yield slice"
"gemm-small-bridge300-c1m10|gemm|$LO|$SMALL TAIL_US=300 TAIL_MODE=bridge BRIDGE_MARGIN_US=10 CUDA_DEVICE_MAX_CONNECTIONS=1 $HI"
"gemm-decode-bridge300-c1|gemm|$LO|$DEC TAIL_US=300 TAIL_MODE=bridge CUDA_DEVICE_MAX_CONNECTIONS=1 $HI"
"gemm-decode-bridge300-c1-mps|gemm|CUDA_MPS_PIPE_DIRECTORY=$W/mpsT CUDA_MPS_LOG_DIRECTORY=$W/mpsTlog $NVT --priority low --yield slice|$DEC TAIL_US=300 TAIL_MODE=bridge CUDA_DEVICE_MAX_CONNECTIONS=1 CUDA_MPS_PIPE_DIRECTORY=$W/mpsT CUDA_MPS_LOG_DIRECTORY=$W/mpsTlog NVTASKSET_BRIDGE=0 $NVT --priority high --yield slice"
"alone-decode-bridge300-c1|-||$DEC TAIL_US=300 TAIL_MODE=bridge CUDA_DEVICE_MAX_CONNECTIONS=1 $HI"
"gemm-one-bridge300-c1|gemm|$LO|$ONE TAIL_US=300 TAIL_MODE=bridge CUDA_DEVICE_MAX_CONNECTIONS=1 $HI"
"gemm-small-mps|gemm|CUDA_MPS_PIPE_DIRECTORY=$W/mpsT CUDA_MPS_LOG_DIRECTORY=$W/mpsTlog $NVT --priority low --yield slice|$SMALL CUDA_MPS_PIPE_DIRECTORY=$W/mpsT CUDA_MPS_LOG_DIRECTORY=$W/mpsTlog NVTASKSET_BRIDGE=0 $NVT --priority high --yield slice"
"gemm-small-async|gemm|$LO|$SMALL ASYNC=1 $HI"
"gemm-small-ts500|gemm|$NVT --no-mps --priority low --yield slice=500|$SMALL $HI"
"gemm-small-default|gemm||$SMALL"
"gemm-one|gemm|$LO|$ONE $HI"
"gemm-small-tflag1000|gemm|$LO|$SMALL TAIL_US=1000 $HI"
"gemm-small-tsame1000|gemm|$LO|$SMALL TAIL_US=1000 TAIL_MODE=same $HI"
"gemm-small-tside30|gemm|$LO|$SMALL TAIL_US=30 TAIL_MODE=side $HI"
"gemm-small-tside60|gemm|$LO|$SMALL TAIL_US=60 TAIL_MODE=side $HI"
"gemm-small-tside120|gemm|$LO|$SMALL TAIL_US=120 TAIL_MODE=side $HI"
"alone-small-tside60|-||$SMALL TAIL_US=60 TAIL_MODE=side $HI"
"gemm-decode-tside60|gemm|$LO|$DEC TAIL_US=60 TAIL_MODE=side $HI"
"spin-small-tside60|spin|$LO|$SMALL TAIL_US=60 TAIL_MODE=side $HI"
"gemm-small-tsame60|gemm|$LO|$SMALL TAIL_US=60 TAIL_MODE=same $HI"
"gemm-small-wait|gemm|$LO|$SMALL WAIT=1 $HI"
"alone-small-wait|-||$SMALL WAIT=1 $HI"
"gemm-decode-wait|gemm|$LO|$DEC WAIT=1 $HI"
"spin-small-wait|spin|$LO|$SMALL WAIT=1 $HI"
"heavy-small-wait|heavy|$LO|$SMALL WAIT=1 $HI"
"gemm-small-wait-mps|gemm|CUDA_MPS_PIPE_DIRECTORY=$W/mpsT CUDA_MPS_LOG_DIRECTORY=$W/mpsTlog $NVT --priority low --yield slice|$SMALL WAIT=1 CUDA_MPS_PIPE_DIRECTORY=$W/mpsT CUDA_MPS_LOG_DIRECTORY=$W/mpsTlog NVTASKSET_BRIDGE=0 $NVT --priority high --yield slice"
"gemm-decode-tail|gemm|$LO|$DEC TAIL_US=300 $HI"
"gemm-small-blocked|gemm|BLOCK_MS=800 $LO|$SMALL $HI"
"gemm-small-async-copy|gemm|$LO|$SMALL ASYNC=1 COPY=1 $HI"
"gemm-small-async-copyside|gemm|$LO|$SMALL ASYNC=1 COPY=2 $HI"
"alone-small-async-copy|-||$SMALL ASYNC=1 COPY=1 $HI"
"gemm-small-async-kcopy|gemm|$LO|$SMALL ASYNC=1 COPY=3 $HI"
"gemm-small-async-copy-product|gemm|$LO|$SMALL ASYNC=1 COPY=1 $HIB"
"gemm-small-async-kcopy-product|gemm|$LO|$SMALL ASYNC=1 COPY=3 $HIB"
"gemm-small-async-kcopy0-product|gemm|$LO|$SMALL ASYNC=1 COPY=4 $HIB"
"gemm-small-copy-product|gemm|$LO|$SMALL COPY=1 $HIB"
"gemm-small-async-copy-product-mps|gemm|CUDA_MPS_PIPE_DIRECTORY=$W/mpsT CUDA_MPS_LOG_DIRECTORY=$W/mpsTlog $NVT --priority low|$SMALL ASYNC=1 COPY=1 CUDA_MPS_PIPE_DIRECTORY=$W/mpsT CUDA_MPS_LOG_DIRECTORY=$W/mpsTlog $NVT --priority high"
"alone-small-async-copy-product|-||$SMALL ASYNC=1 COPY=1 $HIB"
"gemm-small-product-legacy|gemm|$LO|$SMALL LEGACY=1 $HIB"
"gemm-small-product-legacy-mps|gemm|CUDA_MPS_PIPE_DIRECTORY=$W/mpsT CUDA_MPS_LOG_DIRECTORY=$W/mpsTlog $NVT --priority low|$SMALL LEGACY=1 CUDA_MPS_PIPE_DIRECTORY=$W/mpsT CUDA_MPS_LOG_DIRECTORY=$W/mpsTlog $NVT --priority high"
"gemm-small-legacy|gemm|$LO|$SMALL LEGACY=1 $HI"
"gemm-small-product-graph|gemm|$LO|$SMALL GRAPH=1 $HIB"
"gemm-small-ctx|gemm|$LO|$SMALL SYNC=ctx $HI"
"gemm-small-ctx-product|gemm|$LO|$SMALL SYNC=ctx $HIB"
"alone-small-ctx-product|-||$SMALL SYNC=ctx $HIB"
"gemm-small-ctx-product-mps|gemm|CUDA_MPS_PIPE_DIRECTORY=$W/mpsT CUDA_MPS_LOG_DIRECTORY=$W/mpsTlog $NVT --priority low|$SMALL SYNC=ctx CUDA_MPS_PIPE_DIRECTORY=$W/mpsT CUDA_MPS_LOG_DIRECTORY=$W/mpsTlog $NVT --priority high"
# The same with the shim's thread on the waiting thread's CPU (met: pinned there after the first
# request; hog4: the service on CPUs 3-4, a busy loop on CPU 4), or the service on one CPU (pin)
"gemm-small-ctx-product-met|gemm|$LO|$SMALL SYNC=ctx PIN_OTHERS=1 $HIB"
"gemm-small-ctx-product-met-mps|gemm|CUDA_MPS_PIPE_DIRECTORY=$W/mpsT CUDA_MPS_LOG_DIRECTORY=$W/mpsTlog $NVT --priority low|$SMALL SYNC=ctx PIN_OTHERS=1 CUDA_MPS_PIPE_DIRECTORY=$W/mpsT CUDA_MPS_LOG_DIRECTORY=$W/mpsTlog $NVT --priority high"
"gemm-small-ctx-product-hog4|gemm|$LO|$SMALL SYNC=ctx taskset -c 3,4 $HIB"
# ... the program's thread alone pinned to its CPU after CUDA's start, before its first wait (self)
"gemm-small-ctx-product-self|gemm|$LO|$SMALL SYNC=ctx PIN_SELF=1 $HIB"
"gemm-small-ctx-product-pin|gemm|$NVT --no-mps --priority low --yield slice|$SMALL SYNC=ctx taskset -c 3 $NVT --no-mps --priority high"
"gemm-small-ctx-product-pin-mps|gemm|CUDA_MPS_PIPE_DIRECTORY=$W/mpsT CUDA_MPS_LOG_DIRECTORY=$W/mpsTlog $NVT --priority low|$SMALL SYNC=ctx CUDA_MPS_PIPE_DIRECTORY=$W/mpsT CUDA_MPS_LOG_DIRECTORY=$W/mpsTlog taskset -c 3 $NVT --priority high"
"gemm-small-graph-bridge|gemm|$LO|$SMALL GRAPH=1 TAIL_US=300 TAIL_MODE=bridge CUDA_DEVICE_MAX_CONNECTIONS=1 $HI"
"gemm-small-graph-bridgeg|gemm|$LO|$SMALL GRAPH=1 BRIDGE_GRAPH=1 TAIL_US=300 TAIL_MODE=bridge CUDA_DEVICE_MAX_CONNECTIONS=1 $HI"
"gemm-small-graph|gemm|$LO|$SMALL GRAPH=1 $HI"
"gemm-small-product-graph-mps|gemm|CUDA_MPS_PIPE_DIRECTORY=$W/mpsT CUDA_MPS_LOG_DIRECTORY=$W/mpsTlog $NVT --priority low|$SMALL GRAPH=1 CUDA_MPS_PIPE_DIRECTORY=$W/mpsT CUDA_MPS_LOG_DIRECTORY=$W/mpsTlog $NVT --priority high"
"gemm-decode-async-copy-product|gemm|$LO|$DEC ASYNC=1 COPY=1 $HIB"
"gemm-decode-async-kcopy0-product|gemm|$LO|$DEC ASYNC=1 COPY=4 $HIB"
"gemm2k-small|gemm|GEMM_N=2048 $LO|$SMALL $HI"
"gemm2k-small-ts200|gemm|GEMM_N=2048 $LO200|$SMALL $HI"
"gemm2k-small-sgate|gemm|GEMM_N=2048 SGATE=$F $LO|$SMALL GATE=$F $HI"
"gemm2k-small-sgate-ts200|gemm|GEMM_N=2048 SGATE=$F $LO200|$SMALL GATE=$F $HI"
"gemm2k-one|gemm|GEMM_N=2048 $LO|$ONE $HI"
"gemm2k-one-sgate-ts200|gemm|GEMM_N=2048 SGATE=$F $LO200|$ONE GATE=$F $HI"
"gemm-small-sgate-ts200|gemm|SGATE=$F $LO200|$SMALL GATE=$F $HI"
"gemm-small-nowatch|gemm|WATCH_OFF=1 $LO|$SMALL $HI"
"gemm-small-sgate|gemm|SGATE=$F $LO|$SMALL GATE=$F $HI"
"gemm-small-tflag300|gemm|$LO|$SMALL TAIL_US=300 $HI"
"gemm-small-tflag2-300|gemm|$LO|$SMALL TAIL_US=300 TAIL_MODE=flag2 $HI"
"gemm-small-tside2-300|gemm|$LO|$SMALL TAIL_US=300 TAIL_MODE=side2 $HI"
"alone-small-tflag2-300|-||$SMALL TAIL_US=300 TAIL_MODE=flag2 $HI"
"alone-small-tside2-300|-||$SMALL TAIL_US=300 TAIL_MODE=side2 $HI"
"spin-small-tflag2-300|spin|$LO|$SMALL TAIL_US=300 TAIL_MODE=flag2 $HI"
"gemm-decode-tflag2-300|gemm|$LO|$DEC TAIL_US=300 TAIL_MODE=flag2 $HI"
"gemm-decode-tside2-300|gemm|$LO|$DEC TAIL_US=300 TAIL_MODE=side2 $HI"
"gemm-small-bridge300|gemm|$LO|$SMALL TAIL_US=300 TAIL_MODE=bridge $HI"
"gemm-small-bridge0|gemm|$LO|$SMALL TAIL_US=0 TAIL_MODE=bridge $HI"
"alone-small-bridge300|-||$SMALL TAIL_US=300 TAIL_MODE=bridge $HI"
"gemm-one-bridge0|gemm|$LO|$ONE TAIL_US=0 TAIL_MODE=bridge $HI"
"gemm-decode-bridge300|gemm|$LO|$DEC TAIL_US=300 TAIL_MODE=bridge $HI"
"gemm-decode-bridge0|gemm|$LO|$DEC TAIL_US=0 TAIL_MODE=bridge $HI"
"alone-long|-||$LONG $HI"
"alone-long8-product|-||$LONG8 $HIB"
"gemm-long8|gemm|$LO|$LONG8 $HI"
"gemm-long8-product|gemm|$LO|$LONG8 $HIB"
"alone-small-pre40-product|-||$SMALL PRE_US=40 $HIB"
"gemm-small-pre40-product|gemm|$LO|$SMALL PRE_US=40 $HIB"
"gemm-small-pre100-product|gemm|$LO|$SMALL PRE_US=100 $HIB"
"gemm-small-graph-pre40-product|gemm|$LO|$SMALL GRAPH=1 PRE_US=40 $HIB"
"alone-small-graph-pre40-product|-||$SMALL GRAPH=1 PRE_US=40 $HIB"
"alone-small-graph-post40-product|-||$SMALL GRAPH=1 POST_US=40 $HIB"
"gemm-small-graph-post40-product|gemm|$LO|$SMALL GRAPH=1 POST_US=40 $HIB"
"gemm-small-post40-product|gemm|$LO|$SMALL POST_US=40 $HIB"
"gemm-small-graph-post40-flush-product|gemm|$LO|$SMALL GRAPH=1 POST_US=40 FLUSH=1 $HIB"
"gemm-small-graph-post40-nobridge|gemm|$LO|$SMALL GRAPH=1 POST_US=40 $HI"
"gemm-long6-product|gemm|$LO|$LONG8 STEPS=6 $HIB"
"alone-blas-post40|-||$SMALL GRAPH=1 BLAS=16 KERNELS=2 POST_US=40 $HI"
"alone-blas-legacy-post40|-||$SMALL GRAPH=1 BLAS=16 KERNELS=2 LEGACY=1 POST_US=40 $HI"
"gemm-blas-legacy-product|gemm|$LO|$SMALL GRAPH=1 BLAS=16 KERNELS=2 LEGACY=1 $HIB"
"gemm-blas-legacy-nobridge|gemm|$LO|$SMALL GRAPH=1 BLAS=16 KERNELS=2 LEGACY=1 $HI"
"gemm-long8-product-ts100|gemm|$LO|$LONG8 $HIB --yield slice=100000"
"gemm-long12-product-ts100|gemm|$LO|$LONG8 STEPS=12 PERIOD_US=60000 REQS=30 $HIB --yield slice=100000"
"alone-small-graph-post40|-||$SMALL GRAPH=1 POST_US=40 $HI"
"alone-small-graph-legacy-post40|-||$SMALL GRAPH=1 LEGACY=1 POST_US=40 $HI"
"alone-graph56-legacy-post40|-||$G56 PRE_US=0 LEGACY=1 POST_US=40 $HI"
"alone-graph56-post40|-||$G56 PRE_US=0 POST_US=40 $HI"
"alone-small-graph-legacy-post40-product|-||$SMALL GRAPH=1 LEGACY=1 POST_US=40 $HIB"
"gemm-small-graph-legacy-post40-product|gemm|$LO|$SMALL GRAPH=1 LEGACY=1 POST_US=40 $HIB"
"gemm-small-graph-legacy-product|gemm|$LO|$SMALL GRAPH=1 LEGACY=1 $HIB"
"gemm-small-graph-pre40-bridge300-c1|gemm|$LO|$SMALL GRAPH=1 PRE_US=40 TAIL_US=300 TAIL_MODE=bridge CUDA_DEVICE_MAX_CONNECTIONS=1 $HI"
"alone-graph56-pre-product|-||$G56 $HIB"
"gemm-graph56-pre-product|gemm|$LO|$G56 $HIB"
"gemm-graph56-pre-bridge300-c1|gemm|$LO|$G56 TAIL_US=300 TAIL_MODE=bridge CUDA_DEVICE_MAX_CONNECTIONS=1 $HI"
"gemm-small-pre40-product-mps|gemm|CUDA_MPS_PIPE_DIRECTORY=$W/mpsT CUDA_MPS_LOG_DIRECTORY=$W/mpsTlog $NVT --priority low|$SMALL PRE_US=40 CUDA_MPS_PIPE_DIRECTORY=$W/mpsT CUDA_MPS_LOG_DIRECTORY=$W/mpsTlog $NVT --priority high"
"gemm-small-pre40-bridge300-c1|gemm|$LO|$SMALL PRE_US=40 TAIL_US=300 TAIL_MODE=bridge CUDA_DEVICE_MAX_CONNECTIONS=1 $HI"
"gemm-long8-product-mps|gemm|CUDA_MPS_PIPE_DIRECTORY=$W/mpsT CUDA_MPS_LOG_DIRECTORY=$W/mpsTlog $NVT --priority low|$LONG8 CUDA_MPS_PIPE_DIRECTORY=$W/mpsT CUDA_MPS_LOG_DIRECTORY=$W/mpsTlog $NVT --priority high"
"gemm-long|gemm|$LO|$LONG $HI"
"gemm-long-bridge0|gemm|$LO|$LONG TAIL_US=0 TAIL_MODE=bridge $HI"
"gemm-small-bridge300-mps|gemm|CUDA_MPS_PIPE_DIRECTORY=$W/mpsT CUDA_MPS_LOG_DIRECTORY=$W/mpsTlog $NVT --priority low --yield slice|$SMALL TAIL_US=300 TAIL_MODE=bridge CUDA_MPS_PIPE_DIRECTORY=$W/mpsT CUDA_MPS_LOG_DIRECTORY=$W/mpsTlog NVTASKSET_BRIDGE=0 $NVT --priority high --yield slice"
"gemm-small-product|gemm|$LO|$SMALL $HIB"
"gemm-decode-product|gemm|$LO|$DEC $HIB"
"alone-small-product|-||$SMALL $HIB"
"gemm-small-product-mps|gemm|CUDA_MPS_PIPE_DIRECTORY=$W/mpsT CUDA_MPS_LOG_DIRECTORY=$W/mpsTlog $NVT --priority low|$SMALL CUDA_MPS_PIPE_DIRECTORY=$W/mpsT CUDA_MPS_LOG_DIRECTORY=$W/mpsTlog $NVT --priority high"
"spin30-small|spin|CTA_US=30 $LO|$SMALL $HI"
"spin30-small-cta|spin|CTA_US=30 LD_PRELOAD=$W/rmprobe.so RMP_CILP=1 RMP_LOG=$W/pm-spin30-cta $LO|$SMALL $HI"
"spin30-small-wfi|spin|CTA_US=30 LD_PRELOAD=$W/rmprobe.so RMP_CILP=0 RMP_LOG=$W/pm-spin30-wfi $LO|$SMALL $HI"
"spin30-one|spin|CTA_US=30 $LO|$ONE $HI"
"spin30-one-cta|spin|CTA_US=30 LD_PRELOAD=$W/rmprobe.so RMP_CILP=1 RMP_LOG=$W/pm-spin30-one-cta $LO|$ONE $HI"
"spin2ms-small|spin|CTA_US=2000 $LO|$SMALL $HI"
"spin2ms-small-cta|spin|CTA_US=2000 LD_PRELOAD=$W/rmprobe.so RMP_CILP=1 RMP_LOG=$W/pm-spin2ms-cta $LO|$SMALL $HI"
"heavy30-small|heavy|CTA_US=30 $LO|$SMALL $HI"
"heavy30-small-cta|heavy|CTA_US=30 LD_PRELOAD=$W/rmprobe.so RMP_CILP=1 RMP_LOG=$W/pm-heavy30-cta $LO|$SMALL $HI"
"gemm2k-small-nowatch|gemm|GEMM_N=2048 WATCH_OFF=1 $LO|$SMALL $HI"
"gemm2k-small-nowatch-cta|gemm|GEMM_N=2048 WATCH_OFF=1 LD_PRELOAD=$W/rmprobe.so RMP_CILP=1 RMP_LOG=$W/pm-gemm2k-cta $LO|$SMALL $HI"
"gemm-small-nowatch-cta|gemm|WATCH_OFF=1 LD_PRELOAD=$W/rmprobe.so RMP_CILP=1 RMP_LOG=$W/pm-gemm-cta $LO|$SMALL $HI"
"alone-eager-g0-product|-||$EAGER LGAP_US=0 $HIB"
"gemm-eager-g0-product|gemm|$LO|$EAGER LGAP_US=0 $HIB"
"alone-eager-g5-product|-||$EAGER LGAP_US=5 $HIB"
"gemm-eager-g5-product|gemm|$LO|$EAGER LGAP_US=5 $HIB"
"alone-eager-g10-product|-||$EAGER LGAP_US=10 $HIB"
"gemm-eager-g10-product|gemm|$LO|$EAGER LGAP_US=10 $HIB"
"alone-eager-g20-product|-||$EAGER LGAP_US=20 $HIB"
"gemm-eager-g20-product|gemm|$LO|$EAGER LGAP_US=20 $HIB"
"alone-eager-g40-product|-||$EAGER LGAP_US=40 $HIB"
"gemm-eager-g40-product|gemm|$LO|$EAGER LGAP_US=40 $HIB"
"gemm-eager-g10|gemm|$LO|$EAGER LGAP_US=10 $HI"
"gemm-eager-g40|gemm|$LO|$EAGER LGAP_US=40 $HI"
"gemm-eager-g5-hold1|gemm|$LO|$EAGER LGAP_US=5 NVTASKSET_BRIDGE_HOLD=1 $HIB"
"gemm-eager-g10-hold1|gemm|$LO|$EAGER LGAP_US=10 NVTASKSET_BRIDGE_HOLD=1 $HIB"
"gemm-eager-g20-hold1|gemm|$LO|$EAGER LGAP_US=20 NVTASKSET_BRIDGE_HOLD=1 $HIB"
"gemm-eager-g40-hold1|gemm|$LO|$EAGER LGAP_US=40 NVTASKSET_BRIDGE_HOLD=1 $HIB"
"alone-eager-g80-product|-||$EAGER LGAP_US=80 $HIB"
"gemm-eager-g80-product|gemm|$LO|$EAGER LGAP_US=80 $HIB"
"gemm-eager-g80-hold0|gemm|$LO|$EAGER LGAP_US=80 NVTASKSET_BRIDGE_HOLD=0 $HIB"
"gemm-eager-g80-hold1|gemm|$LO|$EAGER LGAP_US=80 NVTASKSET_BRIDGE_HOLD=1 $HIB"
"static-eager-g80|gemm|$STB|$EAGER LGAP_US=80 $STS"
"gemm-eager-g10-hold0|gemm|$LO|$EAGER LGAP_US=10 NVTASKSET_BRIDGE_HOLD=0 $HIB"
"alone-eager-g10-hold1|-||$EAGER LGAP_US=10 NVTASKSET_BRIDGE_HOLD=1 $HIB"
"alone-eager-g10-hold0|-||$EAGER LGAP_US=10 NVTASKSET_BRIDGE_HOLD=0 $HIB"
"alone-small-pre40-hold1|-||$SMALL PRE_US=40 NVTASKSET_BRIDGE_HOLD=1 $HIB"
"gemm-small-pre40-hold1|gemm|$LO|$SMALL PRE_US=40 NVTASKSET_BRIDGE_HOLD=1 $HIB"
"gemm-long8-hold1|gemm|$LO|$LONG8 NVTASKSET_BRIDGE_HOLD=1 $HIB"
"gemm-eager-g5-hold0|gemm|$LO|$EAGER LGAP_US=5 NVTASKSET_BRIDGE_HOLD=0 $HIB"
"gemm-eager-g20-hold0|gemm|$LO|$EAGER LGAP_US=20 NVTASKSET_BRIDGE_HOLD=0 $HIB"
"gemm-eager-g40-hold0|gemm|$LO|$EAGER LGAP_US=40 NVTASKSET_BRIDGE_HOLD=0 $HIB"
"gemm-small-pre40-hold0|gemm|$LO|$SMALL PRE_US=40 NVTASKSET_BRIDGE_HOLD=0 $HIB"
"gemm-small-hold0|gemm|$LO|$SMALL NVTASKSET_BRIDGE_HOLD=0 $HIB"
"gemm-decode-hold0|gemm|$LO|$DEC NVTASKSET_BRIDGE_HOLD=0 $HIB"
"gemm-long8-hold0|gemm|$LO|$LONG8 NVTASKSET_BRIDGE_HOLD=0 $HIB"
"static-eager-g0|gemm|$STB|$EAGER LGAP_US=0 $STS"
"static-eager-g5|gemm|$STB|$EAGER LGAP_US=5 $STS"
"static-eager-g10|gemm|$STB|$EAGER LGAP_US=10 $STS"
"static-eager-g20|gemm|$STB|$EAGER LGAP_US=20 $STS"
"static-eager-g40|gemm|$STB|$EAGER LGAP_US=40 $STS"
"static-alone-eager-g5|-||$EAGER LGAP_US=5 $STS"
"static-alone-eager-g10|-||$EAGER LGAP_US=10 $STS"
"static-alone-eager-g20|-||$EAGER LGAP_US=20 $STS"
"static-small|gemm|$STB|$SMALL $STS"
"static-alone-small|-||$SMALL $STS"
"gemm-small-wait|gemm|$LO|$SMALL WAIT=1 $HI"
"gemm-small-wait-late100|gemm|$LO|$SMALL WAIT=1 WAIT_LATE_US=100 $HI"
"gemm-small-wait-late300|gemm|$LO|$SMALL WAIT=1 WAIT_LATE_US=300 $HI"
"gemm-small-wait-late1000|gemm|$LO|$SMALL WAIT=1 WAIT_LATE_US=1000 $HI"
"alone-small-wait-late300|-||$SMALL WAIT=1 WAIT_LATE_US=300 $HI"
"gemm-small-wait-late300-mps|gemm|CUDA_MPS_PIPE_DIRECTORY=$W/mpsT CUDA_MPS_LOG_DIRECTORY=$W/mpsTlog $NVT --priority low --yield slice|$SMALL WAIT=1 WAIT_LATE_US=300 CUDA_MPS_PIPE_DIRECTORY=$W/mpsT CUDA_MPS_LOG_DIRECTORY=$W/mpsTlog NVTASKSET_BRIDGE=0 $NVT --priority high --yield slice"
"gemm-small-tside2-300-mps|gemm|CUDA_MPS_PIPE_DIRECTORY=$W/mpsT CUDA_MPS_LOG_DIRECTORY=$W/mpsTlog $NVT --priority low --yield slice|$SMALL TAIL_US=300 TAIL_MODE=side2 CUDA_MPS_PIPE_DIRECTORY=$W/mpsT CUDA_MPS_LOG_DIRECTORY=$W/mpsTlog NVTASKSET_BRIDGE=0 $NVT --priority high --yield slice"
)
want=" $* "
for p in "${PHASES[@]}"; do
	IFS='|' read -r name bmode blaunch slaunch <<<"$p"
	[ $# -gt 0 ] && [[ $want != *" $name "* ]] && continue
	echo "== $name" | tee -a "$O/run.log"
	rm -f "$O/$name.batch"
	head -c 4096 /dev/zero >"$W/flag"
	head -c 4096 /dev/zero >"$F"
	bpid=
	if [ "$bmode" != - ]; then
		setsid timeout -k 5 40 env $blaunch "$W/tl" batch "$bmode" 12 "$O/$name.batch" >"$O/$name.blog" 2>&1 &
		bpid=$!
		for _ in $(seq 100); do grep -q ready "$O/$name.blog" 2>/dev/null && break; sleep 0.1; done
		sleep 1.5
	fi
	hog=
	if [[ $name == *-hog4* ]]; then
		setsid timeout -k 5 70 taskset -c 4 bash -c 'while :; do :; done' &
		hog=$!
	fi
	timeout 60 env $slaunch "$W/tl" svc "$O/$name.svc" >"$O/$name.log" 2>&1
	echo "svc rc $?" >>"$O/$name.log"
	if [ -n "$hog" ]; then
		kill -TERM -- -"$hog" 2>/dev/null
		wait "$hog"
	fi
	if [ -n "$bpid" ]; then
		kill -TERM -- -"$bpid" 2>/dev/null
		wait "$bpid"; echo "batch rc $?" >>"$O/$name.blog"
	fi
	if [[ $name == static-* ]]; then
		echo quit | CUDA_MPS_PIPE_DIRECTORY=$W/mpsS timeout 10 nvidia-cuda-mps-control 2>/dev/null
	fi
	if [[ $name == *-mps ]]; then
		for l in low high; do echo quit | CUDA_MPS_PIPE_DIRECTORY=$W/mpsT-$l timeout 10 nvidia-cuda-mps-control 2>/dev/null; done
	fi
	tail -2 "$O/$name.log"
done
python3 "$T/analyze.py" "$O" | tee "$O/timeline.txt"
cp "$W"/gate* "$W"/pm-* "$O/" 2>/dev/null
pgrep -a nvidia-cuda-mps && echo "MPS daemons still running"
exit 0
