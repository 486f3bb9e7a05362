#!/usr/bin/env bash
# nvtaskset's fault suite (make check-faults): what users care about, kept
# under faults. Needs root (other users, mount namespaces) and the fake
# driver; no GPU. About 5 minutes on 2 cores.
#
#   sweep   ENOSPC and EMFILE at every segment operation (tests/faults/inject.c)
#           of a start, -p, -a -p, claims, -l and --calibrate, one point a run
#   limits  real limits: ulimit -n, a full tmpfs as run directory and as
#           calibration cache, /proc mounted hidepid=2
#   kill    kill -9 of the CLI at random points of -p, -a -p and claims
#   load    500 live tasks of 3 users while -l, claims and moves run
#   scale   1000 segments of one user left unsettled: -l and a claim within
#           2x of their system calls (strace -f -c) and of their CPU time (runs
#           of their own, without strace) beside the same tasks settled (else
#           "slow"); root's priority agent beside 1030 plain tasks guards a low task
#   agent   kill -9 of root's priority agent while it lends: the borrower's
#           shim gives the lent TPCs back by itself
#   shared  the shared directory of run directories: entries of every type in
#           it, filled, /proc files of any length (0 to 65,536 groups), 60
#           tasks in PID namespaces beside 2000 names of another user's
#           (tests/faults/part-shared.sh)
#   exporter the exporter at its connection limit: 300 slow connections from 20
#           addresses, at its own descriptor limit too: every scrape answers
#   levelmps kill -9 of a level's MPS daemon (the fake's, standing for its
#           server) under its clients: they end as they would, --mps status
#           and stop answer, the level's next task starts a new one
#   container a container stopped without its poststop hook: root's -l names
#           what it left, the next container starts, a later poststop removes it
#
# Counts, per part and in all: runs, faults injected, crashes (a process
# ended by a signal it did not ask for), hangs (no end within its limit),
# lost changes (a change reported done but not there, a partition that is
# neither the old nor the new one, a task that cannot be changed afterwards,
# TPCs still claimed by a dead process, a partition given twice). The last
# three must be 0: the suite fails otherwise. The summary goes to stdout and,
# with FAULTS_SUMMARY=FILE, to FILE.
#
# Usage: tests/faults/run.sh [PART...]   (default: every part)
set -u
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
B=$ROOT/build
T=$B/test
NVT=$B/bin/nvtaskset
APP=$T/fakeapp-dlopen
INJECT=$T/inject.so
[ "$(id -u)" == 0 ] || { echo "check-faults: needs root (other users, mount namespaces)" >&2; exit 1; }
for f in "$NVT" "$APP" "$INJECT" "$T/fake/libcuda.so.1"; do
	[ -e "$f" ] || { echo "check-faults: $f is missing (make check-faults builds it)" >&2; exit 1; }
done

WORK=$(mktemp -d /tmp/nvtaskset-faults.XXXXXX)
chmod 755 "$WORK"
export NVTASKSET_RUNDIR=$WORK/run NVTASKSET_CACHE_DIR=$WORK/cache
mkdir -m 1777 "$NVTASKSET_RUNDIR" "$WORK/u"
export LD_LIBRARY_PATH=$T/fake NVTASKSET_DRIVER_TIMEOUT=20
# The fake driver's GPU only, not a GPU this machine may have (its /proc/driver/nvidia).
export NVTASKSET_PROC_NVIDIA=$WORK/no-proc-nvidia
unset NVTASKSET_QUIET LD_PRELOAD NVTASKSET_PARTITION CUDA_VISIBLE_DEVICES NVTASKSET_SHIM
for v in $(env | sed -n 's/^\(FAKECUDA_[A-Z_]*\|FAULT_[A-Z_]*\)=.*/\1/p'); do unset "$v"; done
cleanup() {
	pkill -KILL -f "$WORK/" 2>/dev/null
	[ -n "${TASKS:-}" ] && kill -KILL $TASKS 2>/dev/null
	# (root's --cdi mounts a tmpfs on the run directories it gives containers)
	awk -v d="$WORK/" 'index($5, d) == 1 {print $5}' /proc/self/mountinfo | sort -r |
		while read -r m; do umount -l "$m"; done
	rm -rf "$WORK"
}
trap cleanup EXIT
# Other users run the build tree's programs (the hidepid=2 and load parts);
# where they cannot (a checkout in /root, say), those are skipped, and say so.
# Where other users cannot reach the checkout (a clone in a private directory), the parts
# that run programs as other users run a world-readable copy of the build: $WORK/tree.
# shellcheck source=tests/share-build.sh
. "$ROOT/tests/share-build.sh"
if ! reachable_by 65534 "$ROOT"; then
	if share_build "$ROOT" "$WORK/tree" && reachable_by 65534 "$WORK/tree"; then
		echo "check-faults: the checkout is not reachable by other users: the suite runs a copy, $WORK/tree"
		ROOT=$WORK/tree B=$WORK/tree/build
		T=$B/test NVT=$B/bin/nvtaskset APP=$T/fakeapp-dlopen INJECT=$T/inject.so
		export LD_LIBRARY_PATH=$T/fake
	fi
fi
USERS_OK=1
setpriv --reuid=65534 --regid=65534 --clear-groups test -x "$NVT" 2>/dev/null || USERS_OK=0
as_user() { echo "setpriv --reuid=$1 --regid=$1 --clear-groups"; }

# ---- Counting --------------------------------------------------------------

RUNS=0 FAULTS=0 CRASHES=0 HANGS=0 LOST=0 SLOW=
P_RUNS=0 P_FAULTS=0 P_CRASHES=0 P_HANGS=0 P_LOST=0
SUMMARY=$WORK/summary
: >"$SUMMARY"
part_begin() {
	P_NAME=$1 P_RUNS=0 P_FAULTS=0 P_CRASHES=0 P_HANGS=0 P_LOST=0 P_BEGIN=$SECONDS
	echo "== $1"
}
part_end() {
	printf '%-44s %6d %6d %7d %5d %5d %5ds\n' "$P_NAME" "$P_RUNS" "$P_FAULTS" "$P_CRASHES" "$P_HANGS" \
		"$P_LOST" $((SECONDS - P_BEGIN)) | tee -a "$SUMMARY"
	RUNS=$((RUNS + P_RUNS)) FAULTS=$((FAULTS + P_FAULTS)) CRASHES=$((CRASHES + P_CRASHES))
	HANGS=$((HANGS + P_HANGS)) LOST=$((LOST + P_LOST))
}
bad() { # bad crash|hang|lost WHAT
	case $1 in
	crash) P_CRASHES=$((P_CRASHES + 1)) ;;
	hang) P_HANGS=$((P_HANGS + 1)) ;;
	lost) P_LOST=$((P_LOST + 1)) ;;
	esac
	echo "  $1: $2"
}
# judge RC WHAT: counts a run; a hang (124) or a death by signal (>= 128) is bad.
judge() {
	P_RUNS=$((P_RUNS + 1))
	if [ "$1" == 124 ]; then
		bad hang "$2"
	elif [ "$1" -ge 128 ]; then
		bad crash "$2 (exit status $1)"
	fi
}

# ---- Running under the injector --------------------------------------------

FLOG=$WORK/fault.log
# inj ERRNO AT CMD...: runs CMD (20 s limit) with fault ERRNO at counted call AT of
# each process (FAULT_KILL, FAULT_EXE, FAULT_STICKY pass through); sets OUT, RC and
# INJ (faults injected).
inj() {
	local e=$1 at=$2
	shift 2
	rm -f "$FLOG"
	OUT=$(timeout 20 env LD_PRELOAD="$INJECT" FAULT_ERRNO="$e" FAULT_AT="$at" FAULT_LOG="$FLOG" \
		FAULT_PREFIX="$NVTASKSET_RUNDIR:$NVTASKSET_CACHE_DIR:$WORK/mps-" "$@" 2>&1) && RC=0 || RC=$?
	INJ=$(grep -c '^inject' "$FLOG" 2>/dev/null)
	INJ=${INJ:-0}
	P_FAULTS=$((P_FAULTS + INJ))
}
# calls ERRNO CMD...: how many calls of that kind CMD's processes make (the largest).
calls() {
	local e=$1
	shift
	rm -f "$FLOG"
	timeout 20 env LD_PRELOAD="$INJECT" FAULT_ERRNO="$e" FAULT_AT=0 FAULT_TRACE=1 FAULT_LOG="$FLOG" \
		FAULT_PREFIX="$NVTASKSET_RUNDIR:$NVTASKSET_CACHE_DIR" "$@" >/dev/null 2>&1
	awk '$1 == "call" && $4 > n {n = $4} END {print n + 0}' "$FLOG" 2>/dev/null
}

# ---- Tasks -----------------------------------------------------------------

# start TAG LIST [USER]: starts "fakeapp loop" on LIST (no MPS); sets PID once its
# launches run on LIST.
start() {
	local tag=$1 list=$2 i
	rm -f "$WORK/u/$tag.stop" "$WORK/u/$tag.state"
	${3:+$(as_user "$3")} "$NVT" --no-mps -c "$list" "$APP" loop "$WORK/u/$tag.stop" \
		"$WORK/u/$tag.state" >"$WORK/u/$tag.out" 2>&1 &
	PID=$!
	TASKS="${TASKS:-} $PID"
	for ((i = 0; i < 500; i++)); do
		[ "$(cat "$WORK/u/$tag.state" 2>/dev/null)" == "$list" ] && return 0
		sleep 0.01
	done
	echo "check-faults: task $tag did not start on $list: $(cat "$WORK/u/$tag.out")" >&2
	exit 1
}
# start_tree: starts "fakeapp fork" on 10-11; sets TREE and TREE_CHILD.
start_tree() {
	local i
	rm -f "$WORK/u/tree.stop" "$WORK/u/tree.state"*
	"$NVT" --no-mps -c 10-11 "$APP" fork "$WORK/u/tree.stop" "$WORK/u/tree.state" >/dev/null 2>&1 &
	TREE=$!
	TASKS="${TASKS:-} $TREE"
	TREE_CHILD=
	for ((i = 0; i < 500; i++)); do
		[ -z "$TREE_CHILD" ] && TREE_CHILD=$(pgrep -P "$TREE" -f "$APP" | head -1)
		[ -n "$TREE_CHILD" ] && [ "$(cat "$WORK/u/tree.state.child" 2>/dev/null)" == 10-11 ] && return 0
		sleep 0.01
	done
	echo "check-faults: the tree did not start" >&2
	exit 1
}
# start_fixture: the tasks the sweep and kill parts act on: HOLDER on 0-31,
# MOVE on 0-3, CLAIMED on 14-15, and the tree (start_tree).
start_fixture() {
	start holder 0-31
	HOLDER=$PID
	start move 0-3
	MOVE=$PID
	start claimed 14-15
	CLAIMED=$PID
	start_tree
}
# current PID: the TPC list -p shows for PID (the error, if none).
current() {
	local out
	out=$(timeout 20 "$NVT" -pc "$1" 2>&1)
	sed -n "s/^pid $1's current TPC list: //p" <<<"$out" | grep . || echo "($out)"
}
# settles STATEFILE LIST: 0 if the task's launches run on LIST within 5 s.
settles() {
	local i
	for ((i = 0; i < 250; i++)); do
		[ "$(cat "$1" 2>/dev/null)" == "$2" ] && return 0
		sleep 0.02
	done
	return 1
}
# check_change WHAT PID STATE OLD NEW RC: after a change to NEW that exited RC,
# the partition is OLD or NEW (NEW if RC is 0, and the task runs on it); then
# puts OLD back, which must work.
check_change() {
	local what=$1 pid=$2 state=$3 old=$4 new=$5 rc=$6 now
	now=$(current "$pid")
	if [ "$rc" == 0 ] && [ "$now" != "$new" ]; then
		bad lost "$what: reported done, but the partition is $now"
	elif [ "$now" != "$old" ] && [ "$now" != "$new" ]; then
		bad lost "$what: the partition is $now, neither $old nor $new"
	elif ! settles "$state" "$now"; then
		bad lost "$what: the task runs on $(cat "$state"), -p says $now"
	fi
	timeout 20 "$NVT" -p -c "$old" "$pid" >/dev/null 2>&1 || bad lost "$what: cannot put $old back: $(current "$pid")"
	settles "$state" "$old" || bad lost "$what: the task does not take $old back"
}
# no_dead_claims WHAT FREE: TPCs FREE (a list) are what no live task holds; a
# start that takes them all with --exclude-running must get exactly them.
no_dead_claims() {
	local n out
	n=$(awk -F, '{for (i = 1; i <= NF; i++) {split($i, r, "-"); n += (r[2] == "" ? 1 : r[2] - r[1] + 1)}} END {print n}' <<<"$2")
	out=$(timeout 30 "$NVT" --no-mps -n "$n" --exclude-running "$APP" launch 1 2>&1)
	grep -q "tpcs=$2 hung=0" <<<"$out" || bad lost "$1: a start with -n $n --exclude-running got: $out"
}

# ---- The parts ----------------------------------------------------------------

for f in "$ROOT"/tests/faults/part-*.sh; do
	# shellcheck source=/dev/null
	. "$f"
done

"$NVT" --calibrate >/dev/null 2>&1 || { echo "check-faults: calibrating the fake GPU failed" >&2; exit 1; }
printf '%-44s %6s %6s %7s %5s %5s %6s\n' part runs faults crashes hangs lost time | tee -a "$SUMMARY"
BEGIN=$SECONDS
# shellcheck disable=SC2048 # part names split on purpose (no name holds a space)
for part in ${*:-sweep limits kill load scale agent shared exporter levelmps container}; do
	"part_$part"
done
printf '%-44s %6d %6d %7d %5d %5d %5ds\n' "all" "$RUNS" "$FAULTS" "$CRASHES" "$HANGS" "$LOST" \
	$((SECONDS - BEGIN)) | tee -a "$SUMMARY"
[ "$USERS_OK" == 1 ] || echo "skipped: hidepid=2 and load (uid 65534 cannot run $NVT)" | tee -a "$SUMMARY"
[ -z "$SLOW" ] || echo "slow:$SLOW" | tee -a "$SUMMARY"
[ -n "${FAULTS_SUMMARY:-}" ] && cp "$SUMMARY" "$FAULTS_SUMMARY"
[ "$CRASHES" == 0 ] && [ "$HANGS" == 0 ] && [ "$LOST" == 0 ] && [ -z "$SLOW" ]
