#!/bin/bash
# Run J3: the driver calls of jaxsvc.py's steps (apitrace.c, CUPTI's driver API callbacks; no
# nvtaskset): counts, and a stretch of calls with their times.
set -u
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
date -u
CUP=$(find /usr /opt /root /home -name 'libcupti.so*' 2>/dev/null | grep -v '/proc/' | head -5)
echo "cupti: $CUP"
INC=$(find /usr /opt /root /home -name cupti.h 2>/dev/null | grep -v '/proc/' | head -1)
echo "cupti.h: $INC"
LIB=$(echo "$CUP" | head -1)
gcc -O2 -shared -fPIC -I"$(dirname "$INC")" -I/usr/local/cuda/include -o $OUT/apitrace.so build/dev/apitrace.c "$LIB" -Wl,-rpath,"$(dirname "$LIB")" 2>&1 | tail -5
ls -la $OUT/apitrace.so || exit 0
for m in ready item; do
	APITRACE_OUT=$OUT/api-$m APITRACE_SKIP=30000 LD_PRELOAD=$OUT/apitrace.so timeout 120 python3 build/dev/jaxsvc.py $m 60 2>&1 | tail -3
done
for f in $OUT/api-*; do echo "== $f"; grep '^#\|^count' "$f" | sort -k3 -n -r | head -40; done
rm -f $OUT/apitrace.so
date -u
exit 0
