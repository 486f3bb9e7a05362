# Every task listed and counted by -l and by claims beside what other users make, and what that
# costs a reader (counted in system calls under strace, never timed): another user's segments
# with every slot left mid-write, a reader or a container's task in thousands of groups (a
# /proc/PID/status past 16 KiB), a thousand names of other PID namespaces beside containers'
# tasks, and a run directory with no segment. Sourced by tests/run-tests.sh: each t_NAME
# function is one test, run in a subshell under set -e with the helpers defined there
# (need_users, need_pidns, as_user, picked_apart: security.sh).
# shellcheck shell=bash

# hostile_tasks N TAG: uid 65533 starts N idle tasks under nvtaskset -c 0-3, each with its
# segment and partition; sets HOSTILE to their PIDs once every one runs on it.
hostile_tasks() {
	local i
	HOSTILE=""
	for ((i = 0; i < $1; i++)); do
		$(as_user 65533) "$NVT" --no-mps -c 0-3 "$APP" loop "$WORK/u/$2.stop" "$WORK/u/$2.$i" \
			>/dev/null 2>&1 &
		HOSTILE="$HOSTILE $!"
	done
	for ((i = 0; i < $1; i++)); do
		wait_file "$WORK/u/$2.$i" "0-3"
	done
}

# syscall_total FILE: the calls strace -c counted in FILE.
syscall_total() { awk '$NF == "total" {print $4}' "$1"; }
# syscall_calls NAME FILE: the calls of NAME strace -c counted in FILE (0 if none).
syscall_calls() { awk -v n="$1" '$NF == n {c = $4} END {print c + 0}' "$2"; }

t_hostile_unsettled_segments() {
	# A user's own segments with every slot's sequence left odd
	# cost each reader a few tries a slot, not 1000: root's -l and another
	# user's claim make at most NVT_SEG_READ_TRIES tries of each slot more
	# than beside the same tasks settled, the claim never waits for them, and it
	# counts their slots as held (it picks around their 0-3).
	need_users
	local pid calls_l0 calls_c0 calls_l calls_c yields_l yields_c
	# A run directory of its own: other tests squat some users' directories.
	export NVTASKSET_RUNDIR=$WORK/us-run
	mkdir -m 1777 "$NVTASKSET_RUNDIR"
	hostile_tasks 12 us
	command -v strace >/dev/null || skip "needs strace"
	# The reads of segments counted (pread64 calls and sched_yields, under strace), not
	# times: a loaded machine changes times, not counts.
	run_rc out rc strace -f -c -o "$WORK/l0.st" -e trace=pread64,sched_yield "$NVT" -l
	run_rc out rc strace -f -c -o "$WORK/c0.st" -e trace=pread64,sched_yield \
		$(as_user 65532) "$NVT" --no-mps -n 4 --exclude-running env
	eq "$rc" 0 "the claim beside settled segments: $out"
	for pid in $HOSTILE; do
		"$T/segpoke" "$pid" allodd || die "segpoke $pid allodd"
	done
	run_rc out rc strace -f -c -o "$WORK/l.st" -e trace=pread64,sched_yield "$NVT" -l
	eq "$rc" 0 "-l: $out"
	run_rc out rc strace -f -c -o "$WORK/c.st" -e trace=pread64,sched_yield \
		$(as_user 65532) "$NVT" --no-mps -n 4 --exclude-running env
	eq "$rc" 0 "the claim: $out"
	picked_apart "$out" 0-3
	calls_l0=$(syscall_total "$WORK/l0.st") calls_c0=$(syscall_total "$WORK/c0.st")
	calls_l=$(syscall_total "$WORK/l.st") calls_c=$(syscall_total "$WORK/c.st")
	echo "12 tasks, reads: -l $calls_l0, a claim $calls_c0; their slots left odd: -l $calls_l, a claim $calls_c"
	# Each of the 12 tasks' NVT_MAX_GPUS (16) slots costs a reader NVT_SEG_READ_TRIES (8)
	# tries of 3 reads and a yield, no more.
	[ "$calls_l" -le $((calls_l0 + 12 * 16 * 8 * 4)) ] || die "-l made $calls_l reads, $calls_l0 with settled slots"
	[ "$calls_c" -le $((calls_c0 + 12 * 16 * 8 * 4)) ] || die "the claim made $calls_c reads, $calls_c0 with settled slots"
	# A reader yields for the first few slots it finds odd in a row (4: a writer preempted
	# inside one), not for each of the 192: a yield on a busy machine can last every runnable
	# task's turn. At most 6 yields (tries 3-8) for each of 4 slots, in each reading process.
	yields_l=$(syscall_calls sched_yield "$WORK/l.st") yields_c=$(syscall_calls sched_yield "$WORK/c.st")
	echo "yields beside the odd slots: -l $yields_l, the claim $yields_c"
	[ "$yields_l" -le 24 ] || die "-l yielded $yields_l times for 192 odd slots"
	[ "$yields_c" -le 48 ] || die "the claim yielded $yields_c times for 192 odd slots"
	touch "$WORK/u/us.stop"
	wait
}

# many_groups N: a --groups list of N supplementary groups for setpriv (gids 1000000 on: each
# costs its process's /proc/PID/status 8 bytes, before its NSpid line).
many_groups() { seq -s, 1000000 $((1000000 + $1 - 1)); }

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
# euid_of PID: its effective uid.
euid_of() { awk '/^Uid:/ {print $3}' "/proc/$1/status"; }
# listed_tasks OUT: every task of NS_TASKS has its row (TPCs 0-3) in the listing OUT, or one
# process that its header cannot tell from it has: PID 1 of another namespace that the reader
# may not look into, started in the same clock tick, as the same user (another test's container
# of root's: the listing gives the file to one of them). Returns 1 where a task's row is missing
# and a process listed in OUT beside NS_TASKS has ended since (such a twin can no longer be
# told: list again); any other loss fails.
listed_tasks() {
	local pid row twin used=" " st gone
	for pid in $NS_TASKS; do
		grep -Eq "$(row_re "$pid" root)0-3 " <<<"$1" && continue
		st=$(start_tick "$pid") twin="" gone=""
		for row in $(awk 'NR > 1 {print $1}' <<<"$1"); do
			[[ " $NS_TASKS $used" == *" $row "* ]] && continue
			[ -r "/proc/$row/stat" ] || gone=$row
			[ -r "/proc/$row/stat" ] && [ "$(start_tick "$row")" == "$st" ] &&
				[ "$(euid_of "$row")" == "$(euid_of "$pid")" ] &&
				[ "$(awk '/^NSpid:/ {print $NF}' "/proc/$row/status")" == 1 ] &&
				grep -Eq "$(row_re "$row" root)0-3 " <<<"$1" && twin=$row && break
		done
		if [ -z "$twin" ] && [ -n "$gone" ]; then
			echo "task $pid is not listed, and process $gone, listed beside it, has ended since: listing again"
			return 1
		fi
		[ -n "$twin" ] || die "-l lost the container task $pid: $1"
		echo "task $pid is listed as $twin: PID 1 of another namespace, started in the same tick, as the same user"
		used="$used$twin "
	done
}
# traced_reads N WHAT: user 65532's -l and claim (-n 4 --exclude-running) under strace -f, their
# traces in $WORK/lN.tr and $WORK/cN.tr: -l lists each task of NS_TASKS (listed_tasks) and the
# claim succeeds (WHAT: words for their failure messages, e.g. " beside the files"). Sets out to
# the claim's output.
traced_reads() {
	local try
	for try in 1 2 3; do
		run_rc out rc strace -f -o "$WORK/l$1.tr" $(as_user 65532) "$NVT" -l
		eq "$rc" 0 "-l$2: $out"
		listed_tasks "$out" && break
		[ "$try" != 3 ] || die "-l lost a container task in 3 listings: $out"
	done
	run_rc out rc strace -f -o "$WORK/c$1.tr" $(as_user 65532) "$NVT" --no-mps -n 4 --exclude-running /usr/bin/env
	eq "$rc" 0 "the claim$2: $out"
}
# calls_naming_hers TRACE: the system calls of TRACE that name one of user 65533's files
# nvtaskset.(4026540000 + i).1, i = 1 to 1000.
calls_naming_hers() { awk '/"nvtaskset\.(402654[0-9][0-9][0-9][0-9]|4026541000)\.1"/ {n++} END {print n + 0}' "$1"; }

t_hostile_other_users_containers_same_tick() {
	# Root's containers' tasks (PID 1 of their namespaces), each started right after a
	# container of user 65534's (PID 1 too, and often in the same clock tick): another user,
	# who may look into neither's namespace, lists every task by its own PID. The file of a
	# task goes only to a process of its run directory's user; before, it went to the first
	# process of that PID and start time, and -l showed the other user's sleep holding TPCs.
	need_users
	need_pidns
	local i j pid alien aliens="" burst same=0 out rc who
	NS_JOBS="" NS_TASKS=""
	who=$(as_user 65534)
	# Each of root's containers starts amid a burst of the other user's, three before it and
	# three after, started back to back: on a loaded machine two starts in a row were more than
	# a clock tick apart in every one of 30 tries, a burst keeps one of them in its tick.
	for ((i = 0; i < 30 && same < 3; i++)); do
		rm -f "$WORK/ot.$i"
		burst=""
		for j in 1 2 3; do
			unshare --pid --fork --mount-proc $who sleep 1000 >/dev/null 2>&1 &
			burst="$burst $!"
		done
		unshare --pid --fork --mount-proc "$NVT" --no-mps -c 0-3 "$APP" loop "$WORK/ot.stop" \
			"$WORK/ot.$i" >/dev/null 2>&1 &
		NS_JOBS="$NS_JOBS $!"
		for j in 1 2 3; do
			unshare --pid --fork --mount-proc $who sleep 1000 >/dev/null 2>&1 &
			burst="$burst $!"
		done
		aliens="$aliens$burst"
		wait_file "$WORK/ot.$i" "0-3"
		pid=$(ns_init_of "${NS_JOBS##* }")
		NS_TASKS="$NS_TASKS $pid"
		for alien in $burst; do
			if [ "$(start_tick "$(ns_init_of "$alien")")" == "$(start_tick "$pid")" ]; then
				same=$((same + 1))
				break
			fi
		done
	done
	echo "$i containers of root's, each amid 6 of the other user's; $same started in the clock tick of one of them"
	if [ "$same" == 0 ]; then
		touch "$WORK/ot.stop"
		for alien in $aliens; do kill -KILL "$(ns_init_of "$alien")"; done
		skip "no two containers started in one clock tick in $i tries (a machine too loaded)"
	fi
	for j in 1 2 3; do
		run_rc out rc $(as_user 65532) "$NVT" -l
		eq "$rc" 0 "-l: $out"
		listed_tasks "$out" && break
		[ "$j" != 3 ] || die "-l lost a container task in 3 listings: $out"
	done
	for alien in $aliens; do
		pid=$(ns_init_of "$alien")
		! grep -Eq "^ *$pid " <<<"$out" || die "-l gave a task's file to user 65534's sleep $pid: $out"
	done
	touch "$WORK/ot.stop"
	for pid in $NS_JOBS; do
		wait "$pid" || die "a task in a namespace failed"
	done
	for pid in $aliens; do
		kill -KILL "$(ns_init_of "$pid")" # (PID 1 of a namespace takes SIGKILL from outside)
		wait "$pid" 2>/dev/null && die "user 65534's sleep $pid outlived SIGKILL"
	done
	return 0
}

t_hostile_names_of_other_namespaces_cost() {
	# 1000 empty files a user makes in her own run directory, each named for PID 1 of another
	# PID namespace, beside 20 of root's containers (tasks that are PID 1 of namespaces another
	# user may not read): another user's -l and claim read a few of them, counted in the
	# system calls that name them (before, each file cost an open, fstat and pread per
	# container: 60,000 more calls for -l, 120,000 for a claim; the red team's 60,000 files
	# made -l take 3.5 s instead of 7 ms), and still list and count every
	# container's task, those started in one clock tick too (whose headers cannot be told
	# apart: before, another user's -l lost some of them).
	need_users
	need_pidns
	command -v strace >/dev/null || skip "needs strace"
	local l0 c0 l1 c1 pid
	pidns_tasks 20 nc
	[ "$(wc -w <<<"$NS_TASKS")" == 20 ] || die "expected 20 tasks in namespaces: $NS_TASKS"
	traced_reads 0 ""
	$(as_user 65533) bash -c 'mkdir -m 755 "$1" && cd "$1" && for ((i = 1; i <= 1000; i++)); do : >"nvtaskset.$((4026540000 + i)).1"; done' \
		_ "$NVTASKSET_RUNDIR/nvtaskset-65533"
	traced_reads 1 " beside the files"
	picked_apart "$out" 0-3
	l0=$(wc -l <"$WORK/l0.tr") c0=$(wc -l <"$WORK/c0.tr") l1=$(calls_naming_hers "$WORK/l1.tr") c1=$(calls_naming_hers "$WORK/c1.tr")
	echo "system calls beside 20 containers: -l $l0, a claim $c0; with 1000 files named for their PID, calls that name her files: -l $l1, a claim $c1"
	# At most 16 of her files are read for PID 1 (the bound is the processes of hers in other
	# namespaces, none here, and 16), each in two or three calls that name it: not once per
	# file, nor once per other user's process (32 here; the bound counting every user's
	# processes read 36 files, 72 calls). The system's count of processes varies with what
	# else runs, so the totals are not compared.
	[ "$l1" -le 48 ] || die "-l made $l1 system calls that name her files"
	[ "$c1" -le 48 ] || die "the claim made $c1 system calls that name her files"
	touch "$WORK/nc.stop"
	for pid in $NS_JOBS; do
		wait "$pid" || die "a task in a namespace failed"
	done
}

t_hostile_empty_listing_defined() {
	# Listing the tasks of a run directory with no segment (what claims, -l and the agent do)
	# runs no undefined behaviour: it called qsort(NULL, 0, ...), which UBSan reports (qsort's
	# base is declared never null). The listing is built with -fsanitize=undefined here.
	command -v gcc >/dev/null || skip "needs gcc"
	local o=$B/obj out rc
	cat >"$WORK/list.c" <<'C'
#include <stdio.h>
#include <stdlib.h>
#include "seg/segfile.h"
int main(int argc, char **argv)
{
	struct nvt_seg_entry *e;
	pid_t *pids;
	int n = nvt_seg_tasks(argv[1], 1, &pids), m = nvt_seg_list(argv[1], (uid_t)-1, &e);
	(void)argc;
	printf("tasks %d list %d\n", n, m);
	free(pids);
	free(e);
	return n < 0 || m < 0;
}
C
	# Only a compiler without UBSan skips; the listing failing to build is a failure.
	echo 'int main(void) { return 0; }' >"$WORK/ub.c"
	gcc -fsanitize=undefined -o "$WORK/ub" "$WORK/ub.c" 2>/dev/null ||
		skip "cannot build with -fsanitize=undefined here"
	gcc -std=gnu11 -I"$ROOT/include" -I"$ROOT/src" -O1 -g -fsanitize=undefined -fno-sanitize-recover=all \
		-o "$WORK/list" "$WORK/list.c" "$ROOT/src/seg/segscan.c" "$o/seg/segfile.o" "$o/seg/segtrust.o" \
		"$o/seg/segopen.o" "$o/seg/segwrite.o" "$o/seg/segcontainer.o" "$o/seg/segwalk.o" "$o/os/proc.o" "$o/os/sysutil.o" "$B/libnvtcore.a" ||
		die "the listing does not build with -fsanitize=undefined (its objects above)"
	mkdir -p "$NVTASKSET_RUNDIR/nvtaskset-0"
	run_rc out rc "$WORK/list" "$NVTASKSET_RUNDIR"
	eq "$rc" 0 "the listing of an empty run directory: $out"
	eq "$out" "tasks 0 list 0"
}

# Another user's tasks whose segments name more GPUs than a machine has (sixteen each, made
# up), started before a root task on the machine's GPU: -l still shows root's partition on its
# GPU (the machine's GPUs first), and says how many slots it left out. Seen failing without it:
# root's task listed on every TPC, GPU '-'.
t_list_beside_made_up_gpus() {
	need_users
	local pid out i
	export NVTASKSET_RUNDIR=$WORK/mg-run
	mkdir -m 1777 "$NVTASKSET_RUNDIR"
	hostile_tasks 5 mg
	trap 'touch "$WORK/u/mg.stop" "$WORK/u/mgroot.stop"' EXIT
	i=0
	for pid in $HOSTILE; do
		$(as_user 65533) "$T/segpoke" "$pid" gpus "$i" || die "segpoke $pid gpus $i"
		i=$((i + 1))
	done
	start_loop u/mgroot "$NVT" --no-mps -c 10-20 "$APP"
	wait_file "$WORK/u/mgroot.state" "10-20"
	run_rc out rc "$NVT" -l
	eq "$rc" 0 "-l: $out"
	grep -Eq "$(row_re "$PID" root)10-20 " <<<"$out" || die "no row of root's task $PID on 10-20: $out"
	has "$out" "nvtaskset: warning: 17 slots of tasks on more GPUs than a machine has (64) not shown"
	run_rc out rc "$NVT" -l --json
	python3 -c 'import json, sys
d = json.loads(sys.argv[1])
t = [t for t in d["tasks"] if t["pid"] == int(sys.argv[2])][0]
assert [g["tpcs"] for g in t["gpus"]] == ["10-20"], t' "$(sed -n '/^{/,$p' <<<"$out")" "$PID" ||
		die "-l --json: $out"
	stop_loop u/mgroot "$PID"
	touch "$WORK/u/mg.stop"
	for pid in $HOSTILE; do wait "$pid" || :; done
	trap - EXIT
}
