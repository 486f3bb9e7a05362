#!/bin/bash
# Run G27: commit 2d548fe (build/dev/new) on an H200: a process given a CDI priority device's
# NVTASKSET_PRIORITY=LEVEL,yield=auto and the shim (LD_PRELOAD), outside MPS: alone (no
# partition device: time-sliced, its groups at the level's timeslice) and with NVTASKSET_CDI set
# (a partition device beside it: client). -l --json reads back its ways and its groups.
set -u
cd build/dev/new || exit 1
J=$PWD/../../.jsonc
make -j16 "JSONC_CFLAGS=-I$J/include -I$J/include/json-c" "JSONC_LIBS=$J/lib/libjson-c.a" all >"$OUT/build.log" 2>&1 || { tail -30 "$OUT/build.log"; exit 1; }
NVT=$PWD/build/bin/nvtaskset SHIM=$PWD/build/lib/nvtaskset/libnvtaskset.so
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; date -u
NVTASKSET_RUNDIR=$(mktemp -d)
export NVTASKSET_RUNDIR CUDA_MPS_PIPE_DIRECTORY=/dev/null
for case in alone:high alone:low beside:high beside:low; do
	where=${case%%:*} level=${case#*:}
	extra=(); [ "$where" = beside ] && extra=(NVTASKSET_CDI=gpc=0-1)
	env "${extra[@]}" NVTASKSET_PRIORITY="$level,yield=auto" LD_PRELOAD="$SHIM" timeout 60 python3 -c "
import os, torch, time
x = torch.ones(4096, 4096, device='cuda')
print('env', os.environ.get('CUDA_DEVICE_MAX_CONNECTIONS'), os.environ.get('CUDA_MPS_CLIENT_PRIORITY'), flush=True)
open('$OUT/up.$case', 'w').close()
t = time.time()
while time.time() - t < 8:
    x = x @ x; x = x / x.norm(); torch.cuda.synchronize()
" >"$OUT/app.$case" 2>&1 &
	p=$!
	for i in $(seq 1 100); do [ -e "$OUT/up.$case" ] && break; sleep 0.2; done
	sleep 1
	"$NVT" -l --json >"$OUT/l.$case.json" 2>"$OUT/l.$case.err"
	python3 - "$OUT/l.$case.json" "$p" "$case" <<'PY'
import json, sys
d = json.load(open(sys.argv[1])); pid = int(sys.argv[2])
t = [x for x in d["tasks"] if x["pid"] == pid]
if not t: print(sys.argv[3], "task not listed"); sys.exit()
g = t[0]["gpus"][0]
print(sys.argv[3], "priority", g.get("priority"), "yield", json.dumps(g.get("yield"))[:400])
PY
	wait $p; echo "$case rc $?: $(head -3 "$OUT/app.$case" | tr '\n' ' ')"
done
date -u
