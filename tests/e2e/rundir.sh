# The shared run directory and the control segments in it, against what other users make and
# leave there (docs/security.md, "The run directory" and "Hostile conditions"): a user's run
# directory made first by another, entries of every type named like a run directory, a segment
# forged, hard-linked or under another user's file lease, and what a task stopped by a signal
# leaves. Sourced by tests/run-tests.sh: each t_NAME function is one test, run in a subshell
# under set -e with the helpers defined there (need_users, as_user, user_python, picked_apart:
# security.sh; start_agent, guarded_to: prio.sh; cdi_spec, container: cdi.sh).
# shellcheck shell=bash

t_hostile_squatted_root_directory() {
	# A user who makes nvtaskset-0 first in the shared run
	# directory (a directory of hers, then a link) does not stop root's
	# -n --exclude-running: root renames her entry aside and makes its own.
	need_users
	local rundir=$WORK/sq-run
	mkdir -m 1777 "$rundir"
	$(as_user 65533) mkdir -m 755 "$rundir/nvtaskset-0"
	run_rc out rc env NVTASKSET_RUNDIR="$rundir" "$NVT" --no-mps -n 4 --exclude-running "$APP" launch 1
	eq "$rc" 0 "root's claim beside a squatted nvtaskset-0: $out"
	has "$out" "hung=0"
	eq "$(stat -c %u "$rundir/nvtaskset-0")" 0 "nvtaskset-0's owner"
	compgen -G "$rundir/nvtaskset-0.squatted.65533.*" >/dev/null || die "her directory is not set aside: $(ls "$rundir")"
	rm -rf "$rundir/nvtaskset-0"
	$(as_user 65533) ln -s /tmp "$rundir/nvtaskset-0"
	run_rc out rc env NVTASKSET_RUNDIR="$rundir" "$NVT" --no-mps -n 4 --exclude-running "$APP" launch 1
	eq "$rc" 0 "root's claim beside a link named nvtaskset-0: $out"
	[ -d "$rundir/nvtaskset-0" ] && [ ! -L "$rundir/nvtaskset-0" ] || die "nvtaskset-0 is still her link"
	# A user cannot do the same to another user's directory (the sticky bit).
	$(as_user 65533) mkdir -m 755 "$rundir/nvtaskset-65532"
	run_rc out rc $(as_user 65532) env NVTASKSET_RUNDIR="$rundir" "$NVT" --no-mps -c 0-3 "$APP" launch 1
	has "$out" "belongs to uid 65533"
	eq "$(stat -c %u "$rundir/nvtaskset-65532")" 65533 "nvtaskset-65532's owner"
}

# The squatter of nvtaskset-0 who also makes the name root would set her entry aside by
# (nvtaskset-0.squatted.UID.INODE: both hers to know), a directory that is not empty, or one
# for her file, does not stop root's claim either.
t_hostile_squatted_root_directory_aside_taken() {
	need_users
	local rundir=$WORK/sq-run ino
	mkdir -m 1777 "$rundir"
	$(as_user 65533) mkdir -m 755 "$rundir/nvtaskset-0"
	ino=$(stat -c %i "$rundir/nvtaskset-0")
	$(as_user 65533) mkdir -m 755 "$rundir/nvtaskset-0.squatted.65533.$ino"
	$(as_user 65533) touch "$rundir/nvtaskset-0.squatted.65533.$ino/kept"
	run_rc out rc env NVTASKSET_RUNDIR="$rundir" "$NVT" --no-mps -n 4 --exclude-running "$APP" launch 1
	eq "$rc" 0 "root's claim beside a squatted nvtaskset-0 whose aside name is taken: $out"
	has "$out" "hung=0"
	eq "$(stat -c %u "$rundir/nvtaskset-0")" 0 "nvtaskset-0's owner"
	# A file of hers in its place, and a directory of hers under the name it would go by.
	rm -rf "$rundir/nvtaskset-0"
	$(as_user 65533) touch "$rundir/nvtaskset-0"
	ino=$(stat -c %i "$rundir/nvtaskset-0")
	$(as_user 65533) mkdir -m 755 "$rundir/nvtaskset-0.squatted.65533.$ino"
	run_rc out rc env NVTASKSET_RUNDIR="$rundir" "$NVT" --no-mps -n 4 --exclude-running "$APP" launch 1
	eq "$rc" 0 "root's claim beside a file nvtaskset-0 whose aside name is a directory: $out"
	[ -d "$rundir/nvtaskset-0" ] && [ "$(stat -c %u "$rundir/nvtaskset-0")" == 0 ] ||
		die "nvtaskset-0 is still hers: $(ls -la "$rundir")"
}

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

t_hostile_forged_segment() {
	# Root starts a program that becomes uid 65534 in the same
	# process (its segment stays in root's run directory). She writes a
	# complete, valid segment for it (same PID, start time and namespace,
	# her uid) into her own run directory. Root's -p still moves the task
	# (it writes the segment the task maps), and root's -l keeps root's
	# real segment.
	need_users
	local f root_seg
	export NVTASKSET_RUNDIR=$WORK/fs-run
	mkdir -m 1777 "$NVTASKSET_RUNDIR"
	start_loop u/fs "$NVT" --no-mps -c 0-3 "$APP" setuid 65534
	wait_file "$WORK/u/fs.state" "0-3"
	f=$(seg_file "$PID")
	has "$f" "/nvtaskset-65534/"
	root_seg=$NVTASKSET_RUNDIR/nvtaskset-0/${f##*/}
	[ -f "$root_seg" ] || die "no segment $root_seg"
	write_rival "$root_seg" "$f"
	run_rc out rc "$NVT" -p -c 7 "$PID"
	eq "$rc" 0 "root moves the task: $out"
	wait_file "$WORK/u/fs.state" "7"
	run_rc out rc "$NVT" -l
	[ -f "$root_seg" ] || die "root's -l removed the task's real segment"
	grep -Eq "$(row_re "$PID" nobody)7 " <<<"$out" || die "no row for $PID with 7 in: $out"
	rm -f "$f"
	run_rc out rc "$NVT" -p -c 9 "$PID"
	eq "$rc" 0 "root moves the task after she removed hers: $out"
	wait_file "$WORK/u/fs.state" "9"
	stop_loop u/fs "$PID"
}

t_hostile_hard_link() {
	# Where fs.protected_hardlinks=0 another user can link a
	# task's segment from elsewhere (here root makes the link, as such a
	# user could): the link count 2 must not hide the task from -l, nor stop
	# its owner's and root's -p.
	need_users
	export NVTASKSET_RUNDIR=$WORK/hl-run
	mkdir -m 1777 "$NVTASKSET_RUNDIR"
	start_loop u/hl $(as_user 65532) "$NVT" --no-mps -c 0-3 "$APP"
	wait_file "$WORK/u/hl.state" "0-3"
	ln "$(seg_file "$PID")" "$WORK/u/hl.link"
	eq "$(stat -c %h "$(seg_file "$PID")")" 2 "link count"
	run_rc out rc "$NVT" -l
	grep -Eq "$(row_re "$PID" 65532)0-3" <<<"$out" || die "-l hides the task: $out"
	run_rc out rc $(as_user 65532) "$NVT" -p -c 4-5 "$PID"
	eq "$rc" 0 "the owner's -p: $out"
	wait_file "$WORK/u/hl.state" "4-5"
	run_rc out rc "$NVT" -p -c 6 "$PID"
	eq "$rc" 0 "root's -p: $out"
	wait_file "$WORK/u/hl.state" "6"
	stop_loop u/hl "$PID"
}

t_hostile_leased_segment_file() {
	# Another user's file named like a segment of hers, on which she holds a write lease (taken
	# again if broken; SIGIO ignored, so a break waits the kernel's 45 s): an open with
	# O_NONBLOCK returns EWOULDBLOCK, which failed every claim on the node and -l ("cannot list
	# the tasks: Resource temporarily unavailable"). Her file holds nothing: claims, -p -n
	# --exclude-running and -l go on; -l names it.
	need_users
	local py holder
	py=$(user_python)
	$(as_user 65533) "$py" - "$NVTASKSET_RUNDIR/nvtaskset-65533" "$WORK/u/lease" <<'PY' &
import fcntl, os, signal, sys, time
rundir, tag = sys.argv[1], sys.argv[2]
signal.signal(signal.SIGIO, signal.SIG_IGN)
os.makedirs(rundir, 0o755, exist_ok=True)
name = "nvtaskset.%d.%d" % (os.stat("/proc/self/ns/pid").st_ino, os.getpid())
fd = os.open(os.path.join(rundir, name), os.O_RDONLY | os.O_CREAT, 0o644)
def take():
    try:
        fcntl.fcntl(fd, fcntl.F_SETLEASE, fcntl.F_WRLCK)
        return True
    except OSError:
        return False
if not take():
    open(tag + ".nolease", "w").close()
    sys.exit(0)
open(tag + ".ready", "w").close()
while not os.path.exists(tag + ".stop"):
    if fcntl.fcntl(fd, fcntl.F_GETLEASE) != fcntl.F_WRLCK:
        take()
    time.sleep(0.01)
PY
	holder=$!
	wait_for 10 test -e "$WORK/u/lease.ready" -o -e "$WORK/u/lease.nolease"
	[ -e "$WORK/u/lease.ready" ] || { wait "$holder"; skip "no file lease can be taken here"; }
	run_rc out rc "$NVT" --no-mps -n 8 --exclude-running "$APP" launch 1
	eq "$rc" 0 "a claim beside a leased file: $out"
	has "$out" "hung=0"
	start_loop lo "$NVT" --no-mps -c 20-27 "$APP"
	wait_file "$WORK/lo.state" "20-27"
	run_rc out rc "$NVT" -p -n 4 --exclude-running "$PID"
	eq "$rc" 0 "-p -n --exclude-running beside a leased file: $out"
	run_rc out rc "$NVT" -l
	has "$out" "$PID"
	has "$out" "holds a lease on its control segment"
	hasnt "$out" "cannot list the tasks"
	stop_loop lo "$PID"
	touch "$WORK/u/lease.stop"
	wait "$holder"
}

# ended_by SIG PID: waits for background task PID, which must end by signal SIG (its status
# 128 + the signal's number, as the shell reports it).
ended_by() {
	local rc
	poll_until 5 is_gone "$2" || die "task $2 did not end on SIG$1"
	wait "$2" && rc=0 || rc=$?
	eq "$rc" $((128 + $(kill -l "$1"))) "task $2's status after SIG$1"
}

t_hostile_stop_signals_remove_segment() {
	# A task stopped by SIGTERM (systemctl stop, scancel, docker stop), SIGHUP or SIGINT
	# whose program leaves them at their default action removes its segment and still ends
	# by the signal (before, its file stayed: a dead high task's file was followed, and lent
	# its TPCs). A program that ignores SIGTERM keeps doing so; one with a handler of its own
	# keeps it (Python's, here: it exits normally, and its segment goes at exit).
	local sig seg py sigs="TERM HUP" dfl=()
	# (A shell's background job starts with SIGINT ignored, and one under nohup with SIGHUP:
	# env sets them back to the default.)
	if env --default-signal=INT,HUP,TERM true 2>/dev/null; then
		sigs="$sigs INT"
		# shellcheck disable=SC2054 # one argument, its signals joined by commas
		dfl=(env --default-signal=INT,HUP,TERM)
	elif (($(printf '%d' "0x$(awk '$1 == "SigIgn:" {print $2}' /proc/$BASHPID/status)") & 1 << 0)); then
		sigs=TERM # SIGHUP (bit 0) is ignored here and cannot be set back
	fi
	for sig in $sigs; do
		start_loop s$sig "${dfl[@]}" "$NVT" --no-mps -c 0-3 "$APP"
		wait_file "$WORK/s$sig.state" "0-3"
		seg=$(seg_file "$PID")
		[ -e "$seg" ] || die "no segment for the task: $seg"
		kill -"$sig" "$PID"
		ended_by "$sig" "$PID"
		[ ! -e "$seg" ] || die "SIG$sig left the segment $seg"
	done
	rm -f "$WORK/ig.stop" "$WORK/ig.state" "$WORK/ig.stamps"
	FAKEAPP_STAMP=$WORK/ig.stamps FAKEAPP_STAMP_LAUNCHES=1 \
		"$NVT" --no-mps -c 0-3 bash -c 'trap "" TERM; exec "$@"' - "$APP" loop "$WORK/ig.stop" \
		"$WORK/ig.state" >"$WORK/ig.out" 2>&1 &
	PID=$!
	wait_file "$WORK/ig.state" "0-3"
	kill -TERM "$PID"
	# It launches on: 5 launches after the signal (one that ended by it would not).
	wait_launches "$WORK/ig.stamps" 5
	kill -0 "$PID" || die "a task that ignores SIGTERM ended by it"
	stop_loop ig "$PID"
	# A Python interpreter is left as it is: its signal module reads a handler it did not set
	# as None, and code that restores a handler it saved (signal.signal(sig, old)) fails on it.
	py=$(command -v python3)
	run_rc out rc "${dfl[@]}" "$NVT" --no-mps -c 0-3 "$py" -c 'import signal; print(signal.getsignal(signal.SIGTERM) is signal.SIG_DFL, signal.getsignal(signal.SIGHUP) is signal.SIG_DFL)'
	eq "$out" "True True" "Python's SIGTERM and SIGHUP handlers under the shim"
	"$NVT" --no-mps -c 0-3 "$py" -c '
import os, signal, sys, time
def bye(sig, frame):
    open(sys.argv[1] + ".handled", "w").close()
    sys.exit(0)
signal.signal(signal.SIGTERM, bye)
open(sys.argv[1] + ".ready", "w").close()
while True:
    time.sleep(0.01)' "$WORK/ph" >"$WORK/ph.out" 2>&1 &
	PID=$!
	wait_for 10 test -e "$WORK/ph.ready"
	seg=$(seg_file "$PID")
	[ -e "$seg" ] || die "no segment for the Python task: $seg"
	kill -TERM "$PID"
	wait "$PID" || die "the Python task's own handler did not end it normally: $(cat "$WORK/ph.out")"
	[ -e "$WORK/ph.handled" ] || die "the Python task's own handler did not run"
	[ ! -e "$seg" ] || die "the Python task left its segment"
}
