#!/usr/bin/env bash
# nvtaskset's test suite: unit tests, the parser fuzz target, and end-to-end
# tests of the real CLI and the real shim against the fake libcuda.so.1.
# Needs no GPU. Prints one line per test as each ends (with its seconds) and
# "N passed, M failed" last; exits non-zero if any test failed. Run it through
# `make check`.
#
# Usage: tests/run-tests.sh [-jN] [NAME...]   (default: every test, one at a time)
#
# Each test runs in a directory of its own ($WORK: its run directory, MPS pipe
# and log directories and calibration cache), so that -jN runs N at once.
set -u
ROOT=$(cd "$(dirname "$0")/.." && pwd)
B=$ROOT/build
T=$B/test
NVT=$B/bin/nvtaskset
SHIM=$B/lib/nvtaskset/libnvtaskset.so
WRAPDIR=$B/lib/nvtaskset/wrapper
FAKEDIR=$T/fake
APP=$T/fakeapp-dlopen
# The end of -p's message for a process that runs without nvtaskset.
WRAPPER_HINT="a program started elsewhere, e.g. by a service, can be moved with -p if it starts \
with the drop-in wrapper: LD_LIBRARY_PATH=$(sed -n 's/^#define NVT_INSTALL_LIBDIR "\(.*\)"$/\1/p' \
	"$B/gen/install_paths.h")/wrapper, see nvtaskset(1)"
LINKED=$T/fakeapp-linked
# The control segment's layout version, as the header says.
SEG_VERSION=$(sed -n 's/^#define NVT_SEG_VERSION \([0-9]*\)u$/\1/p' "$ROOT/src/nvtaskset.h")

JOBS=1
case ${1:-} in
-j) JOBS=$2 && shift 2 ;;
-j*) JOBS=${1#-j} && shift ;;
esac
[[ "$JOBS" =~ ^[1-9][0-9]*$ ]] || { echo "usage: tests/run-tests.sh [-jN] [NAME...]" >&2; exit 2; }

# The suite's directory; each test's $WORK is $TOP/NAME (set_work).
TOP=$(mktemp -d /tmp/nvtaskset-test.XXXXXX)
chmod 755 "$TOP"
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
}
# HANG: the seconds after which a command that should end is taken to hang
# (run_rc). Generous on purpose: it catches a command that waits forever, and
# a loaded machine (other suites, -jN) may take many times the usual seconds.
HANG=${NVT_TEST_HANG:-120}
# WAIT_SCALE: wait_file and wait_for wait this many times the seconds a test
# names, so that a loaded machine does not fail a test that would pass.
WAIT_SCALE=${NVT_TEST_WAIT_SCALE:-4}
# TEST_TIMEOUT: the seconds after which a test is taken to hang (150 times WAIT_SCALE: the
# longest test takes about 40 s alone on 2 idle cores).
TEST_TIMEOUT=${TEST_TIMEOUT:-$((150 * WAIT_SCALE))}

PASS=0 FAIL=0 SKIP=0
FAILED=""

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
cleanup() {
	local dir
	for dir in "$TOP"/*/; do
		set_work "${dir%/}"
		stop_fake_mps
		stop_agents
	done
	pkill -KILL -f "$TOP/" 2>/dev/null
	rm -rf "$TOP"
	rmdir "$TMP_HOLD" 2>/dev/null
}
trap cleanup EXIT

# ---- Helpers (used inside tests, which run in subshells under set -e) ----

die() {
	echo "FAILED: $*"
	exit 1
}
skip() {
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
wait_file() { # wait_file PATH CONTENT [SECONDS]: SECONDS (10) times WAIT_SCALE at most
	local end=$((SECONDS + ${3:-10} * WAIT_SCALE))
	while ((SECONDS <= end)); do
		[ "$(cat "$1" 2>/dev/null)" == "$2" ] && return 0
		sleep 0.02
	done
	die "timed out waiting for $1 to read '$2' (it reads '$(cat "$1" 2>/dev/null)')"
}
# wait_for SECONDS CMD...: until CMD succeeds (every 20 ms), SECONDS times WAIT_SCALE at most, or die.
wait_for() {
	local end=$((SECONDS + $1 * WAIT_SCALE))
	shift
	while ((SECONDS <= end)); do
		"$@" && return 0
		sleep 0.02
	done
	die "timed out waiting for: $*"
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
stop_loop() { # stop_loop TAG PID: stops it (5 s limit) and checks it exited 0
	local i rc
	touch "$WORK/$1.stop"
	for ((i = 0; i < 250 * WAIT_SCALE; i++)); do
		kill -0 "$2" 2>/dev/null || break
		sleep 0.02
	done
	if kill -0 "$2" 2>/dev/null; then
		kill -KILL "$2"
		die "task $2 did not stop"
	fi
	wait "$2" && rc=0 || rc=$?
	[ "$rc" == 0 ] || die "task $2 exited $rc: $(cat "$WORK/$1.out" "$WORK/$1.err")"
}
# seg_file PID: the control segment of PID (nvtaskset.h): <rundir>/nvtaskset-UID/nvtaskset.PIDNS.PID,
# PID as its own namespace numbers it; for a process that is gone, any user's file of that PID in ours.
seg_file() {
	local uid ns nspid f
	if uid=$(awk '/^Uid:/ {print $3}' "/proc/$1/status" 2>/dev/null) && [ -n "$uid" ] &&
		ns=$(stat -L -c %i "/proc/$1/ns/pid" 2>/dev/null); then
		nspid=$(awk '/^NSpid:/ {print $NF}' "/proc/$1/status")
		echo "$NVTASKSET_RUNDIR/nvtaskset-$uid/nvtaskset.$ns.${nspid:-$1}"
		return
	fi
	ns=$(stat -L -c %i /proc/self/ns/pid)
	for f in "$NVTASKSET_RUNDIR"/nvtaskset-*/nvtaskset."$ns.$1"; do
		echo "$f"
		return
	done
}
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

# ---- The tests: every t_NAME function in tests/e2e/*.sh ------------------

for f in "$ROOT"/tests/e2e/*.sh; do
	# shellcheck source=/dev/null
	. "$f"
done

# ---- Driver -------------------------------------------------------------------

# Most tests want the default fake GPU calibrated already, as after a first use:
# calibrated once, and copied into each test's cache.
# (Under the tests' module description, none: a machine's own kernel module would be part
# of the record, and each test would calibrate again.)
NVTASKSET_CACHE_DIR=$TOP/cache NVTASKSET_PROC_NVIDIA=$TOP/no-proc-nvidia "$NVT" --calibrate \
	>/dev/null 2>&1 || echo "warning: calibrating the fake GPU failed"

# run_test NAME: runs t_NAME in a directory of its own, within TEST_TIMEOUT, then
# ends what it left behind (MPS daemons, agents, processes naming its directory).
# Its output goes to $TOP/NAME/log, its status to $TOP/NAME/rc.
run_test() {
	local name=$1 test_pid watchdog rc start=$SECONDS
	set_work "$TOP/$1"
	mkdir -m 755 "$WORK"
	mkdir -m 1777 "$NVTASKSET_RUNDIR"
	cp -a "$TOP/cache" "$NVTASKSET_CACHE_DIR" 2>/dev/null || mkdir "$NVTASKSET_CACHE_DIR"
	(
		set -e
		"t_$name"
	) >"$WORK/log" 2>&1 &
	test_pid=$!
	# A test that hangs fails, and the suite goes on: nothing waits forever.
	# (Its sleep killed, a test that ended in time: no message.)
	(
		sleep "$TEST_TIMEOUT" || exit 0
		echo "FAILED: no end after $TEST_TIMEOUT s" >>"$WORK/log"
		pkill -KILL -P "$test_pid" 2>/dev/null
		kill -KILL "$test_pid" 2>/dev/null
	) 2>/dev/null &
	watchdog=$!
	wait "$test_pid"
	rc=$?
	pkill -KILL -P "$watchdog" 2>/dev/null # its sleep
	kill -KILL "$watchdog" 2>/dev/null
	wait "$watchdog" 2>/dev/null
	stop_fake_mps
	stop_agents
	pkill -KILL -f "$WORK/" 2>/dev/null
	wait 2>/dev/null
	echo "$((SECONDS - start))" >"$WORK/secs"
	echo "$rc" >"$WORK/rc"
}
# report NAME: one line for the test that ended, and the end of its log if it failed.
report() {
	local name=$1 rc log=$TOP/$1/log secs
	rc=$(cat "$TOP/$name/rc" 2>/dev/null || echo 1)
	secs=$(cat "$TOP/$name/secs" 2>/dev/null || echo "?")
	if [ "$rc" == 0 ]; then
		PASS=$((PASS + 1))
		echo "PASS $name ($secs s)"
	elif [ "$rc" == 77 ]; then
		SKIP=$((SKIP + 1))
		echo "SKIP $name ($(tail -1 "$log"))"
	else
		FAIL=$((FAIL + 1))
		FAILED="$FAILED $name"
		echo "FAIL $name ($secs s)"
		sed 's/^/    /' "$log" | tail -40
	fi
	# What a passing test left is of no use; a failed one's log is printed above.
	rm -rf "${TOP:?}/$name"
}

ALL=$(declare -F | sed -n 's/^declare -f t_//p')
declare -A running=()
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
[ -z "$FAILED" ] || echo "failed:$FAILED"
echo "$PASS passed, $FAIL failed, $SKIP skipped"
[ $FAIL == 0 ]
