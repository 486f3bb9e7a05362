#!/usr/bin/env bash
# The exporter scraped by a real Prometheus (Debian's prometheus, 2.42 here), on this machine,
# on the loopback interface only (docs/observability.md): two tasks on the fake H100, one with
# a priority, `nvtaskset --exporter 127.0.0.1:0`, and a Prometheus of this run's own (its
# configuration, data and port in a temporary directory) scraping it every second. Then its
# HTTP API must say: the target is up with no scrape error; each task's TPCs and SMs as the
# exporter serves them; its launches counted, and rising (rate() over 0); the GPU's free TPCs;
# the priority's state; and every scrape answered beside one local user's 300 slow connections,
# a Prometheus started while they keep the exporter's table full among them.
# Needs no GPU and no root; fails, saying what to install, where
# Prometheus or the exporter is missing (CI installs both).
#
# Usage: tests/prometheus/run.sh   (`make check-prometheus`)
set -u
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
B=$ROOT/build
NVT=$B/bin/nvtaskset
APP=$B/test/fakeapp-dlopen
FAKEDIR=$B/test/fake
# Hang guards only: Prometheus starts and scrapes in seconds here.
LIMIT=${PROMETHEUS_TEST_TIMEOUT:-180}

fail() {
	echo "check-prometheus: FAILED: $*" >&2
	exit 1
}
command -v prometheus >/dev/null ||
	fail "needs Prometheus (Debian: apt-get install prometheus)"
[ -x "$B/lib/nvtaskset/nvtaskset-exporter" ] ||
	fail "the exporter was not built: it needs libmicrohttpd's header (Debian: libmicrohttpd-dev), then make"
for f in "$NVT" "$APP" "$FAKEDIR/libcuda.so.1"; do
	[ -e "$f" ] || fail "$f is missing: run make check-prometheus"
done

W=$(mktemp -d /tmp/nvtaskset-prometheus.XXXXXX)
mkdir -m 1777 "$W/run"
mkdir "$W/cache" "$W/data" "$W/mps"
# The low level's MPS pipe directory, with no daemon there: its series, 0.
mkdir -m 700 "$W/mps-low"
export LD_LIBRARY_PATH=$FAKEDIR NVTASKSET_RUNDIR=$W/run NVTASKSET_CACHE_DIR=$W/cache \
	NVTASKSET_PROC_NVIDIA=$W/no-proc-nvidia CUDA_MPS_PIPE_DIRECTORY=$W/mps \
	CUDA_MPS_LOG_DIRECTORY=$W/mps-log
unset LD_PRELOAD NVTASKSET_PARTITION CUDA_VISIBLE_DEVICES NVTASKSET_QUIET
PIDS=()
cleanup() {
	local pid
	touch "$W/stop"
	for pid in "${PIDS[@]}"; do
		kill -TERM "$pid" 2>/dev/null
	done
	wait 2>/dev/null
	rm -rf "$W"
}
trap cleanup EXIT

# until SECONDS CMD...: CMD succeeds before SECONDS pass (every 0.2 s), or fails.
until_ok() {
	local end=$((SECONDS + $1))
	shift
	while ! "$@"; do
		[ "$SECONDS" -lt "$end" ] || return 1
		sleep 0.2
	done
}
# query PROMQL: the value of its first result (instant query), or nothing.
query() {
	python3 - "$PROM" "$1" <<'PY'
import json, sys, urllib.parse, urllib.request
url = "http://%s/api/v1/query?query=%s" % (sys.argv[1], urllib.parse.quote(sys.argv[2]))
try:
    r = json.load(urllib.request.urlopen(url, timeout=10))
except OSError:
    sys.exit(0)
res = r.get("data", {}).get("result", [])
if r.get("status") == "success" and res:
    print(res[0]["value"][1])
PY
}
# is QUERY VALUE: the query's value is VALUE now.
is() { [ "$(query "$1")" == "$2" ]; }
# above QUERY N: the query's value is over N.
above() { python3 -c 'import sys; sys.exit(not (sys.argv[1] and float(sys.argv[1]) > float(sys.argv[2])))' "$(query "$1")" "$2"; }
CHECKS=0
check() { # check WHAT CMD...: CMD holds within LIMIT seconds, or the run fails
	local what=$1
	shift
	until_ok "$LIMIT" "$@" || fail "$what (last: $(query "${@: -2:1}"))"
	CHECKS=$((CHECKS + 1))
	echo "ok: $what"
}

"$NVT" --calibrate >/dev/null 2>&1 || fail "calibrating the fake GPU"
"$NVT" --no-mps -g 1 "$APP" loop "$W/stop" "$W/a.state" >/dev/null 2>&1 &
A=$!
"$NVT" --no-mps --priority low -g 3-4 "$APP" loop "$W/stop" "$W/b.state" >/dev/null 2>&1 &
B2=$!
PIDS+=("$A" "$B2")
until_ok 60 test -s "$W/a.state" || fail "task A did not start"
until_ok 60 test -s "$W/b.state" || fail "task B did not start"

"$NVT" --exporter 127.0.0.1:0 2>"$W/exporter.err" &
EXPORTER=$! # (nvtaskset execs the exporter: this is its PID)
PIDS+=("$EXPORTER")
until_ok 30 grep -q "serving the metrics on" "$W/exporter.err" || fail "the exporter: $(cat "$W/exporter.err")"
PORT=$(sed -n 's|.*serving the metrics on http://127.0.0.1:\([0-9]*\)/metrics$|\1|p' "$W/exporter.err")

# Prometheus on a free port of the loopback interface (another program may take the port
# between the look and the start: then it is tried again, on another).
# start_prometheus [DATA]: its data in $W/dataDATA.
start_prometheus() {
	local port
	port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
	PROM=127.0.0.1:$port
	cat >"$W/prometheus.yml" <<EOF
global:
  scrape_interval: 1s
  scrape_timeout: 1s
scrape_configs:
  - job_name: nvtaskset
    static_configs:
      - targets: ['127.0.0.1:$PORT']
EOF
	prometheus --config.file="$W/prometheus.yml" --storage.tsdb.path="$W/data${1:-}" \
		--web.listen-address="$PROM" --log.level=warn >"$W/prometheus.log" 2>&1 &
	PROM_PID=$!
	until_ok 60 eval 'curl_ready || ! kill -0 "$PROM_PID" 2>/dev/null'
	kill -0 "$PROM_PID" 2>/dev/null
}
curl_ready() {
	python3 -c 'import sys, urllib.request; urllib.request.urlopen("http://%s/-/ready" % sys.argv[1], timeout=5)' \
		"$PROM" 2>/dev/null
}
# prometheus_up [DATA]: start_prometheus, tried three times.
prometheus_up() {
	local try
	for try in 1 2 3; do
		start_prometheus "$@" && break
		[ "$try" -lt 3 ] || fail "Prometheus did not start: $(tail -5 "$W/prometheus.log")"
	done
	PIDS+=("$PROM_PID")
}
prometheus_up
echo "check-prometheus: Prometheus $(prometheus --version 2>&1 | head -1 | awk '{print $3}') on $PROM scrapes the exporter on 127.0.0.1:$PORT"

check "the target is up" is 'up{job="nvtaskset"}' 1
check "task A's TPCs" is "nvtaskset_task_tpcs{pid=\"$A\"}" 8
check "task A's SMs" is "nvtaskset_task_sms{pid=\"$A\"}" 16
check "task B's TPCs" is "nvtaskset_task_tpcs{pid=\"$B2\",priority=\"low\"}" 16
check "task A's launches counted" above "nvtaskset_task_launches_total{pid=\"$A\"}" 0
check "task A's launches rising" above "rate(nvtaskset_task_launches_total{pid=\"$A\"}[5s])" 0
check "the GPU's free TPCs" is 'nvtaskset_gpu_free_tpcs{gpu="0"}' 42
check "B's state: no higher task" is "nvtaskset_task_state{pid=\"$B2\",state=\"own\"}" 1
check "B's waits counted" is "nvtaskset_task_waits_total{pid=\"$B2\"}" 0
VERSION=$(sed -n 's/^#define NVT_VERSION_STRING "\(.*\)"/\1/p' "$ROOT/src/nvtaskset.h")
check "the build's version" is "nvtaskset_build_info{version=\"$VERSION\"}" 1
check "the GPU's model" is 'count(nvtaskset_gpu_info{model_name=~"Fake GPU 0.*"})' 1
# The shared MPS daemon's series carries no priority label to Prometheus (priority="" is
# none): its selectors without one find it; the low level's daemon has a series of its own.
check "the shared MPS daemon, down" is "nvtaskset_mps_daemon_up{pipe_directory=\"$W/mps\",priority=\"\"}" 0
check "the shared MPS daemon's series, no priority label" is 'count(nvtaskset_mps_daemon_up{priority=""})' 1
check "the low level's MPS daemon, down" is "nvtaskset_mps_daemon_up{pipe_directory=\"$W/mps-low\",priority=\"low\"}" 0
check "the MPS daemons' series" is 'count(nvtaskset_mps_daemon_up)' 2
# No scrape failed: the target's last error is empty, and every sample was taken.
python3 - "$PROM" <<'PY' || fail "the target's health"
import json, sys, urllib.request
t = json.load(urllib.request.urlopen("http://%s/api/v1/targets" % sys.argv[1], timeout=10))
[target] = t["data"]["activeTargets"]
assert target["health"] == "up" and target["lastError"] == "", target
PY
CHECKS=$((CHECKS + 1))
check "no scrape has failed" is 'count_over_time(up{job="nvtaskset"}[1m]) - sum_over_time(up{job="nvtaskset"}[1m])' 0
# One local user's 300 slow connections (from 20 loopback addresses, each sending a header line
# every 4 s and opened again when closed) for 15 s: every scrape beside them, each on a
# connection of its own, is answered within a second.
python3 "$ROOT/tests/e2e/helpers/httpprobe.py" flood "$PORT" 300 20 15 >"$W/flood.out" 2>&1 ||
	fail "the slow connections: $(cat "$W/flood.out")"
grep -q "^ok scrapes=" "$W/flood.out" || fail "the slow connections: $(cat "$W/flood.out")"
CHECKS=$((CHECKS + 1))
echo "ok: scrapes on connections of their own beside 300 slow connections"
# And a Prometheus that comes while they keep the table full: its first connection, and every
# scrape on it, made beside them (the Prometheus above, connected before them, scrapes on a
# keep-alive connection whose next head comes within a second, never the oldest without a
# request: its scrapes beside them pass against an exporter without limits too). The flood's
# own scrapes must answer within 10 s (a flood that waits on one neither sends lines nor opens
# connections again); the exporter's descriptors are counted every 0.2 s from Prometheus's start to the
# end, and 9 in 10 of those counts must be 200 or more (its table keeps 256 of the 300).
kill -TERM "$PROM_PID"
wait "$PROM_PID" 2>/dev/null
SCRAPE_TIMEOUT=10 python3 "$ROOT/tests/e2e/helpers/httpprobe.py" flood "$PORT" 300 20 600 \
	>"$W/flood2.out" 2>&1 &
FLOOD=$!
PIDS+=("$FLOOD")
fds() { ls "/proc/$EXPORTER/fd" | wc -l; }
held() { [ "$(fds)" -ge 200 ]; }
until_ok 60 held || fail "the slow connections were not held: $(fds) descriptors; $(cat "$W/flood2.out")"
(while [ -e "/proc/$EXPORTER" ]; do fds; sleep 0.2; done) >"$W/held.txt" 2>/dev/null &
SAMPLER=$!
PIDS+=("$SAMPLER")
prometheus_up 2
check "a Prometheus started beside 300 slow connections: its scrapes answered" \
	above 'sum_over_time(up{job="nvtaskset"}[10s])' 5
kill -0 "$FLOOD" 2>/dev/null || fail "the slow connections ended early: $(cat "$W/flood2.out")"
kill -TERM "$SAMPLER"
wait "$SAMPLER" 2>/dev/null
# (9 of 10 counts: a flood a loaded machine leaves waiting a second or two for a processor
# opens again late what the deadline closed)
read -r held_n all_n least < <(awk '$1 >= 200 { h++ } NR == 1 || $1 < m { m = $1 }
	END { print h + 0, NR, m + 0 }' "$W/held.txt")
[ "$all_n" -gt 0 ] && [ $((held_n * 10)) -ge $((all_n * 9)) ] ||
	fail "the slow connections were not held while Prometheus scraped: $held_n of $all_n counts of the exporter's descriptors at 200 or more"
check "none of its scrapes failed beside them (the exporter's descriptors: 200 or more in $held_n of $all_n counts, $least at the least)" \
	is 'count_over_time(up{job="nvtaskset"}[10m]) - sum_over_time(up{job="nvtaskset"}[10m])' 0
kill -TERM "$FLOOD"
echo "check-prometheus: $CHECKS checks passed"
