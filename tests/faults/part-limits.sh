# Real limits rather than injected ones: a descriptor limit (ulimit -n), a
# full tmpfs as the run directory and as the calibration cache, and /proc
# mounted hidepid=2. Each runs in a mount namespace of its own. Sourced by
# tests/faults/run.sh.
# shellcheck shell=bash

# in_ns SCRIPT ARGS...: runs the bash SCRIPT in a private mount namespace (60 s limit).
in_ns() {
	local script=$1
	shift
	if ! unshare --mount --propagation private true 2>/dev/null; then
		OUT="skip: cannot unshare a mount namespace" RC=0
		return
	fi
	OUT=$(timeout 60 unshare --mount --propagation private bash -c "$script" ns "$@" 2>&1) && RC=0 || RC=$?
}
# each_line: judges the "rc=N what" lines a script printed; "lost: ..." lines are lost changes.
each_line() {
	local line rc
	while read -r line; do
		case $line in
		rc=*)
			rc=${line%% *} rc=${rc#rc=}
			judge "$rc" "$1: ${line#* }"
			;;
		lost:*) bad lost "$1: ${line#lost: }" ;;
		skip:*) echo "  skipped: $1: ${line#skip: }" ;;
		esac
	done <<<"$OUT"
	[ "$RC" == 0 ] || bad hang "$1: the script ended $RC: $(tail -3 <<<"$OUT")"
}

limit_fds() {
	local n rc
	start lim 0-3
	for n in 4 5 6 7 8 9 10 11 12 14 16 20 24 32; do
		for args in "-l" "-p $PID" "-p -c 4-5 $PID" "-a -p -c 0-3 $PID" \
			"--no-mps -c 0-3 $APP launch 1" "--no-mps -n 4 --exclude-running $APP launch 1"; do
			# shellcheck disable=SC2086
			OUT=$(timeout 20 bash -c 'ulimit -n "$1"; shift; exec "$@"' fds "$n" "$NVT" $args 2>&1) &&
				rc=0 || rc=$?
			judge "$rc" "ulimit -n $n: nvtaskset $args: $(tail -1 <<<"$OUT")"
			[ "$rc" == 0 ] || [ "$rc" -ge 124 ] || grep -q '^nvtaskset: ' <<<"$OUT" ||
				bad lost "ulimit -n $n: nvtaskset $args failed ($rc) without a word: $OUT"
			if [[ $args == "--no-mps -c"* ]] && [ "$rc" == 0 ]; then
				grep -q "tpcs=0-3 hung=0" <<<"$OUT" || bad lost "ulimit -n $n: the task ran on: $OUT"
			fi
		done
		now=$(current "$PID")
		[ "$now" == 0-3 ] || [ "$now" == 4-5 ] || bad lost "ulimit -n $n: the task has $now"
		timeout 20 "$NVT" -p -c 0-3 "$PID" >/dev/null 2>&1 || bad lost "ulimit -n $n: cannot put 0-3 back"
	done
	touch "$WORK/u/lim.stop"
	wait "$PID"
}

# A run directory on a full 256 KiB tmpfs (filled by another user): a start
# runs partitioned or says why, -l, -p and claims end, a forking task keeps
# its child (SIGBUS).
FULL_RUNDIR='
	set -u
	mnt=$1 nvt=$2 app=$3 work=$4
	mount -t tmpfs -o size=256k,mode=1777 tmpfs "$mnt" || { echo "skip: cannot mount a tmpfs"; exit 0; }
	export NVTASKSET_RUNDIR=$mnt
	"$nvt" --no-mps -c 0-3 "$app" loop "$work/full.stop" "$work/full.state" >/dev/null 2>&1 &
	task=$!
	sleep 0.3
	setpriv --reuid=65534 --regid=65534 --clear-groups dd if=/dev/zero of="$mnt/fill" bs=4k 2>/dev/null
	for args in "--no-mps -c 0-3 $app launch 2" "--no-mps -n 4 --exclude-running $app launch 1" \
		"-l" "-p $task" "-p -c 4-5 $task" "--no-mps -c 0-3 $app fork $work/fork.stop $work/fork"; do
		rm -f "$work/fork.stop"
		[[ $args != *fork* ]] || (sleep 1; touch "$work/fork.stop") &
		out=$(timeout 20 "$nvt" $args 2>&1 </dev/null) && rc=0 || rc=$?
		echo "rc=$rc $args: $(tail -1 <<<"$out")"
		case $args in
		"--no-mps -c 0-3 $app launch 2")
			[ $rc != 0 ] || grep -q "tpcs=0-3 hung=0" <<<"$out" || echo "lost: the task ran on: $out" ;;
		esac
	done
	touch "$work/full.stop"
	wait $task; echo "rc=$? the task that ran before the disk filled"
'

# The calibration cache on a full 64 KiB tmpfs: --calibrate says it could not
# save, a start that needs the map still runs partitioned.
FULL_CACHE='
	set -u
	mnt=$1 nvt=$2 app=$3
	mount -t tmpfs -o size=64k tmpfs "$mnt" || { echo "skip: cannot mount a tmpfs"; exit 0; }
	dd if=/dev/zero of="$mnt/fill" bs=4k 2>/dev/null
	export NVTASKSET_CACHE_DIR=$mnt/cache
	for args in "--calibrate" "--topology" "--no-mps -n 4 $app launch 1" "--no-mps -c 0-3 $app launch 1"; do
		out=$(timeout 20 "$nvt" $args 2>&1) && rc=0 || rc=$?
		echo "rc=$rc $args: $(tail -1 <<<"$out")"
		[ $rc == 0 ] || grep -q "^nvtaskset: " <<<"$out" || echo "lost: $args failed ($rc) without a word: $out"
		[[ $args != *launch* ]] || grep -q "hung=0" <<<"$out" || echo "lost: $args: the task did not run: $out"
	done
	mkdir -p "$mnt/cache"
	rm -f "$mnt/fill"
	out=$(timeout 20 "$nvt" --calibrate 2>&1) && rc=0 || rc=$?
	echo "rc=$rc --calibrate with room again: $(tail -1 <<<"$out")"
	[ $rc == 0 ] || echo "lost: --calibrate fails with room again: $out"
'

# /proc mounted hidepid=2: a user sees only her own processes. Her claim must
# still not take TPCs that root's task holds; her -l, -p and start work.
HIDEPID='
	set -u
	nvt=$1 app=$2 work=$3
	mount -t proc -o hidepid=2 proc /proc || { echo "skip: cannot mount /proc hidepid=2"; exit 0; }
	user="setpriv --reuid=65534 --regid=65534 --clear-groups"
	"$nvt" --no-mps -c 32-65 "$app" loop "$work/hp.stop" "$work/hp.root" >/dev/null 2>&1 &
	root_task=$!
	$user "$nvt" --no-mps -c 0-3 "$app" loop "$work/hp.stop" "$work/hp.user" >/dev/null 2>&1 &
	user_task=$!
	sleep 0.5
	out=$(timeout 20 $user "$nvt" --no-mps -n 8 --exclude-running "$app" launch 1 2>&1) && rc=0 || rc=$?
	echo "rc=$rc her claim beside root: $(tail -1 <<<"$out")"
	got=$(sed -n "s/.*tpcs=\([-0-9,]*\) hung=0.*/\1/p" <<<"$out")
	if [ $rc == 0 ]; then
		python3 -c "
import sys
s = set()
for p in sys.argv[1].split(\",\"):
    lo, _, hi = p.partition(\"-\"); s.update(range(int(lo), int(hi or lo) + 1))
sys.exit(0 if len(s) == 8 and all(4 <= t < 32 for t in s) else 1)" "$got" ||
			echo "lost: her claim under hidepid=2 got $got (root holds 32-65, she 0-3)"
	fi
	out=$(timeout 20 $user "$nvt" -p -c 4-5 $user_task 2>&1) && rc=0 || rc=$?
	echo "rc=$rc her -p: $out"
	[ $rc == 0 ] || echo "lost: she cannot move her own task: $out"
	out=$(timeout 20 $user "$nvt" -l 2>&1) && rc=0 || rc=$?
	echo "rc=$rc her -l: $(wc -l <<<"$out") lines"
	grep -q "^ *$user_task " <<<"$out" || echo "lost: her -l does not show her task: $out"
	out=$(timeout 20 $user "$nvt" -p -c 0-1 $root_task 2>&1) && rc=0 || rc=$?
	echo "rc=$rc her -p of root task: $out"
	[ $rc == 1 ] || echo "lost: she changed root task ($rc): $out"
	out=$(timeout 20 "$nvt" -l 2>&1) && rc=0 || rc=$?
	echo "rc=$rc root -l"
	grep -q "^ *$user_task " <<<"$out" && grep -q "^ *$root_task " <<<"$out" ||
		echo "lost: root -l misses a task: $out"
	touch "$work/hp.stop"
	wait
'

part_limits() {
	part_begin "limits: ulimit -n, full tmpfs, hidepid=2"
	limit_fds
	mkdir -p "$WORK/mnt" && chmod 755 "$WORK/mnt"
	in_ns "$FULL_RUNDIR" "$WORK/mnt" "$NVT" "$APP" "$WORK/u"
	each_line "full run directory"
	in_ns "$FULL_CACHE" "$WORK/mnt" "$NVT" "$APP"
	each_line "full calibration cache"
	if [ "$USERS_OK" == 1 ]; then
		in_ns "$HIDEPID" "$NVT" "$APP" "$WORK/u"
		each_line "hidepid=2"
	fi
	part_end
}
