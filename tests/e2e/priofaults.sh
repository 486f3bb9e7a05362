# Root's priority agent under faults and other users (docs/priorities.md, "The agent's security
# model"): its run directory made first by another user, bad settings, an agent a start runs
# that cannot start, a task root started that drops to a user and writes 'high', the agent out
# of file descriptors, a user holding her writer's lock while the agent ends, and kill -9 of the
# agent while it lends. Sourced by tests/run-tests.sh: each t_NAME function is one test, run in
# a subshell under set -e with the helpers defined there (need_users, as_user, user_python:
# security.sh; start_agent, stop_agent, guarded_to, agent_left_alone: prio.sh); what needs
# /dev/shm is in tests/faults/.
# shellcheck shell=bash

t_hostile_squatted_root_dir_agent() {
	# Another user made root's run directory first: root's agent recovers it as root's start
	# and shim do (the squatter's entry renamed aside), instead of failing to take its lock.
	need_users
	export NVTASKSET_RUNDIR=$WORK/sq-run
	mkdir -m 1777 "$NVTASKSET_RUNDIR"
	$(as_user 65533) mkdir -m 755 "$NVTASKSET_RUNDIR/nvtaskset-0"
	start_agent sq -- --hold 100
	[ "$(stat -c %u "$NVTASKSET_RUNDIR/nvtaskset-0")" == 0 ] || die "root's run directory is not root's"
	ls -d "$NVTASKSET_RUNDIR"/nvtaskset-0.squatted.65533.* >/dev/null || die "the squatter's entry is not aside"
	run_rc out rc "$NVT" -l --json
	has "$out" "\"agents\":[{\"uid\":0,\"pid\":$AGENT,\"unfollowed\":[]}]"
	stop_agent "$AGENT"
}

t_hostile_bad_agent_settings() {
	# A bad agent setting in the environment fails a start or -p with a priority, saying
	# what is wrong, before anything starts or changes (an agent started with it died
	# unseen, and the start exited 0).
	local var out rc
	for var in NVTASKSET_POLL_US=abc NVTASKSET_HOLD_MS=0 NVTASKSET_GUARD=-3; do
		run_rc out rc env "$var" "$NVT" --no-mps --priority low --yield guard -c 9-65 "$APP" launch 1
		eq "$rc" 1 "a start with $var: $out"
		has "$out" "nvtaskset: ${var%%=*} takes a number from"
		hasnt "$out" "tpcs="
	done
	[ ! -e "$NVTASKSET_RUNDIR/nvtaskset-0/agent.pid" ] || die "an agent was started"
	start_loop bs "$NVT" --no-mps -c 0-3 "$APP"
	wait_file "$WORK/bs.state" "0-3"
	run_rc out rc env NVTASKSET_POLL_US=abc "$NVT" -p --priority low --yield guard "$PID"
	eq "$rc" 1 "-p --priority with a bad setting: $out"
	run_rc out rc "$NVT" -l --json
	python3 -c 'import json,sys; g={t["pid"]: t["gpus"][0] for t in json.loads(sys.argv[1])["tasks"]}[int(sys.argv[2])]; assert g["priority"] is None, g' \
		"$out" "$PID" || die "the priority was set: $out"
	stop_loop bs "$PID"
}

t_hostile_autostarted_agent_errors_kept() {
	# An agent a start runs for a priority says why it could not start in its log, and -l
	# shows it (its output went to /dev/null before).
	local out rc
	mkdir -m 755 "$NVTASKSET_RUNDIR/nvtaskset-$ME_UID"
	ln -s /nonexistent "$NVTASKSET_RUNDIR/nvtaskset-$ME_UID/agent.lock"
	start_loop al "$NVT" --no-mps --priority low --yield guard -c 9-65 "$APP"
	wait_file "$WORK/al.state" "9-65"
	wait_for 5 test -s "$NVTASKSET_RUNDIR/nvtaskset-$ME_UID/agent.log"
	has "$(cat "$NVTASKSET_RUNDIR/nvtaskset-$ME_UID/agent.log")" "cannot take the priority agent's lock"
	run_rc out rc "$NVT" -l
	has "$out" "priority agent: none runs"
	has "$out" "priority agent of uid $ME_UID: not running; its log ends: nvtaskset: cannot take the priority agent's lock in $NVTASKSET_RUNDIR"
	stop_loop al "$PID"
}

t_hostile_setuid_task_not_roots() {
	# A task root started that drops to a user and writes 'high' and an own partition of
	# every TPC through its mapping of root's segment is that user's to the agent, not
	# root's: another user's low task keeps its own partition (no user's priority shrinks
	# another user's task without --across-users). Root's own high task still guards it.
	need_users
	local lo forged rhi mark
	start_agent su -- --hold 100 --guard 4
	FAKEAPP_STAMP=$WORK/u/slo.stamps FAKEAPP_STAMP_LAUNCHES=1 \
		start_loop u/slo $(as_user 65524) "$NVT" --no-mps --priority low --yield guard -c 9-65 "$APP"
	lo=$PID
	wait_file "$WORK/u/slo.state" "9-65"
	mark=$(stamp_mark "$WORK/u/slo.stamps")
	"$NVT" --no-mps -c 0-8 "$APP" setuid 65534 forge-high "$WORK/u/sf.stop" "$WORK/u/sf.state" \
		>"$WORK/sf.out" 2>&1 &
	forged=$!
	wait_file "$WORK/u/sf.state" "0-65"
	wait_for 5 grep -q "pid $forged runs as uid 65534 in uid 0's segment: its priority counts as uid 65534's" \
		"$WORK/su.log"
	run_rc out rc "$NVT" -l
	grep -Eq "^ *$forged .* high " <<<"$out" || die "the forged priority is not there: $out"
	agent_left_alone "$WORK/u/slo.stamps" "$mark"
	eq "$(cat "$WORK/u/slo.state")" "9-65" "another user's low task beside the forged high one"
	if grep -q "pid $lo " "$WORK/su.log"; then die "the agent wrote the low task: $(cat "$WORK/su.log")"; fi
	start_loop rhi "$NVT" --no-mps --priority high -c 0-8 "$APP"
	rhi=$PID
	wait_for 5 guarded_to "$WORK/u/slo.state" 4 0-8
	stop_loop rhi "$rhi"
	stop_agent "$AGENT"
	touch "$WORK/u/sf.stop"
	wait "$forged" || die "the forging task failed: $(cat "$WORK/sf.out")"
	stop_loop u/slo "$lo"
}

# prio_waiters N TAG [UID]: N tasks of priority low (--yield guard) on TPCs 9-65 that launch
# nothing (each waits for $WORK/TAG.stop; of user UID: $WORK/u/TAG.stop); adds their PIDs to
# WAITERS once each has its segment.
prio_waiters() {
	local i pid new="" stop=$WORK/$2.stop as=()
	if [ -n "${3:-}" ]; then
		stop=$WORK/u/$2.stop
		read -ra as <<<"$(as_user "$3")"
	fi
	for ((i = 0; i < $1; i++)); do
		"${as[@]}" "$NVT" --no-mps --priority low --yield guard -c 9-65 "$APP" launch-wait 0 "$stop" \
			>/dev/null 2>&1 &
		new="$new $!"
	done
	for pid in $new; do
		wait_for 5 has_segment "$pid"
	done
	WAITERS="${WAITERS:-}$new"
}

# guarded_all PID...: each task's mode is guarded (-l --json).
guarded_all() {
	python3 -c '
import json, sys
rows = {t["pid"]: t["gpus"][0] for t in json.loads(sys.argv[1])["tasks"]}
sys.exit(any(rows.get(int(p), {}).get("mode") != "guarded" for p in sys.argv[2:]))' \
		"$(timeout "$HANG" "$NVT" -l --json)" "$@"
}

t_hostile_agent_out_of_descriptors() {
	# The agent at 32 open files follows a task with a priority for each descriptor it has
	# beyond those it opened for itself and the 6 it keeps free (it held two a task, and
	# with 20 tasks guarded none); with more it follows what it can, and says in its log
	# and in -l which it cannot follow and why.
	local hi base
	WAITERS=""
	start_agent fd prlimit --nofile=32 -- --hold 1000 --guard 4
	base=$(ls "/proc/$AGENT/fd" | wc -l)
	echo "the agent has $base descriptors open: it follows $((32 - base - 6)) tasks"
	prio_waiters $((32 - base - 6 - 1)) fa # and the high task
	start_loop fhi "$NVT" --no-mps --priority high -c 0-8 "$APP"
	hi=$PID
	wait_for 10 guarded_all $WAITERS
	hasnt "$(cat "$WORK/fd.log")" "cannot follow"
	prio_waiters 5 fb
	wait_for 10 grep -q "cannot follow pid [0-9]*: it is out of file descriptors" "$WORK/fd.log"
	run_rc out rc "$NVT" -l
	grep -Eq "^priority agent \(uid $ME_UID\) cannot follow pid [0-9]+: it is out of file descriptors$" <<<"$out" ||
		die "-l does not say which tasks the agent cannot follow: $out"
	run_rc out rc "$NVT" -l --json
	has "$out" '"why":"files"'
	stop_agent "$AGENT"
	stop_loop fhi "$hi"
	touch "$WORK/fa.stop" "$WORK/fb.stop"
	wait
}

t_hostile_locked_segments_keep_no_restore() {
	# A user who holds the writer's lock of all her segments (a whole-file lock on her lock
	# file) cannot keep root's ending agent from giving another user's task its own partition
	# back: every try is without waiting, in rounds (it waited 300 ms a slot, and her 8
	# guarded tasks used up its 2 s). The agent names the slots it could not give back.
	need_users
	local hi py holder bob
	py=$(user_python)
	WAITERS=""
	start_agent lk -- --hold 100000 --guard 4
	start_loop lkhi "$NVT" --no-mps --priority high -c 0-8 "$APP"
	hi=$PID
	prio_waiters 8 lka 65533
	prio_waiters 1 lkb 65532 # started last: the highest PID, restored last by the old agent
	bob=${WAITERS##* }
	wait_for 10 guarded_all $WAITERS
	$(as_user 65533) "$py" - "$NVTASKSET_RUNDIR/nvtaskset-65533/writers.lock" "$WORK/u/lk" <<'PY' &
import fcntl, os, sys, time
fd = os.open(sys.argv[1], os.O_RDWR)
fcntl.lockf(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
open(sys.argv[2] + ".ready", "w").close()
while not os.path.exists(sys.argv[2] + ".stop"):
    time.sleep(0.01)
PY
	holder=$!
	wait_for 10 test -e "$WORK/u/lk.ready"
	stop_agent "$AGENT"
	run_rc out rc "$NVT" -l --json
	python3 - "$out" "$bob" <<'PY'
import json, sys
rows = {t["pid"]: t["gpus"][0] for t in json.loads(sys.argv[1])["tasks"]}
b = rows[int(sys.argv[2])]
assert b["mode"] == "own" and b["tpcs"] == "9-65", "the other user's task: %s" % b
PY
	grep -Eq "pid [0-9]+ slot 0: not given its own partition back" "$WORK/lk.log" ||
		die "the agent does not say which slots it could not give back: $(cat "$WORK/lk.log")"
	has "$(cat "$WORK/lk.log")" "the slots named above keep the partition it gave them"
	hasnt "$(grep 'not given' "$WORK/lk.log")" "pid $bob "
	touch "$WORK/u/lk.stop" "$WORK/u/lka.stop" "$WORK/u/lkb.stop"
	stop_loop lkhi "$hi"
	wait
}

t_hostile_agent_killed_while_lending() {
	# kill -9 of the agent while low tasks borrow an idle high task's TPCs: the borrowing is
	# a lease. A borrower's shim gives the TPCs back by itself once no agent touched its pid
	# file within the lease (3 s), at a synchronisation of its own; until then claims count
	# the borrowed TPCs, so a new task is not placed where a borrower runs (before, a low task
	# kept them for good, and -n 9 --exclude-running got them once the high task ended).
	local lo nb hi
	start_agent kl -- --hold 100 --guard 4
	rm -f "$WORK/klhi.pause"
	FAKEAPP_PAUSE=$WORK/klhi.pause start_loop klhi "$NVT" --no-mps --priority high -c 0-8 "$APP"
	hi=$PID
	wait_file "$WORK/klhi.state" "0-8"
	FAKEAPP_SYNC=1 start_loop kllo "$NVT" --no-mps --priority low --yield guard -c 9-65 "$APP"
	lo=$PID
	# A borrower that never synchronises: only the claims' count covers it.
	start_loop klnb "$NVT" --no-mps --priority low --yield guard -c 9-65 "$APP"
	nb=$PID
	touch "$WORK/klhi.pause"
	wait_file "$WORK/kllo.state" "0-65"
	wait_file "$WORK/klnb.state" "0-65"
	kill -KILL "$AGENT"
	wait "$AGENT" 2>/dev/null || true
	stop_loop klhi "$hi"
	run_rc out rc "$NVT" --no-mps -n 9 --exclude-running "$APP" launch 1
	[ "$rc" != 0 ] || die "a claim got TPCs that borrowers run on: $out"
	wait_file "$WORK/kllo.state" "9-65"
	run_rc out rc "$NVT" -l
	grep -Eq "^ *$lo .* low +own +9-65 +9-65 " <<<"$out" || die "the borrower's row: $out"
	grep -Eq "^ *$nb .* low +borrowing +9-65 +0-65 " <<<"$out" || die "the other borrower's row: $out"
	has "$(cat "$WORK/kllo.err")" "no priority agent runs any more"
	stop_loop kllo "$lo"
	stop_loop klnb "$nb"
}
