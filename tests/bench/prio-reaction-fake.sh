#!/usr/bin/env bash
# The priority agent's reaction time with the fake driver (no GPU), per poll interval: a high
# task resumes launching after an idle spell -> the low task's first launch on its guarded share,
# from CLOCK_MONOTONIC stamps of both (fakeapp FAKEAPP_STAMP); and the agent's CPU time.
# Usage: make all build/test/fakeapp-dlopen; [POLLS="100 500"] [REPS=10] tests/bench/prio-reaction-fake.sh
set -u
ROOT=$(cd "$(dirname "$0")/../.." && pwd); B=$ROOT/build; T=$B/test; NVT=$B/bin/nvtaskset; APP=$T/fakeapp-dlopen
WORK=$(mktemp -d /tmp/prio-react.XXXX); chmod 755 $WORK
export NVTASKSET_RUNDIR=$WORK/run; mkdir -m 1777 $NVTASKSET_RUNDIR
export LD_LIBRARY_PATH=$T/fake NVTASKSET_DRIVER_TIMEOUT=20 NVTASKSET_CACHE_DIR=$WORK/cache
export CUDA_MPS_PIPE_DIRECTORY=$WORK/mps-pipe CUDA_MPS_LOG_DIRECTORY=$WORK/mps-log
$NVT --calibrate >/dev/null 2>&1
for poll in ${POLLS:-100 500 2000}; do
  $NVT --agent --hold 30 --poll $poll --guard 4 2>$WORK/agent.log & AG=$!
  sleep 0.2
  touch $WORK/hi.pause; rm -f $WORK/lo.stop $WORK/hi.stop
  FAKEAPP_STAMP=$WORK/lo.stamp $NVT --no-mps --priority low -c 9-65 $APP loop $WORK/lo.stop $WORK/lo.state >/dev/null 2>&1 & LO=$!
  FAKEAPP_PAUSE=$WORK/hi.pause FAKEAPP_STAMP=$WORK/hi.stamp $NVT --no-mps --priority high -c 0-8 $APP loop $WORK/hi.stop $WORK/hi.state >/dev/null 2>&1 & HI=$!
  sleep 0.5
  res=""
  for i in $(seq ${REPS:-10}); do
    : > $WORK/lo.stamp; : > $WORK/hi.stamp
    rm -f $WORK/hi.pause
    for k in $(seq 200); do grep -q "^[0-9]* [0-9]" $WORK/lo.stamp 2>/dev/null && [ "$(cat $WORK/lo.state)" != 0-65 ] && break; sleep 0.01; done
    t0=$(awk '$2=="resume"{print $1; exit}' $WORK/hi.stamp); t1=$(awk '$2!="0-65"{print $1; exit}' $WORK/lo.stamp)
    res="$res $(awk -v a=$t0 -v b=$t1 'BEGIN{printf "%.2f", (b-a)/1e6}')"
    touch $WORK/hi.pause
    for k in $(seq 300); do [ "$(cat $WORK/lo.state)" == 0-65 ] && break; sleep 0.01; done
    sleep 0.05
  done
  echo "poll $poll us: reaction ms:$res" | tee -a $WORK/summary
  echo "$res" | tr ' ' '\n' | grep . | sort -n | awk -v p=$poll '{a[NR]=$1} END {printf "poll %s us: n=%d median %.2f max %.2f ms\n", p, NR, a[int((NR+1)/2)], a[NR]}'
  # The agent's CPU time over 5 s with the two managed tasks launching.
  rm -f $WORK/hi.pause; sleep 0.2
  c0=$(awk '{print $14 + $15}' /proc/$AG/stat); sleep 5; c1=$(awk '{print $14 + $15}' /proc/$AG/stat)
  echo "poll $poll us: agent CPU $(awk -v a=$c0 -v b=$c1 -v hz=$(getconf CLK_TCK) 'BEGIN{printf "%.1f", 100*(b-a)/hz/5}')% of a core (2 managed tasks)"
  touch $WORK/lo.stop $WORK/hi.stop; wait $LO $HI
  kill $AG; wait $AG
done
rm -rf $WORK
