#!/usr/bin/env bash
# nvtaskset's test suite: unit tests, the parser fuzz target, and end-to-end
# tests of the real CLI and the real shim against the fake libcuda.so.1.
# Needs no GPU. Prints one line per test as each ends (with its seconds) and
# "N passed, M failed" last; exits non-zero if any test failed. Run it through
# `make check`.
#
# Usage: tests/run-tests.sh [-jN] [NAME...]   (default: every test, one at a time)
# NVT_TEST_KEEP=DIR keeps each failed test's directory, its whole log in it, in DIR
# (made if missing), as DIR/NAME.XXXXXX, and names it under the test's FAIL line.
#
# Each test runs in a directory of its own ($WORK: its run directory, MPS pipe
# and log directories and calibration cache), so that -jN runs N at once.
# Over 500 lines on purpose: the helpers every test calls and the runner that reaps what they
# start are one shell, the one the suites are sourced into.
set -u
ROOT=$(cd "$(dirname "$0")/.." && pwd)
# The build tree: what the build made (layers.sh, package.sh and try.sh read it).
B=$ROOT/build
# The control segment's layout version, as the header says.
SEG_VERSION=$(sed -n 's/^#define NVT_SEG_VERSION \([0-9]*\)u$/\1/p' "$ROOT/src/nvtaskset.h")

JOBS=1 LIST=0
case ${1:-} in
-j) JOBS=$2 && shift 2 ;;
-j*) JOBS=${1#-j} && shift ;;
--list) LIST=1 && shift ;; # the names of the tests the suite runs, one a line; runs none
esac
[[ "$JOBS" =~ ^[1-9][0-9]*$ ]] || { echo "usage: tests/run-tests.sh [-jN | --list] [NAME...]" >&2; exit 2; }
# KEEP: where a failed test's directory goes (NVT_TEST_KEEP; keep_work), as an absolute path:
# empty, none is kept.
KEEP=${NVT_TEST_KEEP:-}
if [ -n "$KEEP" ] && ! { mkdir -p -- "$KEEP" && KEEP=$(cd -- "$KEEP" && pwd); }; then
	echo "tests/run-tests.sh: cannot make NVT_TEST_KEEP's directory $NVT_TEST_KEEP" >&2
	exit 2
fi

# The user the suite runs as (root, or an ordinary user: only the tests of other users skip
# for one), as -l names it and as run directories are named (nvtaskset-UID).
ME=$(id -un 2>/dev/null || id -u)
ME_UID=$(id -u)
# The suite's directory; each test's $WORK is $TOP/NAME (set_work).
TOP=$(mktemp -d /tmp/nvtaskset-test.XXXXXX)
chmod 755 "$TOP"
# The programs the tests run, and the scripts of tests/ they hand to programs: the
# checkout's, or, where other users cannot reach the checkout (a clone in a private
# directory, a umask of 077), a copy that they can: the tests that run something as another
# user (as_user) need it. The copy is $TOP/.tree (build/'s programs and libraries, tests/),
# owned by root, world-readable, and removed with $TOP at the end.
RUN=$ROOT
# shellcheck source=tests/share-build.sh
. "$ROOT/tests/share-build.sh"
# (Not for --list: its output is the names alone.)
if ((!LIST)) && [ "$(id -u)" == 0 ] && command -v setpriv >/dev/null && [ -x "$B/bin/nvtaskset" ] &&
	! reachable_by 65534 "$ROOT"; then
	RUN=$TOP/.tree
	share_build "$ROOT" "$RUN" || echo "warning: copying the build for other users' tests to $RUN failed"
	reachable_by 65534 "$RUN" ||
		echo "warning: uid 65534 cannot reach $RUN: the tests of other users skip"
	echo "The checkout is not reachable by other users: their tests run a copy, $RUN"
fi
T=$RUN/build/test
NVT=$RUN/build/bin/nvtaskset
SHIM=$RUN/build/lib/nvtaskset/libnvtaskset.so
WRAPDIR=$RUN/build/lib/nvtaskset/wrapper
FAKEDIR=$T/fake
APP=$T/fakeapp-dlopen
LINKED=$T/fakeapp-linked
# The end of -p's message for a process that runs without nvtaskset: the wrapper beside the
# command's shim.
WRAPPER_HINT="a program started elsewhere, e.g. by a service, can be moved with -p if it starts \
with the drop-in wrapper: LD_LIBRARY_PATH=$(realpath "$WRAPDIR"), see nvtaskset(1)"
# The fake MPS control daemon's directory, and the tests' helper scripts.
FAKEBIN=$RUN/tests/fake/bin
HELPERS=$RUN/tests/e2e/helpers
export LD_LIBRARY_PATH=$FAKEDIR
export NVTASKSET_DRIVER_TIMEOUT=20
unset NVTASKSET_QUIET LD_PRELOAD CUDA_DEVICE_MAX_CONNECTIONS NVTASKSET_PARTITION CUDA_VISIBLE_DEVICES CUDA_DEVICE_ORDER
unset NVTASKSET_SHIM
for v in $(env | sed -n 's/^\(FAKECUDA_[A-Z_]*\)=.*/\1/p'); do unset "$v"; done
# python3 as the tests call it, without a version manager's shim before it (pyenv's
# costs seconds a call on a loaded machine, and tests call python3 hundreds of times).
mkdir "$TOP/bin"
if PY=$(python3 -c 'import sys; print(sys.executable)' 2>/dev/null) && [ -x "$PY" ]; then
	ln -s "$PY" "$TOP/bin/python3"
	PATH=$TOP/bin:$PATH
fi
# set_work DIR: makes DIR a test's directory and points the environment at it.
set_work() {
	WORK=$1
	export NVTASKSET_RUNDIR=$WORK/run
	export CUDA_MPS_PIPE_DIRECTORY=$WORK/mps-pipe CUDA_MPS_LOG_DIRECTORY=$WORK/mps-log
	export NVTASKSET_CACHE_DIR=$WORK/cache
	# The fake driver's GPUs only: a machine's own (its /proc/driver/nvidia) would be
	# listed beside the fake libcuda's, which knows none of them. Tests that give GPUs
	# of their own point it elsewhere.
	export NVTASKSET_PROC_NVIDIA=$WORK/no-proc-nvidia
	# Every program the test starts carries its directory's name (reap finds what it left).
	export NVT_TEST_WORK=$WORK/
}
# Hang guards count an idle machine's seconds: a real interval counts as itself divided by the
# load per CPU (the 1-minute load average over the CPUs, at least 1), so that a loaded machine
# stretches them as it stretches the work they wait for, and only a hang reaches them. No test
# bounds how long something takes (HACKING.md, "Tests").
NCPU=$(nproc 2>/dev/null || echo 1)
# load_x100 VAR: sets VAR to the load per CPU now, times 100, at least 100.
load_x100() {
	local load _
	read -r load _ </proc/loadavg 2>/dev/null || load=0.00
	load=${load//[!0-9]/}
	load=$((10#$load / NCPU))
	printf -v "$1" '%s' $((load > 100 ? load : 100))
}
# idle_spent SPENT AT: adds the idle machine's microseconds since AT (microseconds of
# EPOCHREALTIME) to SPENT, and sets AT to now.
idle_spent() {
	local now=${EPOCHREALTIME//[!0-9]/} x100
	load_x100 x100
	printf -v "$1" '%s' $((${!1} + (now - ${!2}) * 100 / x100))
	printf -v "$2" '%s' "$now"
}
# HANG_S: the idle machine's seconds after which a command that should end is taken to hang
# (run_rc). Generous on purpose: it catches a command that waits forever. Each test's HANG
# is HANG_S scaled by the load per CPU at its start (run_test), for timeout(1).
HANG_S=${NVT_TEST_HANG:-120}
HANG=$HANG_S
# WAIT_SCALE: poll_until, wait_file and wait_for wait this many times the seconds a test
# names (of an idle machine's time), so that a test that would pass never fails on time.
WAIT_SCALE=${NVT_TEST_WAIT_SCALE:-4}
# TEST_TIMEOUT: the idle machine's seconds after which a test is taken to hang (150 times
# WAIT_SCALE: the longest test takes about 40 s alone on 2 idle cores).
TEST_TIMEOUT=${TEST_TIMEOUT:-$((150 * WAIT_SCALE))}

PASS=0 FAIL=0 SKIP=0
FAILED=""
# Per suite: the tests run, those skipped, and whether a skip said anything but "needs root".
declare -A RAN_IN=() SKIPPED_IN=() SKIP_NOT_ROOT=()

# Stops a fake MPS daemon a test left running (it quits when this file appears).
stop_fake_mps() {
	local i dir
	for dir in "$WORK"/mps-pipe*; do
		# (A FIFO a test put there is no daemon's: waiting for it cost 2 s a test.)
		[ -f "$dir/nvidia-cuda-mps-control.pid" ] || continue
		touch "$dir/quit"
		for ((i = 0; i < 100; i++)); do
			[ -e "$dir/nvidia-cuda-mps-control.pid" ] || break
			sleep 0.02
		done
	done
}
# Stops the priority agents a test left running (started by a command, they
# carry no $WORK in their command line): each named by a pid file of the run
# directories (docs/priorities.md), and waits for them to end.
stop_agents() {
	local f pid i
	for f in "$NVTASKSET_RUNDIR"/nvtaskset-*/agent.pid; do
		[ -f "$f" ] || continue
		pid=$(cut -d' ' -f1 "$f")
		[ -n "$pid" ] && kill -TERM "$pid" 2>/dev/null || continue
		for ((i = 0; i < 100; i++)); do
			kill -0 "$pid" 2>/dev/null || break
			sleep 0.02
		done
		kill -KILL "$pid" 2>/dev/null || true
	done
	return 0
}
# Gives an MPS test a pipe directory of its own.
own_mps_dirs() {
	export CUDA_MPS_PIPE_DIRECTORY=$WORK/mps-pipe.$1 CUDA_MPS_LOG_DIRECTORY=$WORK/mps-log.$1
	mkdir -p "$CUDA_MPS_PIPE_DIRECTORY"
}
# An empty directory outside /tmp, on which tests that give a command a
# private /tmp hold the real one (tests/e2e/helpers/in-private-tmp). The
# checkout itself may lie under /tmp (CI's clones can).
TMP_HOLD=$(mktemp -d /var/tmp/nvtaskset-hold.XXXXXX 2>/dev/null || mktemp -d /dev/shm/nvtaskset-hold.XXXXXX)
# procs_of DIR [PGID]: sets PROCS to the processes that are DIR's: that name DIR/ in their
# command line or environment (a test's programs inherit NVT_TEST_WORK; the MPS daemon,
# started with a clean environment, keeps its directories' names), or that are in process
# group PGID (a test's shells that fork without exec), however they detached (a new session,
# a double fork, a parent gone); zombies, and processes already exiting, are none.
# PROCS_WHAT: the first few's command lines, shown (shown_text: any program may name itself
# so). Reads /proc with builtins only: a process it started would carry the name itself.
procs_of() {
	local want=$1/ group=${2:-none} dir pid stat flags words env
	PROCS=() PROCS_WHAT=""
	for dir in /proc/[0-9]*; do
		pid=${dir#/proc/}
		[ "$pid" != "$BASHPID" ] && read -r stat 2>/dev/null <"$dir/stat" || continue
		stat=${stat##*) } # state, ppid, pgrp, session, tty, tpgid, flags, ...
		[ "${stat%% *}" != Z ] || continue
		read -r _ _ _ _ _ _ flags _ <<<"$stat"
		((!(flags & 4))) || continue # PF_EXITING: killed already, on its way out
		words=() env=()
		mapfile -d '' -t words 2>/dev/null <"$dir/cmdline" || continue # (ended)
		[ ${#words[@]} -gt 0 ] || continue # a kernel thread, or a process ending
		# (Unreadable: another user's process, as an ordinary user; or ended.)
		mapfile -d '' -t env 2>/dev/null <"$dir/environ" || env=()
		read -r _ _ stat _ <<<"$stat"
		[[ "$stat" == "$group" || "${words[*]}"$'\n'"${env[*]}" == *"$want"* ]] || continue
		killed "$pid" || PROCS+=("$pid")
		((${#PROCS[@]} > 5)) && continue
		shown_text "${words[*]:0:6}"
		PROCS_WHAT+="    pid $pid: $SHOWN"$'\n'
	done
}
# shown_text TEXT: sets SHOWN to TEXT with each byte but printable ASCII as '?': a command line
# that a test's program wrote (a hostile name's escapes, C0, DEL, C1 as UTF-8, text-direction
# overrides) reaches the terminal of whoever runs the suite as plain text.
shown_text() {
	local LC_ALL=C # (bytes, whatever the caller's locale)
	SHOWN=${1//[^ -~]/?}
}
# killed PID: a SIGKILL waits for process PID (sent, it has not run since: on a loaded machine,
# a while), or PID took it since procs_of read its state and is on its way out (a zombie, or
# PF_EXITING); it is gone at its next turn. The pending signal is read first: a process that
# took its SIGKILL after that read is exiting by the next (a test's watchdog's sleep, killed as
# the test ended, was otherwise counted as left when it ran between procs_of's two reads).
killed() {
	local key value stat flags
	{
		while read -r key value; do
			case $key in
			SigPnd: | ShdPnd:) (((16#$value >> 8) & 1)) && return 0 ;;
			esac
		done <"/proc/$1/status"
		read -r stat <"/proc/$1/stat"
	} 2>/dev/null || return 0 # (gone)
	stat=${stat##*) }
	read -r _ _ _ _ _ _ flags _ <<<"$stat"
	[ "${stat%% *}" == Z ] || ((flags & 4))
}
# reap DIR [PGID]: kills procs_of DIR [PGID], in rounds until one finds none (a loop that
# forks); false if some are left after 100. REAPED: how many; REAPED_WHAT: the first few.
reap() {
	local round pid
	local -A killed=()
	REAPED_WHAT=""
	for ((round = 0; round < 100; round++)); do
		procs_of "$@"
		[ ${#PROCS[@]} -gt 0 ] || break
		for pid in "${PROCS[@]}"; do
			kill -KILL "$pid" 2>/dev/null && killed[$pid]=1
		done
		[ -n "$REAPED_WHAT" ] || REAPED_WHAT=$PROCS_WHAT
		sleep 0.05 # (killed: gone from /proc, or zombies, in a moment)
	done
	REAPED=${#killed[@]}
	[ ${#PROCS[@]} == 0 ]
}
# unmount_under DIR: unmounts what a test mounted below DIR (as root, nvtaskset --cdi mounts a
# tmpfs on the run directory it gives containers), deepest first.
unmount_under() {
	local m
	[ "$(id -u)" == 0 ] || return 0
	awk -v d="$1/" 'index($5, d) == 1 {print $5}' /proc/self/mountinfo | sort -r | while read -r m; do
		umount -l "$m" 2>/dev/null
	done
	return 0
}
cleanup() {
	local dir
	for dir in "$TOP"/*/; do
		set_work "${dir%/}"
		stop_fake_mps
		stop_agents
	done
	reap "$TOP"
	unmount_under "$TOP"
	rm -rf "$TOP"
	rmdir "$TMP_HOLD" 2>/dev/null
}
trap cleanup EXIT

# ---- Helpers (used inside tests, which run in subshells under set -e) ----

die() {
	echo "FAILED: $*"
	exit 1
}
# skip WHY: the test cannot run here; it says why (the runner counts skips per suite).
skip() {
	[ -n "$*" ] || die "a test skipped without saying why"
	echo "SKIPPED: $*"
	exit 77
}
# system_driver: true where the dynamic linker finds a libcuda.so.1 of the machine's own (a
# GPU machine): a process cannot be kept from the driver there by LD_LIBRARY_PATH alone.
system_driver() { /sbin/ldconfig -p 2>/dev/null | grep -q '[[:space:]]libcuda\.so\.1[[:space:]]'; }
eq() { # eq GOT WANT [WHAT]
	[ "$1" == "$2" ] || die "${3:-value}: expected '$2', got '$1'"
}
has() { # has TEXT NEEDLE
	[[ "$1" == *"$2"* ]] || die "expected '$2' in: $1"
}
hasnt() {
	[[ "$1" != *"$2"* ]] || die "did not expect '$2' in: $1"
}
# run_rc VAR_OUT VAR_RC CMD...: runs CMD ($HANG s limit: 124 if it hangs) capturing stdout+stderr
# and status.
run_rc() {
	local __out __rc
	__out=$(timeout "$HANG" "${@:3}" 2>&1) && __rc=0 || __rc=$?
	printf -v "$1" '%s' "$__out"
	printf -v "$2" '%s' "$__rc"
}
# poll_until SECONDS CMD...: until CMD succeeds (every 20 ms): true, or false after SECONDS
# times WAIT_SCALE of an idle machine's time (a hang guard, never a bound on how long it takes).
poll_until() {
	local limit=$(($1 * WAIT_SCALE * 1000000)) spent=0 at=${EPOCHREALTIME//[!0-9]/}
	shift
	while :; do
		"$@" && return 0
		idle_spent spent at
		((spent <= limit)) || return 1
		sleep 0.02
	done
}
# wait_for SECONDS CMD...: poll_until, or die.
wait_for() {
	poll_until "$@" || die "timed out waiting for: ${*:2}"
}
file_reads() { [ "$(cat "$1" 2>/dev/null)" == "$2" ]; }
wait_file() { # wait_file PATH CONTENT [SECONDS]: poll_until SECONDS (10) for PATH to read CONTENT
	poll_until "${3:-10}" file_reads "$1" "$2" ||
		die "timed out waiting for $1 to read '$2' (it reads '$(cat "$1" 2>/dev/null)')"
}
# export_waits: these waits for a script a test runs in a bash of its own (in a namespace of
# its own, as another user), exported to its environment with what they read.
export_waits() {
	export NCPU WAIT_SCALE
	export -f poll_until wait_for wait_file file_reads idle_spent load_x100 die is_gone
}
# start_tick PID: when PID started, in clock ticks since boot (/proc/PID/stat's 22nd field).
start_tick() { sed 's/.*) //' "/proc/$1/stat" | awk '{print $20}'; }
# tick_passed TICK: a process started now starts in a later clock tick than TICK.
tick_passed() { [ "$(sed 's/.*) //' /proc/self/stat | awk '{print $20}')" -gt "$1" ]; }
# wait_later_start PID: waits until a process started now starts later than PID did (the
# order of two start times, which clock ticks of 10 ms can make equal).
wait_later_start() { wait_for 10 tick_passed "$(start_tick "$1")"; }
# sleeps_of PID: how many times PID's main thread slept so far (its voluntary context
# switches), empty once it is gone.
sleeps_of() { awk '/^voluntary_ctxt_switches:/ {print $2}' "/proc/$1/status" 2>/dev/null || true; }
slept_or_gone() { local n; n=$(sleeps_of "$1"); [ -z "$n" ] || [ "$n" -ge "$2" ]; }
# wait_sleeps PID N: waits until PID slept N more times than now (the rounds of a loop that
# waits, counted) or is gone; the caller checks which.
wait_sleeps() {
	local from
	from=$(sleeps_of "$1")
	poll_until 10 slept_or_gone "$1" $((${from:-0} + $2)) || die "$1 slept fewer than $2 times"
}
# pgrep_here PATTERN: the PIDs pgrep -f finds of this test's processes (their environment
# names its run directory), one per line; other tests run at the same time.
pgrep_here() {
	local pid
	for pid in $(pgrep -f -- "$1"); do
		tr '\0' '\n' <"/proc/$pid/environ" 2>/dev/null | grep -qxF "NVTASKSET_RUNDIR=$NVTASKSET_RUNDIR" &&
			echo "$pid"
	done
	return 0
}
# start_loop TAG CMD...: starts "CMD loop STOP STATE" in the background; sets PID.
start_loop() {
	local tag=$1
	shift
	rm -f "$WORK/$tag.stop" "$WORK/$tag.state"
	"$@" loop "$WORK/$tag.stop" "$WORK/$tag.state" >"$WORK/$tag.out" 2>"$WORK/$tag.err" &
	PID=$!
}
# "Nothing happened", counted: a loop started with FAKEAPP_STAMP=FILE FAKEAPP_STAMP_LAUNCHES=1
# writes "NS launch" to FILE at each launch, after the state file of the launch before it.
# stamped_launches FILE: how many so far.
stamped_launches() {
	[ -e "$1" ] || { echo 0; return; }
	awk '$2 == "launch" {n++} END {print n + 0}' "$1"
}
launches_reach() { [ "$(stamped_launches "$1")" -ge "$2" ]; }
# wait_launches FILE N: waits (poll_until 10) until N launches began after this call, their
# states written (N + 2 more stamps than now: one may have been under way), or dies.
wait_launches() {
	local want=$(($(stamped_launches "$1") + $2 + 2))
	poll_until 10 launches_reach "$1" "$want" ||
		die "timed out waiting for $want launches in $1 (it has $(stamped_launches "$1"))"
}
# stamp_mark FILE: the lines FILE has now: taken before a change, for launches_unchanged. A loop
# stamps new TPCs before it writes its state file: a mark taken once the state reads them counts their stamp.
stamp_mark() { if [ -e "$1" ]; then wc -l <"$1"; else echo 0; fi; }
# launches_unchanged FILE MARK N: wait_launches FILE N, and no launch since MARK ran on other
# TPCs than the launch before it (FILE stamps no state after MARK): nothing happened.
launches_unchanged() {
	wait_launches "$1" "$3"
	eq "$(tail -n +"$(($2 + 1))" "$1" | awk '$2 != "launch"')" "" "TPCs of the launches stamped in $1"
}
is_gone() { ! kill -0 "$1" 2>/dev/null; }
stop_loop() { # stop_loop TAG PID: stops it (poll_until 5) and checks it exited 0
	local rc
	touch "$WORK/$1.stop"
	if ! poll_until 5 is_gone "$2"; then
		kill -KILL "$2"
		die "task $2 did not stop"
	fi
	wait "$2" && rc=0 || rc=$?
	[ "$rc" == 0 ] || die "task $2 exited $rc: $(cat "$WORK/$1.out" "$WORK/$1.err")"
}
# held_by PID TPCS...: the end of a start's refusal for want of free TPCs, naming the tasks that
# hold the others (PID, TPCS in pairs, most first): "pid PID (COMMAND): TPCS, ...; --wait ...",
# COMMAND its command line as the command shows it (the first 80 bytes; no controls here).
held_by() {
	local list="" c
	while (($#)); do
		c=$(tr '\0' ' ' <"/proc/$1/cmdline")
		c=${c% }
		list+="${list:+, }pid $1 (${c:0:80}): $2"
		shift 2
	done
	printf ', the others held by %s; --wait waits until they free enough' "$list"
}
# seg_file PID: the control segment of PID (nvtaskset.h): <rundir>/nvtaskset-UID/nvtaskset.PIDNS.PID,
# PID as its own namespace numbers it (a container's task: in its container's run directory,
# <rundir>/containers/ID/run, where that holds it); for a process that is gone, any user's file
# of that PID in ours.
seg_file() {
	local uid ns nspid f
	if uid=$(awk '/^Uid:/ {print $3}' "/proc/$1/status" 2>/dev/null) && [ -n "$uid" ] &&
		ns=$(stat -L -c %i "/proc/$1/ns/pid" 2>/dev/null); then
		nspid=$(awk '/^NSpid:/ {print $NF}' "/proc/$1/status")
		for f in "$NVTASKSET_RUNDIR"/containers/*/run/nvtaskset-"$uid/nvtaskset.$ns.${nspid:-$1}"; do
			[ -e "$f" ] && echo "$f" && return
		done
		echo "$NVTASKSET_RUNDIR/nvtaskset-$uid/nvtaskset.$ns.${nspid:-$1}"
		return
	fi
	ns=$(stat -L -c %i /proc/self/ns/pid)
	for f in "$NVTASKSET_RUNDIR"/nvtaskset-*/nvtaskset."$ns.$1"; do
		echo "$f"
		return
	done
}
# runs_as PID UID: process PID's real user is UID (it went through setuid).
runs_as() { [ "$(awk '/^Uid:/ {print $2}' "/proc/$1/status" 2>/dev/null)" == "$2" ]; }
# has_segment PID: PID's control segment (seg_file) exists.
has_segment() { [ -e "$(seg_file "$1")" ]; }
# syscalls_per_launch FEW MANY RECORD [ENV...]: runs the fake app under the shim
# with NVTASKSET_PARTITION=RECORD for FEW and for MANY launches under strace;
# dies if MANY launches made more system calls than FEW. Output: $WORK/many.out.
syscalls_per_launch() {
	local few_n=$1 many_n=$2 record=$3 few many
	shift 3
	command -v strace >/dev/null || skip "needs strace"
	few=$(env "$@" NVTASKSET_PARTITION="$record" LD_PRELOAD="$SHIM" \
		strace -f -c -o "$WORK/few.st" "$APP" launch "$few_n" >/dev/null 2>&1; tail -1 "$WORK/few.st")
	many=$(env "$@" NVTASKSET_PARTITION="$record" LD_PRELOAD="$SHIM" \
		strace -f -c -o "$WORK/many.st" "$APP" launch "$many_n" >"$WORK/many.out" 2>&1; tail -1 "$WORK/many.st")
	few=$(awk '{print $4}' <<<"$few")
	many=$(awk '{print $4}' <<<"$many")
	echo "system calls: $few_n launches $few, $many_n launches $many"
	[ "$many" -le "$few" ] || die "launches make system calls: $few for $few_n, $many for $many_n"
}
# row_re PID USER: a regular expression for the start of -l's row of task PID, up to its TPCS
# column (PID, PPID, USER, GPU and LAUNCHES before it).
row_re() { echo "^ *$1 +[0-9-]+ +$2 +[-0-9?,]+ +[-0-9]+ +"; }
# fake_uuid [DEVICE]: the UUID the fake driver gives a device (default 0).
fake_uuid() { "$APP" uuids | awk -v d="${1:-0}" '$1 == d {print $2}'; }
# partition_env LIST TOPOLOGY [DEVICE]: an NVTASKSET_PARTITION record for one fake GPU.
partition_env() { echo "$(fake_uuid "${3:-0}") $1 $2"; }
# tpc_count LIST: how many TPCs a TPC list names.
tpc_count() {
	python3 -c 'import sys
n = 0
for item in sys.argv[1].split(","):
    a, _, b = item.partition("-")
    n += int(b or a) - int(a) + 1
print(n)' "$1"
}
# disjoint_lists LIST...: dies unless the TPC lists share no TPC, each of them non-empty.
disjoint_lists() {
	python3 - "$@" <<'PY' || die "TPC lists overlap: $*"
import sys
def tpcs(text):
    out = set()
    for item in text.split(","):
        a, _, b = item.partition("-")
        out.update(range(int(a), int(b or a) + 1))
    return out
seen = set()
for text in sys.argv[1:]:
    t = tpcs(text)
    if not t or seen & t:
        sys.exit(1)
    seen |= t
PY
}

# ---- The tests: every t_NAME function in tests/e2e/*.sh ------------------

# SUITE_OF[NAME]: the file of tests/e2e that defines t_NAME (its suite).
declare -A SUITE_OF=()
for f in "$ROOT"/tests/e2e/*.sh; do
	defined=$(declare -F | sed -n 's/^declare -f t_//p' | sort)
	# shellcheck source=/dev/null
	. "$f"
	for name in $(comm -13 <(echo "$defined") <(declare -F | sed -n 's/^declare -f t_//p' | sort)); do
		SUITE_OF[$name]=${f##*/}
	done
done
# NVT_TEST_EXTRA=FILE: more t_NAME functions (tests/e2e/harness.sh plants tests in one).
if [ -n "${NVT_TEST_EXTRA:-}" ]; then
	# shellcheck source=/dev/null
	. "$NVT_TEST_EXTRA"
fi

# ---- Driver -------------------------------------------------------------------

# Most tests want the default fake GPU calibrated already, as after a first use:
# calibrated once, and copied into each test's cache.
# (Under the tests' module description, none: a machine's own kernel module would be part
# of the record, and each test would calibrate again.)
# (--list runs no test: it calibrates nothing)
((LIST)) || NVTASKSET_CACHE_DIR=$TOP/cache NVTASKSET_PROC_NVIDIA=$TOP/no-proc-nvidia "$NVT" --calibrate \
	>/dev/null 2>&1 || echo "warning: calibrating the fake GPU failed" >&2

# run_test NAME: runs t_NAME in a directory of its own, within TEST_TIMEOUT, then
# ends what it left behind (MPS daemons, agents, processes naming its directory).
# Its output goes to $TOP/NAME/log, its status to $TOP/NAME/rc.
run_test() {
	local name=$1 test_pid watchdog rc start=$SECONDS x100
	set_work "$TOP/$1"
	mkdir -m 755 "$WORK"
	mkdir -m 1777 "$NVTASKSET_RUNDIR"
	cp -a "$TOP/cache" "$NVTASKSET_CACHE_DIR" 2>/dev/null || mkdir "$NVTASKSET_CACHE_DIR"
	load_x100 x100
	HANG=$((HANG_S * x100 / 100))
	# In a process group of its own (set -m), which reap ends after it with what it left.
	set -m
	(
		set -e
		"t_$name"
	) </dev/null >>"$WORK/log" 2>&1 & # (>>: the watchdog's line is not written over)
	test_pid=$!
	# A test that hangs fails, and the suite goes on: nothing waits forever.
	# (In a process group of its own too, killed whole with its sleep: no message.)
	(
		spent=0 at=${EPOCHREALTIME//[!0-9]/}
		while ((spent < TEST_TIMEOUT * 1000000)); do
			sleep 5 || exit 0
			idle_spent spent at
		done
		echo "FAILED: no end after $TEST_TIMEOUT s of an idle machine's time ($((SECONDS - start)) s)" >>"$WORK/log"
		kill -KILL -- "-$test_pid" 2>/dev/null # its process group
	) 2>/dev/null &
	watchdog=$!
	set +m
	wait "$test_pid"
	rc=$?
	kill -KILL -- "-$watchdog" 2>/dev/null
	wait "$watchdog" 2>/dev/null
	stop_fake_mps
	stop_agents
	# Whatever else it started ends now, pass or fail (tests/e2e/harness.sh).
	reap "$WORK" "$test_pid" || echo "FAILED: processes of the test still start after 100 rounds of kills" >>"$WORK/log"
	[ "$REAPED" == 0 ] || printf 'the suite ended %d processes the test left, among them:\n%s' \
		"$REAPED" "$REAPED_WHAT" >"$WORK/left"
	wait 2>/dev/null
	unmount_under "$WORK"
	echo "$((SECONDS - start))" >"$WORK/secs"
	echo "$rc" >"$WORK/rc"
}
# keep_work NAME: moves failed test NAME's directory out of $TOP (removed at the end) into
# $KEEP, and names it, where NVT_TEST_KEEP asks for it.
keep_work() {
	local kept
	[ -n "$KEEP" ] || return 0
	if kept=$(mktemp -d "$KEEP/$1.XXXXXX") && mv -T "$TOP/$1" "$kept"; then
		echo "    its directory, kept: $kept"
	else
		echo "    keeping its directory in $KEEP failed"
	fi
}
# report NAME: one line for the test that ended, and the end of its log if it failed.
report() {
	local name=$1 rc log=$TOP/$1/log secs suite
	rc=$(cat "$TOP/$name/rc" 2>/dev/null || echo 1)
	secs=$(cat "$TOP/$name/secs" 2>/dev/null || echo "?")
	suite=${SUITE_OF[$name]:-?}
	RAN_IN[$suite]=$((${RAN_IN[$suite]:-0} + 1))
	if [ "$rc" == 77 ]; then
		SKIPPED_IN[$suite]=$((${SKIPPED_IN[$suite]:-0} + 1))
		[[ "$(tail -1 "$log")" == "SKIPPED: needs root"* ]] || SKIP_NOT_ROOT[$suite]=1
	fi
	if [ "$rc" == 0 ]; then
		PASS=$((PASS + 1))
		echo "PASS $name ($secs s)"
		[ ! -f "$TOP/$name/left" ] || sed 's/^/    /' "$TOP/$name/left"
	elif [ "$rc" == 77 ]; then
		SKIP=$((SKIP + 1))
		echo "SKIP $name ($(tail -1 "$log"))"
	else
		FAIL=$((FAIL + 1))
		FAILED="$FAILED $name"
		echo "FAIL $name ($secs s)"
		sed 's/^/    /' "$log" | tail -40
		[ ! -f "$TOP/$name/left" ] || sed 's/^/    /' "$TOP/$name/left"
		keep_work "$name"
	fi
	# What a passing test left is of no use; a failed one's log is printed above (and the
	# whole directory kept where NVT_TEST_KEEP asks).
	rm -rf "${TOP:?}/$name"
}

ALL=$(declare -F | sed -n 's/^declare -f t_//p')
if ((LIST)); then
	echo "$ALL"
	exit 0
fi
declare -A running=()
# shellcheck disable=SC2048 # test names split on purpose (no name holds a space)
for name in ${*:-$ALL}; do
	declare -F "t_$name" >/dev/null || { echo "no test named $name" >&2; FAIL=$((FAIL + 1)); continue; }
	while [ ${#running[@]} -ge "$JOBS" ]; do
		wait -n -p ended "${!running[@]}"
		report "${running[$ended]}"
		unset "running[$ended]"
	done
	run_test "$name" &
	running[$!]=$name
done
while [ ${#running[@]} -gt 0 ]; do
	wait -n -p ended "${!running[@]}"
	report "${running[$ended]}"
	unset "running[$ended]"
done
# A suite all of whose tests skipped is no pass (as in the kernel's selftests): it fails the run,
# unless this is an ordinary user's run and every skip said it needs root.
for suite in $(printf '%s\n' "${!SKIPPED_IN[@]}" | sort); do
	echo "skipped in $suite: ${SKIPPED_IN[$suite]} of ${RAN_IN[$suite]}"
	[ "${SKIPPED_IN[$suite]}" == "${RAN_IN[$suite]}" ] || continue
	if [ "$(id -u)" != 0 ] && [ -z "${SKIP_NOT_ROOT[$suite]:-}" ]; then
		echo "every test of $suite skipped: they need root"
		continue
	fi
	echo "FAIL $suite: every test of it skipped"
	FAIL=$((FAIL + 1))
	FAILED="$FAILED $suite"
done
[ -z "$FAILED" ] || echo "failed:$FAILED"
echo "$PASS passed, $FAIL failed, $SKIP skipped"
[ $FAIL == 0 ]
