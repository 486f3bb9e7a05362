# Priorities on top of partitions (docs/priorities.md): the agent guards lower tasks
# while a higher one launches, lends idle TPCs, restores own partitions; users and root.
# Sourced by tests/run-tests.sh: each t_NAME function is one test, run in a subshell under set -e
# with the helpers defined there.
# Over 500 lines on purpose: the agent's guarding, lending and restoring are one loop
# (src/prio/agent.c), tested through the helpers here that other suites use too (start_agent,
# agent_left_alone, guarded_to).
# shellcheck shell=bash

# Other users here are uids 65534, 65524 and 65525: the security tests make run directories of
# their own for 65531-65533 and expect them not to exist.

# ---- Helpers -----------------------------------------------------------------

# tpcs_of LIST: the TPCs of a list, one per line.
tpcs_of() {
	python3 -c '
import sys
for item in filter(None, sys.argv[1].split(",")):
    a, _, b = item.partition("-")
    for t in range(int(a), int(b or a) + 1):
        print(t)' "$1"
}
# count_of LIST; overlap A B: how many TPCs A and B share.
count_of() { tpcs_of "$1" | wc -l; }
overlap() { comm -12 <(tpcs_of "$1" | sort) <(tpcs_of "$2" | sort) | wc -l; }
state_is() { [ "$(cat "$1" 2>/dev/null)" == "$2" ]; }
# guarded_to FILE N AVOID: the TPCs in FILE are N of them, none of AVOID's.
guarded_to() {
	local now
	now=$(cat "$1" 2>/dev/null) || return 1
	[ -n "$now" ] && [ "$(count_of "$now")" == "$2" ] && [ "$(overlap "$now" "$3")" == 0 ]
}
# The agent's rounds, counted: agent_rounds UID N waits until the agent of user UID (0: root's)
# began N rounds of its loop after the call, seen in its heartbeat (its pid file's time,
# touched at the start of a round at most every NVT_AGENT_HEARTBEAT_MS, 500 ms, before that
# round's poll): its round N - 1 polled every task after the call.
agent_rounds() {
	local f=$NVTASKSET_RUNDIR/nvtaskset-$1/agent.pid
	BEAT=$(stat -c %y "$f") || die "no pid file of uid $1's agent"
	BEATS=0
	poll_until 10 beats_reach "$f" "$2" || die "uid $1's agent began $BEATS rounds, not $2"
}
beats_reach() {
	local now
	now=$(stat -c %y "$1" 2>/dev/null) || return 1
	[ "$now" == "$BEAT" ] || { BEAT=$now && BEATS=$((BEATS + 1)); }
	[ "$BEATS" -ge "$2" ]
}
# agent_left_alone STAMPS MARK [UID]: the agent (of UID, default the running user's) changed nothing of
# the loop that stamps STAMPS (FAKEAPP_STAMP_LAUNCHES=1) since MARK (stamp_mark): 3 of its
# rounds after the call (a hold time under 500 ms has passed, and a poll after it), then 5
# launches of the loop, none on new TPCs.
agent_left_alone() {
	agent_rounds "${3:-$ME_UID}" 3
	launches_unchanged "$1" "$2" 5
}
# start_agent TAG [PREFIX...] -- [OPTION...]: a foreground agent (its log $WORK/TAG.log); sets AGENT.
# argv[0] names $WORK, so that the suite's clean-up finds it whatever happens.
start_agent() {
	local tag=$1 prefix=()
	shift
	while [ "$1" != "--" ]; do
		prefix+=("$1")
		shift
	done
	shift
	"${prefix[@]}" bash -c 'exec -a "$0" "$@"' "$WORK/agent.$tag" "$NVT" --agent "$@" \
		2>"$WORK/$tag.log" &
	AGENT=$!
	wait_for 5 grep -q "poll" "$WORK/$tag.log"
}
# stop_agent PID: SIGTERM, and it ends (restoring own partitions) within 5 s, status 0.
stop_agent() {
	kill -TERM "$1"
	local rc
	poll_until 5 is_gone "$1" || die "the agent $1 did not end on SIGTERM"
	wait "$1" && rc=0 || rc=$?
	eq "$rc" 0 "the agent's exit status"
}
# The agent's reaction, counted: how many launches the higher task made from its first
# launch after an idle spell ("resume" in its FAKEAPP_STAMP file, FAKEAPP_STAMP_LAUNCHES=1)
# until the lower task's first launch on its guarded share (its own stamp file, one clock).
# A count, not a time: on a loaded machine the higher task waits for a CPU too, each of its
# launches a wake-up of its own (200 us apart) as each of the agent's polls is (500 us apart).
# Measured with --poll 500 (2026-11-23, 2 cores): 2 to 26 at load average 12, up to 154 at
# 24; an agent that polled every 100 ms counted 115 to 130 at 24, and counts ~400 on an
# idle machine. So the count still grows with the load, if far less than the time: the
# bound is REACTION_LAUNCHES (200) on an idle machine, times the load per CPU (load_x100)
# on a loaded one. It catches an agent that polls or waits for 50 ms or more on an idle
# machine; one that waits on another user's lock or a FIFO for ever fails on the wait's
# limit (wait_for), however loaded the machine.
REACTION_LAUNCHES=200
# reaction_launches HI_STAMPS LO_STAMPS LO_WORD: the high task's launches from its "resume" to
# the low task's first stamp whose text is not LO_WORD (its TPCs before), counted; "-" if either
# stamp is missing.
reaction_launches() {
	awk -v lo_word="$3" 'FNR == 1 {f++}
		f == 1 && $2 == "resume" && !t0 {t0 = $1}
		f == 1 && $2 == "launch" {at[++n] = $1}
		f == 2 && $2 != lo_word && !t1 {t1 = $1}
		END {
			if (!t0 || !t1) {print "-"; exit}
			for (i = 1; i <= n; i++) c += at[i] >= t0 && at[i] < t1
			print c
		}' "$1" "$2"
}
# guard_reactions LO_TAG HI_TAG ROUNDS GUARD: with the high task paused and its TPCs lent to the
# low task (its state 0-65), resumes the high task ROUNDS times; each time waits until the low
# task is guarded on GUARD TPCs clear of 0-8, counts the reaction, pauses the high task again and
# waits for the lending. Both tasks stamp to $WORK/TAG.stamp; the high one pauses on
# $WORK/HI_TAG.pause. Sets REACTIONS (the counts, space-separated); dies on a count over
# REACTION_LAUNCHES times the load per CPU (the larger of before and after).
guard_reactions() {
	local lo=$1 hi=$2 i n x100 x100_end bound
	REACTIONS=""
	load_x100 x100
	for ((i = 0; i < $3; i++)); do
		: >"$WORK/$lo.stamp"
		: >"$WORK/$hi.stamp"
		rm -f "$WORK/$hi.pause"
		wait_for 5 guarded_to "$WORK/$lo.state" "$4" 0-8
		n=$(reaction_launches "$WORK/$hi.stamp" "$WORK/$lo.stamp" 0-65)
		[ "$n" != - ] || die "no stamps: $(cat "$WORK/$hi.stamp" "$WORK/$lo.stamp")"
		REACTIONS="$REACTIONS $n"
		touch "$WORK/$hi.pause"
		wait_file "$WORK/$lo.state" "0-65" 5
	done
	load_x100 x100_end
	bound=$((REACTION_LAUNCHES * (x100_end > x100 ? x100_end : x100) / 100))
	for n in $REACTIONS; do
		[ "$n" -le "$bound" ] ||
			die "the agent guarded after $n of the high task's launches (bound $bound; all:$REACTIONS)"
	done
	return 0
}

# ---- Tests -------------------------------------------------------------------

t_prio_guard_lend_and_restore() {
	local lo hi json
	start_agent ag -- --hold 100 --poll 500 --guard 4
	FAKEAPP_STAMP=$WORK/plo.stamps FAKEAPP_STAMP_LAUNCHES=1 \
		start_loop plo "$NVT" --no-mps --priority low --yield guard -c 9-65 "$APP"
	lo=$PID
	wait_file "$WORK/plo.state" "9-65"
	# A high task launching: the low one keeps 4 TPCs of its own, none of the high one's GPCs.
	rm -f "$WORK/phi.pause" "$WORK/phi.stamp" "$WORK/plo.stamp"
	FAKEAPP_PAUSE=$WORK/phi.pause FAKEAPP_STAMP=$WORK/phi.stamp \
		start_loop phi "$NVT" --no-mps --priority high -c 0-8 "$APP"
	hi=$PID
	wait_file "$WORK/phi.state" "0-8"
	wait_for 5 guarded_to "$WORK/plo.state" 4 0-8
	run_rc out rc "$NVT" -l
	eq "$rc" 0
	has "$out" "PRIO    MODE       OWN"
	grep -Eq "^ *$lo .* low +guarded +9-65 +$(cat "$WORK/plo.state") " <<<"$out" || die "low row: $out"
	grep -Eq "^ *$hi .* high +own +0-8 +0-8 " <<<"$out" || die "high row: $out"
	has "$out" "priority agent: pid $AGENT (uid $ME_UID)"
	json=$(timeout "$HANG" "$NVT" -l --json)
	python3 - "$json" "$lo" "$hi" "$AGENT" "$ME_UID" <<'PY' || die "bad JSON: $json"
import json, sys
d = json.loads(sys.argv[1])
rows = {t["pid"]: t["gpus"][0] for t in d["tasks"]}
lo, hi = rows[int(sys.argv[2])], rows[int(sys.argv[3])]
assert lo["priority"] == "low" and lo["own_tpcs"] == "9-65" and lo["mode"] == "guarded"
assert lo["tpc_count"] == 4 and lo["guard"] is None and lo["lend"] is True
assert hi["priority"] == "high" and hi["mode"] == "own" and hi["tpcs"] == "0-8"
assert d["agents"] == [{"uid": int(sys.argv[5]), "pid": int(sys.argv[4]), "unfollowed": []}]
PY
	# The high task idle for the hold time: the low one borrows its TPCs; -l says who lends.
	touch "$WORK/phi.pause"
	wait_file "$WORK/plo.state" "0-65" 5
	run_rc out rc "$NVT" -l
	grep -Eq "^ *$lo .* low +borrowing +9-65 +0-65 " <<<"$out" || die "low row: $out"
	grep -Eq "^ *$hi .* high +lending +0-8 +0-8 " <<<"$out" || die "high row: $out"
	# Active again: guarded again (t_prio_reaction_time measures how soon).
	rm -f "$WORK/phi.pause"
	wait_for 5 guarded_to "$WORK/plo.state" 4 0-8
	# --no-lend on the high task: the low one keeps its own while the high one is idle.
	run_rc out rc "$NVT" -p --priority high --no-lend "$hi"
	eq "$rc" 0 "-p --priority: $out"
	touch "$WORK/phi.pause"
	wait_file "$WORK/plo.state" "9-65" 5
	agent_left_alone "$WORK/plo.stamps" "$(stamp_mark "$WORK/plo.stamps")"
	eq "$(cat "$WORK/plo.state")" "9-65" "the low task's TPCs beside a high one that does not lend"
	# SIGTERM: every task it changed gets its own partition back.
	rm -f "$WORK/phi.pause"
	wait_for 5 guarded_to "$WORK/plo.state" 4 0-8
	stop_agent "$AGENT"
	wait_file "$WORK/plo.state" "9-65"
	has "$(cat "$WORK/ag.log")" "every task it changed has its own partition back"
	stop_loop phi "$hi"
	stop_loop plo "$lo"
}

t_prio_reaction_time() {
	# The high task's first launch after an idle spell -> the low task's first launch on
	# its guarded share, with the fake driver, counted in the high task's launches.
	local lo hi
	start_agent rt -- --hold 50 --poll 500 --guard 4
	rm -f "$WORK/rlo.stamp" "$WORK/rhi.stamp"
	touch "$WORK/rhi.pause"
	FAKEAPP_STAMP=$WORK/rlo.stamp start_loop rlo "$NVT" --no-mps --priority low --yield guard -c 9-65 "$APP"
	lo=$PID
	FAKEAPP_PAUSE=$WORK/rhi.pause FAKEAPP_STAMP=$WORK/rhi.stamp FAKEAPP_STAMP_LAUNCHES=1 \
		start_loop rhi "$NVT" --no-mps --priority high -c 0-8 "$APP"
	hi=$PID
	wait_file "$WORK/rlo.state" "0-65" 5
	guard_reactions rlo rhi 5 4
	echo "reactions (the high task's launches, poll 500 us):$REACTIONS" | tee "$B/prio-reaction.txt"
	rm -f "$WORK/rhi.pause"
	stop_agent "$AGENT"
	stop_loop rhi "$hi"
	stop_loop rlo "$lo"
}

t_prio_unmanaged_untouched() {
	# A task without --priority is never changed, and never guards a lower one.
	local un lo hi seq0 seq1 mark
	start_agent un -- --hold 100 --guard 4
	FAKEAPP_STAMP=$WORK/pun.stamps FAKEAPP_STAMP_LAUNCHES=1 start_loop pun "$NVT" --no-mps -c 0-65 "$APP"
	un=$PID
	start_loop pl2 "$NVT" --no-mps --priority low --yield guard -c 9-65 "$APP"
	lo=$PID
	wait_file "$WORK/pun.state" "0-65"
	wait_file "$WORK/pl2.state" "9-65"
	seq0=$(timeout "$HANG" "$NVT" -p --json "$un")
	mark=$(stamp_mark "$WORK/pun.stamps")
	start_loop ph2 "$NVT" --no-mps --priority high -c 0-8 "$APP"
	hi=$PID
	wait_for 5 guarded_to "$WORK/pl2.state" 4 0-8
	agent_left_alone "$WORK/pun.stamps" "$mark"
	eq "$(cat "$WORK/pun.state")" "0-65" "the unmanaged task's TPCs"
	seq1=$(timeout "$HANG" "$NVT" -p --json "$un")
	python3 -c 'import json,sys; a,b=(json.loads(x)["gpus"][0] for x in sys.argv[1:]); assert a["current"]==b["current"]' \
		"$seq0" "$seq1" || die "unmanaged task changed: $seq0 / $seq1"
	run_rc out rc "$NVT" -l
	grep -Eq "^ *$un .* - +- +- +0-65 " <<<"$out" || die "unmanaged row: $out"
	# The high task loses its priority (-p --priority none): a busy task without one guards
	# nobody, and the low one gets its own back.
	run_rc out rc "$NVT" -p --priority none "$hi"
	eq "$rc" 0 "-p --priority none: $out"
	wait_file "$WORK/pl2.state" "9-65" 5
	eq "$(cat "$WORK/ph2.state")" "0-8" "the task that lost its priority"
	stop_loop ph2 "$hi"
	stop_agent "$AGENT"
	stop_loop pl2 "$lo"
	stop_loop pun "$un"
}

t_prio_agent_killed_and_restarted() {
	local lo hi now mark
	start_agent k1 -- --hold 100 --guard 4
	FAKEAPP_STAMP=$WORK/klo.stamps FAKEAPP_STAMP_LAUNCHES=1 \
		start_loop klo "$NVT" --no-mps --priority low --yield guard -c 9-65 "$APP"
	lo=$PID
	start_loop khi "$NVT" --no-mps --priority high --no-lend -c 0-8 "$APP"
	hi=$PID
	wait_for 5 guarded_to "$WORK/klo.state" 4 0-8
	# Killed outright: every task keeps a valid partition, the guarded one its share, over
	# 5 launches after it died.
	mark=$(stamp_mark "$WORK/klo.stamps")
	now=$(cat "$WORK/klo.state")
	kill -KILL "$AGENT"
	wait "$AGENT" 2>/dev/null || true
	launches_unchanged "$WORK/klo.stamps" "$mark" 5
	eq "$(cat "$WORK/klo.state")" "$now" "the low task's TPCs after the agent died"
	eq "$(cat "$WORK/khi.state")" "0-8" "the high task's TPCs after the agent died"
	run_rc out rc "$NVT" -l
	has "$out" "priority agent: none runs"
	# The high task ends; a new agent gives the low one its own partition back.
	stop_loop khi "$hi"
	start_agent k2 -- --hold 100 --guard 4
	wait_file "$WORK/klo.state" "9-65" 5
	stop_agent "$AGENT"
	stop_loop klo "$lo"
}

t_prio_users() {
	# A user's agent manages only her tasks; another user's high task guards nobody of hers,
	# also under root's agent, unless root runs it --across-users; root's own high task guards
	# her task; her agent stands by while root's runs, then manages again.
	need_users
	local lo hi uagent rootag rhi mark
	start_agent uag $(as_user 65534) -- --hold 100 --guard 4
	uagent=$AGENT
	FAKEAPP_STAMP=$WORK/u/ulo.stamps FAKEAPP_STAMP_LAUNCHES=1 \
		start_loop u/ulo $(as_user 65534) "$NVT" --no-mps --priority low --yield guard -c 9-65 "$APP"
	lo=$PID
	start_loop u/uhi $(as_user 65524) "$NVT" --no-mps --priority high -c 0-8 "$APP"
	hi=$PID
	wait_file "$WORK/u/ulo.state" "9-65"
	mark=$(stamp_mark "$WORK/u/ulo.stamps")
	wait_file "$WORK/u/uhi.state" "0-8"
	# Her agent does not guard her task for another user's high task.
	agent_left_alone "$WORK/u/ulo.stamps" "$mark" 65534
	eq "$(cat "$WORK/u/ulo.state")" "9-65" "a user's task beside another user's high one"
	# Another user cannot give her task a priority either.
	run_rc out rc $(as_user 65524) "$NVT" -p --priority low --yield guard "$lo"
	eq "$rc" 1 "another user's -p --priority: $out"
	has "$out" "failed to set pid $lo's priority"
	run_rc out rc $(as_user 65524) "$NVT" --agent --across-users
	eq "$rc" 1 "a user's --across-users: $out"
	# Root's agent: hers stands by; the other user's high task still shrinks nothing of hers ...
	mark=$(stamp_mark "$WORK/u/ulo.stamps")
	start_agent uroot -- --hold 100 --guard 4
	rootag=$AGENT
	wait_for 5 grep -q "root's agent runs: standing by" "$WORK/uag.log"
	agent_left_alone "$WORK/u/ulo.stamps" "$mark"
	eq "$(cat "$WORK/u/ulo.state")" "9-65" "her task beside another user's high one, under root's agent"
	# ... but root's own high task does.
	start_loop rhi "$NVT" --no-mps --priority high -c 0-8 "$APP"
	rhi=$PID
	wait_for 5 guarded_to "$WORK/u/ulo.state" 4 0-8
	stop_loop rhi "$rhi"
	wait_file "$WORK/u/ulo.state" "9-65" 5
	stop_agent "$rootag"
	# Root's agent --across-users: the other user's high task guards her task.
	start_agent uroot2 -- --hold 100 --guard 4 --across-users
	rootag=$AGENT
	wait_for 5 guarded_to "$WORK/u/ulo.state" 4 0-8
	stop_agent "$rootag"
	wait_file "$WORK/u/ulo.state" "9-65" 5
	mark=$(stamp_mark "$WORK/u/ulo.stamps")
	wait_for 5 grep -q "root's agent ended: managing again" "$WORK/uag.log"
	agent_left_alone "$WORK/u/ulo.stamps" "$mark" 65534
	eq "$(cat "$WORK/u/ulo.state")" "9-65" "her task, her agent managing again"
	kill -0 "$uagent" || die "her agent ended"
	stop_agent "$uagent"
	stop_loop u/uhi "$hi"
	stop_loop u/ulo "$lo"
}

agents_running() { [ "$(pgrep_here "--agent --idle-exit" | wc -l)" == "$1" ]; }
t_prio_autostart_one_agent() {
	# Two starts at once start one agent between them; the command never waits for it.
	local a b n pid
	run_rc out rc "$NVT" --no-mps --priority low --yield guard -c 0-3 "$APP" launch 1
	eq "$rc" 0 "$out"
	# The command's output ended while the agent it started still runs (it ends only
	# after 10 s without a task): the agent does not hold the command's output.
	wait_for 5 test -f "$NVTASKSET_RUNDIR/nvtaskset-$ME_UID/agent.pid"
	pid=$(cut -d' ' -f1 "$NVTASKSET_RUNDIR/nvtaskset-$ME_UID/agent.pid")
	kill -0 "$pid" 2>/dev/null || die "the agent ended before the command's output did: it held it?"
	stop_agents
	rm -f "$WORK/aa.stop" "$WORK/ab.stop"
	"$NVT" --no-mps --priority low --yield guard -c 0-3 "$APP" loop "$WORK/aa.stop" "$WORK/aa.state" >"$WORK/aa.out" 2>&1 &
	a=$!
	"$NVT" --no-mps --priority high -c 4-7 "$APP" loop "$WORK/ab.stop" "$WORK/ab.state" >"$WORK/ab.out" 2>&1 &
	b=$!
	wait_file "$WORK/aa.state" "0-3"
	wait_file "$WORK/ab.state" "4-7"
	wait_for 5 test -f "$NVTASKSET_RUNDIR/nvtaskset-$ME_UID/agent.pid"
	# One of two started agents takes the lock, the other ends: then one runs, through 2
	# rounds of its own.
	poll_until 10 agents_running 1 || die "agents running: $(pgrep_here '--agent')"
	agent_rounds "$ME_UID" 2
	n=$(pgrep_here "--agent --idle-exit" | wc -l)
	eq "$n" 1 "agents running: $(pgrep_here '--agent')"
	pid=$(cut -d' ' -f1 "$NVTASKSET_RUNDIR/nvtaskset-$ME_UID/agent.pid")
	kill -0 "$pid" || die "the agent of the pid file is not running"
	stop_loop ab "$b"
	stop_loop aa "$a"
	# It ends by itself once no managed task is left (--idle-exit 10: at most ~11 s).
	wait_for 15 sh -c "! kill -0 $pid 2>/dev/null"
}

t_prio_inherit_and_p() {
	# A forked child inherits its parent's priority; -p MASK keeps it and sets the own partition.
	local child json
	stop_agents
	rm -f "$WORK/pf.stop"
	"$NVT" --no-mps --priority low --yield guard --guard 5 -c 0-3 "$APP" fork "$WORK/pf.stop" "$WORK/pf" \
		>"$WORK/pf.out" 2>&1 &
	PID=$!
	wait_file "$WORK/pf.child" "0-3"
	child=$(cat "$WORK/pf.childpid")
	json=$(timeout "$HANG" "$NVT" -l --json)
	python3 - "$json" "$PID" "$child" <<'PY' || die "bad JSON: $json"
import json, sys
rows = {t["pid"]: t["gpus"][0] for t in json.loads(sys.argv[1])["tasks"]}
for pid in sys.argv[2:]:
    g = rows[int(pid)]
    assert g["priority"] == "low" and g["guard"] == 5 and g["own_tpcs"] == "0-3", g
PY
	run_rc out rc "$NVT" -p -c 10-12 "$child"
	eq "$rc" 0
	wait_file "$WORK/pf.child" "10-12"
	json=$(timeout "$HANG" "$NVT" -l --json)
	python3 -c 'import json,sys; g={t["pid"]: t["gpus"][0] for t in json.loads(sys.argv[1])["tasks"]}[int(sys.argv[2])]; assert g["priority"]=="low" and g["own_tpcs"]=="10-12", g' \
		"$json" "$child" || die "bad JSON: $json"
	# --priority none: unmanaged again.
	run_rc out rc "$NVT" -p --priority none "$child"
	eq "$rc" 0 "$out"
	json=$(timeout "$HANG" "$NVT" -l --json)
	python3 -c 'import json,sys; g={t["pid"]: t["gpus"][0] for t in json.loads(sys.argv[1])["tasks"]}[int(sys.argv[2])]; assert g["priority"] is None and g["tpcs"]=="10-12", g' \
		"$json" "$child" || die "bad JSON: $json"
	touch "$WORK/pf.stop"
	wait "$PID" || die "fork app failed: $(cat "$WORK/pf.out")"
}

t_prio_bad_usage() {
	run_rc out rc "$NVT" --guard 4 -c 0-3 "$APP" launch 1
	eq "$rc" 1
	has "$out" "--guard and --no-lend go with --priority"
	run_rc out rc "$NVT" --priority urgent -c 0-3 "$APP" launch 1
	eq "$rc" 1
	has "$out" "--priority takes high, normal, low or none"
	run_rc out rc "$NVT" --hold 5 -c 0-3 "$APP" launch 1
	has "$out" "--hold, --poll, --idle-exit and --across-users go with --agent"
	run_rc out rc "$NVT" --agent -l
	has "$out" "--agent takes only"
	run_rc out rc "$NVT" --agent --poll 10
	has "$out" "--poll takes a number from 50 to 1000000"
	run_rc out rc "$NVT" --priority low -l
	has "$out" "--priority goes with starting a command or with -p"
	run_rc out rc "$NVT" --priority low --guard 0 -c 1 "$APP" launch 1
	has "$out" "--guard takes a number from 1 to 256"
	run_rc out rc env NVTASKSET_HOLD_MS=x "$NVT" --agent
	eq "$rc" 1
	has "$out" "NVTASKSET_HOLD_MS takes a number"
	run_rc out rc "$NVT" --help-all
	has "$out" "--priority LEVEL"
	has "$out" "--agent"
	# A malformed NVTASKSET_PRIORITY: the shim says so and runs without one.
	run_rc out rc env LD_PRELOAD="$SHIM" NVTASKSET_PARTITION="$(partition_env 0-3 "$(topo_verified)")" \
		NVTASKSET_PRIORITY=urgent "$APP" launch 1
	has "$out" "ignoring malformed NVTASKSET_PRIORITY"
}

t_prio_guard_over_gpu_refused() {
	# A guard of more TPCs than the GPU has is refused, naming the GPU's count, at a start
	# (an A100-like GPU: 54 TPCs), with --dry-run, and with -p (the H100: 66), which changes
	# nothing; the GPU's own count is taken.
	local json
	run_rc out rc env FAKECUDA_CHIP=a100 NVTASKSET_CACHE_DIR="$WORK/a100" \
		"$NVT" --no-mps --priority low --guard 55 -c 0-3 "$APP" launch 1
	eq "$rc" 1 "$out"
	has "$out" "nvtaskset: --guard 55 is more TPCs than GPU 0 has: it has 54 (give --guard 1 to 54)"
	hasnt "$out" "tpcs="
	run_rc out rc env FAKECUDA_CHIP=a100 NVTASKSET_CACHE_DIR="$WORK/a100" \
		"$NVT" --no-mps --priority low --guard 54 -c 0-3 "$APP" launch 1
	eq "$rc" 0 "$out"
	has "$out" "tpcs=0-3 "
	run_rc out rc "$NVT" --dry-run --priority low --guard 67
	eq "$rc" 1 "$out"
	has "$out" "it has 66 (give --guard 1 to 66)"
	start_loop gg "$NVT" --no-mps --priority low -c 0-7 "$APP"
	wait_file "$WORK/gg.state" "0-7"
	run_rc out rc "$NVT" -p --priority low --guard 67 "$PID"
	eq "$rc" 1 "$out"
	has "$out" "nvtaskset: --guard 67 is more TPCs than GPU 0 has: it has 66"
	run_rc out rc "$NVT" -p --priority low --guard 67 -c 0-3 "$PID"
	eq "$rc" 1 "$out"
	has "$out" "it has 66"
	json=$(timeout "$HANG" "$NVT" -l --json)
	python3 -c 'import json,sys; g={t["pid"]: t["gpus"][0] for t in json.loads(sys.argv[1])["tasks"]}[int(sys.argv[2])]; assert g["guard"] is None and g["tpcs"]=="0-7", g' \
		"$json" "$PID" || die "-p changed the task: $json"
	run_rc out rc "$NVT" -p --priority low --guard 66 "$PID"
	eq "$rc" 0 "$out"
	stop_agents
	stop_loop gg "$PID"
}

t_prio_agent_beside_hostile_segments() {
	# Root's agent beside another user's tasks that hold their writer's lock forever, keep a
	# slot mid-write, or look still being made, and a FIFO named like a segment: it never
	# waits on them, guards root's tasks as promptly, and still ends at once on SIGTERM.
	need_users
	local x y z lo hi sleeper ns holder
	start_agent hs -- --hold 100 --guard 4
	start_loop u/hx $(as_user 65525) "$NVT" --no-mps --priority low --yield guard -c 0-65 "$APP"
	x=$PID
	start_loop u/hy $(as_user 65525) "$NVT" --no-mps --priority low --yield guard -c 0-65 "$APP"
	y=$PID
	start_loop u/hz $(as_user 65525) "$NVT" --no-mps --priority low --yield guard -c 0-65 "$APP"
	z=$PID
	wait_file "$WORK/u/hx.state" "0-65"
	wait_file "$WORK/u/hy.state" "0-65"
	wait_file "$WORK/u/hz.state" "0-65"
	$(as_user 65525) "$T/segpoke" "$x" hold >"$WORK/u/hold.out" 2>&1 &
	holder=$!
	wait_for 5 grep -q held "$WORK/u/hold.out"
	$(as_user 65525) "$T/segpoke" "$y" halfwrite
	$(as_user 65525) "$T/segpoke" "$z" making
	$(as_user 65525) sleep 1000 &
	sleeper=$!
	ns=$(stat -L -c %i /proc/self/ns/pid)
	$(as_user 65525) mkfifo "$NVTASKSET_RUNDIR/nvtaskset-65525/nvtaskset.$ns.$sleeper"
	rm -f "$WORK/hlo.stamp" "$WORK/hhi.stamp"
	FAKEAPP_STAMP=$WORK/hlo.stamp start_loop hlo "$NVT" --no-mps --priority low --yield guard -c 9-65 "$APP"
	lo=$PID
	wait_file "$WORK/hlo.state" "9-65"
	# The high task, idle at first: the agent follows it beside the hostile files (it lends
	# its TPCs to the low task), then guards the low one as soon as it launches, each time.
	touch "$WORK/hhi.pause"
	FAKEAPP_PAUSE=$WORK/hhi.pause FAKEAPP_STAMP=$WORK/hhi.stamp FAKEAPP_STAMP_LAUNCHES=1 \
		start_loop hhi "$NVT" --no-mps --priority high -c 0-8 "$APP"
	hi=$PID
	wait_file "$WORK/hlo.state" "0-65"
	guard_reactions hlo hhi 3 4
	echo "guarded after$REACTIONS of the high task's launches"
	rm -f "$WORK/hhi.pause"
	wait_for 5 guarded_to "$WORK/hlo.state" 4 0-8
	eq "$(cat "$WORK/u/hx.state")" "0-65" "the task whose lock its user holds"
	run_rc out rc "$NVT" -l
	eq "$rc" 0 "-l: $out"
	# It ends on SIGTERM (stop_agent) while the lock is still held and the FIFO still there,
	# giving the low task its own partition back.
	stop_agent "$AGENT"
	kill -0 "$holder" || die "the lock's holder ended before the agent"
	wait_file "$WORK/hlo.state" "9-65"
	kill "$holder" "$sleeper"
	rm -f "$NVTASKSET_RUNDIR/nvtaskset-65525/nvtaskset.$ns.$sleeper"
	$(as_user 65525) "$T/segpoke" "$z" made
	stop_loop hhi "$hi"
	stop_loop hlo "$lo"
	for t in hx hy hz; do touch "$WORK/u/$t.stop"; done
	wait_for 5 sh -c "! kill -0 $x 2>/dev/null && ! kill -0 $y 2>/dev/null && ! kill -0 $z 2>/dev/null"
}

# prio_spawn_case HOW: a low task given its priority by -p after it started, then a child started
# by HOW (fakeapp spawn-on) has the priority too (and the task's own partition).
prio_spawn_case() {
	local how=$1 tag=$WORK/ps_$1 child json
	stop_agents
	rm -f "$tag".*
	"$NVT" --no-mps -c 0-3 "$APP" spawn-on "$tag.go" "$tag.stop" "$tag" "$how" >"$tag.out" 2>&1 &
	PID=$!
	wait_file "$tag.parent" "0-3"
	run_rc out rc env NVTASKSET_HOLD_MS=50 "$NVT" -p --priority low --yield guard --guard 2 "$PID"
	eq "$rc" 0 "-p --priority: $out"
	touch "$tag.go"
	wait_file "$tag.child" "0-3"
	child=$PID # exec: the same process
	[ "$how" == exec ] || child=$(cat "$tag.childpid")
	json=$(timeout "$HANG" "$NVT" -l --json)
	python3 -c 'import json,sys; g={t["pid"]: t["gpus"][0] for t in json.loads(sys.argv[1])["tasks"]}[int(sys.argv[2])]; assert g["priority"]=="low" and g["guard"]==2 and g["own_tpcs"]=="0-3", g' \
		"$json" "$child" || die "the $how child's priority: $json"
	touch "$tag.stop"
	wait "$PID" || die "spawn-on $how failed: $(cat "$tag.out")"
}
t_prio_inherit_posix_spawn() { prio_spawn_case posix_spawn; }
t_prio_inherit_exec() { prio_spawn_case exec; }

# The low task of t_prio_unpartitioned_gpu_keeps_own borrows on GPU 0 and is guarded on GPU 1.
second_gpu_guarded() {
	local now
	now=$(cat "$WORK/ulo2.state" 2>/dev/null) || return 1
	[ "${now%%|*}" == "0-65" ] && [ "$(count_of "${now#*|}")" == 4 ] && [ "$(overlap "${now#*|}" 0-8)" == 0 ]
}
t_prio_unpartitioned_gpu_keeps_own() {
	# A managed task without a partition on a GPU (all its TPCs) is guarded there and gets
	# all of them back; its own partition stays "all TPCs", and the high task is never written.
	local lo hi json
	export FAKECUDA_DEVICES=2
	start_agent ug -- --hold 100 --guard 4
	FAKEAPP_ALL=1 start_loop ulo2 "$NVT" --no-mps --priority low --yield guard -c --gpu 0=9-65 "$APP"
	lo=$PID
	wait_file "$WORK/ulo2.state" "9-65|0-65"
	rm -f "$WORK/uhi2.pause"
	FAKEAPP_DEVICE=1 FAKEAPP_PAUSE=$WORK/uhi2.pause start_loop uhi2 "$NVT" --no-mps --priority high \
		-c --gpu 1=0-8 "$APP"
	hi=$PID
	wait_file "$WORK/uhi2.state" "0-8"
	wait_for 5 second_gpu_guarded
	touch "$WORK/uhi2.pause"
	wait_file "$WORK/ulo2.state" "0-65|0-65" 5
	json=$(timeout "$HANG" "$NVT" -l --json)
	python3 - "$json" "$lo" <<'PY' || die "bad JSON: $json"
import json, sys
g = {t["pid"]: t["gpus"] for t in json.loads(sys.argv[1])["tasks"]}[int(sys.argv[2])]
assert sorted(x["own_tpcs"] for x in g) == ["0-65", "9-65"], g
PY
	if grep -q "pid $hi " "$WORK/ug.log"; then die "the agent wrote the high task: $(cat "$WORK/ug.log")"; fi
	rm -f "$WORK/uhi2.pause"
	stop_agent "$AGENT"
	stop_loop uhi2 "$hi"
	stop_loop ulo2 "$lo"
}

# lends_beside_replays HI_STAMPS LO_STAMPS MARK LENT GAP_MS: each time the low task was
# stamped on LENT after MARK whose last 5 seconds saw the high task's launches (stamped) never
# pause for GAP_MS: a lend the agent made beside a task it should have seen active. (The
# agent lends only after a hold time without a new launch: that pause lies before the lend,
# whenever the low task's next launch comes.)
lends_beside_replays() {
	awk -v mark="$3" -v lent="$4" -v gap="$(($5 * 1000000))" 'FNR == 1 {f++}
		f == 1 && $2 == "launch" {h[++n] = $1}
		f == 2 && FNR > mark && $2 == lent {
			t = $1; prev = t - 5000000000; most = 0
			if (n && h[1] > prev && h[1] <= t) prev = h[1] # (from its first replay)
			for (i = 1; i <= n; i++)
				if (h[i] > prev && h[i] <= t) { if (h[i] - prev > most) most = h[i] - prev; prev = h[i] }
			if (t - prev > most) most = t - prev
			if (most < gap) print "lent at " t " ns, the high task never paused over " gap / 1000000 " ms in the 5 s before (at most " int(most / 1000000) " ms)"
		}' "$1" "$2"
}
t_prio_graph_replays_are_activity() {
	# A high task that only replays a CUDA graph is active: each replay counts as a launch
	# (its kernels' callbacks came at its upload), and the low task is guarded.
	local lo hi mark
	start_agent gr -- --hold 100 --guard 4
	FAKEAPP_STAMP=$WORK/glo.stamps FAKEAPP_STAMP_LAUNCHES=1 \
		start_loop glo "$NVT" --no-mps --priority low --yield guard -c 9-65 "$APP"
	lo=$PID
	wait_file "$WORK/glo.state" "9-65"
	rm -f "$WORK/ghi.stop" "$WORK/ghi.stamps"
	mark=$(stamp_mark "$WORK/glo.stamps")
	FAKEAPP_STAMP=$WORK/ghi.stamps FAKEAPP_STAMP_LAUNCHES=1 \
		"$NVT" --no-mps --priority high -c 0-8 "$APP" graph 3 "$WORK/ghi.stop" "$WORK/ghi.out" \
		>"$WORK/ghi.log" 2>&1 &
	hi=$!
	wait_for 5 guarded_to "$WORK/glo.state" 4 0-8
	# Several hold times of replays only (3 of the agent's rounds, 1 s or more), then 5
	# launches of the low task: it is lent the high task's TPCs only after a pause of the
	# replays (a stall of a loaded machine), never beside steady ones (since it started).
	agent_rounds "$ME_UID" 3
	wait_launches "$WORK/glo.stamps" 5
	eq "$(lends_beside_replays "$WORK/ghi.stamps" "$WORK/glo.stamps" "$mark" 0-65 50)" "" \
		"the low task's lends while the high task replayed"
	touch "$WORK/ghi.stop"
	wait "$hi" || die "graph app failed: $(cat "$WORK/ghi.log")"
	wait_file "$WORK/glo.state" "9-65" 5
	stop_agent "$AGENT"
	stop_loop glo "$lo"
}

# applied_by PID: -p finds what was last written to PID's slot applied (no "not applied yet").
applied_by() { ! timeout "$HANG" "$NVT" -p "$1" 2>&1 | grep -q "has not applied"; }
t_prio_pid_shows_priority() {
	# -p --priority says the priority before and after, as it does the masks; -p shows a
	# managed task's priority, and -p --json has it for every GPU (null: none).
	local task
	start_loop task "$NVT" --no-mps -c 0-7 "$APP"
	task=$PID
	wait_for 10 test -s "$WORK/task.state"
	run_rc out rc "$NVT" -p "$task"
	eq "$out" "pid $task's current TPC mask: ff"
	has "$("$NVT" -p --json "$task")" '"priority":null,'
	# A priority alone: its words before and after, not the partition that stays (started
	# without a priority, it yields through the agent's guard).
	out=$("$NVT" -p --priority low "$task" 2>/dev/null)
	eq "$out" "pid $task's current priority: none
pid $task's new priority: low
pid $task's current yield: none
pid $task's new yield: guard"
	run_rc out rc "$NVT" -p "$task"
	eq "$out" "pid $task's current TPC mask: ff
pid $task's priority: low"
	has "$("$NVT" -p --json "$task")" '"priority":"low",'
	has "$("$NVT" -p --json -c 0-3 "$task")" '"priority":"low",'
	run_rc out rc "$NVT" -p --priority none "$task"
	has "$out" "pid $task's current priority: low
pid $task's new priority: none"
	has "$("$NVT" -p --json "$task")" '"priority":null,'
	stop_loop task "$task"
	stop_agents
}

t_prio_whole_gpu_start_warns_of_no_share() {
	# --priority without a MASK gives no TPC list: beside a partitioned task it is not warned
	# that it shares that task's TPCs (a MASK that does is).
	local a
	start_loop wa "$NVT" --no-mps -c 0-3 "$APP"
	a=$PID
	wait_file "$WORK/wa.state" "0-3"
	run_rc out rc "$NVT" --no-mps --priority high "$APP" launch 1
	eq "$rc" 0 "$out"
	hasnt "$out" "warning:"
	run_rc out rc "$NVT" --no-mps --priority high -c 0-7 "$APP" launch 1
	has "$out" "warning: TPCs 0-3 of GPU 0 are pid $a's too"
	stop_loop wa "$a"
}
t_prio_pid_says_what_yields() {
	# -p --priority on a task started without one: --yield words its shim cannot take up
	# (it follows no launch call; MPS's client priority is fixed), client among them, are
	# refused, nothing changed; without --yield it gets the one way that takes effect, the
	# agent's guard, and is told so; a later -p --priority keeps the guard, and made high
	# it is not guarded. A task started with protect takes borrow up.
	local task low err agent
	start_loop task "$NVT" --no-mps -c 0-7 "$APP"
	task=$PID
	wait_for 10 test -s "$WORK/task.state"
	run_rc out rc "$NVT" -p --priority low --yield protect "$task"
	eq "$rc" 1 "$out"
	has "$out" "pid $task was started without a priority"
	has "$out" "so its shim does not follow its launch calls, its MPS client priority stays as its start made it: --yield gate,bound,ahead,client would not take effect (nothing changed)"
	has "$out" "--yield guard"
	run_rc out rc "$NVT" -p --priority low --yield client "$task"
	eq "$rc" 1 "$out"
	has "$out" "--yield client would not take effect (nothing changed)"
	# The guard it would get needs the agent: a bad agent setting is refused before it is written.
	run_rc out rc env NVTASKSET_POLL_US=abc "$NVT" -p --priority low "$task"
	eq "$rc" 1 "$out"
	has "$out" "NVTASKSET_POLL_US takes a number"
	has "$("$NVT" -p --json "$task")" '"priority":null,'
	"$NVT" -p --priority low --guard 4 "$task" >"$WORK/low.out" 2>"$WORK/low.err" || die "-p --priority low: $(cat "$WORK/low.err")"
	err=$(cat "$WORK/low.err")
	agent=$(cut -d' ' -f1 "$NVTASKSET_RUNDIR/nvtaskset-$ME_UID/agent.pid")
	eq "$err" "nvtaskset: note: pid $task was started without a priority, so its MPS client priority stays as its start made it: it yields through the agent's guard (--yield guard)
$(agent_started_line "$agent")"
	has "$(cat "$WORK/low.out")" "pid $task's new yield: guard"
	has "$("$NVT" -p --json "$task")" '"priority":"low",'
	has "$("$NVT" -l --json)" '"guard":4,'
	run_rc out rc "$NVT" -p --priority normal "$task"
	eq "$rc" 0 "$out"
	eq "$out" "pid $task's current priority: low
pid $task's new priority: normal
pid $task's current yield: guard
pid $task's new yield: guard"
	has "$("$NVT" -l --json)" '"guard":4,'
	run_rc out rc "$NVT" -p --priority high "$task"
	eq "$rc" 0 "$out"
	has "$out" "pid $task's new yield: client"
	hasnt "$out" "note:"
	stop_loop task "$task"
	stop_agents
	start_loop low "$NVT" --no-mps --priority low --yield protect -c 0-7 "$APP"
	low=$PID
	wait_for 10 test -s "$WORK/low.state"
	run_rc out rc "$NVT" -p --priority low --yield protect,borrow "$low"
	eq "$rc" 0 "$out"
	eq "$out" "pid $low's current priority: low
pid $low's new priority: low
pid $low's current yield: gate,bound,ahead,client
pid $low's new yield: gate,bound,ahead,client,borrow"
	stop_loop low "$low"
}
# agent_started_line PID: what a start or -p that started the caller's agent PID says of it.
agent_started_line() {
	echo "nvtaskset: started the priority agent (pid $1), which ends 10 s after the last task it manages; see it with 'nvtaskset -l', stop it with 'kill $1'"
}
t_prio_autostart_said_and_status_gone() {
	# A -p or a start that starts the caller's agent says so on stderr, naming it and how to see
	# and stop it; one that finds it running says nothing of it. The agent's status file, there
	# while it runs, goes with it when it ends, as its pid file does.
	local task pid dir=$NVTASKSET_RUNDIR/nvtaskset-$ME_UID
	start_loop task "$NVT" --no-mps -c 0-7 "$APP"
	task=$PID
	wait_for 10 test -s "$WORK/task.state"
	"$NVT" -p --priority low "$task" >/dev/null 2>"$WORK/p.err" || die "-p --priority low: $(cat "$WORK/p.err")"
	wait_for 5 test -f "$dir/agent.pid"
	pid=$(cut -d' ' -f1 "$dir/agent.pid")
	has "$(cat "$WORK/p.err")" "$(agent_started_line "$pid")"
	run_rc out rc "$NVT" -p --priority normal "$task"
	eq "$rc" 0 "$out"
	hasnt "$out" "started the priority agent"
	wait_for 5 test -f "$dir/agent.status"
	kill -TERM "$pid"
	wait_for 5 is_gone "$pid"
	[ ! -e "$dir/agent.status" ] || die "the ended agent's status file stayed: $(cat "$dir/agent.status")"
	[ ! -e "$dir/agent.pid" ] || die "the ended agent's pid file stayed"
	run_rc out rc "$NVT" --no-mps --priority low --yield guard -c 0-3 "$APP" launch 1
	eq "$rc" 0 "$out"
	wait_for 5 test -f "$dir/agent.pid"
	pid=$(cut -d' ' -f1 "$dir/agent.pid")
	has "$out" "$(agent_started_line "$pid")"
	stop_agents
	stop_loop task "$task"
}
t_prio_autostart_gone_said() {
	# An agent that ends as it starts (here its lock file is one others may read, which it
	# refuses) is not called started: the -p that started it warns that it ended.
	local task dir=$NVTASKSET_RUNDIR/nvtaskset-$ME_UID
	start_loop task "$NVT" --no-mps -c 0-7 "$APP"
	task=$PID
	wait_for 10 test -s "$WORK/task.state"
	install -m 0644 /dev/null "$dir/agent.lock"
	run_rc out rc "$NVT" -p --priority low "$task"
	eq "$rc" 0 "$out"
	[[ "$out" =~ "nvtaskset: warning: the priority agent started (pid "[0-9]+") ended at once; 'nvtaskset -l' shows its log" ]] ||
		die "-p's words: $out"
	hasnt "$out" "started the priority agent"
	[ ! -e "$dir/agent.pid" ] || die "an agent runs: $(cat "$dir/agent.pid")"
	stop_loop task "$task"
}
t_prio_pid_priority_alone_applied() {
	# A priority alone changes no mask: -p of a task that launches no more does not call the
	# partition it runs on pending ("has not applied") after -p --priority.
	local task
	rm -f "$WORK/idle.stop"
	"$NVT" --no-mps --priority low -c 0-7 "$APP" launch-wait 1 "$WORK/idle.stop" >"$WORK/idle.out" 2>&1 &
	task=$!
	wait_for 10 grep -q . "$WORK/idle.out"
	wait_for 10 applied_by "$task"
	run_rc out rc "$NVT" -p --priority normal "$task"
	eq "$rc" 0 "$out"
	run_rc out rc "$NVT" -p "$task"
	eq "$out" "pid $task's current TPC mask: ff
pid $task's priority: normal"
	# A new partition is pending until a launch, as before.
	run_rc out rc "$NVT" -p -c 0-3 "$task"
	eq "$rc" 0 "$out"
	run_rc out rc "$NVT" -p "$task"
	has "$out" "has not applied this partition yet"
	touch "$WORK/idle.stop"
	wait "$task" || die "the idle task failed: $(cat "$WORK/idle.out")"
}

t_prio_agent_log_wall_clock() {
	# The agent stamps its lines with the wall-clock time people read (UTC, ISO 8601), not
	# seconds of a monotonic clock; each stamp lies between the times before and after.
	local before after
	before=$(date -u +%s)
	start_agent wall -- --hold 100 --poll 500
	stop_agent "$AGENT"
	after=$(date -u +%s)
	python3 - "$WORK/wall.log" "$before" "$after" <<'PY' || die "the agent's log: $(cat "$WORK/wall.log")"
import datetime, re, sys
lines = open(sys.argv[1]).read().splitlines()
assert len(lines) >= 2, lines
for line in lines:
    m = re.match(r"nvtaskset agent: (\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d)\.\d{6}Z \S", line)
    assert m, line
    t = datetime.datetime.strptime(m.group(1), "%Y-%m-%dT%H:%M:%S")
    t = t.replace(tzinfo=datetime.timezone.utc).timestamp()
    assert int(sys.argv[2]) <= t <= int(sys.argv[3]), (line, sys.argv[2:])
PY
}
