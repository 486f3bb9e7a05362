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

# foreign_entries DIR: user 65533 (and root, for another user's) makes an entry of each kind
# named like a run directory in the shared directory DIR: a plain file, links (to a directory,
# to nothing), a FIFO, a socket, her directory named for another uid, one that others may
# write in, and her own run directory with a mode that lets others read its names but not
# look at its files (0744), which names a live process of hers. Sets FOREIGN to the names.
foreign_entries() {
	local dir=$1 py
	py=$(user_python)
	sleep 1000 &
	FOREIGN_SLEEP=$!
	$(as_user 65533) "$py" - "$dir" "$(stat -L -c %i /proc/self/ns/pid)" "$FOREIGN_SLEEP" <<'PY'
import os, socket, sys
d, ns, pid = sys.argv[1:]
os.chdir(d)
open("nvtaskset-4242", "w").close()
os.symlink("/tmp", "nvtaskset-4243")
os.symlink("nowhere", "nvtaskset-4244")
os.mkfifo("nvtaskset-4245")
socket.socket(socket.AF_UNIX).bind("nvtaskset-4246")
os.mkdir("nvtaskset-4247", 0o755)
os.mkdir("nvtaskset-65533", 0o755)
open("nvtaskset-65533/nvtaskset.%s.%s" % (ns, pid), "w").close()
os.chmod("nvtaskset-65533", 0o744)
PY
	mkdir -m 777 "$dir/nvtaskset-65531"
	chown 65531 "$dir/nvtaskset-65531"
	chmod 777 "$dir/nvtaskset-65531"
	FOREIGN="4242 4243 4244 4245 4246 4247 65531 65533"
}

t_hostile_foreign_run_directories() {
	# Entries of every type named like a run directory (nvtaskset-UID) in the shared
	# directory, made by a user (a plain file, links, a FIFO, a socket, a directory of hers
	# named for another uid, one others may write, her own that others may not look into):
	# each is skipped and named in -l's warnings, and -l, claims, -a -p, root's agent and a
	# container's tpcs claim work beside them, for root and for every other user (before,
	# each stopped -l and every claim on the machine: "cannot list the tasks").
	need_users
	local a b out rc n
	cdi_spec
	start_loop la "$NVT" --no-mps -c 0-7 "$APP"
	a=$PID
	start_loop u/lb $(as_user 65532) "$NVT" --no-mps -c 8-15 "$APP"
	b=$PID
	wait_file "$WORK/la.state" "0-7"
	wait_file "$WORK/u/lb.state" "8-15"
	foreign_entries "$NVTASKSET_RUNDIR"
	for user in root 65532 65534; do
		run_rc out rc $(user_prefix "$user") "$NVT" -l
		eq "$rc" 0 "-l by $user: $out"
		grep -Eq "$(row_re "$a" root)0-7 " <<<"$out" || die "-l by $user lost $a: $out"
		grep -Eq "$(row_re "$b" 65532)8-15 " <<<"$out" || die "-l by $user lost $b: $out"
		for n in $FOREIGN; do
			# Her own directory is readable to root: nothing to skip there.
			[ "$user" == root ] && [ "$n" == 65533 ] && continue
			grep -q "^nvtaskset: warning: .*$NVTASKSET_RUNDIR/nvtaskset-$n\b" <<<"$out" ||
				die "-l by $user does not name nvtaskset-$n: $out"
		done
		run_rc out rc $(user_prefix "$user") "$NVT" --no-mps -n 8 --exclude-running /usr/bin/env
		eq "$rc" 0 "a claim by $user: $out"
		picked_apart "$out" 0-15
		run_rc out rc $(user_prefix "$user") "$NVT" -l --json
		eq "$rc" 0 "-l --json by $user: $out"
	done
	run_rc out rc "$NVT" -a -p -c 0-3 "$a"
	eq "$rc" 0 "-a -p: $out"
	wait_file "$WORK/la.state" "0-3"
	run_rc out rc $(as_user 65532) "$NVT" -a -p "$b"
	eq "$rc" 0 "-a -p by 65532: $out"
	# A container's tpcs=N claim (its hook, as the runtime runs it).
	container tpcs=4
	run_rc out rc "${CONTAINER[@]}" -- "$APP" launch 1
	eq "$rc" 0 "a container given tpcs=4: $out"
	has "$out" "hung=0"
	# Root's priority agent takes a new guarded task beside them.
	start_agent fe -- --hold 100 --poll 500 --guard 4
	start_loop flo "$NVT" --no-mps --priority low --yield guard -c 9-65 "$APP"
	local lo=$PID
	wait_file "$WORK/flo.state" "9-65"
	start_loop fhi "$NVT" --no-mps --priority high -c 16-24 "$APP"
	local hi=$PID
	wait_for 10 guarded_to "$WORK/flo.state" 4 16-24
	stop_loop fhi "$hi"
	stop_loop flo "$lo"
	stop_agent "$AGENT"
	kill "$FOREIGN_SLEEP"
	stop_loop la "$a"
	stop_loop u/lb "$b"
}

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

# pidns_tasks N TAG: root starts N tasks, each PID 1 of a PID namespace of its own (as
# containers' first processes are), each on TPCs 0-3; sets NS_JOBS to the unshare processes and
# NS_TASKS to the tasks' PIDs here once each runs.
pidns_tasks() {
	local i pid
	NS_JOBS="" NS_TASKS=""
	for ((i = 0; i < $1; i++)); do
		rm -f "$WORK/$2.$i"
		unshare --pid --fork --mount-proc "$NVT" --no-mps -c 0-3 "$APP" loop "$WORK/$2.stop" \
			"$WORK/$2.$i" >/dev/null 2>&1 &
		NS_JOBS="$NS_JOBS $!"
	done
	for ((i = 0; i < $1; i++)); do
		wait_file "$WORK/$2.$i" "0-3"
	done
	for pid in $(pgrep_here "^$APP loop $WORK/$2.stop"); do
		NS_TASKS="$NS_TASKS $pid"
	done
}

t_hostile_names_of_other_namespaces_cost() {
	# 1000 empty files a user makes in her own run directory, each named for PID 1 of another
	# PID namespace, beside 20 of root's containers (tasks that are PID 1 of namespaces another
	# user may not read): another user's -l and claim make fewer system calls more than
	# without them than there are such files (before, each file cost an open, fstat and
	# pread per container: 60,000 more calls for -l, 120,000 for a claim; the red team's
	# 60,000 files made -l take 3.5 s instead of 7 ms), and still list and count every
	# container's task, those started in one clock tick too (whose headers cannot be told
	# apart: before, another user's -l lost some of them).
	need_users
	need_pidns
	command -v strace >/dev/null || skip "needs strace"
	local i ns_of l0 c0 l1 c1 out rc pid
	pidns_tasks 20 nc
	[ "$(wc -w <<<"$NS_TASKS")" == 20 ] || die "expected 20 tasks in namespaces: $NS_TASKS"
	run_rc out rc strace -f -c -o "$WORK/l0.st" $(as_user 65532) "$NVT" -l
	eq "$rc" 0 "-l: $out"
	for pid in $NS_TASKS; do
		grep -Eq "$(row_re "$pid" root)0-3 " <<<"$out" || die "-l lost the container task $pid: $out"
	done
	run_rc out rc strace -f -c -o "$WORK/c0.st" $(as_user 65532) "$NVT" --no-mps -n 4 --exclude-running /usr/bin/env
	eq "$rc" 0 "the claim: $out"
	$(as_user 65533) bash -c 'mkdir -m 755 "$1" && cd "$1" && for ((i = 1; i <= 1000; i++)); do : >"nvtaskset.$((4026540000 + i)).1"; done' \
		_ "$NVTASKSET_RUNDIR/nvtaskset-65533"
	run_rc out rc strace -f -c -o "$WORK/l1.st" $(as_user 65532) "$NVT" -l
	eq "$rc" 0 "-l beside the files: $out"
	for pid in $NS_TASKS; do
		grep -Eq "$(row_re "$pid" root)0-3 " <<<"$out" || die "-l lost the container task $pid: $out"
	done
	run_rc out rc strace -f -c -o "$WORK/c1.st" $(as_user 65532) "$NVT" --no-mps -n 4 --exclude-running /usr/bin/env
	eq "$rc" 0 "the claim beside the files: $out"
	picked_apart "$out" 0-3
	l0=$(syscall_total "$WORK/l0.st") c0=$(syscall_total "$WORK/c0.st") l1=$(syscall_total "$WORK/l1.st") c1=$(syscall_total "$WORK/c1.st")
	echo "system calls beside 20 containers: -l $l0, a claim $c0; with 1000 files named for their PID: -l $l1, a claim $c1"
	[ $((l1 - l0)) -lt 1000 ] || die "-l made $((l1 - l0)) more system calls beside 1000 files"
	[ $((c1 - c0)) -lt 1000 ] || die "the claim made $((c1 - c0)) more system calls beside 1000 files"
	touch "$WORK/nc.stop"
	for pid in $NS_JOBS; do
		wait "$pid" || die "a task in a namespace failed"
	done
}
