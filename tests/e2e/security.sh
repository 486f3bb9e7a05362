# Hostile users, containers and crashes: every test first reproduced the problem it
# names, then the fix made it pass. Sourced by tests/run-tests.sh: each t_NAME function is one
# test, run in a subshell under set -e with the helpers defined there.
# Over 500 lines on purpose: one subject, what hostile users, containers and crashes can do
# (the numbered sections below), on the helpers that act as other users (as_user, denied,
# need_users), which other suites use too.
# shellcheck shell=bash

# ---- Helpers -----------------------------------------------------------------

# as_user UID: the command prefix that runs a command as user (and group) UID.
as_user() { echo "setpriv --reuid=$1 --regid=$1 --clear-groups"; }
# denied UID: what -p says of a change to a task of user UID that the caller may not make.
denied() {
	local name
	name=$(getent passwd "$1" | cut -d: -f1)
	echo "Permission denied: it is the task of uid $1${name:+ ($name)}; only that user and root may change it"
}
need_users() {
	[ "$(id -u)" == 0 ] || skip "needs root to act as other users"
	command -v setpriv >/dev/null || skip "needs setpriv"
	$(as_user 65534) test -x "$NVT" || skip "uid 65534 cannot run $NVT (tests/run-tests.sh copies the build where it can)"
	# shellcheck disable=SC2174 # the mode is the last directory's (its parents are there, or the umask's)
	mkdir -p -m 1777 "$WORK/u" # for the files of other users' tasks (start_loop u/TAG)
}
# A python3 that other users may run (root's may be a private pyenv).
user_python() {
	local py
	for py in /usr/bin/python3 /usr/local/bin/python3; do
		$(as_user 65534) "$py" -c '' 2>/dev/null && { echo "$py"; return 0; }
	done
	skip "no python3 that uid 65534 may run"
}
# write_rival FROM TO: uid 65534 writes a copy of root's segment file FROM, the header's uid
# hers, as TO (in her run directory, made if need be, mode 0644): a rival that names the same
# process.
write_rival() {
	local py
	py=$(user_python)
	$(as_user 65534) "$py" - "$1" "$2" <<'PY'
import os, struct, sys
data = bytearray(open(sys.argv[1], "rb").read())
struct.pack_into("<I", data, 20, os.geteuid())  # the header's uid: hers
os.makedirs(os.path.dirname(sys.argv[2]), mode=0o755, exist_ok=True)
with open(sys.argv[2], "wb") as out:
    out.write(data)
os.chmod(sys.argv[2], 0o644)
PY
}
need_pidns() {
	[ "$(id -u)" == 0 ] || skip "needs root for PID namespaces (a user's come only in a user namespace, which maps its uid)"
	unshare --pid --fork --mount-proc true 2>/dev/null || skip "cannot unshare a PID namespace"
}
# make_in_tmp TAG: sets IN_TMP to a command prefix that runs a command (as root) with
# /tmp = $WORK/faketmp.TAG (tests/e2e/helpers/in-private-tmp), and FAKETMP to that directory.
make_in_tmp() {
	[ "$(id -u)" == 0 ] || skip "needs root for a private /tmp (a user's mount namespace comes only in a user namespace, which maps its uid)"
	unshare --mount --propagation private true 2>/dev/null || skip "cannot unshare a mount namespace"
	FAKETMP=$WORK/faketmp.$1
	# shellcheck disable=SC2174 # the mode is the last directory's (its parents are there, or the umask's)
	mkdir -p -m 1777 "$FAKETMP"
	IN_TMP="$HELPERS/in-private-tmp $FAKETMP $TMP_HOLD $WORK $ROOT $RUN --"
	[ "$($IN_TMP stat -c %i /tmp)" == "$(stat -c %i "$FAKETMP")" ] || die "in-private-tmp does not work"
}
# mps_of_task LOG: the pipe directory of the last task the fake CUDA logged in LOG
# (FAKECUDA_LOG): /dev/null for a task without MPS.
mps_of_task() { tail -1 "$1" | sed -n 's/^cuInit pid=[0-9]* mps=//p'; }
# The PID (on this host) of the process that unshare PID started as PID 1 of its namespace;
# for any PID, its first child.
has_children() { [ -n "$(cat "/proc/$1/task/$1/children" 2>/dev/null)" ]; }
ns_init_of() {
	local kids
	poll_until 5 has_children "$1" || die "unshare $1 started no child"
	kids=$(cat "/proc/$1/task/$1/children")
	echo "${kids%% *}"
}
# stale_segments [UID]: segment files of UID's (default: mine; * for everyone's) that name a
# process of this PID namespace that is gone.
stale_segments() {
	local f ns pid n=0
	ns=$(stat -L -c %i /proc/self/ns/pid)
	for f in "$NVTASKSET_RUNDIR"/nvtaskset-${1:-$(id -u)}/nvtaskset."$ns".*; do
		[ -e "$f" ] || continue
		pid=${f##*.}
		[ -d "/proc/$pid" ] || n=$((n + 1))
	done
	echo $n
}
# A topology record of the default fake GPU with a verified TMD layout (launches are partitioned).
topo_verified() { echo "nvtaskset-topology 2 tpcs=66 gpcs=0 flags=1 tmd=V04_00 cc=9.0 map=$(seq -s, 0 65)"; }
# picked_apart TEXT LIST: the NVTASKSET_TPCS that TEXT (an environment) shows shares no TPC with LIST.
picked_apart() {
	local picked
	# NVTASKSET_PARTITION="UUID LIST TOPOLOGY;...": the list on the first GPU.
	picked=$(sed -n 's/^NVTASKSET_PARTITION=[^ ]* \([^ ]*\) .*/\1/p' <<<"$1")
	[ -n "$picked" ] || die "no NVTASKSET_PARTITION in: $1"
	[ "$(overlap "$picked" "$2")" == 0 ] || die "picked $picked, which overlaps $2"
}

# hostile_flock TAG MODE FILE: another user (65533) opens FILE read-only, as anyone may open a
# segment, and holds flock MODE (-x or -s) on it until $WORK/u/TAG.unlock appears; waits until
# /proc/locks shows it held. Sets HOLDER.
hostile_flock() {
	local ino i
	ino=$(stat -c %i "$3")
	rm -f "$WORK/u/$1.unlock"
	$(as_user 65533) flock "$2" "$3" sh -c 'while [ ! -e "$1" ]; do sleep 0.05; done' _ \
		"$WORK/u/$1.unlock" &
	HOLDER=$!
	poll_until 5 grep -Eq "FLOCK +ADVISORY +(READ|WRITE) +[0-9]+ +[0-9a-f]+:[0-9a-f]+:$ino " /proc/locks ||
		die "uid 65533 could not lock $3"
}
# runs_program PID NAME: process PID's first argument is NAME (it exec'd it).
runs_program() { [ "$(tr '\0' '\n' <"/proc/$1/cmdline" 2>/dev/null | head -1)" == "$2" ]; }

# ---- 1. Containers ----------------------------------------------------------------

t_sec_pid_namespaces() {
	# Two tasks that are both PID 1 of their own PID namespace share the run
	# directory: neither may take the other's segment, and the host sees and
	# moves both by their host PIDs.
	need_pidns
	local a b ha hb mark
	rm -f "$WORK"/ca.* "$WORK"/cb.*
	FAKEAPP_STAMP=$WORK/ca.stamps FAKEAPP_STAMP_LAUNCHES=1 \
		unshare --pid --fork --mount-proc "$NVT" --no-mps -c 0-3 "$APP" loop "$WORK/ca.stop" \
		"$WORK/ca.state" >"$WORK/ca.out" 2>&1 &
	a=$!
	wait_file "$WORK/ca.state" "0-3"
	mark=$(stamp_mark "$WORK/ca.stamps")
	unshare --pid --fork --mount-proc "$NVT" --no-mps -c 8-9 "$APP" loop "$WORK/cb.stop" \
		"$WORK/cb.state" >"$WORK/cb.out" 2>&1 &
	b=$!
	wait_file "$WORK/cb.state" "8-9"
	launches_unchanged "$WORK/ca.stamps" "$mark" 5
	kill -0 "$a" || die "the first container's task died: $(cat "$WORK/ca.out")"
	eq "$(cat "$WORK/ca.state")" "0-3" "first container's partition after the second started"
	ha=$(ns_init_of "$a")
	hb=$(ns_init_of "$b")
	eq "$(awk '/^NSpid:/ {print $NF}' "/proc/$ha/status")" 1 "the task's PID in its namespace"
	run_rc out rc "$NVT" -l
	eq "$rc" 0
	grep -Eq "$(row_re "$ha" "$ME")0-3 +$APP loop" <<<"$out" || die "no row for $ha in: $out"
	grep -Eq "$(row_re "$hb" "$ME")8-9 +$APP loop" <<<"$out" || die "no row for $hb in: $out"
	run_rc out rc "$NVT" -p -c 20 "$ha"
	eq "$rc" 0 "-p on a container's task by its host PID"
	wait_file "$WORK/ca.state" "20"
	run_rc out rc "$NVT" -pc "$hb"
	eq "$out" "pid $hb's current TPC list: 8-9"
	eq "$(cat "$WORK/cb.state")" "8-9" "the other container's partition"
	run_rc out rc "$NVT" -l # again: the first -l removed nothing live
	grep -Eq "$(row_re "$ha" "$ME")20 " <<<"$out" || die "-l lost $ha: $out"
	touch "$WORK/ca.stop" "$WORK/cb.stop"
	wait "$a" || die "first task failed: $(cat "$WORK/ca.out")"
	wait "$b" || die "second task failed: $(cat "$WORK/cb.out")"
}
t_sec_container_of_other_user() {
	# A container's task of another user: root moves it, anyone reads it.
	need_pidns
	need_users
	local u hu
	rm -f "$WORK"/u/cu.*
	unshare --pid --fork --mount-proc $(as_user 65534) "$NVT" --no-mps -c 0-3 "$APP" loop \
		"$WORK/u/cu.stop" "$WORK/u/cu.state" >"$WORK/u/cu.out" 2>&1 &
	u=$!
	wait_file "$WORK/u/cu.state" "0-3"
	hu=$(ns_init_of "$u")
	run_rc out rc $(as_user 65533) "$NVT" -pc "$hu"
	eq "$out" "pid $hu's current TPC list: 0-3" "another user reads a container's task"
	run_rc out rc "$NVT" -p -c 4 "$hu"
	eq "$rc" 0
	wait_file "$WORK/u/cu.state" "4"
	touch "$WORK/u/cu.stop"
	wait "$u" || die "task failed: $(cat "$WORK/u/cu.out")"
}

# ---- 2. Hostile users against the CLI ---------------------------------------------

t_sec_fifo_named_like_a_segment() {
	# FIFOs where segments would be, named for a live process of their owner.
	need_users
	local sleeper ns victim rc
	start_loop u/fv $(as_user 65534) "$NVT" --no-mps -c 0-3 "$APP"
	victim=$PID
	wait_file "$WORK/u/fv.state" "0-3"
	$(as_user 65533) sleep 1000 &
	sleeper=$!
	ns=$(stat -L -c %i /proc/self/ns/pid)
	$(as_user 65533) mkfifo "$NVTASKSET_RUNDIR/nvtaskset.$sleeper"
	$(as_user 65533) mkdir -m 755 "$NVTASKSET_RUNDIR/nvtaskset-65533"
	$(as_user 65533) mkfifo "$NVTASKSET_RUNDIR/nvtaskset-65533/nvtaskset.$ns.$sleeper"
	out=$(timeout "$HANG" "$NVT" -l 2>&1) && rc=0 || rc=$?
	eq "$rc" 0 "exit status of -l beside a FIFO (124: it hung)"
	grep -Eq "$(row_re "$victim" nobody)0-3 " <<<"$out" || die "no row for $victim in: $out"
	out=$(timeout "$HANG" "$NVT" -p "$sleeper" 2>&1) && rc=0 || rc=$?
	eq "$rc" 1 "exit status of -p on the FIFO's PID (124: it hung)"
	eq "$out" "nvtaskset: failed to get pid $sleeper's partition: not running under nvtaskset (start it with nvtaskset; $WRAPPER_HINT)"
	out=$(timeout "$HANG" "$NVT" -p -c 1 "$sleeper" 2>&1) && rc=0 || rc=$?
	eq "$rc" 1 "exit status of -p MASK on the FIFO's PID (124: it hung)"
	out=$(timeout "$HANG" "$NVT" --no-mps -n 4 --exclude-running /usr/bin/env 2>&1) && rc=0 || rc=$?
	eq "$rc" 0 "exit status of --exclude-running beside a FIFO (124: it hung)"
	picked_apart "$out" 0-3
	kill "$sleeper"
	rm -f "$NVTASKSET_RUNDIR/nvtaskset.$sleeper" "$NVTASKSET_RUNDIR/nvtaskset-65533/nvtaskset.$ns.$sleeper"
	stop_loop u/fv "$victim"
}
t_sec_hostile_lock_on_segment() {
	# Anyone may open a task's segment to read it; one who holds an flock on
	# it, exclusive or shared, keeps neither the task's user nor root from
	# changing its partition, nor makes them wait: writers lock in a file
	# only the task's user and root can open.
	need_users
	command -v flock >/dev/null || skip "needs flock"
	local seg mode n=4
	start_loop u/hl $(as_user 65534) "$NVT" --no-mps -c 0-3 "$APP"
	wait_file "$WORK/u/hl.state" "0-3"
	seg=$(seg_file "$PID")
	eq "$(stat -c %a:%u "$(dirname "$seg")/writers.lock")" "600:65534" "the run directory's lock file"
	$(as_user 65533) test -r "$(dirname "$seg")/writers.lock" && die "another user may open the lock file"
	for mode in -x -s; do
		hostile_flock hl "$mode" "$seg"
		# (A writer that waited on the flock would fail after its wait, or hang: the status says.)
		run_rc out rc $(as_user 65534) "$NVT" -p -c "$n" "$PID"
		eq "$rc" 0 "the owner's -p beside another user's flock $mode: $out"
		wait_file "$WORK/u/hl.state" "$n"
		run_rc out rc "$NVT" -p -c $((n + 1)) "$PID"
		eq "$rc" 0 "root's -p beside another user's flock $mode: $out"
		wait_file "$WORK/u/hl.state" $((n + 1))
		run_rc out rc "$NVT" -pc "$PID"
		eq "$out" "pid $PID's current TPC list: $((n + 1))"
		touch "$WORK/u/hl.unlock"
		wait "$HOLDER"
		n=$((n + 2))
	done
	stop_loop u/hl "$PID"
}
t_sec_hostile_lock_on_parent() {
	# A child takes its parent's current partition (here: none, although the
	# environment names one) even while another user holds an flock on the
	# parent's segment: readers take no lock.
	need_users
	command -v flock >/dev/null || skip "needs flock"
	local record parent
	record=$(partition_env 0-3 "$(topo_verified)")
	rm -f "$WORK"/hp.*
	# A shell under the shim without a partition forks the parent, which keeps
	# the shell's (none) and gets 0-3 only in its environment.
	env LD_PRELOAD="$SHIM" bash -c 'NVTASKSET_PARTITION="$1" "$2" spawn-on "$3" "$4" "$5" posix_spawn; true' \
		_ "$record" "$APP" "$WORK/hp.go" "$WORK/hp.stop" "$WORK/hp" >"$WORK/hp.out" 2>&1 &
	parent=$(ns_init_of $!) # the shell's child
	wait_file "$WORK/hp.parent" "0-65"
	hostile_flock hp -x "$(seg_file "$parent")"
	touch "$WORK/hp.go"
	wait_file "$WORK/hp.child" "0-65"
	eq "$(cat "$WORK/hp.parent")" "0-65"
	# And a change of the parent's reaches it meanwhile.
	run_rc out rc "$NVT" -p -c 6 "$parent"
	eq "$rc" 0 "root's -p beside another user's flock: $out"
	wait_file "$WORK/hp.parent" "6"
	touch "$WORK/u/hp.unlock" "$WORK/hp.stop"
	wait "$HOLDER"
}
t_sec_resized_segment() {
	# The owner of a segment shrinks and regrows it in a loop: root's readers
	# and writers (which map it only under the writer's lock) must not die of
	# SIGBUS, nor hang.
	need_users
	local task resizer i rc seg py
	py=$(user_python)
	$(as_user 65534) env LD_PRELOAD="$SHIM" NVTASKSET_PARTITION="$(partition_env 0-3 "$(topo_verified)")" \
		sleep 1000 &
	task=$!
	poll_until 5 has_segment "$task" || die "no segment for $task"
	seg=$(seg_file "$task")
	run_rc out rc "$NVT" -pc "$task"
	has "$out" "pid $task's current TPC list: 0-3"
	# (Its content put back each time: writers get past their checks and map it.)
	$(as_user 65534) "$py" -c '
import os, sys
fd = os.open(sys.argv[1], os.O_RDWR)
size = os.fstat(fd).st_size
whole = os.pread(fd, size, 0)
while True:
    os.ftruncate(fd, 0)
    os.ftruncate(fd, size)
    os.pwrite(fd, whole, 0)' "$seg" &
	resizer=$!
	for ((i = 0; i < 150; i++)); do
		timeout "$HANG" "$NVT" -l >/dev/null 2>&1 && rc=0 || rc=$?
		[ "$rc" == 0 ] || die "-l exited $rc on try $i (135: SIGBUS, 124: hung)"
		timeout "$HANG" "$NVT" -p "$task" >/dev/null 2>&1 && rc=0 || rc=$?
		[ "$rc" == 0 ] || [ "$rc" == 1 ] || die "-p exited $rc on try $i"
		if ((i % 5 == 0)); then
			timeout "$HANG" "$NVT" -p -c 1 "$task" >/dev/null 2>&1 && rc=0 || rc=$?
			[ "$rc" == 0 ] || [ "$rc" == 1 ] || die "-p MASK exited $rc on try $i (135: SIGBUS, 124: hung)"
		fi
	done
	kill "$resizer" "$task"
}

t_sec_segment_shrunk_under_agent() {
	# Root's priority agent writes a user's segment through a mapping (under the writer's
	# lock: it guards her low task beside root's high one). Her truncation of the file just
	# after the agent mapped it (tests/fake/shrinkmapped.so does it in the agent, at its
	# first mapping) must not end the agent with SIGBUS: it passes the task over and goes on
	# with its rounds; once she puts the file back, it writes the task's partition; and it
	# ends on SIGTERM with status 0.
	need_users
	local low hi seg
	$(as_user 65534) "$NVT" --no-mps --priority low --yield guard -c 9-65 sleep 1000 \
		>"$WORK/u/shrunk-low.out" 2>&1 &
	low=$!
	poll_until 5 has_segment "$low" || die "no segment for $low"
	seg=$(seg_file "$low")
	cp "$seg" "$WORK/u/shrunk-low.seg"
	chmod 644 "$WORK/u/shrunk-low.seg"
	# (the high task active all along: one launch, then a hold of 10 minutes)
	start_agent shrunk env LD_PRELOAD="$T/fake/shrinkmapped.so" -- --hold 600000 --guard 4
	"$NVT" --no-mps --priority high -c 0-8 "$APP" launch-wait 1 "$WORK/shrunk-hi.stop" \
		>"$WORK/shrunk-hi.out" 2>&1 &
	hi=$!
	wait_for 10 grep -q "shrinkmapped: shrank nvtaskset\." "$WORK/shrunk.log"
	agent_rounds 0 2
	hasnt "$(cat "$WORK/shrunk.log")" "pid $low slot 0: TPCs"
	$(as_user 65534) cp "$WORK/u/shrunk-low.seg" "$seg"
	wait_for 10 grep -q "pid $low slot 0: TPCs 62-65 (guarded)" "$WORK/shrunk.log"
	touch "$WORK/shrunk-hi.stop"
	wait "$hi"
	kill "$low"
	stop_agent "$AGENT"
}

# ---- 3. Squatting and leaks ----------------------------------------------------

t_sec_squatted_pids() {
	# Another user makes, for the next PIDs, the names their segments will
	# have (nvtaskset.PIDNS.PID) wherever she may write: in her own run
	# directory (FIFOs, links to where the victim's segments will be, empty
	# files) and beside the run directories. The victim's task still gets a
	# segment of its own without a warning; -l shows it once, as hers; she
	# and root move it, the squatter cannot.
	need_users
	local last ns py mine=$NVTASKSET_RUNDIR/nvtaskset-65533 hers=$NVTASKSET_RUNDIR/nvtaskset-65534 seg
	py=$(user_python)
	ns=$(stat -L -c %i /proc/self/ns/pid)
	$(as_user 65533) mkdir -p -m 755 "$mine"
	# The next PIDs are guessed: under load other processes may take them
	# all first, and past pid_max they wrap (to 300 in the first PID
	# namespace), where names of earlier tests' processes may be left. So
	# the squatter takes 1000 names, counting the wrap, replaces what she
	# left in her own directory, passes over names others have; and a task
	# whose PID she missed anyway is started again (sec_squatted_pids failed
	# with FileExistsError after a wrap).
	local try
	for try in 1 2 3; do
		last=$(cat /proc/sys/kernel/ns_last_pid)
		$(as_user 65533) "$py" - "$last" "$ns" "$mine" "$hers" "$NVTASKSET_RUNDIR" <<'PY'
import errno, os, sys
last, ns = int(sys.argv[1]), int(sys.argv[2])
mine, hers, base = sys.argv[3:6]
pid_max = int(open("/proc/sys/kernel/pid_max").read())
lowest = 300 if os.stat("/proc/self/ns/pid").st_ino == 0xEFFFFFFC else 2
pids, pid = [], last
while len(pids) < 1000:
    pid = pid + 1 if pid + 1 < pid_max else lowest
    pids.append(pid)
for pid in pids:
    name = "nvtaskset.%d.%d" % (ns, pid)
    squat = os.path.join(mine, name)
    try:
        os.unlink(squat)
    except FileNotFoundError:
        pass
    if pid % 3 == 0:
        os.mkfifo(squat)
    elif pid % 3 == 1:
        os.symlink(os.path.join(hers, name), squat)
    else:
        open(squat, "w").close()
    try:
        os.mkfifo(os.path.join(base, name))
    except FileExistsError:
        pass # someone's already: a squat as good as hers
PY
		start_loop u/sq $(as_user 65534) "$NVT" --no-mps -c 0-3 "$APP"
		wait_file "$WORK/u/sq.state" "0-3"
		[ -e "$mine/nvtaskset.$ns.$PID" ] || [ -L "$mine/nvtaskset.$ns.$PID" ] || {
			echo "pid $PID was not squatted (the squatter began after $last); again"
			stop_loop u/sq "$PID"
			continue
		}
		break
	done
	[ -e "$mine/nvtaskset.$ns.$PID" ] || [ -L "$mine/nvtaskset.$ns.$PID" ] ||
		die "pid $PID was not squatted in 3 tries"
	hasnt "$(cat "$WORK/u/sq.err")" "warning"
	seg=$(seg_file "$PID")
	eq "$(stat -c %F:%U "$seg")" "regular file:nobody" "the task's segment $seg"
	out=$(timeout "$HANG" "$NVT" -l 2>&1) && rc=0 || rc=$?
	eq "$rc" 0 "-l beside the squatter's names (124: it hung): $out"
	eq "$(grep -Ec "^ *$PID " <<<"$out")" 1 "rows for $PID in: $out"
	grep -Eq "$(row_re "$PID" nobody)0-3 " <<<"$out" || die "no row for $PID in: $out"
	run_rc out rc $(as_user 65533) "$NVT" -p -c 9 "$PID"
	eq "$rc" 1 "the squatter moves the task: $out"
	run_rc out rc $(as_user 65534) "$NVT" -p -c 5 "$PID"
	eq "$rc" 0 "the owner moves her task: $out"
	wait_file "$WORK/u/sq.state" "5"
	run_rc out rc "$NVT" -p -c 6 "$PID"
	eq "$rc" 0 "root moves the task: $out"
	wait_file "$WORK/u/sq.state" "6"
	stop_loop u/sq "$PID"
	find "$NVTASKSET_RUNDIR" -maxdepth 1 -name "nvtaskset.$ns.*" -delete
}
t_sec_squatted_run_directory() {
	# A run directory that another user made for the victim is refused, with a
	# warning that names it and says why; the task still runs partitioned.
	need_users
	$(as_user 65533) mkdir -m 755 "$NVTASKSET_RUNDIR/nvtaskset-65532"
	run_rc out rc $(as_user 65532) "$NVT" --no-mps -c 0-3 "$APP" launch 3
	eq "$rc" 0
	has "$out" "tpcs=0-3 hung=0"
	has "$out" "nvtaskset: warning: cannot create a control segment in $NVTASKSET_RUNDIR/nvtaskset-65532 (it belongs to uid 65533, not to uid 65532)"
	mkdir -m 777 "$NVTASKSET_RUNDIR/nvtaskset-65531"
	chown 65531 "$NVTASKSET_RUNDIR/nvtaskset-65531"
	run_rc out rc $(as_user 65531) "$NVT" --no-mps -c 0-3 "$APP" launch 3
	has "$out" "tpcs=0-3 hung=0"
	has "$out" "cannot create a control segment in $NVTASKSET_RUNDIR/nvtaskset-65531 (others may write in it: mode 0777)"
}
t_sec_forked_children_leak() {
	# Children that end with _exit (multiprocessing, DataLoader workers) run no
	# destructor: the next task that starts removes their segments.
	run_rc out rc "$NVT" --no-mps -c 0 python3 -c '
import os
for i in range(30):
    pid = os.fork()
    if pid == 0:
        os._exit(0)
    os.waitpid(pid, 0)
print("forked")'
	eq "$rc" 0 "$out"
	[ "$(stale_segments)" -ge 30 ] || die "expected the children's segments to be left behind"
	run_rc out rc "$NVT" --no-mps -c 0 "$APP" launch 1
	eq "$(stale_segments)" 0 "segments of dead processes after the next task started"
}
t_sec_start_sweep_bounded() {
	# A task's start judges a few dozen of its user's segments, however many
	# tasks she runs (each costs up to 11 system calls): 300 live tasks' files
	# cost it no 300 reads of /proc. Leftovers go over a few starts.
	command -v strace >/dev/null || skip "needs strace"
	local dir ns i n pids=""
	ns=$(stat -L -c %i /proc/self/ns/pid)
	dir=$NVTASKSET_RUNDIR/nvtaskset-$(id -u)
	env LD_PRELOAD="$SHIM" /bin/true # makes the run directory
	for ((i = 0; i < 300; i++)); do
		sleep 1000 &
		pids+=" $!"
		: >"$dir/nvtaskset.$ns.$!" # empty: never judged stale while its process lives
	done
	strace -f -o "$WORK/sweep.st" env LD_PRELOAD="$SHIM" /bin/true
	# shellcheck disable=SC2086
	kill $pids
	# shellcheck disable=SC2086
	wait $pids 2>/dev/null || true
	# (Its ancestors' are read too: count the tasks' only.)
	n=$(sed -n 's|.*open[a-z]*(AT_FDCWD, "/proc/\([0-9]*\)/stat".*|\1|p' "$WORK/sweep.st" |
		awk -v pids="$pids" 'BEGIN { split(pids, p, " "); for (i in p) task[p[i]] = 1 } $1 in task' | wc -l)
	[ "$n" -le 32 ] || die "one start read $n tasks' /proc/PID/stat beside 300 tasks' segments"
	for ((i = 0; i < 30 && $(stale_segments) > 0; i++)); do
		env LD_PRELOAD="$SHIM" /bin/true
	done
	eq "$(stale_segments)" 0 "segments of processes that are gone after $i starts"
}
t_sec_many_names_no_cap() {
	# 5001 junk names from another user hide no task from -l or --exclude-running,
	# and every user sees every user's tasks.
	need_users
	local a b ns
	start_loop la "$NVT" --no-mps -c 0-7 "$APP"
	a=$PID
	start_loop u/lb $(as_user 65534) "$NVT" --no-mps -c 8-15 "$APP"
	b=$PID
	wait_file "$WORK/la.state" "0-7"
	wait_file "$WORK/u/lb.state" "8-15"
	ns=$(stat -L -c %i /proc/self/ns/pid)
	$(as_user 65533) mkdir -p -m 755 "$NVTASKSET_RUNDIR/nvtaskset-65533"
	# (-e first: never open a FIFO another test left, which would block.)
	$(as_user 65533) bash -c 'for ((p = 1; p <= 5001; p++)); do for f in "$1/nvtaskset.$p" "$1/nvtaskset-65533/nvtaskset.$2.$p"; do [ -e "$f" ] || : >"$f"; done; done' \
		_ "$NVTASKSET_RUNDIR" "$ns"
	run_rc out rc $(as_user 65533) "$NVT" -l
	eq "$rc" 0
	grep -Eq "$(row_re "$a" "$ME")0-7 " <<<"$out" || die "-l by another user lost $a: $out"
	grep -Eq "$(row_re "$b" nobody)8-15 " <<<"$out" || die "-l by another user lost $b: $out"
	run_rc out rc $(as_user 65533) "$NVT" --no-mps -n 8 --exclude-running /usr/bin/env
	picked_apart "$out" 0-15
	run_rc out rc "$NVT" -l --json
	python3 -c 'import json,sys; d=json.loads(sys.argv[1]); p={t["pid"] for t in d["tasks"]}; assert {int(sys.argv[2]),int(sys.argv[3])} <= p' \
		"$out" "$a" "$b" || die "root's -l --json lost a task: $out"
	stop_loop la "$a"
	stop_loop u/lb "$b"
}

# ---- 4. Fail closed ------------------------------------------------------------------

# fork_after_poke TAG POKE: starts a task on TPCs 0-3 that forks when told;
# pokes its slot with segpoke POKE, lets it fork after 3 launches that met the
# poke, and waits for the child's first partition ($WORK/TAG.child). Sets PID
# to the parent.
fork_after_poke() {
	local tag=$1
	rm -f "$WORK/$tag".*
	FAKEAPP_STAMP=$WORK/$tag.stamps FAKEAPP_STAMP_LAUNCHES=1 \
		"$NVT" --no-mps -c 0-3 "$APP" fork-on "$WORK/$tag.go" "$WORK/$tag.stop" "$WORK/$tag" \
		>"$WORK/$tag.out" 2>&1 &
	PID=$!
	wait_file "$WORK/$tag.parent" "0-3"
	"$T/segpoke" "$PID" "$2"
	wait_launches "$WORK/$tag.stamps" 3
	touch "$WORK/$tag.go"
	poll_until 5 test -s "$WORK/$tag.child" || true
}
t_sec_fork_during_write() {
	# A child forked while its parent's slot is mid-write (a writer stopped
	# there) runs on its parent's partition, never on all TPCs.
	local child
	fork_after_poke fw halfwrite
	eq "$(cat "$WORK/fw.child")" "0-3" "the child's partition"
	child=$(cat "$WORK/fw.childpid")
	run_rc out rc "$NVT" -pc "$child"
	eq "$out" "pid $child's current TPC list: 0-3"
	run_rc out rc "$NVT" -p -c 9 "$PID"
	eq "$rc" 0 "a new write repairs the parent's slot"
	wait_file "$WORK/fw.parent" "9"
	eq "$(cat "$WORK/fw.child")" "0-3"
	touch "$WORK/fw.stop"
	wait "$PID" || die "fork app failed: $(cat "$WORK/fw.out")"
}
t_sec_fork_after_refused_partition() {
	# The parent refused its slot's partition (it enables no working TPC) and
	# runs on its previous one: a child forked then does the same, never all TPCs.
	fork_after_poke fr empty
	eq "$(cat "$WORK/fr.parent")" "0-3" "the parent's partition after a refused one"
	eq "$(cat "$WORK/fr.child")" "0-3" "the child's partition"
	touch "$WORK/fr.stop"
	wait "$PID" || die "fork app failed: $(cat "$WORK/fr.out")"
}
t_sec_first_launch_meets_odd_slot() {
	# A task's first launch finds its slot left odd by a stopped writer: it
	# runs on the partition it started with, and -p says it is not applied
	# until a launch uses it.
	rm -f "$WORK"/fl.*
	"$NVT" --no-mps -c 0-3 python3 -c '
import os, sys, time
while not os.path.exists(sys.argv[1]):
    time.sleep(0.02)
os.execv(sys.argv[2], [sys.argv[2], "loop"] + sys.argv[3:])' \
		"$WORK/fl.go" "$APP" "$WORK/fl.stop" "$WORK/fl.state" >"$WORK/fl.out" 2>&1 &
	PID=$!
	poll_until 5 has_segment "$PID" || true
	run_rc out rc "$NVT" -p --json "$PID"
	has "$out" '"applied":false'
	run_rc out rc "$NVT" -pc "$PID"
	has "$out" "pid $PID has not applied this partition yet"
	"$T/segpoke" "$PID" halfwrite
	touch "$WORK/fl.go"
	wait_file "$WORK/fl.state" "0-3"
	run_rc out rc "$NVT" -p -c 6 "$PID"
	eq "$rc" 0
	wait_file "$WORK/fl.state" "6"
	run_rc out rc "$NVT" -p --json "$PID"
	has "$out" '"applied":true'
	touch "$WORK/fl.stop"
	wait "$PID"
}
t_sec_shim_writes_under_the_lock() {
	# The shim makes its segment (at start, and a forked child's) holding the
	# writer's lock on its byte of the run directory's lock file, with mode
	# 0600 until it is filled: a CLI that finds it waits for the whole
	# segment, and a child reading it as its ancestor's knows it is not made.
	command -v strace >/dev/null || skip "needs strace"
	local ns pids pid byte trace lock create fd publish unlock n=0
	ns=$(stat -L -c %i /proc/self/ns/pid)
	strace -f -e trace=openat,fcntl,fchmod -o "$WORK/lock.st" env \
		NVTASKSET_PARTITION="$(partition_env 0-3 "$(topo_verified)")" LD_PRELOAD="$SHIM" python3 -c '
import os
pid = os.fork()
if pid == 0:
    os._exit(0)
os.waitpid(pid, 0)' >/dev/null 2>&1
	pids=$(sed -n "s/^\([0-9]*\) \+openat(.*\"nvtaskset\.$ns\.\1\", O_RDWR|O_CREAT|O_EXCL.*/\1/p" "$WORK/lock.st")
	for pid in $pids; do
		byte=$((((ns & 0x1ff) << 22) | pid))
		trace=$(grep "^$pid " "$WORK/lock.st")
		lock=$(grep -n "F_OFD_SETLK, {l_type=F_WRLCK, l_whence=SEEK_SET, l_start=$byte, l_len=1}) = 0" <<<"$trace" | head -1 | cut -d: -f1)
		create=$(grep -n "\"nvtaskset\.$ns\.$pid\", O_RDWR|O_CREAT|O_EXCL.*, 0600) = [0-9]" <<<"$trace" | head -1)
		fd=${create##*= }
		create=${create%%:*}
		publish=$(grep -En "fchmod\($fd, 0644\) += 0" <<<"$trace" | head -1 | cut -d: -f1)
		unlock=$(grep -n "F_OFD_SETLK, {l_type=F_UNLCK, l_whence=SEEK_SET, l_start=$byte, l_len=1}) = 0" <<<"$trace" | head -1 | cut -d: -f1)
		[ -n "$lock" ] && [ -n "$create" ] && [ -n "$publish" ] && [ -n "$unlock" ] &&
			((lock < create && create < publish && publish < unlock)) ||
			die "process $pid: lock at line '$lock', create '$create', mode 0644 '$publish', unlock '$unlock' of: $trace"
		n=$((n + 1))
	done
	[ "$n" -ge 2 ] || die "expected the shim to make segments at start and in the child: $(cat "$WORK/lock.st")"
}
t_sec_killed_writer() {
	# A writer killed (SIGKILL) while it holds a segment's writer's lock keeps
	# nobody waiting: the kernel drops the lock with it.
	local holder
	start_loop kw "$NVT" --no-mps -c 0-3 "$APP"
	wait_file "$WORK/kw.state" "0-3"
	"$T/segpoke" "$PID" hold >"$WORK/kw.hold" &
	holder=$!
	wait_file "$WORK/kw.hold" held
	run_rc out rc "$NVT" -p -c 5 "$PID"
	eq "$rc" 1 "-p while the lock is held: $out"
	kill -KILL "$holder"
	wait "$holder" 2>/dev/null || true
	# (Had the lock outlived its holder, -p would fail as above after its wait.)
	run_rc out rc "$NVT" -p -c 5 "$PID"
	eq "$rc" 0 "-p after the lock's holder was killed: $out"
	wait_file "$WORK/kw.state" "5"
	stop_loop kw "$PID"
}
t_sec_parent_segment_being_made() {
	# A segment that others may not read yet (mode 0600) is one its shim is
	# still filling: a child started then takes the environment's partition,
	# not what it finds there.
	rm -f "$WORK"/bm.*
	"$NVT" --no-mps -c 0-3 "$APP" spawn-on "$WORK/bm.go" "$WORK/bm.stop" "$WORK/bm" posix_spawn \
		>"$WORK/bm.out" 2>&1 &
	PID=$!
	wait_file "$WORK/bm.parent" "0-3"
	run_rc out rc "$NVT" -p -c 6 "$PID"
	eq "$rc" 0
	wait_file "$WORK/bm.parent" "6"
	chmod 600 "$(seg_file "$PID")"
	touch "$WORK/bm.go"
	wait_file "$WORK/bm.child" "0-3"
	chmod 644 "$(seg_file "$PID")"
	touch "$WORK/bm.stop"
	wait "$PID" || die "spawn app failed: $(cat "$WORK/bm.out")"
}
t_sec_fork_without_segment() {
	# A forked child that can make no segment of its own (here: no address
	# space left to map one) runs on its parent's partition in a private copy:
	# it neither follows its parent's changes nor counts launches in its
	# parent's segment, and says so.
	command -v prlimit >/dev/null || skip "needs prlimit"
	local child vm mark
	rm -f "$WORK"/fn.*
	FAKEAPP_STAMP=$WORK/fn.stamps FAKEAPP_STAMP_LAUNCHES=1 \
		"$NVT" --no-mps -c 0-3 "$APP" fork-on "$WORK/fn.go" "$WORK/fn.stop" "$WORK/fn" >"$WORK/fn.out" 2>&1 &
	PID=$!
	wait_file "$WORK/fn.parent" "0-3"
	# Two pages more than it has: a segment (three pages) cannot be mapped.
	vm=$(awk '/^VmSize:/ {print $2}' "/proc/$PID/status")
	prlimit --pid "$PID" --as=$(((vm + 8) * 1024)): # the soft limit only: ours to raise again
	touch "$WORK/fn.go"
	wait_file "$WORK/fn.child" "0-3"
	child=$(cat "$WORK/fn.childpid")
	prlimit --pid "$PID" --as=unlimited:
	prlimit --pid "$child" --as=unlimited:
	# (The child stamps to fn.stamps.child.)
	mark=$(stamp_mark "$WORK/fn.stamps.child")
	run_rc out rc "$NVT" -p -c 9 "$PID"
	eq "$rc" 0
	wait_file "$WORK/fn.parent" "9"
	launches_unchanged "$WORK/fn.stamps.child" "$mark" 5
	eq "$(cat "$WORK/fn.child")" "0-3" "the child's partition after its parent moved"
	has "$(cat "$WORK/fn.out")" "cannot create a control segment"
	run_rc out rc "$NVT" -p "$child"
	eq "$out" "nvtaskset: failed to get pid $child's partition: not running under nvtaskset (start it with nvtaskset; $WRAPPER_HINT)"
	touch "$WORK/fn.stop"
	wait "$PID" || die "fork app failed: $(cat "$WORK/fn.out")"
}

# ---- 5, 6. MPS ----------------------------------------------------------------------

t_sec_mps_hostile_default_directory() {
	# Another user made /tmp/nvidia-mps first, with a FIFO for a pid file, or with her own
	# daemon: root neither hangs nor joins hers. Beside her daemon root's task runs without MPS
	# (warned; refused where root named its pipe or log directory, as --mps start is); without
	# one, root's --mps start and a task's start rename her entry aside and start root's daemon
	# at the default path (root named only a log directory here); --mps status only reads.
	need_users
	make_in_tmp hostile
	local fake=$FAKEBIN args aside
	unset CUDA_MPS_PIPE_DIRECTORY
	export PATH="$fake:$PATH" CUDA_MPS_LOG_DIRECTORY=$WORK/mps-log.sec
	trap 'touch "$FAKETMP"/nvidia-mps*/quit 2>/dev/null || true' EXIT
	$IN_TMP $(as_user 65534) mkdir -m 755 /tmp/nvidia-mps
	$IN_TMP $(as_user 65534) mkfifo /tmp/nvidia-mps/nvidia-cuda-mps-control.pid
	out=$(timeout "$HANG" $IN_TMP "$NVT" --mps status 2>&1) && rc=0 || rc=$?
	eq "$rc" 1 "exit status of nvtaskset --mps status (124: it hung)"
	has "$out" "nvtaskset: refusing the MPS pipe directory /tmp/nvidia-mps: it belongs to uid 65534"
	[ -p "$FAKETMP/nvidia-mps/nvidia-cuda-mps-control.pid" ] || die "--mps status moved her directory"
	run_rc out rc $IN_TMP "$NVT" --no-mps -c 0 "$APP" launch 1
	has "$out" "tpcs=0 hung=0"
	rm "$FAKETMP/nvidia-mps/nvidia-cuda-mps-control.pid"
	# The same directory, now with a daemon of hers: left to her clients.
	$IN_TMP $(as_user 65534) env CUDA_MPS_PIPE_DIRECTORY=/tmp/nvidia-mps \
		CUDA_MPS_LOG_DIRECTORY=/tmp/nvidia-log "$fake/nvidia-cuda-mps-control" -d
	[ -e "$FAKETMP/nvidia-mps/nvidia-cuda-mps-control.pid" ] || die "the user's daemon did not start"
	for args in "--mps start" "-c 0 /usr/bin/env"; do
		# shellcheck disable=SC2086
		out=$(timeout "$HANG" $IN_TMP "$NVT" $args 2>&1) && rc=0 || rc=$?
		eq "$rc" 1 "root's nvtaskset $args beside her daemon: $out"
		has "$out" "refusing the MPS pipe directory /tmp/nvidia-mps: it belongs to uid 65534"
	done
	# Root's directories the defaults (it named no log directory either): its task runs
	# without MPS, with a warning, and joins nothing of hers.
	rm -f "$WORK/cuda.log"
	run_rc out rc $IN_TMP env -u CUDA_MPS_LOG_DIRECTORY FAKECUDA_LOG="$WORK/cuda.log" "$NVT" -c 0 "$APP" launch 1
	eq "$rc" 0 "root's start beside her directory, its own the defaults: $out"
	has "$out" "nvtaskset: warning: refusing the MPS pipe directory /tmp/nvidia-mps: it belongs to uid 65534 (remove it, or set CUDA_MPS_PIPE_DIRECTORY); running without MPS, as --no-mps does"
	eq "$(mps_of_task "$WORK/cuda.log")" /dev/null "root's task's MPS pipe directory"
	[ ! -e "$FAKETMP/nvidia-mps/fake-clients.d" ] || die "root's task joined her daemon"
	eq "$(stat -c %u "$FAKETMP/nvidia-mps")" 65534 "the owner of /tmp/nvidia-mps beside her daemon"
	# Her daemon ends (it removes its pid file as it quits): root's --mps start takes the
	# path back, her entry renamed aside, and a task's start takes it back from her next one.
	touch "$FAKETMP/nvidia-mps/quit"
	wait_for 10 test ! -e "$FAKETMP/nvidia-mps/nvidia-cuda-mps-control.pid"
	for args in "--mps start" "-c 0 $APP launch 1"; do
		rm -f "$WORK/cuda.log"
		# shellcheck disable=SC2086
		out=$(timeout "$HANG" $IN_TMP env FAKECUDA_LOG="$WORK/cuda.log" "$NVT" $args 2>&1) && rc=0 || rc=$?
		eq "$rc" 0 "root's nvtaskset $args beside her directory, no daemon of hers: $out"
		has "$out" "nvtaskset: warning: uid 65534 made the MPS pipe directory /tmp/nvidia-mps before root's daemon: renamed aside as /tmp/nvidia-mps.squatted.65534."
		aside=$(sed -n 's/.*renamed aside as \/tmp\/\(nvidia-mps\.squatted\.[0-9]*\.[0-9]*\.[0-9a-f]*\)$/\1/p' <<<"$out")
		[ -n "$aside" ] && [ "$(stat -c %u "$FAKETMP/$aside")" == 65534 ] || die "her entry renamed aside: $out; $(ls -la "$FAKETMP")"
		eq "$(stat -c %u:%a "$FAKETMP/nvidia-mps")" 0:755 "the owner and mode of /tmp/nvidia-mps"
		[ -e "$FAKETMP/nvidia-mps/nvidia-cuda-mps-control.pid" ] || die "root's daemon did not start: $out"
		[ "$args" == "--mps start" ] || eq "$(mps_of_task "$WORK/cuda.log")" /tmp/nvidia-mps "root's task's MPS pipe directory"
		run_rc out rc $IN_TMP "$NVT" --mps stop
		eq "$rc" 0 "root's --mps stop: $out"
		rm -rf "$FAKETMP/nvidia-mps" "$FAKETMP/${aside:?}"
		$IN_TMP $(as_user 65534) mkdir -m 755 /tmp/nvidia-mps
	done
	# A priority level's pipe directory (a time-sliced task's), taken back the same way.
	$IN_TMP $(as_user 65534) mkdir -m 755 /tmp/nvidia-mps-low
	rm -f "$WORK/cuda.log"
	run_rc out rc $IN_TMP env FAKECUDA_LOG="$WORK/cuda.log" "$NVT" --priority low "$APP" launch 1
	eq "$rc" 0 "root's time-sliced start beside her level directory: $out"
	has "$out" "nvtaskset: warning: uid 65534 made the MPS pipe directory /tmp/nvidia-mps-low before root's daemon: renamed aside as /tmp/nvidia-mps-low.squatted.65534."
	eq "$(mps_of_task "$WORK/cuda.log")" /tmp/nvidia-mps-low "root's time-sliced task's MPS pipe directory"
	eq "$(stat -c %u "$FAKETMP/nvidia-mps-low")" 0 "the owner of /tmp/nvidia-mps-low"
	# --mps stop stops it beside her /tmp/nvidia-mps (refused, said); then, none left, refuses.
	run_rc out rc $IN_TMP "$NVT" --mps stop
	eq "$rc" 0 "root's --mps stop beside her directory: $out"
	has "$out" "nvtaskset: warning: refusing the MPS pipe directory /tmp/nvidia-mps: it belongs to uid 65534 (remove it, or set CUDA_MPS_PIPE_DIRECTORY); stopping the priority levels' daemons"
	has "$out" "stopped MPS control daemon of priority low (pid "
	[ ! -e "$FAKETMP/nvidia-mps-low/nvidia-cuda-mps-control.pid" ] || die "the level's daemon runs on"
	run_rc out rc $IN_TMP "$NVT" --mps stop
	eq "$rc" 1 "root's second --mps stop: $out"
	eq "$out" "nvtaskset: refusing the MPS pipe directory /tmp/nvidia-mps: it belongs to uid 65534 (remove it, or set CUDA_MPS_PIPE_DIRECTORY)"
}
t_sec_mps_user_stop_beside_squatted_default() {
	# An ordinary user's --mps stop when another user made her default pipe directory
	# (/tmp/nvidia-mps-UID) first: her priority level's daemon is stopped all the same, the
	# refusal said as a warning with what she may do; the other user's directory is left.
	need_users
	make_in_tmp userstop
	local fake=$FAKEBIN mine=/tmp/nvidia-mps-65534 level=/tmp/nvidia-mps-low-65534
	unset CUDA_MPS_PIPE_DIRECTORY CUDA_MPS_LOG_DIRECTORY XDG_RUNTIME_DIR
	export PATH="$fake:$PATH"
	trap 'touch "$FAKETMP"/nvidia-mps*/quit 2>/dev/null || true' EXIT
	rm -f "$WORK/u/cuda.log"
	run_rc out rc $IN_TMP $(as_user 65534) env FAKECUDA_LOG="$WORK/u/cuda.log" "$NVT" --priority low "$APP" launch 1
	eq "$rc" 0 "her time-sliced start: $out"
	eq "$(mps_of_task "$WORK/u/cuda.log")" "$level" "her time-sliced task's MPS pipe directory"
	[ -e "$FAKETMP/${level#/tmp/}/nvidia-cuda-mps-control.pid" ] || die "her level's daemon did not start: $out"
	$IN_TMP $(as_user 65533) mkdir -m 755 "$mine"
	run_rc out rc $IN_TMP $(as_user 65534) "$NVT" --mps stop
	eq "$rc" 0 "her --mps stop beside uid 65533's $mine: $out"
	has "$out" "nvtaskset: warning: refusing the MPS pipe directory $mine: it belongs to uid 65533 (ask root to remove it, or set XDG_RUNTIME_DIR to a directory of yours, or CUDA_MPS_PIPE_DIRECTORY and CUDA_MPS_LOG_DIRECTORY to directories of yours); stopping the priority levels' daemons"
	has "$out" "stopped MPS control daemon of priority low (pid "
	[ ! -e "$FAKETMP/${level#/tmp/}/nvidia-cuda-mps-control.pid" ] || die "her level's daemon runs on: $out"
	eq "$(stat -c %u "$FAKETMP/${mine#/tmp/}")" 65533 "the owner of $mine"
	# None of hers left: the refusal ends the command.
	run_rc out rc $IN_TMP $(as_user 65534) "$NVT" --mps stop
	eq "$rc" 1 "her second --mps stop: $out"
	eq "$out" "nvtaskset: refusing the MPS pipe directory $mine: it belongs to uid 65533 (ask root to remove it, or set XDG_RUNTIME_DIR to a directory of yours, or CUDA_MPS_PIPE_DIRECTORY and CUDA_MPS_LOG_DIRECTORY to directories of yours)"
}
t_sec_mps_fifo_pid_file() {
	# A FIFO as the pid file of a directory root owns does not hang either.
	own_mps_dirs sec_fifo
	mkfifo "$CUDA_MPS_PIPE_DIRECTORY/nvidia-cuda-mps-control.pid"
	local out rc
	out=$(PATH="$FAKEBIN:$PATH" timeout "$HANG" "$NVT" --mps status 2>&1) && rc=0 || rc=$?
	rm -f "$CUDA_MPS_PIPE_DIRECTORY/nvidia-cuda-mps-control.pid"
	[ "$rc" != 124 ] || die "--mps status hung on a FIFO"
}
t_sec_mps_start_stop_time_out() {
	# A control binary that never returns from -d or from quit hangs neither
	# --mps start nor --mps stop (both run at once: each waits its 10 s).
	local fake=$FAKEBIN starter stopper
	mkdir -p "$WORK/wedge"
	sed -e 's/^-d)$/-d) sleep 1000/' -e 's/^	quit)$/	quit) sleep 1000/' \
		"$fake/nvidia-cuda-mps-control" >"$WORK/wedge/nvidia-cuda-mps-control"
	chmod +x "$WORK/wedge/nvidia-cuda-mps-control"
	grep -q '^-d) sleep 1000' "$WORK/wedge/nvidia-cuda-mps-control" || die "sed missed -d"
	grep -q 'quit) sleep 1000' "$WORK/wedge/nvidia-cuda-mps-control" || die "sed missed quit"
	own_mps_dirs sec_running
	PATH="$fake:$PATH" "$NVT" --mps start >/dev/null # a daemon that will not quit
	env PATH="$WORK/wedge:$PATH" timeout "$HANG" "$NVT" --mps stop >"$WORK/stop.out" 2>&1 &
	stopper=$!
	own_mps_dirs sec_wedged
	env PATH="$WORK/wedge:$PATH" timeout "$HANG" "$NVT" --mps start >"$WORK/start.out" 2>&1 &
	starter=$!
	wait "$starter" && rc=0 || rc=$?
	eq "$rc" 1 "--mps start with a control binary that never returns (124: it hung)"
	has "$(cat "$WORK/start.out")" "nvtaskset: cannot start MPS:"
	wait "$stopper" && rc=0 || rc=$?
	eq "$rc" 1 "--mps stop with a control binary that never returns (124: it hung)"
	has "$(cat "$WORK/stop.out")" "nvtaskset: cannot stop MPS:"
}
t_sec_mps_per_user_pipe_directory() {
	# An ordinary user's nvtaskset starts the daemon on a pipe directory of her
	# own and gives it to the task; root keeps the system default; a user
	# joins the daemon root runs there.
	need_users
	make_in_tmp peruser
	local fake=$FAKEBIN
	mkdir -m 700 "$WORK/xdg"
	chown 65534:65534 "$WORK/xdg"
	unset CUDA_MPS_PIPE_DIRECTORY CUDA_MPS_LOG_DIRECTORY XDG_RUNTIME_DIR
	export PATH="$fake:$PATH"
	trap 'touch "$FAKETMP"/nvidia-mps*/quit "$WORK/xdg/nvidia-mps/quit" 2>/dev/null || true' EXIT
	run_rc out rc $IN_TMP $(as_user 65534) "$NVT" -c 0 /usr/bin/env
	eq "$rc" 0 "$out"
	has "$out" "started the MPS control daemon (pipe directory /tmp/nvidia-mps-65534)"
	grep -qx "CUDA_MPS_PIPE_DIRECTORY=/tmp/nvidia-mps-65534" <<<"$out" || die "task's pipe directory: $out"
	[ ! -e "$FAKETMP/nvidia-mps" ] || die "a user made the system's pipe directory"
	run_rc out rc $IN_TMP $(as_user 65534) "$NVT" --mps status
	has "$out" "MPS control daemon: running (pid"
	has "$out" "pipe directory /tmp/nvidia-mps-65534"
	$IN_TMP $(as_user 65534) "$NVT" --mps stop >/dev/null
	run_rc out rc $IN_TMP $(as_user 65534) env XDG_RUNTIME_DIR="$WORK/xdg" "$NVT" -c 0 /usr/bin/env
	grep -qx "CUDA_MPS_PIPE_DIRECTORY=$WORK/xdg/nvidia-mps" <<<"$out" || die "with XDG_RUNTIME_DIR: $out"
	$IN_TMP $(as_user 65534) env XDG_RUNTIME_DIR="$WORK/xdg" "$NVT" --mps stop >/dev/null
	run_rc out rc $IN_TMP env CUDA_MPS_LOG_DIRECTORY="$WORK/mps-log.root" "$NVT" -c 0 /usr/bin/env
	grep -qx "CUDA_MPS_PIPE_DIRECTORY=/tmp/nvidia-mps" <<<"$out" || die "root: $out"
	run_rc out rc $IN_TMP $(as_user 65534) "$NVT" -c 0 /usr/bin/env
	hasnt "$out" "started"
	grep -qx "CUDA_MPS_PIPE_DIRECTORY=/tmp/nvidia-mps" <<<"$out" || die "a user beside root's daemon: $out"
	$IN_TMP "$NVT" --mps stop >/dev/null
}
t_sec_mps_server_not_found() {
	# The daemon answers "ps" with "Server not found" when no server runs (H100,
	# HARDWARE-FACTS.md section 11): that is zero clients, not a failure.
	own_mps_dirs sec_noserver
	export PATH="$FAKEBIN:$PATH"
	"$NVT" --mps start >/dev/null
	run_rc out rc "$NVT" -c 0 "$APP" launch 1
	eq "$rc" 0
	hasnt "$out" "cannot ask"
	run_rc out rc "$NVT" --mps status
	has "$out" "MPS server: no clients of yours"
	run_rc out rc "$NVT" --mps status --json
	python3 -c 'import json,sys; d=json.loads(sys.argv[1]); assert d["server"]==0 and d["clients"]==0' "$out" ||
		die "bad JSON: $out"
	"$NVT" --mps stop >/dev/null
}

# ---- 7. Smaller -----------------------------------------------------------------------

t_sec_exec_to_another_user() {
	# Root starts a program that changes user in the same PID (setpriv, gosu):
	# its partition stays live, and root's -l removes nothing live.
	need_users
	start_loop u/ex "$NVT" --no-mps -c 0-3 $(as_user 65534) "$APP"
	wait_file "$WORK/u/ex.state" "0-3"
	hasnt "$(cat "$WORK/u/ex.err")" "warning"
	run_rc out rc "$NVT" -l
	grep -Eq "$(row_re "$PID" nobody)0-3 " <<<"$out" || die "no row for $PID in: $out"
	run_rc out rc "$NVT" -p -c 5 "$PID"
	eq "$rc" 0
	wait_file "$WORK/u/ex.state" "5"
	run_rc out rc $(as_user 65534) "$NVT" -p -c 6 "$PID"
	eq "$rc" 0 "the task's user moves it: $out"
	wait_file "$WORK/u/ex.state" "6"
	stop_loop u/ex "$PID"
	eq "$(stale_segments '*')" 0 "segments left behind"
}
t_sec_setuid_in_process() {
	# A program that drops root after the shim set up keeps its segment: root's
	# -l does not remove it and root still moves the task.
	need_users
	start_loop u/su "$NVT" --no-mps -c 0-3 "$APP" setuid 65534
	wait_file "$WORK/u/su.state" "0-3"
	run_rc out rc "$NVT" -l
	grep -Eq "$(row_re "$PID" nobody)0-3 " <<<"$out" || die "no row for $PID in: $out"
	run_rc out rc "$NVT" -p -c 7 "$PID"
	eq "$rc" 0 "root moves the task after -l: $out"
	wait_file "$WORK/u/su.state" "7"
	stop_loop u/su "$PID"
}
t_sec_setuid_in_process_planted_segment() {
	# The task's new user cannot stall root's change to it by planting an
	# empty segment (mode 0600, no header) where its own would be after an
	# exec: -p waits NVT_SEG_MAKING_WAIT_MS at most, then writes root's.
	local f
	need_users
	start_loop u/sp "$NVT" --no-mps -c 0-3 "$APP" setuid 65534
	wait_file "$WORK/u/sp.state" "0-3"
	f=$(seg_file "$PID")
	has "$f" "/nvtaskset-65534/"
	$(as_user 65534) sh -c 'mkdir -p -m 755 "${1%/*}" && umask 077 && : >"$1"' _ "$f"
	run_rc out rc timeout "$HANG" "$NVT" -p -c 7 "$PID"
	eq "$rc" 0 "root moves the task: $out"
	wait_file "$WORK/u/sp.state" "7"
	stop_loop u/sp "$PID"
}
t_sec_shim_reads_environment_securely() {
	# In a setuid program the environment belongs to the caller: the shim reads
	# it with secure_getenv only.
	local syms
	syms=$(nm -D --undefined-only "$SHIM" | awk '{print $2}')
	grep -qx 'secure_getenv@GLIBC[_0-9.]*\|secure_getenv' <<<"$syms" || die "the shim does not use secure_getenv"
	grep -q '^getenv' <<<"$syms" && die "the shim calls getenv: $syms"
	[ "$(id -u)" == 0 ] || return 0
	command -v gcc >/dev/null || return 0
	findmnt -no OPTIONS --target "$WORK" | grep -q nosuid && return 0
	# A setuid program that reaches the shim through its RPATH (honoured in
	# secure mode), run by another user who sets NVTASKSET_RUNDIR.
	gcc -o "$WORK/suidapp" "$ROOT/tests/fake/fakeapp.c" "$ROOT/tests/fake/fakeappgraph.c" "$ROOT/tests/fake/fakeappsms.c" "$ROOT/tests/fake/fakeappioctl.c" -I"$ROOT/tests/fake" \
		-I"$ROOT/src" -I"$ROOT/include" -L"$FAKEDIR" -lcuda \
		-lpthread -Wl,--disable-new-dtags,-rpath,"$WRAPDIR:$FAKEDIR"
	chown 65534 "$WORK/suidapp"
	chmod 4755 "$WORK/suidapp"
	mkdir -m 777 "$WORK/evil"
	# In a mount namespace with a /dev/shm of its own: the default run directory.
	unshare --mount --propagation private true 2>/dev/null || return 0
	run_rc out rc unshare --mount --propagation private sh -c 'mount -t tmpfs tmpfs /dev/shm && exec "$@"' _ \
		env NVTASKSET_RUNDIR="$WORK/evil" NVTASKSET_QUIET=1 $(as_user 65533) "$WORK/suidapp" launch 1
	has "$out" "hung=0"
	[ -z "$(ls -A "$WORK/evil")" ] || die "a setuid program followed NVTASKSET_RUNDIR: $(ls -lR "$WORK/evil")"
}
t_sec_json_escapes() {
	# The MPS log's time and command lines with bytes that are not UTF-8 still
	# make valid JSON.
	own_mps_dirs sec_json
	mkdir -p "$CUDA_MPS_LOG_DIRECTORY"
	printf '%s\n' '[2026-11-21"x\y 20:01:59.353 Server  2483] Client {PID: 2503, Context: 1} encountered a fatal GPU error.' \
		>"$CUDA_MPS_LOG_DIRECTORY/server.log"
	"$NVT" --mps status --json >"$WORK/status.json" 2>/dev/null || true
	python3 -c 'import json,sys; d=json.loads(open(sys.argv[1],"rb").read().decode("utf-8")); assert d["last_fault"]["time"].startswith("2026-11-21\"x\\y")' \
		"$WORK/status.json" || die "bad JSON: $(cat "$WORK/status.json")"
	start_loop js "$NVT" --no-mps -c 0-3 "$APP"
	wait_file "$WORK/js.state" "0-3"
	"$NVT" --no-mps -c 1 python3 -c 'import time; time.sleep(1000)' "$WORK/js" \
		"$(printf 'bad\xff\xfe\xc3utf8 \xe2\x82')" &
	local other=$!
	wait_for 10 runs_program "$other" python3 # (not the command before its exec)
	"$NVT" -l --json >"$WORK/list.json"
	python3 -c 'import json,sys; d=json.loads(open(sys.argv[1],"rb").read().decode("utf-8")); assert any("bad" in t["command"] for t in d["tasks"])' \
		"$WORK/list.json" || die "bad JSON: $(cat -v "$WORK/list.json")"
	kill "$other"
	stop_loop js "$PID"
}
# Text no JSON string may carry as it is: a quote, a backslash, a tab, a newline, an OSC
# title with BEL, DEL, C1's CSI (as UTF-8), a text-direction override, bytes that are not
# UTF-8 (a stray byte, two more, a cut sequence).
HOSTILE_TEXT=$'a"b\\c\t\nd\e]0;x\a \x7f \xc2\x9b \xe2\x80\xae \xff\xfe\xc3 \xe2\x82 e'
# json_neutral FILE [TEXT]: FILE is one JSON document (a line): UTF-8, parsed whole, with no
# byte a terminal acts on (controls but its last newline, DEL, C1, text-direction overrides
# and isolates); TEXT, where given, is one of its strings, each byte that is not UTF-8 as
# U+FFFD.
json_neutral() {
	python3 - "$@" <<'PY' || die "not neutral JSON: $(cat -v "$1")"
import json, re, sys
raw = open(sys.argv[1], "rb").read()
assert raw.endswith(b"\n") and raw.count(b"\n") == 1, "not one line: %r" % raw
bad = re.findall(rb"[\x00-\x1f\x7f]|\xc2[\x80-\x9f]|\xe2\x80[\xaa-\xae]|\xe2\x81[\xa6-\xa9]", raw[:-1])
assert not bad, "terminal escapes: %r" % sorted(set(bad))
doc = json.loads(raw.decode("utf-8"))
def strings(v):
    if isinstance(v, str):
        yield v
    elif isinstance(v, dict):
        for k, x in v.items():
            yield k
            yield from strings(x)
    elif isinstance(v, list):
        for x in v:
            yield from strings(x)
if len(sys.argv) > 2:
    b = sys.argv[2].encode("utf-8", "surrogateescape")
    want, i = "", 0
    while i < len(b):  # each byte that does not begin a whole UTF-8 sequence: U+FFFD
        n = 1 if b[i] < 0x80 else 2 if 0xc2 <= b[i] <= 0xdf else 3 if 0xe0 <= b[i] <= 0xef \
            else 4 if 0xf0 <= b[i] <= 0xf4 else 0
        try:
            want += b[i:i + n].decode("utf-8") if n else "\ufffd"
            i += n if n else 1
        except UnicodeDecodeError:
            want, i = want + "\ufffd", i + 1
    assert any(want in s for s in strings(doc)), "no string holds %r: %r" % (want, doc)
PY
}

# Every --json document is valid, neutral JSON whatever text from tasks and users it
# carries: a command line (-l), a MASK or PID given (-p, -a -p and --dry-run's errors), a
# cache directory (--topology), MPS's pipe directory (--mps status), a profiled command
# (--profile), a plan's task name (--plan); and the documents that carry none (-p and -a -p
# of the task, --dry-run's pick).
# The words a message quotes of the user's (a PID argument, a TPC list, a MASK) reach the
# terminal shown: their controls and text-direction overrides as '?', as task text is.
t_sec_terminal_words_shown() {
	local bad=$'x\e]0;owned\a\xe2\x80\xae' out rc args
	for args in "-p $bad" "--no-mps -c $bad true" "--no-mps --dry-run -g $bad" "--no-mps --mem $bad -c 0 true"; do
		# shellcheck disable=SC2086 # the words
		IFS=' ' run_rc out rc "$NVT" $args
		eq "$rc" 1 "nvtaskset $args: $out"
		has "$out" "?]0;owned??"
		if LC_ALL=C grep -q $'[\x01-\x08\x0b-\x1f\x7f]\|\xe2\x80\xae' <<<"$out"; then
			die "nvtaskset $args printed raw controls: $(od -c <<<"$out" | head -5)"
		fi
	done
}
t_sec_json_hostile_text() {
	local task name=$'q"b\\c\e]0;x\a\x7f\xc2\x9b\xe2\x80\xae\xff\xc3'
	"$NVT" --no-mps -c 1 python3 -c 'import time; time.sleep(1000)' "$HOSTILE_TEXT" &
	task=$!
	wait_for 10 runs_program "$task" python3 # (not the command before its exec)
	"$NVT" -l --json >"$WORK/l.json"
	json_neutral "$WORK/l.json" "python3 -c import time; time.sleep(1000) $HOSTILE_TEXT"
	"$NVT" -p --json "$task" >"$WORK/p.json"
	json_neutral "$WORK/p.json"
	"$NVT" -a -p --json "$task" >"$WORK/a.json"
	json_neutral "$WORK/a.json"
	"$NVT" -a -p --json -c 1-2 "$task" >"$WORK/a-change.json"
	json_neutral "$WORK/a-change.json"
	"$NVT" --no-mps --dry-run --json -c 0-3 true "$HOSTILE_TEXT" >"$WORK/dry.json"
	json_neutral "$WORK/dry.json"
	"$NVT" -p --json "$HOSTILE_TEXT" >"$WORK/p-error.json" 2>/dev/null && die "-p took $HOSTILE_TEXT"
	json_neutral "$WORK/p-error.json" "invalid PID argument: '$HOSTILE_TEXT'"
	"$NVT" -a -p --json "$HOSTILE_TEXT" >"$WORK/a-error.json" 2>/dev/null && die "-a -p took $HOSTILE_TEXT"
	json_neutral "$WORK/a-error.json" "invalid PID argument: '$HOSTILE_TEXT'"
	"$NVT" --no-mps --dry-run --json -c "$HOSTILE_TEXT" true >"$WORK/dry-error.json" 2>/dev/null &&
		die "--dry-run took $HOSTILE_TEXT"
	json_neutral "$WORK/dry-error.json" "failed to parse TPC list '$HOSTILE_TEXT'"
	cp -r "$NVTASKSET_CACHE_DIR" "$WORK/$HOSTILE_TEXT"
	NVTASKSET_CACHE_DIR="$WORK/$HOSTILE_TEXT" "$NVT" --topology --json >"$WORK/topology.json"
	json_neutral "$WORK/topology.json" "$WORK/$HOSTILE_TEXT/$(fake_uuid).topo"
	CUDA_MPS_PIPE_DIRECTORY="$WORK/$HOSTILE_TEXT.pipe" "$NVT" --mps status --json \
		>"$WORK/mps.json" || true # (3: no daemon)
	json_neutral "$WORK/mps.json" "$WORK/$HOSTILE_TEXT.pipe"
	"$NVT" --profile --no-mps --rounds 1 --sizes 66 --json true "$HOSTILE_TEXT" >"$WORK/profile.json" 2>/dev/null
	json_neutral "$WORK/profile.json" "$HOSTILE_TEXT"
	printf '%s %s slowdown=5%%\n' "$name" "$WORK/profile.json" >"$WORK/plan"
	"$NVT" --plan --json "$WORK/plan" >"$WORK/plan.json"
	json_neutral "$WORK/plan.json" "$name"
	kill "$task"
}
t_sec_list_control_bytes() {
	# -l prints no terminal control bytes of a task's command line.
	"$NVT" --no-mps -c 1 python3 -c 'import time; time.sleep(1000)' "$WORK/cb" \
		"$(printf 'x\033]0;owned\007\033[2J\x7f\x9b\xc2\x9by')" &
	local other=$!
	wait_for 10 runs_program "$other" python3 # (not the command before its exec)
	"$NVT" -l >"$WORK/list.txt"
	grep -q "python3 -c import time; time.sleep(1000) $WORK/cb x" "$WORK/list.txt" || die "task not listed: $(cat -v "$WORK/list.txt")"
	if LC_ALL=C grep -q $'[\x01-\x09\x0b-\x1f\x7f\x9b]' "$WORK/list.txt"; then
		die "control bytes reach the terminal: $(cat -v "$WORK/list.txt")"
	fi
	LC_ALL=C grep -q $'\xc2\x9b' "$WORK/list.txt" && die "a C1 control reaches the terminal"
	kill "$other"
}
t_sec_list_not_applied() {
	# A task whose program runs without the shim: its partition is not applied.
	local plain
	start_loop na "$NVT" --no-mps -c 0-3 env -u LD_PRELOAD "$APP"
	plain=$PID
	wait_file "$WORK/na.state" "0-65"
	run_rc out rc "$NVT" -l
	grep -Eq "$(row_re "$PID" "$ME")0-3 \(not applied\) +$APP loop" <<<"$out" || die "no 'not applied' row for $PID in: $out"
	run_rc out rc "$NVT" -l --json
	python3 -c 'import json,sys; d=json.loads(sys.argv[1]); t=[t for t in d["tasks"] if t["pid"]==int(sys.argv[2])][0]; assert t["gpus"][0]["applied"] is False' \
		"$out" "$PID" || die "bad JSON: $out"
	start_loop ap "$NVT" --no-mps -c 0-3 "$APP"
	wait_file "$WORK/ap.state" "0-3"
	run_rc out rc "$NVT" -l --json
	python3 -c 'import json,sys; d=json.loads(sys.argv[1]); t=[t for t in d["tasks"] if t["pid"]==int(sys.argv[2])][0]; assert t["gpus"][0]["applied"] is True' \
		"$out" "$PID" || die "bad JSON: $out"
	grep -Eq "$(row_re "$PID" "$ME")0-3 +$APP loop" <<<"$(timeout "$HANG" "$NVT" -l)" || die "an applied partition is marked"
	# A partition the task refuses (no TPC at all) is marked so (at its next launch), not as
	# applied.
	"$T/segpoke" "$PID" empty
	poll_until 10 refused_row "$PID" || die "no '(refused)' row for $PID in: $(timeout "$HANG" "$NVT" -l)"
	stop_loop ap "$PID"
	stop_loop na "$plain"
}
# refused_row PID: -l marks task PID's partition refused.
refused_row() {
	timeout "$HANG" "$NVT" -l | grep -Eq "$(row_re "$1" "$ME")\(refused\) +$APP loop"
}
t_sec_fuzz_regressions() {
	# Inputs the fuzzers once failed on; with clang, also under clang's UBSan,
	# which (unlike gcc's) reports arithmetic on a null pointer.
	local dir=$ROOT/tests/unit/fuzz-regressions
	"$T/fuzz_parsers" "$dir"/*
	command -v clang >/dev/null || return 0
	clang -std=gnu11 -I"$ROOT/include" -I"$ROOT/src" -O1 -g -fsanitize=address,undefined \
		-fno-sanitize-recover=all -DFUZZ_STANDALONE -o "$WORK/fuzz_clang" \
		$(printf '%s\n' "$ROOT"/src/core/*.c | grep -v '/claim\.c$') "$ROOT"/src/gpu/driverinfo.c "$ROOT/tests/unit/fuzz_parsers.c"
	"$WORK/fuzz_clang" "$dir"/*
}
