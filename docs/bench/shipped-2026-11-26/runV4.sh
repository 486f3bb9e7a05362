#!/bin/bash
# Run V4: check-gpu-preempt and the whole timeline (make bench-timeline) on the shipped code;
# where the <defunct> MPS processes come from (their parent).
set -u
J=build/.jsonc
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
make -j16 "JSONC_CFLAGS=-I$J/include -I$J/include/json-c" JSONC_LIBS=$J/lib/libjson-c.a all >$OUT/build.log 2>&1 || { tail -30 $OUT/build.log; exit 1; }
echo "built $(date +%T) $(git rev-parse --short HEAD 2>/dev/null)"
echo "pid 1: $(cat /proc/1/comm) $(tr '\0' ' ' </proc/1/cmdline | cut -c1-100)"
ps -eo pid,ppid,stat,comm | awk 'NR == 1 || /mps/'
timeout 150 tests/gpu/preempt.sh /tmp/gp > $OUT/check-gpu-preempt.txt 2>&1; echo "check-gpu-preempt rc $? $(date +%T)"
grep -c "^PASS" $OUT/check-gpu-preempt.txt; grep "^FAIL\|failed" $OUT/check-gpu-preempt.txt | head
echo "after preempt.sh:"; ps -eo pid,ppid,stat,comm | awk 'NR == 1 || /mps/'
timeout 300 make "JSONC_CFLAGS=-I$J/include -I$J/include/json-c" JSONC_LIBS=$J/lib/libjson-c.a bench-timeline BENCH_OUT=/tmp/bt > $OUT/timeline-run.txt 2>&1
echo "timeline rc $? $(date +%T)"
cp /tmp/bt/timeline/timeline.txt $OUT/timeline.txt 2>/dev/null
cat $OUT/timeline.txt | cut -c1-150
echo "after the timeline:"; ps -eo pid,ppid,stat,comm | awk 'NR == 1 || /mps/'
for p in $(ps -eo pid,stat,comm | awk '$2 ~ /Z/ && /mps/ {print $1}'); do echo "defunct $p parent $(ps -o ppid= -p $p) $(ps -o comm= -p "$(ps -o ppid= -p $p | tr -d ' ')")"; done
exit 0
