# The bridge between a high time-sliced task's synchronised steps (docs/priorities.md,
# "Preemption"; src/shim/shimbridge.c): at each wait that its recent waits say will be followed
# soon, the shim queues its bridge kernel and an empty one on a stream of its own, tells the
# kernel when the wait returned and, at the next launch, that it may end. The fake driver logs
# each bridge launch with the two words as the host had written them (FAKECUDA_BRIDGE_LOG).
# Sourced by tests/run-tests.sh: each t_NAME function is one test, run in a subshell under set -e.
# shellcheck shell=bash

# PRIOAPP: yield.sh's.
# What a task's shell says of its hardware queues.
# shellcheck disable=SC2016 # the task's shell expands it
CONN_SH='echo "conn=${CUDA_DEVICE_MAX_CONNECTIONS-unset}"'

# bridges: the bridge kernels launched so far.
bridges() { awk '$1 == "bridge" {n++} END {print n + 0}' "$WORK/bridge.log" 2>/dev/null || echo 0; }
bridges_over() { [ "$(bridges)" -gt "$1" ]; }
# steps_app TAG NVT_ARGS...: a job of back-to-back steps (2 launches, one wait each; STEPS_EVERY
# launches) under nvtaskset --no-mps NVT_ARGS, until it made more than 200 launches
# (STEPS_LAUNCHES); stopped.
steps_app() {
	local tag=$1 pid
	shift
	rm -f "$WORK/$tag.stop"
	FAKECUDA_KERNEL_US=${FAKECUDA_KERNEL_US:-200} FAKECUDA_BRIDGE_LOG=$WORK/bridge.log "$NVT" --no-mps "$@" \
		"$PRIOAPP" batch "$WORK/$tag.stop" "$WORK/$tag.log" "${STEPS_EVERY:-2}" 2>"$WORK/$tag.err" &
	pid=$!
	wait_for 10 test -e "$WORK/$tag.log.ready"
	wait_for 20 launches_made "$WORK/$tag.log" "${STEPS_LAUNCHES:-200}"
	touch "$WORK/$tag.stop"
	wait "$pid" || die "the job failed: $(cat "$WORK/$tag.err")"
}
launches_made() { [ "$(grep -c '^launch' "$1")" -gt "$2" ]; }

t_bridge_steps_bridged_and_released() {
	local n bad
	NVTASKSET_BRIDGE_HOLD=0 steps_app steps --priority high
	n=$(bridges)
	[ "$n" -gt 50 ] || die "only $n bridges for $(grep -c '^launch' "$WORK/steps.log") launches: $(head -3 "$WORK/bridge.log")"
	# Every bridge after the first: the wait before it had returned and its bridge was released
	# at the launch in between; the seq counts the waits; the bounds are the shim's: the first
	# bridge's linger the whole 300 us, each later one a linger the gaps taught (one of the
	# ranges' bounds, core/bridge.c; a busy machine's slow gaps may teach a shorter one).
	bad=$(awk '$1 == "bridge" {
		for (i = 2; i <= NF; i++) { split($i, kv, "="); v[kv[1]] = kv[2] }
		if (v["cap_ns"] != 50000000 || v["margin_ns"] != 20000 || v["span_ns"] != 150000 || v["late_ns"] != 60000 ||
		    v["hspan_ns"] != 50000000 || v["calls"] != 0) print "bounds: " $0
		if (n ? v["linger_ns"] !~ /^(20|30|40|50|70|100|150|200|300)000$/ : v["linger_ns"] != 300000) print "linger: " $0
		if (v["replay"] != 0) print "waits for a replay: " $0
		if (n && (v["seq"] != last + 1 || v["returned"] != last || v["released"] != last)) print "words: " $0
		last = v["seq"]; n++ }' "$WORK/bridge.log")
	eq "$bad" "" "bridge lines"
	# An empty kernel behind each bridge.
	eq "$(grep -c '^nop ' "$WORK/bridge.log")" "$n" "empty kernels"
	# Each of the program's launches released the last bridge before it was queued.
	bad=$(awk '$1 == "app" { split($3, a, "="); split($4, r, "="); if (a[2] != r[2]) print }' "$WORK/bridge.log")
	eq "$bad" "" "launches that left the bridge unreleased"
	# A wait's start lets the last bridge end without waiting for a replay (the word of the
	# last step whose replay was queued); a launch does not.
	bad=$(awk '$1 == "app" { split($3, a, "="); split($5, p, "="); if (p[2] != a[2] - 1) print }' "$WORK/bridge.log")
	eq "$bad" "" "the word a wait's start moves"
	# Once a bridge is queued, the ones before it may end at their release (no margin): the
	# program's launches after it see the word say so.
	bad=$(awk '$1 == "app" { for (i = 2; i <= NF; i++) { split($i, kv, "="); v[kv[1]] = kv[2] }
		if (v["seq"] >= 2 && v["ended"] + 0 != v["seq"] - 1) print }' "$WORK/bridge.log")
	eq "$bad" "" "the word that lets the bridges before the last end"
	hasnt "$(cat "$WORK/steps.err")" "nvtaskset:"
}

# A step of a kernel then a graph replay (small work queued before the replay):
# while the replay is being queued the bridge the kernel released goes on (the replays in
# flight, a word it reads); once queued, the replay says so (the step's bridge may end, a margin
# after the host's next call); and once most waits were followed by a replay, each bridge waits
# for its step's (replay=1).
t_bridge_graph_replay_holds_the_bridge() {
	local n bad
	NVTASKSET_BRIDGE_HOLD=0 PRIOAPP_GRAPH=1 steps_app graph --priority high
	n=$(grep -c '^replay ' "$WORK/bridge.log")
	[ "$n" -gt 50 ] || die "$n replays seen by the fake driver: $(head -3 "$WORK/bridge.log")"
	bad=$(awk '$1 == "replay" { split($NF, f, "="); if (f[2] != 1) print }' "$WORK/bridge.log")
	eq "$bad" "" "replays queued without the word that holds the bridge"
	bad=$(awk '{ split($3, q, "="); split($4, r, "="); split($5, p, "=")
		if ($1 == "replay" && r[2] != q[2]) print "replay: " $0
		if ($1 == "app" && prev == "replay" && p[2] != q[2]) print "after a replay: " $0
		if ($1 != "wait") prev = $1 }' "$WORK/bridge.log")
	eq "$bad" "" "the replays' words"
	bad=$(awk '$1 == "bridge" { n++; split($8, r, "="); if (n > 12 && r[2] != 1) print }' "$WORK/bridge.log")
	eq "$bad" "" "bridges that do not wait for their step's replay"
	# A replay's work may reach the GPU late: once every callback of a replay has run, the
	# bridge goes on (the word pending) until the host's next call, and the next launch ends that.
	bad=$(awk '$1 == "bridge" { b = 1 } b && $1 == "replayed" && $NF != "pending=1"' "$WORK/bridge.log")
	eq "$bad" "" "replays after which the bridge does not wait for the next call"
	[ "$(grep -c '^replayed .*pending=1' "$WORK/bridge.log")" -gt 50 ] || die "too few replays logged"
	bad=$(awk '$1 == "app" && !/ pending=0( |$)/' "$WORK/bridge.log")
	eq "$bad" "" "launches after which the bridge still waits for a call"
	# A wait's start is a call: each bridge is queued with nothing pending.
	bad=$(awk '$1 == "bridge" && !/ pending=0( |$)/' "$WORK/bridge.log")
	eq "$bad" "" "bridges queued while the last replay's word was set"
	hasnt "$(cat "$WORK/graph.err")" "nvtaskset:"
	# The debug report counts the replays the shim saw.
	NVTASKSET_BRIDGE_DEBUG=1 PRIOAPP_GRAPH=1 steps_app graphdbg --priority high
	has "$(cat "$WORK/graphdbg.err")" "copies by its kernel; $(grep -c '^replay .*pid=' "$WORK/bridge.log" | awk -v n="$n" '{print $1 - n}') graph replays seen"
}

# Two waits in a row, no launch between: the second's start releases the first's bridge (what
# it waits for may be queued behind it).
t_bridge_wait_releases_the_last() {
	local bad
	PRIOAPP_SYNC_TWICE=1 steps_app twice --priority high
	bridges_over 20 || die "$(bridges) bridges"
	bad=$(awk '$1 == "bridge" {
		for (i = 2; i <= NF; i++) { split($i, kv, "="); v[kv[1]] = kv[2] }
		if (n && v["released"] != last) print "not released: " $0
		last = v["seq"]; n++ }' "$WORK/bridge.log")
	eq "$bad" "" "bridge lines"
}

# The device's primary context reset, or its last release (which destroys it too, at the same
# address here), by its name or its old one: the bridge is made again in the new one (its module
# loaded again), and goes on; the bridge's kernels of the old context are never launched (the
# fake dies of it, as a program did on an H100). A release that is not the last (retained
# twice) leaves the context and its bridge.
t_bridge_context_reset_made_again() {
	local how
	export FAKECUDA_LOG=$WORK/cuda.log FAKECUDA_STALE_ABORT=1
	for how in RESET RELEASE RELEASE1 CAPTURE; do
		rm -f "$WORK/cuda.log" "$WORK/bridge.log"
		case $how in
		RESET) PRIOAPP_RESET_AT=100 STEPS_LAUNCHES=300 steps_app "$how" --priority high ;;
		# (another thread captures a graph in the global mode: the bridge is made again with
		# this thread's capture relaxed, or its registration fails, 900)
		CAPTURE) FAKECUDA_GLOBAL_CAPTURE=1 PRIOAPP_RESET_AT=100 STEPS_LAUNCHES=300 steps_app "$how" \
			--priority high ;;
		RELEASE) PRIOAPP_RELEASE_AT=100 STEPS_LAUNCHES=300 steps_app "$how" --priority high ;;
		RELEASE1) PRIOAPP_RELEASE_V1=1 PRIOAPP_RELEASE_AT=100 STEPS_LAUNCHES=300 steps_app "$how" \
			--priority high ;;
		esac
		eq "$(grep -c '^module ' "$WORK/cuda.log")" 2 "bridge modules loaded ($how)"
		# (the bridges after the 100th launch: its steps are of 2 launches)
		[ "$(awk '$1 == "bridge" { for (i = 2; i <= NF; i++) if ($i ~ /^seq=/) { split($i, kv, "=")
				if (kv[2] > 60) n++ } } END { print n + 0 }' \
			"$WORK/bridge.log")" -gt 30 ] || die "$how: bridges after it: $(tail -2 "$WORK/bridge.log")"
		hasnt "$(cat "$WORK/$how.err")" "nvtaskset:"
	done
	rm -f "$WORK/cuda.log" "$WORK/bridge.log"
	PRIOAPP_RETAIN_TWICE=1 PRIOAPP_RELEASE_AT=100 STEPS_LAUNCHES=300 steps_app notlast --priority high
	eq "$(grep -c '^module ' "$WORK/cuda.log")" 1 "bridge modules loaded (a release not the last)"
	[ "$(bridges)" -gt 100 ] || die "not the last: $(bridges) bridges"
	hasnt "$(cat "$WORK/notlast.err")" "nvtaskset:"
	# Steps in a context of its own: the primary context's last release (or its reset) leaves
	# the bridge made there where it is; without context ids to tell it is made again (the one
	# left behind unused), and the steps are bridged all the same. KEEP: the steps go on in the
	# primary context after its release, their own context still there: the bridge stays in the
	# first (one module; the primary's waits, a second context's, unbridged).
	for how in RELEASE RESET RELEASE_NOID KEEP; do
		rm -f "$WORK/cuda.log" "$WORK/bridge.log"
		case $how in
		RELEASE) PRIOAPP_CTX_UNTIL=100000 PRIOAPP_RELEASE_AT=100 STEPS_LAUNCHES=300 steps_app "own$how" \
			--priority high ;;
		RESET) PRIOAPP_CTX_UNTIL=100000 PRIOAPP_RESET_AT=100 STEPS_LAUNCHES=300 steps_app "own$how" \
			--priority high ;;
		RELEASE_NOID) FAKECUDA_NO_CTX_ID=1 PRIOAPP_CTX_UNTIL=100000 PRIOAPP_RELEASE_AT=100 \
			STEPS_LAUNCHES=300 steps_app "own$how" --priority high ;;
		KEEP) PRIOAPP_CTX_KEEP=1 PRIOAPP_CTX_UNTIL=100 PRIOAPP_RELEASE_AT=100 STEPS_LAUNCHES=300 \
			steps_app "own$how" --priority high ;;
		esac
		eq "$(grep -c '^module ' "$WORK/cuda.log")" "$([ $how = RELEASE_NOID ] && echo 2 || echo 1)" \
			"bridge modules loaded (own context, $how)"
		[ "$(bridges)" -gt "$([ $how = KEEP ] && echo 40 || echo 100)" ] ||
			die "own context, $how: $(bridges) bridges"
		hasnt "$(cat "$WORK/own$how.err")" "nvtaskset:"
	done
}

# Steps on GPU 1: a reset of GPU 0's primary context leaves GPU 1's bridge where it is (one
# module; it goes on bridging).
t_bridge_reset_of_another_gpu() {
	local pid
	export FAKECUDA_LOG=$WORK/cuda.log FAKECUDA_STALE_ABORT=1 FAKECUDA_DEVICES=2
	PRIOAPP_ON_DEV1=1 PRIOAPP_RESET_AT=100 STEPS_LAUNCHES=300 steps_app dev1 --priority high
	# (the program's: nvtaskset calibrates GPU 1 in a process of its own, which loads one too)
	pid=$(sed -n 's/^bridge pid=\([0-9]*\) .*/\1/p' "$WORK/bridge.log" | sort -u)
	eq "$(grep -c "^module pid=$pid\$" "$WORK/cuda.log")" 1 "bridge modules loaded"
	[ "$(bridges)" -gt 100 ] || die "$(bridges) bridges"
	hasnt "$(cat "$WORK/dev1.err")" "nvtaskset: warning"
}

# A primary context's last release the shim does not see (a driver that does not say whether
# the context lives: FAKECUDA_NO_PRIMARY_STATE): at the next wait the context's id is not the one
# the bridge was made in, and it is made again before any of its old kernels is launched (the
# fake dies of that). Without ids either (FAKECUDA_NO_CTX_ID), the bridge's launch answers 400
# (its handles are stale, as on an H100), and it is made again at the next wait, without a
# word. A driver that answers every bridge launch so (FAKECUDA_BRIDGE_FAIL_RC=400) gets it made
# again 4 times; then it turns off, said once, and the program goes on.
t_bridge_context_gone_unseen() {
	local how
	export FAKECUDA_LOG=$WORK/cuda.log
	for how in id noid; do
		rm -f "$WORK/cuda.log" "$WORK/bridge.log"
		if [ $how = id ]; then
			FAKECUDA_STALE_ABORT=1 FAKECUDA_NO_PRIMARY_STATE=1 PRIOAPP_RELEASE_AT=100 STEPS_LAUNCHES=300 \
				steps_app $how --priority high
		else
			FAKECUDA_NO_CTX_ID=1 FAKECUDA_NO_PRIMARY_STATE=1 PRIOAPP_RELEASE_AT=100 STEPS_LAUNCHES=300 \
				steps_app $how --priority high
		fi
		eq "$(grep -c '^module ' "$WORK/cuda.log")" 2 "bridge modules loaded ($how)"
		[ "$(awk '$1 == "bridge" { for (i = 2; i <= NF; i++) if ($i ~ /^seq=/) { split($i, kv, "=")
			if (kv[2] > 60) n++ } } END { print n + 0 }' "$WORK/bridge.log")" -gt 30 ] ||
			die "$how: bridges after the release: $(tail -2 "$WORK/bridge.log")"
		hasnt "$(cat "$WORK/$how.err")" "nvtaskset:"
	done
	rm -f "$WORK/cuda.log" "$WORK/bridge.log"
	FAKECUDA_BRIDGE_FAIL_RC=400 steps_app refused --priority high
	eq "$(grep -c '^module ' "$WORK/cuda.log")" 5 "bridge modules loaded (made again 4 times)"
	eq "$(grep -c 'launching the bridge failed (error 400)' "$WORK/refused.err")" 1 "warnings"
	eq "$(bridges)" 0 "bridges that ran"
	[ "$(grep -c '^launch' "$WORK/refused.log")" -gt 200 ] || die "the program stopped early"
}

# Requests 20 ms apart, one wait each: the first wait teaches that nothing follows soon.
t_bridge_spaced_requests_not_bridged() {
	local pid
	rm -f "$WORK/srv.stop"
	FAKECUDA_KERNEL_US=200 FAKECUDA_BRIDGE_LOG=$WORK/bridge.log "$NVT" --no-mps --priority high \
		"$PRIOAPP" serve "$WORK/srv.stop" "$WORK/srv.log" 20000 2 2>"$WORK/srv.err" &
	pid=$!
	wait_for 10 test -e "$WORK/srv.log.ready"
	wait_for 10 requests_over_n "$WORK/srv.log" 8
	touch "$WORK/srv.stop"
	wait "$pid" || die "the service failed: $(cat "$WORK/srv.err")"
	eq "$(bridges)" 1 "bridges over $(grep -c '^req ' "$WORK/srv.log") requests"
}
requests_over_n() { [ "$(grep -c '^req ' "$1")" -gt "$2" ]; }

t_bridge_only_high_sliced_and_asked() {
	# A low task, a partitioned high one (MPS client priority), NVTASKSET_BRIDGE=0, and a
	# task whose CUDA_DEVICE_MAX_CONNECTIONS says other streams have queues of their own.
	steps_app low --priority low
	steps_app part --priority high -c 0-7
	NVTASKSET_BRIDGE=0 steps_app off --priority high
	CUDA_DEVICE_MAX_CONNECTIONS=4 steps_app conn --priority high
	eq "$(bridges)" 0 "bridges"
	has "$(cat "$WORK/conn.err")" "CUDA_DEVICE_MAX_CONNECTIONS=4: this task's synchronised steps are not bridged"
	hasnt "$(cat "$WORK/off.err" "$WORK/low.err" "$WORK/part.err")" "bridged"
	NVTASKSET_BRIDGE=yes steps_app bad --priority high
	bridges_over 10 || die "NVTASKSET_BRIDGE=yes: $(bridges) bridges"
	has "$(cat "$WORK/bad.err")" "NVTASKSET_BRIDGE is neither 0 nor 1: its steps are bridged"
}

t_bridge_connections_set() {
	local out rc
	run_rc out rc "$NVT" --no-mps --priority high sh -c "$CONN_SH"
	eq "$rc" 0 "exit status: $out"
	has "$out" "conn=1"
	run_rc out rc env NVTASKSET_BRIDGE=0 "$NVT" --no-mps --priority high sh -c "$CONN_SH"
	has "$out" "conn=unset"
	for form in "--priority low" "--priority high -c 0-7" "--priority high --yield client" "-c 0-7"; do
		# shellcheck disable=SC2086 # the form's words
		run_rc out rc "$NVT" --no-mps $form sh -c "$CONN_SH"
		eq "$rc" 0 "$form: exit status: $out"
		has "$out" "conn=unset"
	done
	# The user's count, and --channels, win.
	run_rc out rc env CUDA_DEVICE_MAX_CONNECTIONS=3 "$NVT" --no-mps --priority high sh -c "$CONN_SH"
	has "$out" "conn=3"
	run_rc out rc "$NVT" --no-mps --channels 4 --priority high sh -c "$CONN_SH"
	has "$out" "conn=4"
}

# A driver that cannot load the bridge: said once, and the program runs as without it.
t_bridge_unloadable_said_once() {
	FAKECUDA_BRIDGE=noptx steps_app noptx --priority high
	eq "$(bridges)" 0 "bridges"
	eq "$(grep -c "loading the bridge kernel failed" "$WORK/noptx.err")" 1 "said once: $(cat "$WORK/noptx.err")"
}

# The high level's MPS daemon (its server makes its clients' hardware queues) gets one queue a
# client; the low level's keeps CUDA's own; a count the starter set wins.
t_bridge_level_daemon_one_queue() {
	local out rc
	own_mps_dirs bridge
	PATH=$FAKEBIN:$PATH
	run_rc out rc "$NVT" --priority high "$APP" launch 1
	eq "$rc" 0 "exit status: $out"
	has "$(cat "$CUDA_MPS_PIPE_DIRECTORY-high/fake.env")" "CUDA_DEVICE_MAX_CONNECTIONS=1"
	run_rc out rc "$NVT" --priority low "$APP" launch 1
	eq "$rc" 0 "exit status: $out"
	hasnt "$(cat "$CUDA_MPS_PIPE_DIRECTORY-low/fake.env")" "CUDA_DEVICE_MAX_CONNECTIONS"
	run_rc out rc "$NVT" --mps stop
	eq "$rc" 0 "--mps stop: $out"
	run_rc out rc env CUDA_DEVICE_MAX_CONNECTIONS=6 "$NVT" --priority high "$APP" launch 1
	eq "$rc" 0 "exit status: $out"
	has "$(cat "$CUDA_MPS_PIPE_DIRECTORY-high/fake.env")" "CUDA_DEVICE_MAX_CONNECTIONS=6"
	run_rc out rc "$NVT" --mps stop
	eq "$rc" 0 "--mps stop: $out"
}

# A task that -p makes low stops bridging at its next wait: the bridges counted after -p
# returned stop growing while the task goes on launching.
t_bridge_p_low_stops() {
	local pid n n1 n2 out rc
	rm -f "$WORK/pl.stop"
	FAKECUDA_KERNEL_US=200 FAKECUDA_BRIDGE_LOG=$WORK/bridge.log "$NVT" --no-mps --priority high \
		"$PRIOAPP" batch "$WORK/pl.stop" "$WORK/pl.log" 2 2>"$WORK/pl.err" &
	pid=$!
	wait_for 10 test -e "$WORK/pl.log.ready"
	wait_for 10 bridges_over 20
	run_rc out rc "$NVT" -p --priority low "$pid"
	eq "$rc" 0 "-p: $out"
	n1=$(bridges)
	n=$(grep -c '^launch' "$WORK/pl.log")
	wait_for 10 launches_made "$WORK/pl.log" $((n + 200))
	n2=$(bridges)
	touch "$WORK/pl.stop"
	wait "$pid" || die "the job failed: $(cat "$WORK/pl.err")"
	# One wait may have begun before -p's write.
	[ $((n2 - n1)) -le 1 ] || die "$((n2 - n1)) bridges after -p made the task low"
}

# The shim's warning neutralises what the environment holds.
t_bridge_warning_neutralised() {
	CUDA_DEVICE_MAX_CONNECTIONS=$'4\e[2J' steps_app esc --priority high
	has "$(cat "$WORK/esc.err")" "CUDA_DEVICE_MAX_CONNECTIONS=4?[2J: this task's"
	if grep -q $'\e' "$WORK/esc.err"; then die "an escape reached stderr"; fi
}

# copy_app TAG BYTES TO NVT_ARGS...: a service of requests 2 ms apart, each copying BYTES to the
# host (PRIOAPP_COPY_TO=TO) before its wait and checking them after it, under nvtaskset --no-mps
# NVT_ARGS, until it served more than 10; stopped. The service fails on a wrong byte.
copy_app() {
	local tag=$1 bytes=$2 to=$3 pid
	shift 3
	rm -f "$WORK/$tag.stop"
	PRIOAPP_COPY=$bytes PRIOAPP_COPY_TO=$to FAKECUDA_KERNEL_US=100 FAKECUDA_BRIDGE_LOG=${COPY_LOG-$WORK/$tag.bridge} \
		"$NVT" --no-mps "$@" "$PRIOAPP" serve "$WORK/$tag.stop" "$WORK/$tag.log" 2000 2 2>"$WORK/$tag.err" &
	pid=$!
	wait_for 10 test -e "$WORK/$tag.log.ready"
	wait_for 10 requests_over_n "$WORK/$tag.log" 10
	touch "$WORK/$tag.stop"
	wait "$pid" || die "$tag: the service failed: $(cat "$WORK/$tag.err")"
	hasnt "$(grep -v 'nvtaskset: bridge: \|nvtaskset: bridge trace: ' "$WORK/$tag.err")" "nvtaskset:"
}
# copies TAG WHO: how many copies WHO (copy: the shim's kernel, memcpy: the driver) made.
copies() { awk -v who="$2" '$1 == who {n++} END {print n + 0}' "$WORK/$1.bridge" 2>/dev/null || echo 0; }

# A bridged task's small copies to pinned host memory on a stream, by every call that makes
# them: a kernel copies the bytes (they arrive, the request checks them) on the copy's own stream
# (the legacy one, or for the _ptsz form this thread's: 0x2), the driver none.
t_bridge_small_copies_by_kernel() {
	local to n want
	for to in pinned generic ptsz offset; do
		copy_app "$to" 8 "$to" --priority high
		n=$(grep -c '^req ' "$WORK/$to.log")
		eq "$(copies "$to" copy)" "$n" "$to: kernel copies for $n requests"
		eq "$(copies "$to" memcpy)" 0 "$to: the driver's copies"
		want='(nil)'
		[ "$to" = ptsz ] && want=0x2
		eq "$(awk '$1 == "copy" {print $4}' "$WORK/$to.bridge" | sort -u)" "stream=$want" "$to: the kernel's stream"
	done
	copy_app big 4096 pinned --priority high
	eq "$(copies big memcpy)" 0 "4096 bytes: the driver's copies"
	has "$(head -1 "$WORK/big.bridge")" "copy pid="
	# Without the fake's log the kernel's copies arrive all the same (the requests check them).
	COPY_LOG='' copy_app nolog 8 pinned --priority high
}

# What a kernel does not copy: to pageable memory, past NVT_BRIDGE_COPY_MAX, on a stream that
# captures a graph (this thread's, 0x2), on the legacy stream while a stream captures (its query
# answers 906), from managed memory or another context's, where the kernel cannot be loaded,
# once the task queued a host function; and nothing of a task that does not bridge. The driver copies each right.
t_bridge_copies_left_to_the_driver() {
	local tag
	copy_app pageable 8 pageable --priority high
	copy_app large 4097 pinned --priority high
	FAKECUDA_CAPTURING=1 copy_app capturing 8 ptsz --priority high
	FAKECUDA_CAPTURING=1 copy_app implicit 8 pinned --priority high
	copy_app managed 8 managed --priority high
	copy_app otherctx 8 otherctx --priority high
	# A driver that cannot load the shim's kernels (its warning silenced here: the bridge's tests
	# above read it).
	NVTASKSET_QUIET=1 FAKECUDA_BRIDGE=noptx copy_app noptx 8 pinned --priority high
	NVTASKSET_BRIDGE=0 copy_app off 8 pinned --priority high
	copy_app low 8 pinned --priority low
	copy_app plain 8 pinned -c 0-7
	for tag in pageable large capturing implicit managed otherctx noptx off low plain; do
		eq "$(copies "$tag" copy)" 0 "$tag: kernel copies"
		[ "$(copies "$tag" memcpy)" -gt 10 ] || die "$tag: $(copies "$tag" memcpy) copies by the driver"
	done
	# A task that waits by host functions (as JAX does): the driver's, once it queued one (its
	# first request's copy comes before its first host function).
	PRIOAPP_HOSTFN=1 copy_app hostfn 8 pinned --priority high
	[ "$(copies hostfn copy)" -le 1 ] || die "hostfn: $(copies hostfn copy) kernel copies"
	[ "$(copies hostfn memcpy)" -gt 10 ] || die "hostfn: $(copies hostfn memcpy) copies by the driver"
}

# A driver without cuPointerGetAttributes (older than the call): the shim cannot tell where a
# copy's bytes lie, so the driver does every copy, and they arrive whole (the service checks
# each), with nothing said.
t_bridge_copies_without_pointer_attributes() {
	[ -e "$T/fake-noattr/libcuda.so.1" ] || die "no fake driver without cuPointerGetAttributes (make)"
	LD_LIBRARY_PATH=$T/fake-noattr copy_app noattr 8 pinned --priority high
	eq "$(copies noattr copy)" 0 "kernel copies"
	[ "$(copies noattr memcpy)" -gt 10 ] || die "$(copies noattr memcpy) copies by the driver"
	[ "$(grep -c '^req ' "$WORK/noattr.log")" -gt 10 ] || die "$(grep -c '^req ' "$WORK/noattr.log") requests"
	# With the call, the same service's copies are the kernel's.
	copy_app attr 8 pinned --priority high
	[ "$(copies attr copy)" -gt 10 ] || die "$(copies attr copy) kernel copies with the call"
}

# NVTASKSET_BRIDGE_DEBUG=1: at exit the shim says what its waits did, as the fake driver saw it.
t_bridge_debug_report() {
	local line waits bridged
	NVTASKSET_BRIDGE_DEBUG=1 steps_app dbg --priority high
	line=$(grep 'bridge: ' "$WORK/dbg.err") || die "no report: $(cat "$WORK/dbg.err")"
	waits=$(sed -n 's/.*bridge: \([0-9]*\) waits.*/\1/p' <<<"$line")
	bridged=$(sed -n 's/.* waits, \([0-9]*\) bridged.*/\1/p' <<<"$line")
	eq "$bridged" "$(bridges)" "bridged waits said: $line"
	[ "$waits" -ge "$bridged" ] && [ "$waits" -gt 50 ] || die "$line"
	NVTASKSET_BRIDGE_DEBUG=1 copy_app dbgcopy 8 pinned --priority high
	has "$(cat "$WORK/dbgcopy.err")" "; $(copies dbgcopy copy) copies by its kernel"
	steps_app quiet --priority high
	hasnt "$(cat "$WORK/quiet.err")" "bridge: "
}

# A child forked after its parent bridged: it makes its own bridge (its module loaded in it, its
# seqs from 1, each released by its own launches), and the parent's goes on.
t_bridge_forked_child_its_own() {
	local parent child bad
	export FAKECUDA_LOG=$WORK/cuda.log
	PRIOAPP_FORK_AT=100 steps_app fork --priority high
	parent=$(awk '$1 == "bridge" {sub("pid=", "", $2); print $2; exit}' "$WORK/bridge.log")
	child=$(awk -v p="pid=$parent" '$1 == "bridge" && $2 != p {sub("pid=", "", $2); print $2; exit}' "$WORK/bridge.log")
	[ -n "$child" ] || die "no bridge in the child: $(grep -c . "$WORK/bridge.log") lines"
	eq "$(grep -c "^module pid=$child\$" "$WORK/cuda.log")" 1 "modules the child loaded"
	bad=$(awk -v p="pid=$child" '$1 == "bridge" && $2 == p {
		for (i = 2; i <= NF; i++) { split($i, kv, "="); v[kv[1]] = kv[2] }
		if (v["seq"] != n + 1 || (n && v["released"] != n)) print; n++ }
		END { if (n < 10) print "only " n " bridges" }' "$WORK/bridge.log")
	eq "$bad" "" "the child's bridges"
	# The parent bridged after the child ended, its seqs going on from its own.
	bad=$(awk -v p="pid=$parent" '$1 == "bridge" && $2 == p {
		for (i = 2; i <= NF; i++) { split($i, kv, "="); v[kv[1]] = kv[2] }
		if (v["seq"] != n + 1) print; n++ }
		END { if (n < 60) print "only " n " bridges" }' "$WORK/bridge.log")
	eq "$bad" "" "the parent's bridges"
	hasnt "$(cat "$WORK/fork.err")" "nvtaskset:"
	# Traced, each writes its own (the child's bridges in the child's file; it exits by exit()).
	rm -f "$WORK/bridge.log"
	NVTASKSET_BRIDGE_TRACE=$WORK/ftr PRIOAPP_FORK_EXIT=1 PRIOAPP_FORK_AT=100 steps_app ftrace --priority high
	parent=$(awk '$1 == "bridge" {print $2; exit}' "$WORK/bridge.log")
	child=$(awk -v p="$parent" '$1 == "bridge" && $2 != p {sub("pid=", "", $2); print $2; exit}' "$WORK/bridge.log")
	[ -n "$child" ] && [ -s "$WORK/ftr.$child" ] && [ -s "$WORK/ftr.${parent#pid=}" ] ||
		die "traces of the parent $parent and the child $child: $(ls "$WORK")"
	eq "$(grep -c '^bridge ' "$WORK/ftr.$child")" "$(grep -c "^bridge pid=$child " "$WORK/bridge.log")" "the child's bridges traced"
}
