#!/bin/bash
# Run G24: commit a743b60 (build/dev/new) on an H200: --mps stop beside a real MPS client
# (refused, naming it; --force stops it), the daemon's own "ps" answer; then check-gpu's
# end-to-end and graph parts (ONLY_E2E), check-gpu-preempt and check-gpu-bridge, each cut.
set -u
cd build/dev/new || exit 1
J=$PWD/../../.jsonc
FL=("JSONC_CFLAGS=-I$J/include -I$J/include/json-c" "JSONC_LIBS=$J/lib/libjson-c.a")
NVT=$PWD/build/bin/nvtaskset
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
date -u
mkdir -p "$OUT/r"
make -j16 "${FL[@]}" all >"$OUT/build.log" 2>&1 || { tail -30 "$OUT/build.log"; exit 1; }
echo "built $(date +%T)"
one() { # name cut make-args...
	local n=$1 t=$2; shift 2
	echo "== $n $(date +%T)"
	timeout "$t" env "$@" >"$OUT/r/$n.console" 2>&1
	echo "rc $? $(date +%T)"
	grep -c "^PASS" "$OUT/r/$n.console"
	grep "^FAIL\|passed\|failed\|^SKIP" "$OUT/r/$n.console" | cut -c1-250 | tail -12
	"$NVT" --mps stop --force >/dev/null 2>&1
}
if [ "${1:-a}" = b ]; then
	one preempt 100 make "${FL[@]}" check-gpu-preempt GPU_LOG="$OUT/r/gpu"
	one bridge 120 make "${FL[@]}" check-gpu-bridge GPU_LOG="$OUT/r/gpu"
else
# ---- --mps stop beside a real client
M=$OUT/r/mpsstop; mkdir -p "$M"
timeout 30 "$NVT" --mps start >"$M/start.txt" 2>&1; echo "start rc $?"
timeout 120 "$NVT" -g 0-1 python3 -c "
import torch, time, sys
x = torch.ones(1024, device='cuda')
print('up', flush=True)
t = time.time()
try:
    while time.time() - t < 60:
        x = x * 1.0001; torch.cuda.synchronize(); time.sleep(0.01)
    print('ended after 60 s', flush=True)
except Exception as e:
    print('client error after %.1f s: %s' % (time.time() - t, str(e)[:200]), flush=True); sys.exit(3)
" >"$M/client.txt" 2>&1 &
cl=$!
for i in $(seq 1 300); do grep -q up "$M/client.txt" && break; sleep 0.2; done
echo "client up: $(cat "$M/client.txt" | head -2)"
pd=$("$NVT" --mps status --json 2>/dev/null | python3 -c 'import json,sys; print(json.load(sys.stdin)["pipe_directory"])')
echo ps | CUDA_MPS_PIPE_DIRECTORY=$pd timeout 10 nvidia-cuda-mps-control >"$M/ps.txt" 2>&1; echo "raw ps rc $?"; cat "$M/ps.txt"
timeout 10 "$NVT" --mps status >"$M/status.txt" 2>&1; echo "status rc $?"; cat "$M/status.txt" | head -12
s=$(date +%s.%N); timeout 40 "$NVT" --mps stop >"$M/stop.txt" 2>&1; rc=$?; e=$(date +%s.%N)
echo "stop rc $rc in $(python3 -c "print(round($e-$s,2))") s: $(cat "$M/stop.txt")"
pgrep -a nvidia-cuda-mps | grep -v defunct | head -3
s=$(date +%s.%N); timeout 40 "$NVT" --mps stop --force >"$M/force.txt" 2>&1; rc=$?; e=$(date +%s.%N)
echo "stop --force rc $rc in $(python3 -c "print(round($e-$s,2))") s: $(cat "$M/force.txt")"
wait $cl; echo "client rc $?: $(tail -3 "$M/client.txt")"
pgrep -a nvidia-cuda-mps | grep -v defunct && echo "MPS daemons still running"
one e2e 330 ONLY_E2E=1 SKIP_SMCOUNT=1 SKIP_MEM=1 SKIP_SMCTRL=1 make "${FL[@]}" check-gpu GPU_LOG="$OUT/r/gpu"
fi
pgrep -a nvidia-cuda-mps | grep -v defunct && echo "MPS daemons still running"
date -u
rm -rf "$OUT/r/gpu/bridge/bridgeword" "$OUT/r/gpu/bridge/copyapp"
find "$OUT/r" \( -name '*.svc' -o -name '*.batch' -o -name '*.so' -o -perm -u+x -type f \) -delete
tar -czf "$OUT/g24${1:-a}.tgz" -C "$OUT" r && rm -rf "$OUT/r"
exit 0
