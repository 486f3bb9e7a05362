#!/bin/bash
# Run G30: root's default MPS pipe directories made first by another user, on an H200 under the
# real MPS control daemon (build/dev/new): the start renames her entry aside and a PyTorch
# client joins root's daemon; the same for the low level's directory; then check-gpu-mpsbind.
set -u
cd build/dev/new || exit 1
J=$PWD/../../.jsonc
FL=("JSONC_CFLAGS=-I$J/include -I$J/include/json-c" "JSONC_LIBS=$J/lib/libjson-c.a")
NVT=$PWD/build/bin/nvtaskset
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
date -u
make -j16 "${FL[@]}" all >"$OUT/build.log" 2>&1 || { tail -30 "$OUT/build.log"; exit 1; }
useradd -M -s /usr/sbin/nologin nvtsq 2>/dev/null
U=$(id -u nvtsq)
as_her() { setpriv --reuid="$U" --regid="$U" --clear-groups "$@"; }
PY='import sys,time,torch; p=torch.cuda.get_device_properties(0); x=torch.randn(4096,4096,device="cuda"); y=(x@x).sum(); torch.cuda.synchronize(); print("sms", p.multi_processor_count, "ok", bool(torch.isfinite(y))); sys.stdout.flush(); time.sleep(float(sys.argv[1]))'
echo "== before: $(ls -ld /tmp/nvidia-mps* 2>&1)"
as_her mkdir -m 755 /tmp/nvidia-mps /tmp/nvidia-mps-low
ls -ldn /tmp/nvidia-mps /tmp/nvidia-mps-low
echo "== a start beside her /tmp/nvidia-mps"
timeout 120 "$NVT" -g 0-1 python3 -c "$PY" 8 >"$OUT/a.out" 2>&1 &
A=$!
for _ in $(seq 60); do grep -q "^sms" "$OUT/a.out" && break; sleep 0.5; done
cat "$OUT/a.out"
echo "-- --mps status while it runs"
timeout 20 "$NVT" --mps status
timeout 20 "$NVT" -l
wait $A; echo "rc $?"; cat "$OUT/a.out"
ls -ldn /tmp/nvidia-mps /tmp/nvidia-mps.squatted.* 2>&1
echo "== a time-sliced start beside her /tmp/nvidia-mps-low"
timeout 120 "$NVT" --priority low python3 -c "$PY" 0 2>&1; echo "rc $?"
ls -ldn /tmp/nvidia-mps-low /tmp/nvidia-mps-low.squatted.* 2>&1
timeout 20 "$NVT" --mps status
echo "== stop"
timeout 30 "$NVT" --mps stop --force; echo "rc $?"
pgrep -a nvidia-cuda-mps | grep -v defunct && echo "MPS daemons still running"
rm -rf /tmp/nvidia-mps.squatted.* /tmp/nvidia-mps-low.squatted.*
userdel nvtsq
echo "== check-gpu-mpsbind $(date +%T)"
timeout 240 make "${FL[@]}" check-gpu-mpsbind GPU_LOG="$OUT/mpsbind" >"$OUT/mpsbind.console" 2>&1
echo "rc $? $(date +%T)"
grep "^PASS\|^FAIL\|passed" "$OUT/mpsbind.console" | cut -c1-200
"$NVT" --mps stop --force >/dev/null 2>&1
pgrep -a nvidia-cuda-mps | grep -v defunct && echo "MPS daemons still running"
date -u
