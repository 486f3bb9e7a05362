# MPS. Sourced by tests/run-tests.sh: each t_NAME function is one test,
# run in a subshell under set -e with the helpers defined there.
# shellcheck shell=bash

t_mps_lifecycle() {
	own_mps_dirs mps_lifecycle
	local fake=$FAKEBIN
	mkdir -p "$CUDA_MPS_PIPE_DIRECTORY"
	run_rc out rc env PATH="$fake:$PATH" "$NVT" --mps status
	eq "$rc" 3
	eq "$out" "MPS control daemon: not running (pipe directory $CUDA_MPS_PIPE_DIRECTORY)"
	run_rc out rc env PATH="$fake:$PATH" "$NVT" --mps stop
	eq "$rc" 0
	eq "$out" "MPS control daemon not running"
	run_rc out rc env PATH="$fake:$PATH" "$NVT" --mps start
	eq "$rc" 0
	has "$out" "started MPS control daemon"
	run_rc out rc env PATH="$fake:$PATH" "$NVT" --mps start
	eq "$rc" 0
	has "$out" "MPS control daemon already running (pid"
	run_rc out rc env PATH="$fake:$PATH" "$NVT" --mps status --json
	eq "$rc" 0
	python3 -c 'import json,sys; d=json.loads(sys.argv[1]); assert d["running"] and d["pid"]>0' "$out" ||
		die "bad JSON: $out"
	run_rc out rc env PATH="$fake:$PATH" "$NVT" --mps stop
	eq "$rc" 0
	has "$out" "stopped MPS control daemon"
	run_rc out rc env PATH="$fake:$PATH" "$NVT" --mps status
	eq "$rc" 3
	# Starting a task starts the daemon, says how to stop it, and tells
	# CUDA where it listens.
	run_rc out rc env PATH="$fake:$PATH" "$NVT" -c 0-1 /usr/bin/env
	eq "$rc" 0
	has "$out" "nvtaskset: started the MPS control daemon (pipe directory $CUDA_MPS_PIPE_DIRECTORY); stop it with 'nvtaskset --mps stop'"
	has "$out" "CUDA_MPS_PIPE_DIRECTORY=$CUDA_MPS_PIPE_DIRECTORY"
	hasnt "$out" "CUDA_DEVICE_MAX_CONNECTIONS" # an MPS client keeps CUDA's own count
	run_rc out rc env PATH="$fake:$PATH" "$NVT" --channels 8 -c 0-1 /usr/bin/env
	has "$out" "CUDA_DEVICE_MAX_CONNECTIONS=8"
	grep -q "args=-d pipe=$CUDA_MPS_PIPE_DIRECTORY log=$CUDA_MPS_LOG_DIRECTORY preload=$" \
		"$CUDA_MPS_PIPE_DIRECTORY/fake.log" || die "daemon not started as expected"
	# A running daemon is reused, not started again.
	run_rc out rc env PATH="$fake:$PATH" "$NVT" -c 0-1 "$APP" launch 1
	hasnt "$out" "started"
	has "$out" "tpcs=0-1 hung=0"
	eq "$(grep -c 'args=-d' "$CUDA_MPS_PIPE_DIRECTORY/fake.log")" 2 "daemon starts (--mps start, then the task)"
	env PATH="$fake:$PATH" "$NVT" --mps stop >/dev/null
}
t_mps_client_limit() {
	own_mps_dirs mps_client_limit
	local fake=$FAKEBIN i server
	export PATH="$fake:$PATH"
	"$NVT" --mps start >/dev/null
	sleep 1000 &
	server=$!
	echo $server >"$CUDA_MPS_PIPE_DIRECTORY/fake-server"
	# A server without clients: "ps" answers nothing, which is 0 clients.
	run_rc out rc "$NVT" -c 0 "$APP" launch 1
	eq "$rc" 0
	hasnt "$out" "cannot ask"
	for ((i = 1; i <= 14; i++)); do echo $((1000 + i)); done >"$CUDA_MPS_PIPE_DIRECTORY/fake-clients"
	run_rc out rc "$NVT" --channels 8 -c 0 "$APP" launch 1
	eq "$rc" 0 "14 clients: room for one more"
	run_rc out rc env CUDA_DEVICE_MAX_CONNECTIONS=8 "$NVT" --mps status
	has "$out" "MPS server: pid $server, 14 clients (it takes at most 15 with 8 channels each)"
	echo 1015 >>"$CUDA_MPS_PIPE_DIRECTORY/fake-clients"
	run_rc out rc "$NVT" --channels 8 -c 0 "$APP" launch 1
	eq "$rc" 1
	eq "$out" "nvtaskset: the MPS server (pid $server) already has 15 clients, the most it takes with 8 channels each; this task would fail to start CUDA. Stop a task, or run this one with --no-mps"
	run_rc out rc env CUDA_DEVICE_MAX_CONNECTIONS=8 "$NVT" -c 0 "$APP" launch 1
	eq "$rc" 1 "the user's 8 channels count as --channels 8"
	# Fewer channels each leave room for more clients: CUDA's own 2 (the default), or 4.
	run_rc out rc "$NVT" -c 0 "$APP" launch 1
	eq "$rc" 0
	run_rc out rc "$NVT" --mps status
	has "$out" "MPS server: pid $server, 15 clients (it takes at most 48 with 2 channels each)"
	run_rc out rc env CUDA_DEVICE_MAX_CONNECTIONS=4 "$NVT" -c 0 "$APP" launch 1
	eq "$rc" 0
	run_rc out rc "$NVT" --no-mps -c 0 "$APP" launch 1
	eq "$rc" 0 "--no-mps still runs"
	# Another user's server is not ours to count.
	if [ "$(id -u)" == 0 ] && command -v setpriv >/dev/null; then
		kill $server
		setpriv --reuid=65534 --regid=65534 --clear-groups sleep 1000 &
		server=$!
		wait_for 5 runs_as "$server" 65534
		echo $server >"$CUDA_MPS_PIPE_DIRECTORY/fake-server"
		run_rc out rc "$NVT" -c 0 "$APP" launch 1
		eq "$rc" 0 "another user's full server"
	fi
	# The listed clients are made up: none is left for the stop to wait for or refuse over.
	: >"$CUDA_MPS_PIPE_DIRECTORY/fake-clients"
	kill $server
	wait $server 2>/dev/null || true # (ended by the kill above: its status is no check)
	"$NVT" --mps stop >/dev/null
}
t_mps_fault_reported() {
	own_mps_dirs mps_fault_reported
	local fake=$FAKEBIN
	export PATH="$fake:$PATH"
	mkdir -p "$CUDA_MPS_LOG_DIRECTORY"
	cat >"$CUDA_MPS_LOG_DIRECTORY/server.log" <<'LOG'
[2026-11-21 20:01:59.353 Server  2483] Client {PID: 2503, Context: 1} encountered a fatal GPU error.
[2026-11-21 20:01:59.353 Server  2483] Server is handling a fatal GPU error.
[2026-11-21 20:01:59.353 Server  2483] Client {PID: 2503, Context ID: 1} on device 0 to be torn down
[2026-11-21 20:01:59.353 Server  2483] Client {PID: 2534, Context ID: 1} on device 0 to be torn down
LOG
	run_rc out rc "$NVT" --mps status
	eq "$rc" 3
	has "$out" "last fatal GPU error: 2026-11-21 20:01:59, in server 2483, blamed on client 2503; the server tore down 2 clients: 2503 2534"
	has "$out" "MPS does not isolate its clients from each other's faults: a fatal error in one ends them all. See $CUDA_MPS_LOG_DIRECTORY/server.log."
	out=$(timeout "$HANG" "$NVT" --mps status --json) || true
	python3 -c 'import json,sys; d=json.loads(sys.argv[1]); f=d["last_fault"]; assert f["torn_down"]==[2503,2534] and f["blamed_client"]==2503' "$out" ||
		die "bad JSON: $out"
}
t_mps_daemon_wedged() {
	own_mps_dirs mps_daemon_wedged
	# A daemon that never answers must not hang nvtaskset.
	local fake=$FAKEBIN
	export PATH="$fake:$PATH"
	"$NVT" --mps start >/dev/null
	mkdir -p "$WORK/wedged"
	sed 's/	ps)/	ps) sleep 1000/' "$fake/nvidia-cuda-mps-control" \
		>"$WORK/wedged/nvidia-cuda-mps-control"
	chmod +x "$WORK/wedged/nvidia-cuda-mps-control"
	# (A command that waited for it would end in run_rc's limit: status 124.)
	run_rc out rc env PATH="$WORK/wedged:$PATH" "$NVT" -c 0 "$APP" launch 1
	eq "$rc" 0
	has "$out" "nvtaskset: cannot ask the MPS control daemon how many clients it serves"
	"$NVT" --mps stop >/dev/null
}
# A daemon killed whose parent has not reaped it (a zombie: its name and user stay) is not
# running: --mps status says so, and a start starts another (it passed for running, and tasks
# were sent to it).
t_mps_killed_daemon_not_running() {
	own_mps_dirs killed
	export PATH="$FAKEBIN:$PATH"
	ln -s "$(command -v sleep)" "$WORK/nvidia-cuda-mps-control"
	# A parent that keeps its child unreaped until its stop file: the child, a "daemon", killed.
	# (Its pid file and .up once the child runs the daemon's program, not the fork's python.)
	python3 -c 'import os, signal, sys, time
pid = os.fork()
if pid == 0:
    os.execv(sys.argv[1], [sys.argv[1], "600"])
while os.readlink("/proc/%d/exe" % pid) == os.readlink("/proc/self/exe"):
    time.sleep(0.01)
open(sys.argv[2] + "/nvidia-cuda-mps-control.pid", "w").write("%d\n" % pid)
open(sys.argv[3] + ".up", "w").close()
while not os.path.exists(sys.argv[3]):
    time.sleep(0.05)
os.kill(pid, signal.SIGKILL)
open(sys.argv[3] + ".killed", "w").close()
while not os.path.exists(sys.argv[3] + "2"):
    time.sleep(0.05)
' "$WORK/nvidia-cuda-mps-control" "$CUDA_MPS_PIPE_DIRECTORY" "$WORK/daemon.stop" &
	local parent=$!
	wait_for 10 test -e "$WORK/daemon.stop.up"
	run_rc out rc "$NVT" --mps status
	eq "$rc" 0 "--mps status beside the live one: $out"
	touch "$WORK/daemon.stop"
	wait_for 10 test -e "$WORK/daemon.stop.killed"
	wait_for 10 eval '[ "$(cut -d" " -f3 "/proc/$(cat "$CUDA_MPS_PIPE_DIRECTORY/nvidia-cuda-mps-control.pid")/stat")" == Z ]'
	run_rc out rc "$NVT" --mps status
	eq "$rc" 3 "--mps status beside the killed one: $out"
	has "$out" "MPS control daemon: not running"
	run_rc out rc "$NVT" --mps start
	eq "$rc" 0 "--mps start: $out"
	has "$out" "started MPS control daemon"
	"$NVT" --mps stop >/dev/null
	touch "$WORK/daemon.stop2"
	wait "$parent"
}
t_mps_missing_or_failing() {
	own_mps_dirs mps_missing_or_failing
	local fake=$FAKEBIN d
	for d in /usr/local/nvidia/bin /usr/bin /usr/sbin /usr/local/bin /usr/lib/nvidia /opt/nvidia/bin; do
		[ -x "$d/nvidia-cuda-mps-control" ] && skip "a real MPS is installed in $d"
	done
	run_rc out rc env PATH=/usr/bin:/bin "$NVT" -c 0 "$APP" launch 1
	eq "$rc" 1
	eq "$out" "nvtaskset: cannot start MPS: cannot find nvidia-cuda-mps-control in PATH or the driver's directories; run with --no-mps to run without it"
	run_rc out rc env PATH=/usr/bin:/bin "$NVT" --mps start
	eq "$rc" 1
	run_rc out rc env PATH="$fake:$PATH" FAKEMPS_FAIL=1 "$NVT" -c 0 "$APP" launch 1
	eq "$rc" 1
	has "$out" "nvtaskset: cannot start MPS: $fake/nvidia-cuda-mps-control -d failed (exit status 1); see $CUDA_MPS_LOG_DIRECTORY/control.log; run with --no-mps"
	run_rc out rc env PATH=/usr/bin:/bin "$NVT" --no-mps -c 0 "$APP" launch 1
	eq "$rc" 0 "--no-mps needs no MPS"
}
t_mps_sm_limit() {
	# --sm-limit: MPS's active thread percentage follows the partition's
	# share (the largest over the task's GPUs), rounded up.
	own_mps_dirs mps_sm_limit
	local fake=$FAKEBIN
	export PATH="$fake:$PATH"
	run_rc out rc "$NVT" --sm-limit -c 0-32 /usr/bin/env
	eq "$rc" 0
	has "$out" "CUDA_MPS_ACTIVE_THREAD_PERCENTAGE=50"
	# TPCs 0-32 take part of every GPC: MPS's limit may leave SMs idle.
	has "$out" "nvtaskset: warning: --sm-limit on a partition that takes part of several GPCs"
	run_rc out rc "$NVT" --sm-limit -g 1,2 /usr/bin/env
	eq "$rc" 0
	hasnt "$out" "warning"
	run_rc out rc "$NVT" --sm-limit --strategy spread -n 8 /usr/bin/env
	eq "$rc" 1 "--sm-limit with spread"
	has "$out" "--sm-limit cannot go with --strategy spread"
	run_rc out rc "$NVT" --sm-limit -n 54 /usr/bin/env
	has "$out" "CUDA_MPS_ACTIVE_THREAD_PERCENTAGE=82"
	# -n under --sm-limit picks blocks of 8 TPCs of a GPC (--strategy
	# clusters): GPCs 1-5 and 2 of GPC 0's 4 hold 21 clusters of 4 SMs, as
	# MPS's 84 SMs do; the packed pick (GPCs 1, 2, 3, 6, 7) holds 20.
	run_rc out rc "$NVT" --sm-limit -n 42 /usr/bin/env
	has "$out" "nvtaskset: GPU 0 (GPU-00010203-0405-0607-0809-0a0b0c0d0e84): TPCs 0-5,8-13,17-21,25-29,32-36,39-43,46-50,53-57"
	has "$out" "CUDA_MPS_ACTIVE_THREAD_PERCENTAGE=64"
	run_rc out rc "$NVT" --sm-limit -n 50 /usr/bin/env
	has "$out" "TPCs 0-6,8-14,17-22,25-30,32-37,39-44,46-51,53-58"
	hasnt "$out" "warning" # part of GPCs 6 and 0, measured to keep every SM
	# The rule is what the partition holds, not how it was chosen: the same
	# TPCs as a list do not warn, 2 TPCs in each of GPCs 0-7 do.
	run_rc out rc "$NVT" --sm-limit -c 0-6,8-14,17-22,25-30,32-37,39-44,46-51,53-58 /usr/bin/env
	hasnt "$out" "warning"
	run_rc out rc "$NVT" --sm-limit -c 0-15 /usr/bin/env
	has "$out" "warning: --sm-limit on a partition that takes part of several GPCs"
	run_rc out rc "$NVT" --sm-limit --strategy packed -n 42 /usr/bin/env
	has "$out" "TPCs 1-3,6-7,9-11,14-15,17-19,22-23,25-27,30-34,37-41,44-48,51-55,58-61"
	run_rc out rc "$NVT" -n 42 --dry-run
	has "$out" "TPCs 1-3,6-7,9-11,14-15,17-19,22-23,25-27,30-34,37-41,44-48,51-55,58-61"
	run_rc out rc "$NVT" --sm-limit -c 0 /usr/bin/env
	has "$out" "CUDA_MPS_ACTIVE_THREAD_PERCENTAGE=2"
	run_rc out rc "$NVT" -c 0-32 /usr/bin/env
	hasnt "$out" "CUDA_MPS_ACTIVE_THREAD_PERCENTAGE"
	run_rc out rc env FAKECUDA_CHIPS=h100,h100-alt NVTASKSET_CACHE_DIR="$WORK/cache-sm" \
		"$NVT" --sm-limit -c --gpu 0=0-9 --gpu 1=0-43 /usr/bin/env
	has "$out" "CUDA_MPS_ACTIVE_THREAD_PERCENTAGE=67"
	run_rc out rc env FAKECUDA_CHIPS=h100,h100-alt NVTASKSET_CACHE_DIR="$WORK/cache-sm" \
		"$NVT" --sm-limit --gpu 1 -c 0-9 /usr/bin/env
	has "$out" "CUDA_MPS_ACTIVE_THREAD_PERCENTAGE=100"
	run_rc out rc env CUDA_MPS_ACTIVE_THREAD_PERCENTAGE=30 "$NVT" --sm-limit -c 0-32 /usr/bin/env
	eq "$rc" 1
	eq "$out" "nvtaskset: --sm-limit sets CUDA_MPS_ACTIVE_THREAD_PERCENTAGE, which is set already (30)"
	run_rc out rc "$NVT" --sm-limit --no-mps -c 0 /usr/bin/env
	has "$out" "--sm-limit works through MPS: it cannot go with --no-mps"
	run_rc out rc "$NVT" --sm-limit -l
	has "$out" "--sm-limit goes with starting a command"
	# A task started under the limit, moved to more TPCs: told it cannot use them.
	start_loop sml "$NVT" --sm-limit -c 0-32 "$APP"
	wait_file "$WORK/sml.state" "0-32"
	run_rc out rc "$NVT" -p -c 0-15 "$PID"
	hasnt "$out" "warning"
	run_rc out rc "$NVT" -p -c 0-40 "$PID"
	eq "$rc" 0
	has "$out" "nvtaskset: warning: pid $PID runs under MPS's limit of 50% of the SMs"
	wait_file "$WORK/sml.state" "0-40"
	stop_loop sml "$PID"
	"$NVT" --mps stop >/dev/null
}

t_mps_status_json_version() {
	# --mps status --json carries "version", as the other documents do.
	out=$("$NVT" --mps status --json) && rc=0 || rc=$?
	[ "$rc" == 0 ] || [ "$rc" == 3 ] || die "exit status $rc: $out"
	python3 -c 'import json,sys; d=json.loads(sys.argv[1]); assert d["version"]==2 and "running" in d' "$out" ||
		die "bad JSON: $out"
}

t_mps_status_lists_live_clients() {
	# The fake MPS daemon, as the real one, lists the processes that initialised CUDA under it
	# while they run (make try's --mps status said "no clients" beside two demos).
	own_mps_dirs live_clients
	export PATH=$FAKEBIN:$PATH
	local a b
	start_loop a "$NVT" -c 0-7 "$APP"
	a=$PID
	start_loop b "$NVT" -c 8-15 "$APP"
	b=$PID
	wait_nonempty_state() { test -s "$WORK/$1.state"; }
	wait_for 20 wait_nonempty_state a
	wait_for 20 wait_nonempty_state b
	run_rc out rc "$NVT" --mps status
	eq "$rc" 0 "$out"
	has "$out" "2 clients"
	stop_loop a "$a"
	stop_loop b "$b"
	run_rc out rc "$NVT" --mps status
	hasnt "$out" "2 clients"
	hasnt "$out" "1 client"
	"$NVT" --mps stop >/dev/null
}

t_mps_stop_ps_unread() {
	# A daemon whose "ps" answer is not a client table: --mps stop cannot tell whether it
	# serves tasks (told to quit, it would wait for them), so it refuses, sends no quit, and
	# the daemon runs on; --force stops it.
	own_mps_dirs stop_unread
	local d
	mkdir -p "$WORK/garbled"
	sed 's/^\tps)$/\tps) echo garbage; exit 0 ;;\n\tnever-ps)/' "$FAKEBIN/nvidia-cuda-mps-control" \
		>"$WORK/garbled/nvidia-cuda-mps-control"
	chmod +x "$WORK/garbled/nvidia-cuda-mps-control"
	grep -q 'ps) echo garbage' "$WORK/garbled/nvidia-cuda-mps-control" || die "sed missed ps"
	export PATH=$FAKEBIN:$PATH
	run_rc out rc "$NVT" --mps start
	eq "$rc" 0 "$out"
	d=$(cat "$CUDA_MPS_PIPE_DIRECTORY/nvidia-cuda-mps-control.pid")
	run_rc out rc env PATH="$WORK/garbled:$PATH" "$NVT" --mps stop
	eq "$rc" 1 "$out"
	has "$out" "nvtaskset: the MPS control daemon (pid $d) did not say which tasks it serves"
	kill -0 "$d" || die "the daemon ended"
	hasnt "$(cat "$CUDA_MPS_PIPE_DIRECTORY/fake.log")" "command=quit"
	run_rc out rc env PATH="$WORK/garbled:$PATH" "$NVT" --mps stop --force
	eq "$rc" 0 "$out"
	has "$out" "stopped MPS control daemon (pid $d)"
}
t_mps_stop_with_clients() {
	# --mps stop of a daemon that serves running tasks is refused, naming them (PIDs, commands
	# as a terminal may show them) and what a stop would do, and the daemon runs on, taking
	# tasks (told to quit, it would wait for them: the fake as NVIDIA's); --force stops it,
	# naming them in a warning, once quit -t's grace has passed.
	own_mps_dirs stop_clients
	export PATH=$FAKEBIN:$PATH
	local a b c d
	start_loop sa "$NVT" -c 0-7 "$APP"
	a=$PID
	start_loop sb "$NVT" -c 8-15 bash -c 'exec -a "$1" "$2" "${@:3}"' sh $'\e]0;pwned\atrain' "$APP"
	b=$PID
	wait_nonempty_state() { test -s "$WORK/$1.state"; }
	wait_for 20 wait_nonempty_state sa
	wait_for 20 wait_nonempty_state sb
	d=$(cat "$CUDA_MPS_PIPE_DIRECTORY/nvidia-cuda-mps-control.pid")
	run_rc out rc "$NVT" --mps stop
	eq "$rc" 1 "$out"
	has "$out" "nvtaskset: the MPS control daemon (pid $d) serves 2 running tasks: pid "
	has "$out" "pid $a ($APP)"
	has "$out" "pid $b (?]0;pwned?train)"
	has "$out" ". Told to quit, it would take no new task and wait until they end: end them first, or stop it all the same with --mps stop --force (their MPS server stops after 2 s, and their CUDA calls fail from then on)"
	eq "$(wc -l <<<"$out")" 1 "one line: $out"
	kill -0 "$d" || die "the daemon ended"
	hasnt "$(cat "$CUDA_MPS_PIPE_DIRECTORY/fake.log")" "command=quit"
	start_loop sc "$NVT" -c 16-23 "$APP"
	c=$PID
	wait_for 20 wait_nonempty_state sc
	run_rc out rc "$NVT" --mps status
	eq "$rc" 0 "$out"
	has "$out" "3 clients"
	stop_loop sc "$c"
	run_rc out rc "$NVT" --mps start --force
	eq "$rc" 1 "$out"
	has "$out" "--force goes with --mps stop"
	run_rc out rc "$NVT" --mps stop --force
	eq "$rc" 0 "$out"
	has "$out" "nvtaskset: warning: the MPS control daemon (pid $d) serves 2 running tasks: pid "
	has "$out" "pid $b (?]0;pwned?train)"
	has "$out" "; --force: their MPS server stops after 2 s, and their CUDA calls fail from then on"
	has "$out" "stopped MPS control daemon (pid $d)"
	run_rc out rc "$NVT" --mps status
	eq "$rc" 3 "$out"
	eq "$(grep -c '^command=quit' "$CUDA_MPS_PIPE_DIRECTORY/fake.log")" 1 "quits sent"
	grep -qx 'command=quit -t 2' "$CUDA_MPS_PIPE_DIRECTORY/fake.log" || die "no quit -t 2 sent"
	stop_loop sa "$a"
	stop_loop sb "$b"
}
