# Hostile conditions, round 3: what one user leaves in her own run
# directory, or makes in the shared one, must not stall, hide or stop another
# user's tasks. Sourced by tests/run-tests.sh (helpers in security.sh).
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
t_hostile_unsettled_segments() {
	# A user's own segments with every slot's sequence left odd
	# cost each reader a few tries a slot, not 1000: root's -l and another
	# user's claim make at most NVT_SEG_READ_TRIES tries of each slot more
	# than beside the same tasks settled, the claim never waits for them, and it
	# counts their slots as held (it picks around their 0-3).
	need_users
	local pid calls_l0 calls_c0 calls_l calls_c
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
	touch "$WORK/u/us.stop"
	wait
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

t_hostile_forged_segment() {
	# Root starts a program that becomes uid 65534 in the same
	# process (its segment stays in root's run directory). She writes a
	# complete, valid segment for it (same PID, start time and namespace,
	# her uid) into her own run directory. Root's -p still moves the task
	# (it writes the segment the task maps), and root's -l keeps root's
	# real segment.
	need_users
	local py f root_seg
	py=$(user_python)
	export NVTASKSET_RUNDIR=$WORK/fs-run
	mkdir -m 1777 "$NVTASKSET_RUNDIR"
	start_loop u/fs "$NVT" --no-mps -c 0-3 "$APP" setuid 65534
	wait_file "$WORK/u/fs.state" "0-3"
	f=$(seg_file "$PID")
	has "$f" "/nvtaskset-65534/"
	root_seg=$NVTASKSET_RUNDIR/nvtaskset-0/${f##*/}
	[ -f "$root_seg" ] || die "no segment $root_seg"
	$(as_user 65534) "$py" - "$root_seg" "$f" <<'PY'
import os, struct, sys
data = bytearray(open(sys.argv[1], "rb").read())
struct.pack_into("<I", data, 20, os.geteuid())  # the header's uid: hers
os.makedirs(os.path.dirname(sys.argv[2]), mode=0o755, exist_ok=True)
with open(sys.argv[2], "wb") as out:
    out.write(data)
os.chmod(sys.argv[2], 0o644)
PY
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
