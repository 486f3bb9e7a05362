# Hostile and faulty conditions, round 6: the shared directory of run directories (anything
# named like a run directory in it), /proc files of any length (a process in thousands of
# groups), and the cost of the names a user makes in her own run directory. Sourced by
# tests/run-tests.sh (helpers in security.sh, hostile.sh, prio.sh and cdi.sh).
# shellcheck shell=bash

# many_groups N: a --groups list of N supplementary groups for setpriv (gids 1000000 on: each
# costs its process's /proc/PID/status 8 bytes, before its NSpid line).
many_groups() { seq -s, 1000000 $((1000000 + $1 - 1)); }
# user_prefix USER: the command prefix that runs a command as USER (root: none).
user_prefix() { [ "$1" == root ] || as_user "$1"; }

t_hostile_many_groups_reader() {
	# A user in 3000 supplementary groups, whose /proc/self/status is longer than 16 KiB
	# (the Groups line comes before NSpid): her -l lists every task, and her claim passes
	# over their TPCs (before, her own status read in part said "no NSpid": -l listed
	# nothing, and a claim was given TPCs another user's live task held).
	need_users
	local a out rc user
	start_loop la "$NVT" --no-mps -c 0-7 "$APP"
	a=$PID
	wait_file "$WORK/la.state" "0-7"
	user="setpriv --reuid=65532 --regid=65532 --groups=$(many_groups 3000)"
	[ "$($user cat /proc/self/status | wc -c)" -gt 16384 ] || die "a status of 3000 groups is short"
	run_rc out rc $user "$NVT" -l
	eq "$rc" 0 "-l: $out"
	grep -Eq "$(row_re "$a" root)0-7 " <<<"$out" || die "-l in 3000 groups lost $a: $out"
	run_rc out rc $user "$NVT" --no-mps -n 8 --exclude-running /usr/bin/env
	eq "$rc" 0 "the claim: $out"
	picked_apart "$out" 0-7
	stop_loop la "$a"
}

t_hostile_many_groups_container_task() {
	# A task in a PID namespace of its own (a container's) in 3000 supplementary groups
	# (podman's --group-add, a pod's supplementalGroups): root's -l lists it and keeps its
	# segment, and another user's claim passes over its TPCs (before, its status read in
	# part hid its namespace: root's -l deleted the live task's segment, and its TPCs were
	# given to the next claim while it ran on them).
	need_users
	need_pidns
	local ns task seg out rc
	rm -f "$WORK/u/mg.stop" "$WORK/u/mg.state"
	unshare --pid --fork --mount-proc setpriv --groups="$(many_groups 3000)" \
		"$NVT" --no-mps -c 0-7 "$APP" loop "$WORK/u/mg.stop" "$WORK/u/mg.state" >"$WORK/mg.out" 2>&1 &
	ns=$!
	wait_file "$WORK/u/mg.state" "0-7"
	task=$(pgrep_here "^$APP loop $WORK/u/mg.stop")
	[ -n "$task" ] || die "no task in the namespace"
	[ "$(wc -c <"/proc/$task/status")" -gt 16384 ] || die "its status is short"
	seg=$(seg_file "$task")
	[ -e "$seg" ] || die "no segment $seg"
	run_rc out rc "$NVT" -l
	eq "$rc" 0 "root's -l: $out"
	[ -e "$seg" ] || die "root's -l removed the live task's segment"
	grep -Eq "$(row_re "$task" root)0-7 " <<<"$out" || die "root's -l lost $task: $out"
	run_rc out rc $(as_user 65532) "$NVT" --no-mps -n 8 --exclude-running /usr/bin/env
	eq "$rc" 0 "the claim: $out"
	picked_apart "$out" 0-7
	touch "$WORK/u/mg.stop"
	wait "$ns" || die "the task in the namespace failed: $(cat "$WORK/mg.out")"
}
