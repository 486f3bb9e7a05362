# Refusing bad input. Sourced by tests/run-tests.sh: each t_NAME function is one test,
# run in a subshell under set -e with the helpers defined there.
# shellcheck shell=bash

t_bad_partitions() {
	start_loop bad "$NVT" --no-mps -c 0-3 "$APP"
	wait_file "$WORK/bad.state" "0-3"
	local args
	while IFS='|' read -r args want; do
		# shellcheck disable=SC2086
		run_rc out rc "$NVT" -p $args "$PID"
		eq "$rc" 1 "exit status of -p $args"
		eq "$out" "nvtaskset: $want" "message for -p $args"
	done <<'EOF'
-c 70|TPC 70 does not exist: this GPU has 66 TPCs (0-65)
-c 0-300|TPC 300 does not exist: this GPU has 66 TPCs (0-65)
-c 0-4294967295|TPC 4294967295 does not exist: this GPU has 66 TPCs (0-65)
-c 99999999999999999999,1|TPC 99999999999999999999 does not exist: this GPU has 66 TPCs (0-65)
-c 0070|TPC 70 does not exist: this GPU has 66 TPCs (0-65)
-c 1-|failed to parse TPC list '1-': it ends inside '1-'; give numbers and ranges, such as 0-15,32,40-47:2 (every 2nd of 40-47), or all
-c 3-1|TPC list '3-1': the range 3-1 goes down; write it from low to high (1-3)
-c 15-0|TPC list '15-0': the range 15-0 goes down; write it from low to high (0-15)
-c 0-15:0|TPC list '0-15:0': the step after ':' in 0-15:0 takes every Nth number of the range and must be 1 or more
-c 0x3|TPC list '0x3' looks like a hexadecimal mask: leave out -c to give a mask (it is TPCs 0-1), or list the TPCs
-c x|failed to parse TPC list 'x': 'x' is no number or range; give numbers and ranges, such as 0-15,32,40-47:2 (every 2nd of 40-47), or all
-c 0-7,,9|failed to parse TPC list '0-7,,9': an empty item (two commas, or one at an end); write it 0-7,9
-c 4-5:x|failed to parse TPC list '4-5:x': 'x' in '4-5:x' is no number or range; give numbers and ranges, such as 0-15,32,40-47:2 (every 2nd of 40-47), or all
0|empty partition: TPC mask '0' selects no TPC
0xg|failed to parse TPC mask '0xg': a mask is hexadecimal, bit t for TPC t (ff: TPCs 0-7); -c takes a list of TPCs instead
0-32|TPC mask '0-32' is not hexadecimal: to give the TPC list 0-32, add -c (e.g. nvtaskset -c 0-32 COMMAND, or -c --gpu GPU=0-32)
1ffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff|TPC 280 does not exist: this GPU has 66 TPCs (0-65)
4,00000000,00000000|TPC 66 does not exist: this GPU has 66 TPCs (0-65)
-g 12|GPC 12 does not exist: this GPU has 12 GPCs (0-11)
-g 1-|failed to parse GPC list '1-': it ends inside '1-'; give numbers and ranges, such as 0-2,5 (GPCs 0, 1, 2 and 5), or all
-g 1-3,,6|failed to parse GPC list '1-3,,6': an empty item (two commas, or one at an end); write it 1-3,6
-g 1..3|failed to parse GPC list '1..3': '.' in '1..3' (a range is FIRST-LAST); write it 1-3
-g 1-3,|failed to parse GPC list '1-3,': an empty item (two commas, or one at an end); write it 1-3
-g 64|GPC 64 does not exist: this GPU has 12 GPCs (0-11)
-n 67|cannot pick 67 TPCs: this GPU has 66
EOF
	# A list with a space (one word, as quoted).
	run_rc out rc "$NVT" -p -g '1-3, 6' "$PID"
	eq "$out" "nvtaskset: failed to parse GPC list '1-3, 6': a space in ' 6' (a list has none); write it 1-3,6"
	run_rc out rc "$NVT" -pc "$PID"
	eq "$out" "pid $PID's current TPC list: 0-3" "partition after refused changes"
	stop_loop bad "$PID"
	run_rc out rc "$NVT" --no-mps -c 66 "$APP" launch 1
	eq "$rc" 1
	eq "$out" "nvtaskset: TPC 66 does not exist: this GPU has 66 TPCs (0-65)"
	env FAKECUDA_CHIP=identity FAKECUDA_SMS=16 "$NVT" --calibrate >/dev/null 2>&1
	run_rc out rc env FAKECUDA_CHIP=identity FAKECUDA_SMS=16 "$NVT" --no-mps -c 8 "$APP" launch 1
	eq "$out" "nvtaskset: TPC 8 does not exist: this GPU has 8 TPCs (0-7)"
	run_rc out rc "$NVT" --no-mps 0 "$APP" launch 1
	eq "$out" "nvtaskset: empty partition: TPC mask '0' selects no TPC"
	run_rc out rc "$NVT" --no-mps -c "" "$APP" launch 1
	eq "$out" "nvtaskset: empty TPC list: give numbers and ranges such as 0-15,32, or all"
	# --gpu GPU=MASK without -c: how to give a list.
	run_rc out rc "$NVT" --no-mps --gpu 0=0-32 "$APP" launch 1
	eq "$out" "nvtaskset: TPC mask '0-32' is not hexadecimal: to give the TPC list 0-32, add -c (e.g. nvtaskset -c 0-32 COMMAND, or -c --gpu GPU=0-32)"
}
t_bad_pids() {
	local p
	for p in abc 0 -5 12x 99999999999; do
		run_rc out rc "$NVT" -p -- "$p"
		eq "$rc" 1 "exit status for pid '$p'"
		eq "$out" "nvtaskset: invalid PID argument: '$p'"
	done
	# PID before MASK: the line with them swapped, where it parses.
	run_rc out rc "$NVT" -c -p 1234 0-3
	eq "$rc" 1
	eq "$out" "nvtaskset: invalid PID argument: '0-3' (PID comes last, after MASK: nvtaskset -c -p 0-3 1234)"
	run_rc out rc "$NVT" -p -g 1234 1-2
	eq "$out" "nvtaskset: invalid PID argument: '1-2' (PID comes last, after MASK: nvtaskset -p -g 1-2 1234)"
	run_rc out rc "$NVT" -p 1234 ff
	eq "$out" "nvtaskset: invalid PID argument: 'ff' (PID comes last, after MASK: nvtaskset -p ff 1234)"
	run_rc out rc "$NVT" -p 1234 0-3 # (0-3 is no mask: no line to give)
	eq "$out" "nvtaskset: invalid PID argument: '0-3'"
	run_rc out rc "$NVT" -p 2147483647
	eq "$rc" 1
	eq "$out" "nvtaskset: failed to get pid 2147483647's partition: No such process"
	run_rc out rc "$NVT" -p $$
	eq "$out" "nvtaskset: failed to get pid $$'s partition: not running under nvtaskset (start it with nvtaskset; $WRAPPER_HINT)"
	run_rc out rc "$NVT" -p f $$
	eq "$out" "nvtaskset: failed to set pid $$'s partition: not running under nvtaskset (start it with nvtaskset; $WRAPPER_HINT)"
	# A leftover segment of an earlier process with this PID is not trusted.
	start_loop stale "$NVT" --no-mps -c 0-3 "$APP"
	wait_file "$WORK/stale.state" "0-3"
	cp "$(seg_file "$PID")" "$(seg_file $$)"
	run_rc out rc "$NVT" -p $$
	eq "$out" "nvtaskset: failed to get pid $$'s partition: not running under nvtaskset (start it with nvtaskset; $WRAPPER_HINT)"
	rm -f "$(seg_file $$)"
	stop_loop stale "$PID"
}
t_bad_segments() {
	local stamps=$WORK/seg.stamp mark
	FAKEAPP_STAMP=$stamps FAKEAPP_STAMP_LAUNCHES=1 start_loop seg "$NVT" --no-mps -c 0-3 "$APP"
	wait_file "$WORK/seg.state" "0-3"
	# Partitions that would hang every launch never reach the hardware: 5 launches after
	# each write run on what they had.
	mark=$(stamp_mark "$stamps")
	"$T/segpoke" "$PID" empty
	launches_unchanged "$stamps" "$mark" 5
	eq "$(cat "$WORK/seg.state")" "0-3" "partition after an empty one was written"
	run_rc out rc "$NVT" -p -c "$PID"
	has "$out" "refused this partition"
	mark=$(stamp_mark "$stamps")
	"$T/segpoke" "$PID" badtopo
	launches_unchanged "$stamps" "$mark" 5
	eq "$(cat "$WORK/seg.state")" "0-3" "partition after a malformed topology"
	"$NVT" -p -c 9 "$PID" >/dev/null
	wait_file "$WORK/seg.state" "9"
	# A writer that died mid-write: launches go on with what they had.
	mark=$(stamp_mark "$stamps")
	"$T/segpoke" "$PID" halfwrite
	launches_unchanged "$stamps" "$mark" 5
	eq "$(cat "$WORK/seg.state")" "9" "partition after a writer died mid-write"
	run_rc out rc "$NVT" -p "$PID"
	eq "$rc" 1
	eq "$out" "nvtaskset: failed to get pid $PID's partition: a writer died while changing it; set a new partition to repair it"
	run_rc out rc "$NVT" -p -c 10 "$PID"
	eq "$rc" 0 "a new write recovers the slot"
	wait_file "$WORK/seg.state" "10"
	grep -q "refused a partition that enables no working TPC" "$WORK/seg.err" ||
		die "no warning from the shim: $(cat "$WORK/seg.err")"
	"$T/segpoke" "$PID" version 99
	run_rc out rc "$NVT" -p "$PID"
	eq "$rc" 1
	eq "$out" "nvtaskset: failed to get pid $PID's partition: its control segment has version 99; this nvtaskset understands version $SEG_VERSION"
	"$T/segpoke" "$PID" version current
	mark=$(stamp_mark "$stamps")
	"$T/segpoke" "$PID" garbage
	run_rc out rc "$NVT" -p -c 1 "$PID"
	eq "$out" "nvtaskset: failed to set pid $PID's partition: its control segment is corrupt"
	run_rc out rc "$NVT" -l
	has "$out" "nvtaskset: pid $PID: its control segment is corrupt"
	# Garbage in the header is not the shim's business: launches go on.
	launches_unchanged "$stamps" "$mark" 5
	eq "$(cat "$WORK/seg.state")" "10" "partition after garbage in the header"
	stop_loop seg "$PID"
}
t_segment_busy() {
	# Another writer holds the segment's writer's lock: give up after a while
	# (2 s), change nothing.
	start_loop busy "$NVT" --no-mps -c 0-3 "$APP"
	wait_file "$WORK/busy.state" "0-3"
	"$T/segpoke" "$PID" hold >"$WORK/busy.hold" &
	local holder=$!
	wait_file "$WORK/busy.hold" held
	run_rc out rc "$NVT" -p -c 7 "$PID"
	eq "$rc" 1
	eq "$out" "nvtaskset: failed to set pid $PID's partition: another nvtaskset is changing it right now"
	eq "$(cat "$WORK/busy.state")" "0-3"
	kill "$holder" # the holder lets go
	wait "$holder" || true
	run_rc out rc "$NVT" -p -c 7 "$PID"
	eq "$rc" 0
	wait_file "$WORK/busy.state" "7"
	stop_loop busy "$PID"
}
t_segment_owner_checked() {
	start_loop own "$NVT" --no-mps -c 0-3 "$APP"
	wait_file "$WORK/own.state" "0-3"
	# Public to read, written by its user and root.
	[ "$(stat -c %a "$(seg_file "$PID")")" == 644 ] || die "segment mode is not 0644"
	[ "$(stat -c %a "$(dirname "$(seg_file "$PID")")")" == 755 ] || die "run directory mode is not 0755"
	# The writers' lock file: nobody else can open it, so nobody else can hold a lock in it.
	[ "$(stat -c %a "$(dirname "$(seg_file "$PID")")/writers.lock")" == 600 ] || die "lock file mode is not 0600"
	if [ "$(id -u)" != 0 ]; then
		stop_loop own "$PID"
		skip "needs root for a segment of another user's (chown); the modes were checked"
	fi
	chown 65534 "$(seg_file "$PID")"
	run_rc out rc "$NVT" -p "$PID"
	eq "$out" "nvtaskset: failed to get pid $PID's partition: not running under nvtaskset (start it with nvtaskset; $WRAPPER_HINT)"
	chown 0 "$(seg_file "$PID")"
	stop_loop own "$PID"
}
t_permissions() {
	[ "$(id -u)" == 0 ] || skip "needs root to act as other users"
	command -v setpriv >/dev/null || skip "needs setpriv"
	as() { echo setpriv --reuid="$1" --regid="$1" --clear-groups; }
	$(as 65534) test -x "$NVT" || skip "uid 65534 cannot run $NVT (tests/run-tests.sh copies the build where it can)"
	mkdir -m 1777 "$WORK/perm"
	rm -f "$WORK/perm/stop"
	$(as 65534) "$NVT" --no-mps -c 0-3 "$APP" loop "$WORK/perm/stop" "$WORK/perm/state" \
		>"$WORK/perm.out" 2>&1 &
	PID=$!
	wait_file "$WORK/perm/state" "0-3"
	# Anyone reads a partition, as anyone reads a CPU affinity;
	# only its user and root change it.
	run_rc out rc $(as 65533) "$NVT" -pc "$PID"
	eq "$rc" 0
	eq "$out" "pid $PID's current TPC list: 0-3"
	run_rc out rc $(as 65533) "$NVT" -p -c 4 "$PID"
	eq "$rc" 1
	eq "$out" "nvtaskset: failed to set pid $PID's partition: $(denied 65534)"
	run_rc out rc $(as 65533) "$NVT" -l
	has "$out" " $PID "
	run_rc out rc $(as 65534) "$NVT" -pc "$PID"
	eq "$out" "pid $PID's current TPC list: 0-3" "the owner reads"
	run_rc out rc $(as 65534) "$NVT" -p -c 4 "$PID"
	eq "$rc" 0 "the owner changes"
	wait_file "$WORK/perm/state" "4"
	run_rc out rc "$NVT" -p -c 5 "$PID"
	eq "$rc" 0 "root changes"
	wait_file "$WORK/perm/state" "5"
	run_rc out rc "$NVT" -l
	has "$out" " $PID "
	touch "$WORK/perm/stop"
	wait "$PID" || die "task failed: $(cat "$WORK/perm.out")"
}
t_exec_failures() {
	run_rc out rc "$NVT" --no-mps -c 0 /nonexistent/program
	eq "$rc" 127
	eq "$out" "nvtaskset: failed to execute /nonexistent/program: No such file or directory"
	run_rc out rc "$NVT" --no-mps -c 0 nvtaskset-no-such-command
	eq "$rc" 127
	printf 'not a program\n' >"$WORK/plain"
	chmod 644 "$WORK/plain"
	run_rc out rc "$NVT" --no-mps -c 0 "$WORK/plain"
	eq "$rc" 126
	eq "$out" "nvtaskset: failed to execute $WORK/plain: Permission denied"
}
t_driver_failures() {
	# (No driver at all: only where the machine has none of its own.)
	if ! system_driver; then
		run_rc out rc env LD_LIBRARY_PATH=/nonexistent "$NVT" --no-mps -c 0 "$APP" launch 1
		eq "$rc" 1
		has "$out" "nvtaskset: cannot list the GPUs: cannot load the CUDA driver: libcuda.so.1"
		has "$out" "Without a GPU, 'make try' in nvtaskset's source tree runs it on a fake one)"
	fi
	run_rc out rc env FAKECUDA_INIT_ERROR=100 "$NVT" --no-mps -c 0 "$APP" launch 1
	eq "$out" "nvtaskset: cannot list the GPUs: cuInit failed: error 100 (no CUDA-capable device)"
	run_rc out rc env FAKECUDA_DEVICES=0 "$NVT" --no-mps -c 0 "$APP" launch 1
	eq "$rc" 1
	run_rc out rc env FAKECUDA_INIT_HANG=1 NVTASKSET_DRIVER_TIMEOUT=1 "$NVT" --no-mps -c 0 "$APP" launch 1
	eq "$rc" 1
	eq "$out" "nvtaskset: cannot list the GPUs: the CUDA driver did not answer within 1 s"
	run_rc out rc env NVTASKSET_DRIVER_TIMEOUT=0 "$NVT" --no-mps -c 0 "$APP" launch 1
	eq "$out" "nvtaskset: NVTASKSET_DRIVER_TIMEOUT must be 1-3600 seconds, not '0'"
	run_rc out rc env NVTASKSET_SHIM=relative.so "$NVT" --no-mps -c 0 "$APP" launch 1
	eq "$out" "nvtaskset: NVTASKSET_SHIM=relative.so is not a readable absolute path"
}
t_usage() {
	run_rc out rc "$NVT"
	eq "$rc" 1
	has "$out" "no mask and no command given"
	has "$out" "Try 'nvtaskset --help'"
	run_rc out rc "$NVT" -c 0
	has "$out" "no command given"
	run_rc out rc "$NVT" -c -g 0 x
	has "$out" "-c, -g and -n exclude each other"
	run_rc out rc "$NVT" -n 3 -c x
	has "$out" "-c, -g and -n exclude each other"
	run_rc out rc "$NVT" -p -l 1
	has "$out" "-p, -l, --mps and --topology/--calibrate exclude each other"
	run_rc out rc "$NVT" --strategy spread 0 x
	has "$out" "--strategy, --exclude-running and --memory-half go with -n"
	run_rc out rc "$NVT" -n 3 --strategy diagonal x
	has "$out" "--strategy takes packed, spread or clusters"
	for a in 0 -1 257 3x ""; do
		run_rc out rc "$NVT" -n "$a" x
		has "$out" "-n takes a TPC count from 1 to 256"
	done
	run_rc out rc "$NVT" --gpu x --topology
	eq "$out" "nvtaskset: there is no GPU 'x': this machine has one GPU, 0 ($(fake_uuid))"
	for a in "" "=0-3" "0="; do
		run_rc out rc "$NVT" --gpu "$a" -c 0 x
		has "$out" "--gpu takes GPU or GPU=MASK (GPU: a number or a UUID)"
	done
	run_rc out rc "$NVT" --gpu 0=1 --gpu 1 x
	has "$out" "give every --gpu a mask (GPU=MASK) or none"
	run_rc out rc "$NVT" -n 2 --gpu 0=1 x
	has "$out" "-n picks TPCs itself: give --gpu GPU without a mask"
	run_rc out rc "$NVT" -l --gpu 0
	has "$out" "-l and --mps take no --gpu"
	run_rc out rc "$NVT" -p --gpu 0 123
	has "$out" "--gpu GPU with -p needs a MASK"
	run_rc out rc "$NVT" --topology --gpu 0=1
	has "$out" "--topology and --calibrate take --gpu GPU without a mask"
	run_rc out rc "$NVT" --topology 5
	has "$out" "--topology and --calibrate take no further arguments"
	run_rc out rc "$NVT" -p -n 3 1 2
	has "$out" "too many arguments"
	run_rc out rc "$NVT" -p
	has "$out" "no PID given"
	run_rc out rc "$NVT" -p 1 2 3
	has "$out" "too many arguments"
	run_rc out rc "$NVT" -l 5
	has "$out" "-l takes no further arguments"
	run_rc out rc "$NVT" --bogus
	eq "$rc" 1
	has "$out" "unrecognized option"
	run_rc out rc "$NVT" --mps frob
	has "$out" "--mps takes status, start or stop"
	run_rc out rc "$NVT" --help
	eq "$rc" 0
	has "$out" "Usage:"
	run_rc out rc "$NVT" -V
	eq "$out" "nvtaskset $(sed -n 's/.*NVT_VERSION_STRING "\(.*\)".*/\1/p' "$ROOT/src/nvtaskset.h")"
	# Options after MASK belong to the command, as with taskset.
	run_rc out rc "$NVT" --no-mps -c 0 /bin/echo -c -p --help
	eq "$out" "-c -p --help"
}

t_bad_info_option_words() {
	# --help, --help-all and --version refuse a word after the options, as -l does (each says
	# which option, and nothing is printed on standard output); alone, or beside other
	# options, they print what they print.
	local what err
	for what in -h --help --help-all -V --version; do
		out=$("$NVT" "$what" extra 2>"$WORK/info.err") && rc=0 || rc=$?
		err=$(cat "$WORK/info.err")
		eq "$rc" 1 "$what extra: $out$err"
		eq "$out" "" "$what extra's standard output"
		case $what in -h) what=--help ;; -V) what=--version ;; esac
		has "$err" "nvtaskset: $what takes no further arguments"
		has "$err" "Try 'nvtaskset --help' for more information."
	done
	run_rc out rc "$NVT" --version -l
	eq "$rc" 0
	eq "$out" "nvtaskset $(sed -n 's/.*NVT_VERSION_STRING "\(.*\)".*/\1/p' "$ROOT/src/nvtaskset.h")"
	run_rc out rc "$NVT" -p --help
	eq "$rc" 0
	has "$out" "Usage:"
	run_rc out rc "$NVT" --help-all --no-mps
	eq "$rc" 0
	has "$out" "--priority LEVEL"
}

t_bad_pid_thread() {
	local i
	# -p on a thread: which process it belongs to, and whether that one is a task.
	local tag=$WORK/th tid
	rm -f "$tag".*
	"$NVT" --no-mps -c 0-3 python3 -c '
import os, sys, threading
stop = threading.Event()
t = threading.Thread(target=stop.wait)
t.start()
open(sys.argv[1] + ".tid", "w").write(str(t.native_id))
while not os.path.exists(sys.argv[1] + ".stop"):
	stop.wait(0.02)
stop.set()' "$tag" >"$tag.out" 2>&1 &
	PID=$!
	wait_task "$PID"
	poll_until 10 test -s "$tag.tid" || true
	tid=$(cat "$tag.tid")
	run_rc out rc "$NVT" -p -c 4-5 "$tid"
	eq "$rc" 1
	eq "$out" "nvtaskset: failed to set pid $tid's partition: $tid is a thread of process $PID, whose threads share its partition: give -p that PID"
	touch "$tag.stop"
	wait "$PID" || die "the task failed: $(cat "$tag.out")"
	# A thread of a process that is no task.
	python3 -c '
import subprocess, sys, threading
stop = threading.Event()
t = threading.Thread(target=stop.wait)
t.start()
r = subprocess.run([sys.argv[1], "-p", str(t.native_id)], capture_output=True, text=True)
stop.set()
print(r.stderr.strip().replace(str(t.native_id), "TID"))' "$NVT" >"$tag.plain"
	has "$(cat "$tag.plain")" "failed to get pid TID's partition: TID is a thread of process"
	has "$(cat "$tag.plain")" "which is not running under nvtaskset either"
}

t_bad_option_after_mask() {
	# Options end at MASK (taskset's rule): an option of ours where COMMAND or
	# PID goes is refused with the command line that gives it as an option.
	local args want
	while IFS='|' read -r args want; do
		# shellcheck disable=SC2086
		run_rc out rc "$NVT" $args
		eq "$rc" 1 "exit status of $args"
		eq "$out" "nvtaskset: $want
Try 'nvtaskset --help' for more information." "message for $args"
	done <<'EOF2'
-c 0-3 --no-mps true|'--no-mps' after '0-3' is taken as COMMAND (options end at the first word that is not one, as taskset's do); to give it as an option, put it before: nvtaskset --no-mps -c 0-3 true
--gpu 1 -c 0-3 --dry-run|'--dry-run' after '0-3' is taken as COMMAND (options end at the first word that is not one, as taskset's do); to give it as an option, put it before: nvtaskset --dry-run --gpu 1 -c 0-3
-c 0-3 -n 4 --exclude-running ./x|'-n' after '0-3' is taken as COMMAND (options end at the first word that is not one, as taskset's do); put before, it would be refused too: -c, -g and -n exclude each other
-p -c 9353 --all-tasks|'--all-tasks' after '9353' is taken as PID (options end at the first word that is not one, as taskset's do); to give it as an option, put it before: nvtaskset --all-tasks -p -c 9353
-c 0-3 --dry true|'--dry' after '0-3' is taken as COMMAND (options end at the first word that is not one, as taskset's do); to give it as an option, put it before: nvtaskset --dry -c 0-3 true
-c 0-3 --no-mp --dry true|'--no-mp' after '0-3' is taken as COMMAND (options end at the first word that is not one, as taskset's do); to give it as an option, put it before: nvtaskset --no-mp --dry -c 0-3 true
EOF2
	# With --json meant for -p or --dry-run, the error is JSON on stdout too.
	out=$("$NVT" --dry-run -c 0-3 --json 2>/dev/null) && rc=0 || rc=$?
	eq "$rc" 1
	has "$out" "{\"version\":2,\"error\":\"'--json' after '0-3' is taken as COMMAND"
	out=$("$NVT" -p 9353 --json 2>&1 >/dev/null) && rc=0 || rc=$?
	eq "$rc" 1
	has "$out" "nvtaskset: '--json' after '9353' is taken as PID (options end at the first word that is not one, as taskset's do); to give it as an option, put it before: nvtaskset --json -p 9353"
	# A COMMAND that is no option of ours is run as before, and so is one that abbreviates two
	# (--gp: --gpu or --gpc-list), which getopt_long would refuse as ambiguous.
	run_rc out rc "$NVT" --no-mps -c 0-3 --no-such-program
	eq "$rc" 127
	has "$out" "failed to execute --no-such-program"
	run_rc out rc "$NVT" --no-mps -c 0-3 --gp 1
	eq "$rc" 127
	eq "$out" "nvtaskset: failed to execute --gp: No such file or directory"
}

t_bad_option_after_mask_suggestion_runs() {
	# Every command line the hint suggests parses and runs (-p's on a live task); where none
	# would, the hint says why instead of suggesting one that fails.
	local args want line task
	start_loop task "$NVT" --no-mps -c all "$APP"
	task=$PID
	wait_for 10 test -s "$WORK/task.state"
	while IFS='|' read -r args want; do
		args=${args//PID/$task}
		# shellcheck disable=SC2086 # its words
		run_rc out rc "$NVT" $args
		eq "$rc" 1 "exit status of $args"
		if [ -n "$want" ]; then
			has "$out" "; put before, it would be refused too: $want"
			continue
		fi
		line=$(head -1 <<<"$out" | sed -n 's/.*; to give it as an option, put it before: nvtaskset //p')
		[ -n "$line" ] || die "no command line suggested for $args: $out"
		# shellcheck disable=SC2086 # its words
		run_rc out rc "$NVT" $line
		eq "$rc" 0 "exit status of the suggested 'nvtaskset $line' (for $args): $out"
	done <<'EOF2'
-p -c 0-3 -g 1 PID|-c, -g and -n exclude each other
-p PID -c 0-3|
-p PID -g 1|
-p PID -c 0-3 --json|
-p -c 0-3 --json PID|
-p PID --json|
-p -c PID --all-tasks|
-p --priority low PID -c 0-3|
-c 0-3 --no-mps true|
-c 0-3 -n 4 --exclude-running true|-c, -g and -n exclude each other
-c 0-3 --dry-run --json true|
-c 0-3 -p PID|
EOF2
	stop_loop task "$task"
}

t_bad_viewer_options() {
	# -l, --mps and --topology take none of a start's options (they were taken and ignored).
	run_rc out rc "$NVT" -l --no-mps
	eq "$rc" 1
	has "$out" "nvtaskset: -l takes no -c, -g, -n or --no-mps: they go with starting a command, and -c, -g and -n with -p too (-l shows every task's TPCs as lists)"
	run_rc out rc "$NVT" -l -g
	has "$out" "nvtaskset: -l takes no -c, -g, -n or --no-mps"
	run_rc out rc "$NVT" --topology -c
	eq "$rc" 1
	has "$out" "nvtaskset: --topology and --calibrate take no -c, -g, -n or --no-mps"
	run_rc out rc "$NVT" --mps status --no-mps
	has "$out" "nvtaskset: --mps takes no -c, -g, -n or --no-mps"
}

t_bad_claim_timeout_dry_run() {
	# --dry-run refuses a bad NVTASKSET_CLAIM_TIMEOUT as a start does.
	run_rc out rc env NVTASKSET_CLAIM_TIMEOUT=0 "$NVT" --dry-run -n 4 --exclude-running
	eq "$rc" 1
	eq "$out" "nvtaskset: NVTASKSET_CLAIM_TIMEOUT must be 1-3600 seconds, not '0'"
	run_rc out rc env NVTASKSET_CLAIM_TIMEOUT=0 "$NVT" --no-mps -n 4 --exclude-running "$APP" launch 1
	eq "$out" "nvtaskset: NVTASKSET_CLAIM_TIMEOUT must be 1-3600 seconds, not '0'"
}

t_bad_stdout_write_error() {
	# As taskset's: output that cannot be written (a full device) is an error, exit 1.
	local what
	for what in --help --version --topology "--profile --help" "--plan --help"; do
		# shellcheck disable=SC2086 # its words
		out=$("$NVT" $what 2>&1 >/dev/full) && rc=0 || rc=$?
		eq "$rc" 1 "exit status of $what >/dev/full"
		has "$out" "nvtaskset: write error"
	done
	out=$("$NVT" --help 2>&1 >/dev/null) && rc=0 || rc=$?
	eq "$rc" 0 "exit status of --help >/dev/null"
	eq "$out" "" "its standard error"
}
t_bad_two_pids() {
	# -p A B, A a running task's PID: refused (it would give B the mask 0xA), nothing changed;
	# written 0xA it is a mask, and digits that are no task's PID stay a mask (taskset's).
	local a b
	start_loop tpa "$NVT" --no-mps -c 0-3 "$APP"
	a=$PID
	start_loop tpb "$NVT" --no-mps -c 4-7 "$APP"
	b=$PID
	wait_file "$WORK/tpa.state" "0-3"
	wait_file "$WORK/tpb.state" "4-7"
	run_rc out rc "$NVT" -p "$a" "$b"
	eq "$rc" 1 "$out"
	eq "$out" "nvtaskset: '$a' is the PID of a running task, and -p takes one PID: to give pid $b the TPC mask $a (hexadecimal), write it 0x$a"
	eq "$("$NVT" -p -c "$b")" "pid $b's current TPC list: 4-7"
	run_rc out rc "$NVT" -p 11 "$b"
	eq "$rc" 0 "$out"
	has "$out" "pid $b's new TPC mask: 11"
	stop_loop tpa "$a"
	stop_loop tpb "$b"
}
