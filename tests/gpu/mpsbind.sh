#!/usr/bin/env bash
# make check-gpu-mpsbind: a client of a priority level's MPS server that reaches it through a
# pipe directory bound at another path, as a container given nvtaskset/priority=LEVEL-slice
# does (its hook binds the level daemon's pipe directory, PIPE-low, over the container's
# CUDA_MPS_PIPE_DIRECTORY, PIPE: docs/containers.md, "MPS"). nvtaskset starts the low level's
# daemon (the shim in its server); a PyTorch program runs in a mount namespace of its own where
# PIPE-low is bound at PIPE, with CUDA_MPS_PIPE_DIRECTORY=PIPE and no daemon at PIPE's own
# directory; the test checks that the program ran, that the level daemon's ps lists it as a
# client of its server while it runs, and that the server's channel groups read back at 5 us.
# Needs root (a mount namespace), an NVIDIA GPU, nvidia-cuda-mps-control, PyTorch, nvtaskset
# built (make all). Every program has a time limit; the daemon is stopped.
#
# Usage: tests/gpu/mpsbind.sh [LOGDIR]   (default: build/gpu)
set -u
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
NVT=$ROOT/build/bin/nvtaskset
LOG=${1:-$ROOT/build/gpu}
mkdir -p "$LOG"
[ "$(id -u)" = 0 ] || { echo "check-gpu-mpsbind: needs root (unshare --mount)" >&2; exit 1; }
W=$(mktemp -d /tmp/nvtaskset-mpsbind.XXXXXX)
export CUDA_MPS_PIPE_DIRECTORY=$W/mps CUDA_MPS_LOG_DIRECTORY=$W/log
mkdir -p "$W/mps"
fails=0
check() {
	if [ "$1" = 0 ]; then echo "PASS $2"; else echo "FAIL $2"; fails=$((fails + 1)); fi
}
cleanup() {
	echo quit | CUDA_MPS_PIPE_DIRECTORY=$W/mps-low timeout 10 nvidia-cuda-mps-control 2>/dev/null
	rm -rf "$W"
}
trap cleanup EXIT
# The low level's daemon, as --cdi --with-mps starts it (a task of the level starts it here).
timeout 120 "$NVT" --priority low --yield slice true >"$LOG/mpsbind.start" 2>&1
check $? "the low level's daemon started: $(cat "$LOG/mpsbind.start")"
[ ! -e "$W/mps/nvidia-cuda-mps-control.pid" ]
check $? "no daemon on the shared pipe directory $W/mps"
# The client: PIPE-low bound at PIPE in its own mount namespace; its shim given the level.
timeout 120 unshare --mount --propagation private sh -c '
	mount --bind "$1-low" "$1" || exit 9
	exec env LD_PRELOAD="$2" NVTASKSET_PRIORITY=low,yield=slice python3 -c "
import sys, time, torch
x = torch.ones(4096, 4096, device=\"cuda\")
torch.cuda.synchronize()
open(sys.argv[1], \"w\").close()
t = time.time()
while time.time() - t < 10:
    x = (x @ x).clamp(-1, 1)
torch.cuda.synchronize()
print(\"ok\", float(x.sum()))
" "$3"' - "$W/mps" "$ROOT/build/lib/nvtaskset/libnvtaskset.so" "$W/ready" >"$LOG/mpsbind.client" 2>&1 &
client=$!
# (its first kernel done: it is a client now, for 10 s more)
for ((i = 0; i < 600; i++)); do
	[ -e "$W/ready" ] || ! kill -0 "$client" 2>/dev/null && break
	sleep 0.1
done
echo ps | CUDA_MPS_PIPE_DIRECTORY=$W/mps-low timeout 10 nvidia-cuda-mps-control >"$LOG/mpsbind.ps" 2>&1
"$NVT" -l --json >"$LOG/mpsbind.json" 2>&1
wait "$client"
check $? "the client ran: $(tail -2 "$LOG/mpsbind.client")"
grep -q python "$LOG/mpsbind.ps"
check $? "the level daemon's ps lists the client: $(cat "$LOG/mpsbind.ps")"
python3 - "$LOG/mpsbind.json" <<'PY'
import json, sys
tasks = json.load(open(sys.argv[1]))["tasks"]
ts = [g["yield"].get("timeslice_us") for t in tasks if "mps-server" in t.get("command", "")
      for g in t["gpus"] if (g.get("yield") or {}).get("channel_groups")]
sys.exit(0 if 5 in ts else 1)
PY
check $? "the level server's channel groups at 5 us: $(head -c 600 "$LOG/mpsbind.json")"
exit $((fails > 0))
