# The bridge of a context synchronisation (cuCtxSynchronize: PyTorch's torch.cuda.synchronize();
# src/shim/shimbridge.c, core/bridge.h "Context synchronisations"): it waits for every stream of
# the context, so its bridge is queued by a thread of the shim's own just after the wait began
# (the fake driver's context synchronisation, as the H100's, waits for the work queued before it
# began). steps_app and bridges are bridge.sh's.
# Sourced by tests/run-tests.sh: each t_NAME function is one test, run in a subshell under set -e.
# shellcheck shell=bash

# The bridges in the bridge log that thread TID of process PID did not launch: PID TID.
bridges_by_others() {
	awk -v pid="$1" '$1 == "bridge" && $2 == "pid=" pid { for (i = 2; i <= NF; i++) if ($i ~ /^tid=/) {
		split($i, kv, "="); if (kv[2] != pid) n++ } } END { print n + 0 }' "$WORK/bridge.log"
}

# need_two_cpus: skips where this test may run on one CPU only (a task there has its context
# synchronisations not bridged: core/bridge.h, NVT_BRIDGE_CTX_MIN_CPUS).
need_two_cpus() {
	[ "$(nproc)" -ge 2 ] || skip "needs two CPUs (a task on one has its context synchronisations not bridged)"
}

# Steps waited for by the context: bridged, each bridge queued by the shim's thread (not the
# program's) and released by the next launch (no launch left behind an unreleased bridge); the
# debug report counts them.
t_bridge_context_sync_bridged() {
	local pid bad n
	need_two_cpus
	PRIOAPP_CTX_SYNC=1 NVTASKSET_BRIDGE_DEBUG=1 STEPS_LAUNCHES=300 steps_app ctx --priority high
	pid=$(sed -n 's/^bridge pid=\([0-9]*\) .*/\1/p' "$WORK/bridge.log" | sort -u)
	n=$(bridges)
	[ "$n" -gt 60 ] || die "$n bridges: $(head -3 "$WORK/bridge.log")"
	eq "$(bridges_by_others "$pid")" "$n" "bridges queued by the shim's thread"
	bad=$(awk '$1 == "app" { split($3, a, "="); split($4, r, "="); if (r[2] + 0 < a[2] + 0) print }' "$WORK/bridge.log")
	eq "$bad" "" "launches behind an unreleased bridge"
	has "$(cat "$WORK/ctx.err")" "context synchronisations' bridges queued by the shim's thread"
	[ "$(sed -n "s/.*bridge: \([0-9]*\) context synchronisations' bridges.*/\1/p" "$WORK/ctx.err")" -gt 60 ] ||
		die "the report: $(grep 'bridge:' "$WORK/ctx.err")"
	hasnt "$(cat "$WORK/ctx.err")" "nvtaskset: warning"
}

# A task that may run on one CPU only (taskset -c N) has its context synchronisations not
# bridged (the bridge's module not even loaded), and the debug report says why: the shim's
# thread would take the CPU from the waiting one before the wait took its measure, and the wait
# would take its bridge in (core/bridge.h).
t_bridge_context_sync_one_cpu_not_bridged() {
	local cpu
	cpu=$(taskset -pc "$BASHPID" | sed 's/.*: //; s/[-,].*//')
	PRIOAPP_CTX_SYNC=1 NVTASKSET_BRIDGE_DEBUG=1 STEPS_LAUNCHES=300 FAKECUDA_LOG=$WORK/driver.log \
		steps_app one --priority high taskset -c "$cpu"
	[ "$(grep -c '^launch' "$WORK/one.log")" -gt 300 ] || die "the program stopped early"
	eq "$(bridges)" 0 "bridges of a task on CPU $cpu only"
	eq "$(grep -c '^module' "$WORK/driver.log")" 0 "modules loaded (the bridge's: not needed)"
	has "$(cat "$WORK/one.err")" "context synchronisations not bridged: the waiting thread may run on one CPU only"
	hasnt "$(cat "$WORK/one.err")" "nvtaskset: warning"
}

# The shim's thread woken on the waiting thread's CPU (PRIOAPP_PIN_OTHERS_AT: from the 20th launch
# it may run there only, as threads the scheduler put on one CPU) moves off it to the waiting
# thread's other CPUs before it queues the bridge, which the wait then does not take in (the
# fake driver's context synchronisation, as the H100's, waits to its cap for a bridge queued
# before it took its measure): bridged to the end, none queued on the waiting thread's CPU.
t_bridge_context_sync_threads_on_one_cpu() {
	local line n
	need_two_cpus
	PRIOAPP_CTX_SYNC=1 PRIOAPP_PIN_OTHERS_AT=20 NVTASKSET_BRIDGE_DEBUG=1 STEPS_LAUNCHES=300 steps_app met --priority high
	line=$(grep "context synchronisations' bridges queued" "$WORK/met.err") || die "no report: $(cat "$WORK/met.err")"
	n=$(sed -n "s/.*moved off the waiting thread's CPU \([0-9]*\) times, queued \([0-9]*\) on it.*/\1 \2/p" <<<"$line")
	[ "${n% *}" -ge 1 ] || die "the thread never moved: $line"
	eq "${n#* }" 0 "bridges queued on the waiting thread's CPU"
	hasnt "$line" "not bridged"
	[ "$(bridges)" -gt 100 ] || die "$(bridges) bridges: $line"
	hasnt "$(cat "$WORK/met.err")" "nvtaskset: warning"
}

# A task pinned to one CPU while it runs (every thread, from the 200th launch: PRIOAPP_PIN_ALL_AT)
# has its context synchronisations bridged before and not after: the shim's thread, woken on
# the waiting thread's CPU with no other to go to, stops them (the report says why), and the
# CPUs read again every 256 waits are still one. pinned_later WIDE_AT: the program's thread lets
# itself run on every CPU again before launch WIDE_AT (0: never).
pinned_later() {
	local before after
	need_two_cpus
	PRIOAPP_CTX_SYNC=1 PRIOAPP_PIN_ALL_AT=200 PRIOAPP_WIDE_AT=$1 NVTASKSET_BRIDGE_DEBUG=1 STEPS_LAUNCHES=900 \
		steps_app pinned --priority high
	has "$(cat "$WORK/pinned.err")" "not bridged from now on: the task's threads may run on one CPU only"
	hasnt "$(cat "$WORK/pinned.err")" "their waits took in the bridges"
	# (the waits logged by the fake driver: before the 200th launch 99 of them)
	before=$(awk '$1 == "wait" { w++ } $1 == "bridge" && w <= 99 { n++ } END { print n + 0 }' "$WORK/bridge.log")
	[ "$before" -ge 10 ] || die "$before bridges before the pin"
	[ "$(grep -c '^launch' "$WORK/pinned.log")" -gt 900 ] || die "the program stopped early"
	hasnt "$(cat "$WORK/pinned.err")" "nvtaskset: warning"
}
t_bridge_context_sync_all_on_one_cpu_later() {
	pinned_later 0
	has "$(cat "$WORK/pinned.err")" "context synchronisations not bridged: the waiting thread may run on one CPU only"
	hasnt "$(cat "$WORK/pinned.err")" "context synchronisations bridged again"
	eq "$(awk '$1 == "wait" { w++ } $1 == "bridge" && w > 101 { n++ } END { print n + 0 }' "$WORK/bridge.log")" 0 \
		"bridges after the task was pinned to one CPU"
}
# ... and where the program's thread lets itself run on every CPU again (launch 300), bridged
# again once its CPUs are read again (at most 256 waits after the stop).
t_bridge_context_sync_all_on_one_cpu_then_wide() {
	local after
	pinned_later 300
	has "$(cat "$WORK/pinned.err")" "context synchronisations bridged again: the waiting thread may run on more CPUs now"
	after=$(awk '$1 == "wait" { w++ } $1 == "bridge" && w > 360 { n++ } END { print n + 0 }' "$WORK/bridge.log")
	[ "$after" -ge 20 ] || die "$after bridges after the task could run on every CPU again"
}

# A program whose waiting thread alone is pinned to one CPU before its first wait, beside a
# thread of its own that is not (PRIOAPP_OTHER_THREAD: the shim's thread, started from the
# waiting one, would inherit its one CPU only), has its context synchronisations bridged: the
# shim's thread runs on the other thread's CPUs too, and queues none on the waiting thread's.
t_bridge_context_sync_waiter_pinned_first() {
	local line n
	need_two_cpus
	PRIOAPP_CTX_SYNC=1 PRIOAPP_OTHER_THREAD=1 PRIOAPP_PIN_SELF_AT=1 NVTASKSET_BRIDGE_DEBUG=1 STEPS_LAUNCHES=300 \
		steps_app self --priority high
	line=$(grep "context synchronisations' bridges queued" "$WORK/self.err") || die "no report: $(cat "$WORK/self.err")"
	hasnt "$line" "not bridged"
	n=$(sed -n "s/.*queued \([0-9]*\) on it.*/\1/p" <<<"$line")
	eq "$n" 0 "bridges queued on the waiting thread's CPU"
	# (on 2 CPUs the shim's thread has the one the waiting thread has not: a busy machine's
	# other work there leaves some waits unbridged)
	[ "$(bridges)" -gt 20 ] || die "$(bridges) bridges: $(cat "$WORK/self.err")"
	hasnt "$(cat "$WORK/self.err")" "nvtaskset: warning"
}
# ... but where it is the program's only thread, the task is on one CPU (the threads it starts
# inherit that CPU, the shim's too): not bridged, as a task started on one CPU.
t_bridge_context_sync_task_pinned_first() {
	need_two_cpus
	PRIOAPP_CTX_SYNC=1 PRIOAPP_PIN_SELF_AT=1 NVTASKSET_BRIDGE_DEBUG=1 STEPS_LAUNCHES=300 \
		FAKECUDA_LOG=$WORK/driver.log steps_app alone --priority high
	[ "$(grep -c '^launch' "$WORK/alone.log")" -gt 300 ] || die "the program stopped early"
	eq "$(bridges)" 0 "bridges of a task on one CPU"
	eq "$(grep -c '^module' "$WORK/driver.log")" 0 "modules loaded (the bridge's: not needed)"
	has "$(cat "$WORK/alone.err")" "context synchronisations not bridged: the waiting thread may run on one CPU only"
	hasnt "$(cat "$WORK/alone.err")" "nvtaskset: warning"
}

# A task on one CPU that lets itself run on every CPU later (PRIOAPP_WIDE_AT) has its CPUs read
# again within NVT_BRIDGE_CTX_RETRY (256) context synchronisations, and is bridged from then on.
t_bridge_context_sync_one_cpu_then_wide() {
	local cpu n
	need_two_cpus
	cpu=$(taskset -pc "$BASHPID" | sed 's/.*: //; s/[-,].*//')
	PRIOAPP_CTX_SYNC=1 PRIOAPP_WIDE_AT=40 NVTASKSET_BRIDGE_DEBUG=1 STEPS_LAUNCHES=900 \
		steps_app later --priority high taskset -c "$cpu"
	has "$(cat "$WORK/later.err")" "context synchronisations bridged again: the waiting thread may run on more CPUs now"
	n=$(bridges)
	[ "$n" -gt 100 ] || die "$n bridges after the task let itself run on every CPU"
	hasnt "$(cat "$WORK/later.err")" "nvtaskset: warning"
}

# A forked child tells its CPUs again: the child of a parent on one CPU that lets itself run on
# every CPU has its context synchronisations bridged by a thread of its own.
t_bridge_context_sync_one_cpu_then_child_wide() {
	local cpu parent child
	need_two_cpus
	cpu=$(taskset -pc "$BASHPID" | sed 's/.*: //; s/[-,].*//')
	PRIOAPP_CTX_SYNC=1 PRIOAPP_FORK_AT=60 PRIOAPP_CHILD_WIDE=1 NVTASKSET_BRIDGE_DEBUG=1 STEPS_LAUNCHES=300 \
		steps_app wide --priority high taskset -c "$cpu"
	# (the parent's waits, logged by the fake driver, come first: its steps before the fork)
	parent=$(sed -n 's/^wait pid=\([0-9]*\) .*/\1/p' "$WORK/bridge.log" | head -1)
	[ -n "$parent" ] || die "no wait logged: $(head -3 "$WORK/bridge.log")"
	child=$(awk -v p="pid=$parent" '$1 == "bridge" && $2 != p { print $2; exit }' "$WORK/bridge.log")
	child=${child#pid=}
	[ -n "$child" ] || die "no bridge of the child: $(grep -c '^bridge' "$WORK/bridge.log") in all"
	# (how many depends on the host's load: late bridges, taken in, stop the bridging for a
	# while; one by a thread of the child's own is what a child that did not tell its CPUs
	# again never has)
	[ "$(bridges_by_others "$child")" -gt 0 ] || die "the child's bridges: $(bridges_by_others "$child") $(cat "$WORK/wide.err")"
	eq "$(awk -v p="pid=$parent" '$1 == "bridge" && $2 == p { n++ } END { print n + 0 }' "$WORK/bridge.log")" 0 \
		"the parent's bridges (on CPU $cpu only)"
	hasnt "$(cat "$WORK/wide.err")" "nvtaskset: warning"
}

# The bridging's phases: runs of bridges in the bridge log apart by at least 100 waits unbridged,
# with the shim's judgements from its report (ERR): per phase, "BRIDGES TAKEN FIRST STOP LAST"
# (its bridges, how many of their waits the shim says took them in, the first such bridge's
# seq, the seq of the bridge at whose wait the bridging stopped, and the phase's last bridge's
# seq; 0 for none). A stop is said at the wait of the bridge that made it, so a phase that
# stopped has STOP = LAST: no bridge is queued after a stop until the try.
bridge_phases() {
	awk 'FILENAME != ARGV[1] && /context synchronisation of bridge [0-9]+ took it in/ {
		t = $0; sub(/.*of bridge /, "", t); sub(/ .*/, "", t); took[t] = 1 }
	     FILENAME != ARGV[1] && /not bridged from now on.*the last: bridge [0-9]+/ {
		t = $0; sub(/.*the last: bridge /, "", t); sub(/[^0-9].*/, "", t); stop[t] = 1 }
	     FILENAME == ARGV[1] && $1 == "wait" { quiet++ }
	     FILENAME == ARGV[1] && $1 == "bridge" { if (!p || quiet >= 100) p++; quiet = 0
		t = $3; sub(/seq=/, "", t); n[p]++; last[p] = t; seqs[p] = seqs[p] " " t }
	     END { for (i = 1; i <= p; i++) { k = split(seqs[i], q, " "); tk = 0; first = 0; st = 0
		for (j = 1; j <= k; j++) { if (q[j] in took) { tk++; if (!first) first = q[j] }
					   if (q[j] in stop) st = q[j] }
		print n[i], tk, first, st, last[i] } }' "$WORK/bridge.log" "$1"
}

# Context synchronisations that took their bridges in (FAKECUDA_CTXSYNC_US: the wait lasts the
# bridge's cap, whose record says so) are no longer bridged after four; tried again 256 waits
# later, the first such wait stops them again (core/bridge.h: NVT_BRIDGE_CTX_RETRY); the program
# goes on to its end (600 launches, 300 waits: no second try). (A busy host's shim thread may
# queue a bridge after the wait's extra time ended: not taken in.)
t_bridge_context_sync_long_stops() {
	local phases
	need_two_cpus
	PRIOAPP_CTX_SYNC=1 DBGX=1 NVTASKSET_BRIDGE_DEBUG=1 FAKECUDA_CTXSYNC_US=9000 PRIOAPP_LAUNCHES=600 \
		STEPS_LAUNCHES=599 steps_app long --priority high
	phases=$(bridge_phases "$WORK/long.err")
	eq "$(echo "$phases" | wc -l)" 2 "phases of bridging: $phases"
	# (the first: at least four taken in, then stopped; the try: stopped at the first taken in)
	echo "$phases" | awk 'NR == 1 && ($2 < 4 || $4 != $5) { exit 1 } NR == 2 && ($2 != 1 || $3 != $5 || $4 != $5) { exit 1 }' ||
		die "bridges, taken in, the first taken in, the stop's, the last, a phase: $phases"
	eq "$(grep -c 'context synchronisations not bridged from now on (for 256 waits)' "$WORK/long.err")" 1 "first stop"
	eq "$(grep -c 'context synchronisations bridged again (a try)' "$WORK/long.err")" 1 "tries"
	has "$(cat "$WORK/long.err")" "context synchronisations not bridged from now on (for 512 waits)"
	eq "$(grep -c '^launch' "$WORK/long.log")" 600 "launches"
	hasnt "$(cat "$WORK/long.err")" "nvtaskset: warning"
}

# Waits that took their bridges in for a while only (the first twelve: FAKECUDA_CTXSYNC_FIRST,
# of which a busy host's late bridges may miss some) stop the bridging for a while, not for
# good: after 256 waits the steps are bridged again, to the end. (Where a busy host kept the
# waiting thread from its CPU past a bridge's cap, the shim says the wait took it in, which may
# stop the bridging again at that wait, for 512 waits: the program's 700 waits end before the
# next try.)
t_bridge_context_sync_taken_in_for_a_while() {
	local phases
	need_two_cpus
	PRIOAPP_CTX_SYNC=1 DBGX=1 NVTASKSET_BRIDGE_DEBUG=1 FAKECUDA_CTXSYNC_US=9000 FAKECUDA_CTXSYNC_FIRST=12 \
		PRIOAPP_LAUNCHES=1400 STEPS_LAUNCHES=1399 steps_app warm --priority high
	has "$(cat "$WORK/warm.err")" "context synchronisations bridged again (a try)"
	phases=$(bridge_phases "$WORK/warm.err")
	eq "$(echo "$phases" | wc -l)" 2 "phases of bridging: $phases"
	echo "$phases" | awk 'NR == 1 && ($2 < 4 || $4 != $5) { exit 1 }' ||
		die "bridges, taken in, the first taken in, the stop's, the last, a phase: $phases"
	if [ "$(echo "$phases" | awk 'NR == 2 { print $2 }')" = 0 ]; then
		[ "$(echo "$phases" | awk 'NR == 2 { print $1 }')" -ge 100 ] || die "bridges after the warm-up: $phases"
		eq "$(grep -c 'context synchronisations not bridged from now on' "$WORK/warm.err")" 1 "stops"
		hasnt "$(cat "$WORK/warm.err")" "context synchronisations not bridged now"
	else
		echo "$phases" | awk 'NR == 2 && $4 && $4 != $5 { exit 1 }' || die "bridges after the try's stop: $phases"
	fi
	hasnt "$(cat "$WORK/warm.err")" "nvtaskset: warning"
}

# Steps longer than the bridge's cap (kernels of 6 ms, waited for by the context) whose waits
# do not take their bridges in are bridged to the end: the bridge still runs when the wait
# returns, or (FAKECUDA_BRIDGE_BESIDE=2: every other bridge runs beside the step's last kernel)
# ended at its cap well before the wait returned, the clocks told apart by the others. (Where
# every bridge runs beside, with no bridge that saw its wait return, the record alone decides:
# core/bridge.h.)
long_steps() {
	local n
	need_two_cpus
	PRIOAPP_CTX_SYNC=1 DBGX=1 NVTASKSET_BRIDGE_DEBUG=1 STEPS_LAUNCHES=40 \
		FAKECUDA_KERNEL_US=6000 steps_app longsteps --priority high
	hasnt "$(cat "$WORK/longsteps.err")" "not bridged"
	n=$(bridges)
	[ "$n" -ge 16 ] || die "$n bridges for $(grep -c '^launch' "$WORK/longsteps.log") launches"
	hasnt "$(cat "$WORK/longsteps.err")" "nvtaskset: warning"
}
t_bridge_context_sync_long_steps_bridged() { long_steps; }
t_bridge_context_sync_long_steps_beside() { FAKECUDA_BRIDGE_BESIDE=2 long_steps; }

# A forked child's context synchronisations are bridged by a thread of its own (the parent's is
# not the child's); the parent's go on.
t_bridge_context_sync_after_fork() {
	local parent child
	need_two_cpus
	# (kernels of 1 ms: a wait of 2 ms leaves the child's new thread, slow to start on a busy
	# machine, time to queue its bridges: with 200 us kernels 5 of its 30 were bridged beside two
	# busy loops and other tests on 2 CPUs; a failure shows its debug report)
	NVTASKSET_BRIDGE_DEBUG=1 FAKECUDA_KERNEL_US=1000 PRIOAPP_CTX_SYNC=1 PRIOAPP_FORK_AT=60 STEPS_LAUNCHES=300 steps_app fork --priority high
	parent=$(awk '$1 == "bridge" { print $2; exit }' "$WORK/bridge.log")
	parent=${parent#pid=}
	child=$(awk -v p="pid=$parent" '$1 == "bridge" && $2 != p { print $2; exit }' "$WORK/bridge.log")
	child=${child#pid=}
	[ -n "$child" ] || die "no bridge of the child: $(grep -c '^bridge' "$WORK/bridge.log") in all"
	# (how many depends on the host's load: late bridges, taken in, stop the bridging for a
	# while; one by a thread of the child's own is what a child that did not tell its CPUs
	# again never has)
	[ "$(bridges_by_others "$child")" -gt 0 ] || die "the child's bridges: $(bridges_by_others "$child") $(cat "$WORK/wide.err")"
	[ "$(awk -v p="pid=$parent" '$1 == "bridge" && $2 == p { n++ } END { print n + 0 }' "$WORK/bridge.log")" -gt 60 ] ||
		die "the parent's bridges after the fork"
	hasnt "$(cat "$WORK/fork.err")" "nvtaskset: warning"
}

# The program's exit waits for the shim's thread while it is inside a bridge's launch (50 ms
# each here: FAKECUDA_BRIDGE_DELAY_US); the fake driver dies if it is torn down under it.
t_bridge_context_sync_exit_waits() {
	local t0 t1
	need_two_cpus
	t0=$(date +%s%N)
	FAKECUDA_BRIDGE_DELAY_US=50000 PRIOAPP_CTX_SYNC=1 STEPS_LAUNCHES=20 steps_app exit --priority high
	t1=$(date +%s%N)
	[ "$(bridges)" -ge 1 ] || die "no bridge"
	hasnt "$(cat "$WORK/exit.err")" "fakecuda:"
	[ $(((t1 - t0) / 1000000)) -lt 15000 ] || die "the program took $(((t1 - t0) / 1000000)) ms"
}

# Steps of a kernel and a graph replay waited for by the context: at the wait's start the last
# bridge still waits for the host's next call after the replay (the replay's work may reach the
# GPU late, and the next bridge is queued by the shim's thread a little later); steps go on.
t_bridge_context_sync_keeps_replay() {
	local n bad
	need_two_cpus
	PRIOAPP_CTX_SYNC=1 PRIOAPP_GRAPH=1 STEPS_LAUNCHES=300 steps_app replay --priority high
	[ "$(bridges)" -gt 60 ] || die "$(bridges) bridges"
	# (d:seq/released/call; a wait whose next bridge the thread has queued already, before the
	# wait's line, is passed over: its last bridge may end. On a busy machine the waiting
	# thread, descheduled before its line, is often passed over: a few are enough.)
	n=$(awk '$1 == "wait" && $4 ~ /^bridges=0:/ { split(substr($4, 11), f, "[/,]"); if (f[1] == f[2]) n++ }
		END { print n + 0 }' "$WORK/bridge.log")
	[ "$n" -gt 5 ] || die "$n waits logged before their bridge"
	bad=$(awk '$1 == "wait" && $4 ~ /^bridges=0:/ { split(substr($4, 11), f, "[/,]"); if (f[1] == f[2] && f[3] != 1) print }' \
		"$WORK/bridge.log")
	eq "$bad" "" "waits whose last bridge no longer waits for the host's next call"
	hasnt "$(cat "$WORK/replay.err")" "nvtaskset: warning"
}

# One step on two GPUs, each waited for by its context in turn: the shim's thread queues each
# GPU's bridge in that GPU's context (the fake refuses a bridge launched in another's), both
# GPUs bridged. GPU 1's wait returns at once (its work ended while GPU 0's was waited for), so
# its bridge is queued only if the thread (woken, 20 us after the wait began) comes before the
# host's next launch there, which releases it first: a race the scheduler decides (about half
# of the waits on an idle 2-core machine, as few as 9 of 150 on a loaded one), and rightly no
# bridge where the launch wins. Every fourth step the host is idle 5 ms after its waits
# (PRIOAPP_IDLE_US: requests of four steps), a window the thread comes within on a busy machine
# too: more than 600 launches make 75 such steps at least, and each GPU more than 60 bridges (a
# shim whose thread came 1 ms after each wait began: 87 on GPU 1 in 86 such steps; none
# without them).
t_bridge_context_sync_two_gpus() {
	local pid d n
	need_two_cpus
	export FAKECUDA_LOG=$WORK/cuda.log FAKECUDA_STALE_ABORT=1 FAKECUDA_DEVICES=2
	PRIOAPP_CTX_SYNC=1 PRIOAPP_SPMD=1 PRIOAPP_IDLE_US=5000 STEPS_LAUNCHES=600 steps_app two --priority high
	pid=$(sed -n 's/^bridge pid=\([0-9]*\) .*/\1/p' "$WORK/bridge.log" | sort -u)
	eq "$(bridges_by_others "$pid")" "$(bridges)" "bridges queued by the shim's thread"
	for d in 0 1; do
		# (counted by awk: grep -c's status for none would end the test with no word)
		n=$(awk -v dev="dev=$d" '$1 == "bridge" && $NF == dev { n++ } END { print n + 0 }' "$WORK/bridge.log")
		[ "$n" -gt 60 ] || die "GPU $d: $n bridges for $(grep -c '^launch' "$WORK/two.log") launches"
	done
	hasnt "$(cat "$WORK/two.err")" "nvtaskset: warning"
	hasnt "$(cat "$WORK/two.err")" "fakecuda:"
}

# A context synchronisation that returns at once (kernels of no time), then the context destroyed
# (the program's own, cuCtxCreate's): the shim's thread, which holds the wait's bridge 20 us
# more, neither makes that context current nor launches in it once its destruction began (the
# fake dies of a destroyed context made current: FAKECUDA_STALE_ABORT).
t_bridge_context_sync_then_destroyed() {
	local i pid
	need_two_cpus
	for i in $(seq 16); do
		rm -f "$WORK/d$i.stop"
		FAKECUDA_STALE_ABORT=1 PRIOAPP_CTX_SYNC=1 PRIOAPP_CTX_UNTIL=$((40 + i * 4 + 1)) FAKECUDA_KERNEL_US=0 \
			FAKECUDA_BRIDGE_LOG=$WORK/bridge.log "$NVT" --no-mps --priority high \
			"$PRIOAPP" batch "$WORK/d$i.stop" "$WORK/d$i.log" 2 2>"$WORK/d$i.err" &
		pid=$!
		wait_for 10 test -e "$WORK/d$i.log.ready"
		poll_until 10 launches_made "$WORK/d$i.log" 120 || true
		touch "$WORK/d$i.stop"
		wait "$pid" || die "run $i: the job failed: $(cat "$WORK/d$i.err")"
		hasnt "$(cat "$WORK/d$i.err")" "fakecuda:"
	done
	[ "$(bridges)" -gt 20 ] || die "$(bridges) bridges"
}
