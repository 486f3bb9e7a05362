#!/bin/bash
# Probe: the driver-API callback domain for CUDA graphs (see gcb.c). Needs nvcc and a GPU.
cd "$(dirname "$0")" || exit 1
set -x
CUDA=${CUDA:-/usr/local/cuda}
H=$(find / -name cupti_driver_cbid.h -not -path '*/proc/*' 2>/dev/null | head -1)
echo "header: $H"
grep -E "CBID_cuGraph|CBID_cuStreamBeginCapture|CBID_cuLaunchKernel =" "$H" | head -150
IDS=$(grep -E "CBID_cuGraph" "$H" | sed -E 's/.*= *([0-9]+).*/\1/' | paste -sd, -)
LIDS=$(grep -E "CBID_cuGraphLaunch(_ptsz)? +=" "$H" | sed -E 's/.*= *([0-9]+).*/\1/' | paste -sd, -)
echo "graph cbids: $IDS"; echo "launch cbids: $LIDS"
gcc -O2 -shared -fPIC -o /tmp/gcb.so gcb.c -I$CUDA/include -L/usr/local/nvidia/lib64 -lcuda || exit 1
nvcc -O2 -arch=sm_90 -o /tmp/gapp gapp.cu -lcuda -ldl || exit 1
if [ -z "$ONLY_REFRESH" ]; then
echo "== T1-T3 verbose, scan domains, all graph cbids, mask TPC0"
PROBE_MASK=1 GCB_DOMAIN=6 GCB_VERBOSE=1 GCB_CBIDS=$IDS LD_PRELOAD=/tmp/gcb.so timeout 60 /tmp/gapp all 2>&1 | grep -v "enable api" | head -150
echo "== T1-T3 launch-only swap test, mask TPC0"
PROBE_MASK=1 GCB_DOMAIN=6 GCB_CBIDS=$LIDS LD_PRELOAD=/tmp/gcb.so timeout 60 /tmp/gapp all 2>&1 | grep -v PROBE
echo "== T4 cost: plain"; timeout 60 /tmp/gapp cost
echo "== T4 cost: launch cb only"; LD_PRELOAD=/tmp/gcb.so timeout 60 /tmp/gapp cost 2>&1 | grep T4
echo "== T4 cost: launch cb + graph-launch api cbs"; GCB_DOMAIN=6 GCB_CBIDS=$LIDS LD_PRELOAD=/tmp/gcb.so timeout 60 /tmp/gapp cost 2>&1 | grep T4
fi
nvcc -O2 -arch=sm_90 -o /tmp/refresh refresh.cu -lcuda -ldl || exit 1
echo "== refresh in place"; PROBE_MASK=1 LD_PRELOAD=/tmp/gcb.so timeout 120 /tmp/refresh 2>&1 | grep -v PROBE
