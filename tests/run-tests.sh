#!/usr/bin/env bash
# nvtaskset's test suite: unit tests, the parser fuzz target, and end-to-end
# tests of the real CLI and the real shim against the fake libcuda.so.1.
# Needs no GPU. Prints one line per test and "N passed, M failed" last;
# exits non-zero if any test failed. Run it through `make check`.
#
# Usage: tests/run-tests.sh [NAME...]   (default: every test)
set -u
ROOT=$(cd "$(dirname "$0")/.." && pwd)
B=$ROOT/build
T=$B/test
NVT=$B/bin/nvtaskset
SHIM=$B/lib/nvtaskset/libnvtaskset.so
WRAPDIR=$B/lib/nvtaskset/wrapper
FAKEDIR=$T/fake
APP=$T/fakeapp-dlopen
LINKED=$T/fakeapp-linked

WORK=$(mktemp -d /tmp/nvtaskset-test.XXXXXX)
chmod 755 "$WORK"
export NVTASKSET_RUNDIR=$WORK/run
mkdir -m 1777 "$NVTASKSET_RUNDIR"
export LD_LIBRARY_PATH=$FAKEDIR
export CUDA_MPS_PIPE_DIRECTORY=$WORK/mps-pipe CUDA_MPS_LOG_DIRECTORY=$WORK/mps-log
export NVTASKSET_DRIVER_TIMEOUT=20
export NVTASKSET_CACHE_DIR=$WORK/cache
unset NVTASKSET_QUIET LD_PRELOAD CUDA_DEVICE_MAX_CONNECTIONS NVTASKSET_TPCS NVTASKSET_TOPOLOGY
unset NVTASKSET_SHIM
for v in $(env | sed -n 's/^\(FAKECUDA_[A-Z_]*\)=.*/\1/p'); do unset "$v"; done

PASS=0 FAIL=0 SKIP=0
FAILED=""

# Stops a fake MPS daemon a test left running (it quits when this file appears).
stop_fake_mps() {
	local i dir
	for dir in "$WORK"/mps-pipe*; do
		[ -e "$dir/nvidia-cuda-mps-control.pid" ] || continue
		touch "$dir/quit"
		for ((i = 0; i < 100; i++)); do
			[ -e "$dir/nvidia-cuda-mps-control.pid" ] || break
			sleep 0.02
		done
	done
}
# Gives an MPS test a pipe directory of its own.
own_mps_dirs() {
	export CUDA_MPS_PIPE_DIRECTORY=$WORK/mps-pipe.$1 CUDA_MPS_LOG_DIRECTORY=$WORK/mps-log.$1
	mkdir -p "$CUDA_MPS_PIPE_DIRECTORY"
}
cleanup() {
	stop_fake_mps
	pkill -KILL -f "$WORK" 2>/dev/null
	rm -rf "$WORK"
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
eq() { # eq GOT WANT [WHAT]
	[ "$1" == "$2" ] || die "${3:-value}: expected '$2', got '$1'"
}
has() { # has TEXT NEEDLE
	[[ "$1" == *"$2"* ]] || die "expected '$2' in: $1"
}
hasnt() {
	[[ "$1" != *"$2"* ]] || die "did not expect '$2' in: $1"
}
# run_rc VAR_OUT VAR_RC CMD...: runs CMD (20 s limit) capturing stdout+stderr and status.
run_rc() {
	local __out __rc
	__out=$(timeout 20 "${@:3}" 2>&1) && __rc=0 || __rc=$?
	printf -v "$1" '%s' "$__out"
	printf -v "$2" '%s' "$__rc"
}
wait_file() { # wait_file PATH CONTENT [SECONDS]
	local i
	for ((i = 0; i < ${3:-10} * 50; i++)); do
		[ "$(cat "$1" 2>/dev/null)" == "$2" ] && return 0
		sleep 0.02
	done
	die "timed out waiting for $1 to read '$2' (it reads '$(cat "$1" 2>/dev/null)')"
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
	for ((i = 0; i < 250; i++)); do
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
seg_file() { echo "$NVTASKSET_RUNDIR/nvtaskset.$1"; }

# ---- Unit tests -----------------------------------------------------------

t_unit_tpcset() { "$T/test_tpcset"; }
t_unit_tmd() { "$T/test_tmd"; }
t_unit_topo() { "$T/test_topo"; }
t_unit_mpslog() { "$T/test_mpslog"; }
t_unit_driverinfo() { "$T/test_driverinfo"; }
t_unit_segment() { timeout 60 "$T/test_segment"; }
t_fuzz_parsers() { FUZZ_SECONDS=${FUZZ_SECONDS:-3} timeout 60 "$T/fuzz_parsers"; }

# ---- Starting tasks -------------------------------------------------------

t_run_static_cudart_style() {
	run_rc out rc "$NVT" --no-mps -c 0-3 "$APP" launch 5
	eq "$rc" 0 "exit status"
	has "$out" "tpcs=0-3 hung=0 version=0x40 masked=1 callbacks=1"
}
t_run_linked() {
	run_rc out rc "$NVT" --no-mps -c 8-9,40 "$LINKED" launch 3
	eq "$rc" 0
	has "$out" "tpcs=8-9,40 hung=0"
}
t_run_bind_now() {
	run_rc out rc env LD_BIND_NOW=1 "$NVT" --no-mps -c 1 "$APP" launch 2
	eq "$rc" 0
	has "$out" "tpcs=1 hung=0"
	run_rc out rc env LD_BIND_NOW=1 "$NVT" --no-mps -c 1 "$LINKED" launch 2
	has "$out" "tpcs=1 hung=0"
}
t_run_hex_mask() {
	run_rc out rc "$NVT" --no-mps f0 "$APP" launch 1
	has "$out" "tpcs=4-7 hung=0"
	run_rc out rc "$NVT" --no-mps 0x3,00000000,00000000 "$APP" launch 1
	has "$out" "tpcs=64-65 hung=0"
	run_rc out rc "$NVT" --no-mps -c 0-15:4,40 "$APP" launch 1
	has "$out" "tpcs=0,4,8,12,40 hung=0"
}
t_tmd_versions() {
	# Pre-Hopper TMDs (V01_06 .. V03_00) on a pre-Hopper chip: bit t = TPC t.
	local v
	for v in 0x16 0x17 0x22 0x30; do
		run_rc out rc env FAKECUDA_CHIP=a100 FAKECUDA_TMD_VERSION=$v "$NVT" --no-mps -c 2-5,53 "$APP" launch 2
		eq "$rc" 0 "exit status for $v"
		has "$out" "tpcs=2-5,53 hung=0 version=$v"
		hasnt "$out" "warning"
	done
}
t_tmd_unknown_untouched() {
	local v
	"$NVT" --calibrate >/dev/null 2>&1 # with a known TMD: the map is cached
	for v in 0x50 0x31 0x41; do
		run_rc out rc env FAKECUDA_TMD_VERSION=$v "$NVT" --no-mps -c 0-3 "$APP" launch 5
		eq "$rc" 0 "exit status for $v"
		has "$out" "hung=0 version=$v"
		has "$out" "disable=00000000,00000000,00000000,00000000"
		[ $v == 0x31 ] || has "$out" "tpcs=0-65 hung=0 version=$v masked=0"
		has "$out" "nvtaskset: warning: unknown TMD version $v"
		eq "$(grep -c 'unknown TMD version' <<<"$out")" 1 "warnings for $v"
	done
	run_rc out rc env FAKECUDA_TMD_VERSION=0x15 "$NVT" --no-mps -c 0-3 "$APP" launch 3
	has "$out" "tpcs=0-65 hung=0"
	has "$out" "has no TPC mask"
}
t_quiet() {
	"$NVT" --calibrate >/dev/null 2>&1
	run_rc out rc env NVTASKSET_QUIET=1 FAKECUDA_TMD_VERSION=0x50 "$NVT" --no-mps -c 0 "$APP" launch 2
	eq "$rc" 0
	hasnt "$out" "warning"
}
t_no_callback_table() {
	"$NVT" --calibrate >/dev/null 2>&1
	run_rc out rc env FAKECUDA_NO_TABLE=1 "$NVT" --no-mps -c 0-3 "$APP" launch 2
	eq "$rc" 0 "the program still runs"
	has "$out" "tpcs=0-65 hung=0"
	has "$out" "nvtaskset: warning: the CUDA driver offers no launch callback table"
}
t_odd_callback_params() {
	"$NVT" --calibrate >/dev/null 2>&1
	run_rc out rc env FAKECUDA_PARAMS_SIZE=16 "$NVT" --no-mps -c 0-3 "$APP" launch 4
	eq "$rc" 0
	has "$out" "tpcs=0-65 hung=0"
	has "$out" "unexpected launch callback parameters (size 16)"
	eq "$(grep -c 'unexpected launch' <<<"$out")" 1 "warnings"
}
t_shim_without_driver() {
	# The shim in a process with no libcuda: one warning, the program runs.
	run_rc out rc env LD_LIBRARY_PATH=/nonexistent LD_PRELOAD="$SHIM" /bin/echo hello
	eq "$rc" 0
	has "$out" "hello"
	has "$out" "nvtaskset: warning: cannot load the CUDA driver"
	run_rc out rc env LD_LIBRARY_PATH=/nonexistent NVTASKSET_QUIET=1 LD_PRELOAD="$SHIM" /bin/echo hi
	eq "$out" "hi"
}
t_shim_bad_environment() {
	local topo
	export FAKECUDA_CHIP=identity
	topo="nvtaskset-topology 1 tpcs=66 gpcs=0 flags=0 map=$(seq -s, 0 65)"
	run_rc out rc env NVTASKSET_TPCS=zz NVTASKSET_TOPOLOGY="$topo" LD_PRELOAD="$SHIM" "$APP" launch 1
	eq "$rc" 0
	has "$out" "ignoring malformed NVTASKSET_TPCS"
	has "$out" "tpcs=0-65 hung=0"
	run_rc out rc env NVTASKSET_TPCS=0-3 NVTASKSET_TOPOLOGY="garbage" LD_PRELOAD="$SHIM" "$APP" launch 1
	has "$out" "NVTASKSET_TOPOLOGY is malformed"
	has "$out" "tpcs=0-65 hung=0"
	run_rc out rc env NVTASKSET_TPCS=0-3 LD_PRELOAD="$SHIM" "$APP" launch 1
	has "$out" "NVTASKSET_TOPOLOGY is missing"
	run_rc out rc env NVTASKSET_TPCS=70-80 NVTASKSET_TOPOLOGY="$topo" LD_PRELOAD="$SHIM" "$APP" launch 1
	has "$out" "enables no TPC this GPU has"
	has "$out" "tpcs=0-65 hung=0"
	run_rc out rc env NVTASKSET_TPCS=0-3 NVTASKSET_TOPOLOGY="$topo" LD_PRELOAD="$SHIM" "$APP" launch 1
	has "$out" "tpcs=0-3 hung=0"
}
t_launch_path_no_syscalls() {
	# Partitioned launches make no system call: 20000 of them cost no more
	# system calls than 10 (the fake driver itself makes none per launch).
	command -v strace >/dev/null || skip "needs strace"
	local few many
	few=$(env NVTASKSET_TPCS=0-3 NVTASKSET_TOPOLOGY="$(topo_text)" LD_PRELOAD="$SHIM" \
		strace -f -c -o "$WORK/few.st" "$APP" launch 10 >/dev/null 2>&1; tail -1 "$WORK/few.st")
	many=$(env NVTASKSET_TPCS=0-3 NVTASKSET_TOPOLOGY="$(topo_text)" LD_PRELOAD="$SHIM" \
		strace -f -c -o "$WORK/many.st" "$APP" launch 20000 >"$WORK/many.out" 2>&1; tail -1 "$WORK/many.st")
	has "$(cat "$WORK/many.out")" "tpcs=0,8,16,24 hung=0"
	few=$(awk '{print $4}' <<<"$few")
	many=$(awk '{print $4}' <<<"$many")
	echo "system calls: 10 launches $few, 20000 launches $many"
	[ "$many" -le "$few" ] || die "launches make system calls: $few for 10, $many for 20000"
}
topo_text() { echo "nvtaskset-topology 1 tpcs=66 gpcs=0 flags=0 map=$(seq -s, 0 65)"; }
t_rundir_unusable() {
	run_rc out rc env NVTASKSET_RUNDIR=/proc "$NVT" --no-mps -c 0-1 "$APP" launch 1
	eq "$rc" 0
	has "$out" "cannot create a control segment in /proc"
	has "$out" "tpcs=0-1 hung=0"
}
t_environment_appended() {
	run_rc out rc env LD_PRELOAD=/lib/nothing.so "$NVT" --no-mps -c 0 /usr/bin/env
	has "$out" "LD_PRELOAD=/lib/nothing.so:$SHIM"
	has "$out" "CUDA_DEVICE_MAX_CONNECTIONS=8"
	has "$out" "CUDA_MPS_PIPE_DIRECTORY=/dev/null"
	has "$out" "NVTASKSET_TPCS=0"
	run_rc out rc env LD_PRELOAD="$SHIM" CUDA_DEVICE_MAX_CONNECTIONS=4 "$NVT" --no-mps -c 0 /usr/bin/env
	has "$out" "CUDA_DEVICE_MAX_CONNECTIONS=4"
	eq "$(grep -c "^LD_PRELOAD=$SHIM\$" <<<"$out")" 1 "LD_PRELOAD holds the shim once"
}

# ---- Running tasks: -p, -l, live changes ------------------------------------

t_live_change() {
	start_loop live "$NVT" --no-mps -c 0-3 "$APP"
	wait_file "$WORK/live.state" "0-3"
	run_rc out rc "$NVT" -p "$PID"
	eq "$out" "pid $PID's current TPC mask: f"
	run_rc out rc "$NVT" -pc "$PID"
	eq "$out" "pid $PID's current TPC list: 0-3"
	run_rc out rc "$NVT" -p -c 10-20 "$PID"
	eq "$rc" 0
	eq "$out" "pid $PID's current TPC list: 0-3
pid $PID's new TPC list: 10-20"
	wait_file "$WORK/live.state" "10-20"
	run_rc out rc "$NVT" -p ff00000000 "$PID"
	eq "$out" "pid $PID's current TPC mask: 1ffc00
pid $PID's new TPC mask: ff00000000"
	wait_file "$WORK/live.state" "32-39"
	run_rc out rc "$NVT" -p --json "$PID"
	eq "$out" "{\"pid\":$PID,\"current\":{\"partitioned\":true,\"tpcs\":\"32-39\",\"tpc_mask\":\"ff00000000\",\"tpc_count\":8},\"applied\":true}"
	run_rc out rc "$NVT" -p --json -c 0 "$PID"
	python3 -c 'import json,sys,time; d=json.loads(sys.argv[1]); assert d["current"]["tpcs"]=="0" and d["previous"]["tpcs"]=="32-39"; assert 0 < time.monotonic_ns() - d["written_monotonic_ns"] < 20e9' "$out" || die "bad JSON: $out"
	wait_file "$WORK/live.state" "0"
	stop_loop live "$PID"
	[ ! -e "$(seg_file "$PID")" ] || die "segment left behind after a clean exit"
}
t_list() {
	local a b
	start_loop la "$NVT" --no-mps -c 0-7 "$APP"
	a=$PID
	start_loop lb "$NVT" --no-mps -c 8-15 "$LINKED"
	b=$PID
	wait_file "$WORK/la.state" "0-7"
	wait_file "$WORK/lb.state" "8-15"
	run_rc out rc "$NVT" -l
	eq "$rc" 0
	has "$out" "COMMAND"
	grep -Eq "^ *$a +root +0-7 +$APP loop" <<<"$out" || die "no row for $a in: $out"
	grep -Eq "^ *$b +root +8-15 +$LINKED loop" <<<"$out" || die "no row for $b in: $out"
	out=$(timeout 20 "$NVT" -l --json)
	python3 - "$out" "$a" "$b" <<'PY' || die "bad JSON: $out"
import json, sys
d = json.loads(sys.argv[1])
rows = {t["pid"]: t for t in d["tasks"]}
a, b = int(sys.argv[2]), int(sys.argv[3])
assert rows[a]["tpcs"] == "0-7" and rows[a]["tpc_count"] == 8 and rows[a]["partitioned"]
assert rows[b]["tpc_mask"] == "ff00" and "fakeapp-linked" in rows[b]["command"]
PY
	# A task killed outright disappears from the list, and so does its file.
	kill -KILL "$a"
	wait "$a" 2>/dev/null || true
	[ -e "$(seg_file "$a")" ] || die "expected a leftover segment after SIGKILL"
	run_rc out rc "$NVT" -l
	hasnt "$out" " $a "
	has "$out" " $b "
	[ ! -e "$(seg_file "$a")" ] || die "stale segment of $a not removed"
	stop_loop lb "$b"
	run_rc out rc "$NVT" -l
	eq "$out" "$(printf '%7s  %-10s  %-20s  %s' PID USER TPCS COMMAND)"
}
t_wrapper_unlaunched_task() {
	local app
	for app in "$APP" "$LINKED"; do
		start_loop wrap env LD_LIBRARY_PATH="$WRAPDIR:$FAKEDIR" "$app"
		wait_file "$WORK/wrap.state" "0-65"
		# env execs the app: the PID is the task's.
		run_rc out rc "$NVT" -l
		grep -Eq "^ *$PID +root +all +$app" <<<"$out" || die "wrapper task not listed: $out"
		run_rc out rc "$NVT" -p -c 5,7 "$PID"
		eq "$rc" 0
		has "$out" "pid $PID's current TPC list: all (not partitioned)"
		wait_file "$WORK/wrap.state" "5,7"
		stop_loop wrap "$PID"
	done
}
t_wrapper_and_preload_once() {
	# Both the wrapper and the preload shim in one process: one callback.
	run_rc out rc env LD_LIBRARY_PATH="$WRAPDIR:$FAKEDIR" "$NVT" --no-mps -c 3 "$APP" launch 2
	eq "$rc" 0
	has "$out" "tpcs=3 hung=0 version=0x40 masked=1 callbacks=1"
	run_rc out rc env LD_LIBRARY_PATH="$WRAPDIR:$FAKEDIR" "$NVT" --no-mps -c 3 "$LINKED" launch 2
	has "$out" "tpcs=3 hung=0 version=0x40 masked=1 callbacks=1"
}
t_fork_child_own_segment() {
	local child
	rm -f "$WORK/fork.stop"
	"$NVT" --no-mps -c 0-3 "$APP" fork "$WORK/fork.stop" "$WORK/fork" >"$WORK/fork.out" 2>&1 &
	PID=$!
	wait_file "$WORK/fork.parent" "0-3"
	wait_file "$WORK/fork.child" "0-3"
	child=$(cat "$WORK/fork.childpid")
	[ -e "$(seg_file "$child")" ] || die "forked child $child has no segment"
	run_rc out rc "$NVT" -p -c 8-9 "$child"
	eq "$rc" 0
	wait_file "$WORK/fork.child" "8-9"
	sleep 0.1
	eq "$(cat "$WORK/fork.parent")" "0-3" "parent's partition"
	run_rc out rc "$NVT" -p -c 20 "$PID"
	wait_file "$WORK/fork.parent" "20"
	eq "$(cat "$WORK/fork.child")" "8-9" "child's partition"
	touch "$WORK/fork.stop"
	wait "$PID" || die "fork app failed: $(cat "$WORK/fork.out")"
	[ ! -e "$(seg_file "$child")" ] || die "child's segment left behind"
}
t_exec_keeps_partition() {
	rm -f "$WORK/ex.stop"
	"$NVT" --no-mps -c 0-3 "$APP" exec "$WORK/ex.stop" "$WORK/ex.state" >"$WORK/ex.out" 2>&1 &
	PID=$!
	wait_file "$WORK/ex.state" "0-3"
	run_rc out rc "$NVT" -p -c 6-7 "$PID"
	eq "$rc" 0
	wait_file "$WORK/ex.state" "6-7"
	touch "$WORK/ex.stop"
	wait "$PID" || die "exec app failed"
	has "$(cat "$WORK/ex.out")" "launches="
}
t_stress_live_rewrites() {
	# 8 threads launch while another process rewrites the partition 2000
	# times; every launch must run on exactly one of the written masks.
	local i masks=(0-31 32-65 0-65 5)
	rm -f "$WORK/st.stop"
	"$NVT" --no-mps -c 0-31 "$APP" stress 8 "$WORK/st.stop" ffffffff 3ffffffff00000000 \
		3ffffffffffffffff 20 >"$WORK/st.out" 2>&1 &
	PID=$!
	sleep 0.2
	for ((i = 0; i < 2000; i++)); do
		"$NVT" -p -c "${masks[i % 4]}" "$PID" >/dev/null || die "rewrite $i failed"
	done
	touch "$WORK/st.stop"
	wait "$PID" && rc=0 || rc=$?
	cat "$WORK/st.out"
	eq "$rc" 0 "stress exit status"
	local n
	n=$(sed -n 's/^launches=\([0-9]*\) bad=0 hung=0$/\1/p' "$WORK/st.out")
	[ -n "$n" ] && [ "$n" -gt 10000 ] || die "too few launches checked: $(cat "$WORK/st.out")"
}

# ---- Refusing bad input -----------------------------------------------------

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
-c 0-300|TPC list '0-300' names a TPC beyond 255
-c 1-|failed to parse TPC list '1-'
-c 3-1|failed to parse TPC list '3-1'
-c x|failed to parse TPC list 'x'
0|empty partition: TPC mask '0' selects no TPC
0xg|failed to parse TPC mask '0xg'
4,00000000,00000000|TPC 66 does not exist: this GPU has 66 TPCs (0-65)
-g 12|GPC 12 does not exist: this GPU has 12 GPCs (0-11)
-g 1-|failed to parse GPC list '1-'
-g 64|GPC list '64' names a GPC beyond 63
-n 67|cannot pick 67 TPCs: this GPU has 66
EOF
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
}
t_bad_pids() {
	local p
	for p in abc 0 -5 12x 99999999999; do
		run_rc out rc "$NVT" -p -- "$p"
		eq "$rc" 1 "exit status for pid '$p'"
		eq "$out" "nvtaskset: invalid PID argument: '$p'"
	done
	run_rc out rc "$NVT" -p 2147483647
	eq "$rc" 1
	eq "$out" "nvtaskset: failed to get pid 2147483647's partition: No such process"
	run_rc out rc "$NVT" -p $$
	eq "$out" "nvtaskset: failed to get pid $$'s partition: not running under nvtaskset"
	run_rc out rc "$NVT" -p f $$
	eq "$out" "nvtaskset: failed to set pid $$'s partition: not running under nvtaskset"
	# A leftover segment of an earlier process with this PID is not trusted.
	start_loop stale "$NVT" --no-mps -c 0-3 "$APP"
	wait_file "$WORK/stale.state" "0-3"
	cp "$(seg_file "$PID")" "$(seg_file $$)"
	run_rc out rc "$NVT" -p $$
	eq "$out" "nvtaskset: failed to get pid $$'s partition: not running under nvtaskset"
	rm -f "$(seg_file $$)"
	stop_loop stale "$PID"
}
t_bad_segments() {
	start_loop seg "$NVT" --no-mps -c 0-3 "$APP"
	wait_file "$WORK/seg.state" "0-3"
	# Partitions that would hang every launch never reach the hardware.
	"$T/segpoke" "$PID" empty
	sleep 0.2
	eq "$(cat "$WORK/seg.state")" "0-3" "partition after an empty one was written"
	run_rc out rc "$NVT" -p -c "$PID"
	has "$out" "refused this partition"
	"$T/segpoke" "$PID" badtopo
	sleep 0.2
	eq "$(cat "$WORK/seg.state")" "0-3" "partition after a malformed topology"
	"$NVT" -p -c 9 "$PID" >/dev/null
	wait_file "$WORK/seg.state" "9"
	# A writer that died mid-write: launches go on with what they had.
	"$T/segpoke" "$PID" halfwrite
	sleep 0.1
	eq "$(cat "$WORK/seg.state")" "9"
	run_rc out rc "$NVT" -p "$PID"
	eq "$rc" 1
	eq "$out" "nvtaskset: failed to get pid $PID's partition: a writer died while changing it; set a new partition to repair it"
	run_rc out rc "$NVT" -p -c 10 "$PID"
	eq "$rc" 0 "a new write recovers the slot"
	wait_file "$WORK/seg.state" "10"
	grep -q "refused a partition that enables no working TPC" "$WORK/seg.err" ||
		die "no warning from the shim: $(cat "$WORK/seg.err")"
	"$T/segpoke" "$PID" version 7
	run_rc out rc "$NVT" -p "$PID"
	eq "$rc" 1
	eq "$out" "nvtaskset: failed to get pid $PID's partition: its control segment has version 7; this nvtaskset understands version 1"
	"$T/segpoke" "$PID" version 1
	"$T/segpoke" "$PID" garbage
	run_rc out rc "$NVT" -p -c 1 "$PID"
	eq "$out" "nvtaskset: failed to set pid $PID's partition: its control segment is corrupt"
	run_rc out rc "$NVT" -l
	has "$out" "nvtaskset: pid $PID: its control segment is corrupt"
	# Garbage in the header is not the shim's business: launches go on.
	sleep 0.1
	eq "$(cat "$WORK/seg.state")" "10"
	stop_loop seg "$PID"
}
t_segment_busy() {
	# Another writer holds the segment: give up after a while, change nothing.
	command -v flock >/dev/null || skip "needs flock"
	start_loop busy "$NVT" --no-mps -c 0-3 "$APP"
	wait_file "$WORK/busy.state" "0-3"
	flock -x "$(seg_file "$PID")" sleep 3 & # longer than nvtaskset waits (2 s)
	local holder=$!
	sleep 0.3
	run_rc out rc "$NVT" -p -c 7 "$PID"
	eq "$rc" 1
	eq "$out" "nvtaskset: failed to set pid $PID's partition: another nvtaskset is changing it right now"
	eq "$(cat "$WORK/busy.state")" "0-3"
	wait $holder # the holder lets go
	run_rc out rc "$NVT" -p -c 7 "$PID"
	eq "$rc" 0
	wait_file "$WORK/busy.state" "7"
	stop_loop busy "$PID"
}
t_segment_owner_checked() {
	[ "$(id -u)" == 0 ] || skip "needs root"
	start_loop own "$NVT" --no-mps -c 0-3 "$APP"
	wait_file "$WORK/own.state" "0-3"
	[ "$(stat -c %a "$(seg_file "$PID")")" == 600 ] || die "segment mode is not 0600"
	chown 65534 "$(seg_file "$PID")"
	run_rc out rc "$NVT" -p "$PID"
	eq "$out" "nvtaskset: failed to get pid $PID's partition: not running under nvtaskset"
	chown 0 "$(seg_file "$PID")"
	stop_loop own "$PID"
}
t_permissions() {
	[ "$(id -u)" == 0 ] || skip "needs root to act as other users"
	command -v setpriv >/dev/null || skip "needs setpriv"
	as() { echo setpriv --reuid="$1" --regid="$1" --clear-groups; }
	$(as 65534) test -x "$NVT" || skip "the build tree is not reachable by uid 65534"
	mkdir -m 1777 "$WORK/perm"
	rm -f "$WORK/perm/stop"
	$(as 65534) "$NVT" --no-mps -c 0-3 "$APP" loop "$WORK/perm/stop" "$WORK/perm/state" \
		>"$WORK/perm.out" 2>&1 &
	PID=$!
	wait_file "$WORK/perm/state" "0-3"
	run_rc out rc $(as 65533) "$NVT" -p "$PID"
	eq "$rc" 1
	eq "$out" "nvtaskset: failed to get pid $PID's partition: Permission denied"
	run_rc out rc $(as 65533) "$NVT" -p -c 4 "$PID"
	eq "$out" "nvtaskset: failed to set pid $PID's partition: Permission denied"
	run_rc out rc $(as 65533) "$NVT" -l
	hasnt "$out" " $PID "
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
	run_rc out rc env LD_LIBRARY_PATH=/nonexistent "$NVT" --no-mps -c 0 "$APP" launch 1
	eq "$rc" 1
	has "$out" "nvtaskset: cannot query GPU 0: cannot load the CUDA driver: libcuda.so.1"
	run_rc out rc env FAKECUDA_INIT_ERROR=100 "$NVT" --no-mps -c 0 "$APP" launch 1
	eq "$out" "nvtaskset: cannot query GPU 0: cuInit failed: error 100 (no CUDA-capable device)"
	run_rc out rc env FAKECUDA_DEVICES=0 "$NVT" --no-mps -c 0 "$APP" launch 1
	eq "$rc" 1
	run_rc out rc env FAKECUDA_INIT_HANG=1 NVTASKSET_DRIVER_TIMEOUT=1 "$NVT" --no-mps -c 0 "$APP" launch 1
	eq "$rc" 1
	eq "$out" "nvtaskset: cannot query GPU 0: the CUDA driver did not answer within 1 s"
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
	has "$out" "--strategy and --exclude-running go with -n"
	run_rc out rc "$NVT" -n 3 --strategy diagonal x
	has "$out" "--strategy takes packed or spread"
	for a in 0 -1 257 3x ""; do
		run_rc out rc "$NVT" -n "$a" x
		has "$out" "-n takes a TPC count from 1 to 256"
	done
	run_rc out rc "$NVT" --gpu x --topology
	has "$out" "--gpu takes a GPU number from 0 to 63"
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
	eq "$out" "nvtaskset $(sed -n 's/.*NVT_VERSION_STRING "\(.*\)".*/\1/p' "$ROOT/include/nvtaskset.h")"
	# Options after MASK belong to the command, as with taskset.
	run_rc out rc "$NVT" --no-mps -c 0 /bin/echo -c -p --help
	eq "$out" "-c -p --help"
}

# ---- Calibration, topology, GPCs, -n ------------------------------------------

H100_MAP="0,9,18,27,36,45,54,63,1,10,19,28,37,46,55,64,2,11,20,29,38,47,56,65,3,12,21,30,39,48,57,66,13,22,31,40,49,58,67,14,23,32,41,50,59,68,15,24,33,42,51,60,69,16,25,34,43,52,61,70,62,71,75,78,81,83"

t_calibrate_h100() {
	export NVTASKSET_CACHE_DIR=$WORK/own-cache
	run_rc out rc env FAKECUDA_LOG="$WORK/cal.log" "$NVT" --calibrate
	eq "$rc" 0
	has "$out" "nvtaskset: calibrating GPU 0 (Fake GPU 0 (H100 map))..."
	has "$out" "66 TPCs, 12 GPCs, calibrated in"
	has "$out" "saved in $NVTASKSET_CACHE_DIR/GPU-"
	local file
	file=$(ls "$NVTASKSET_CACHE_DIR"/GPU-*.topo)
	[ "$(stat -c %a "$file")" == 644 ] || die "cache file is not 0644"
	grep -q "^nvtaskset-topology 1 tpcs=66 gpcs=12 flags=1 map=$H100_MAP gpc=" "$file" ||
		die "wrong map cached: $(cat "$file")"
	# The probe ran in a process that could not reach MPS.
	grep -q "mps=/nonexistent/nvtaskset-no-mps" <(grep -A1 "^cuInit" "$WORK/cal.log" | grep -B1 "^module" | head -1) ||
		die "calibration was not isolated from MPS: $(cat "$WORK/cal.log")"
	run_rc out rc "$NVT" --topology
	has "$out" "calibration read from the cache"
	has "$out" "$(printf '  %-4s %-27s %-22s %s' 0 0,8,16,24 0-3 0-1,16-17,32-33,48-49)"
	has "$out" "$(printf '  %-4s %-27s %-22s %s' 6 6,14,22,30,37,44,51,58,60 54-62 '')"
	has "$out" "$(printf '  %-4s %-27s %-22s %s' 11 65 83 130-131)  (shares no cluster with another TPC)"
	out=$(timeout 20 "$NVT" --topology --json)
	python3 - "$out" <<'PY' || die "bad JSON: $out"
import json, sys
g = json.loads(sys.argv[1])["gpus"][0]
assert g["tpcs"] == 66 and g["sms"] == 132 and g["gpcs_known"]
gpcs = g["gpcs"]
assert len(gpcs) == 12 and gpcs[0]["tpcs"] == "0,8,16,24" and gpcs[0]["mask_bits"] == "0-3"
assert [x["own_cluster_domain"] for x in gpcs] == [False] * 8 + [True] * 4
assert gpcs[8]["tpcs"] == "62" and gpcs[8]["mask_bits"] == "75"
PY
}
t_translation_every_tpc() {
	# Each logical TPC alone: the launch runs on exactly that TPC (the fake
	# chip has the H100's permuted map and floorswept slots) and never hangs.
	local t
	for ((t = 0; t < 66; t++)); do
		run_rc out rc "$NVT" --no-mps -c $t "$APP" launch 1
		has "$out" "tpcs=$t hung=0 version=0x40 masked=1"
	done
	run_rc out rc "$NVT" --no-mps -c 62-65 "$APP" launch 1
	has "$out" "tpcs=62-65 hung=0"
	has "$out" "disable=ffffffff,fff5b7ff,ffffffff,ffffffff"
}
t_gpc_lists() {
	run_rc out rc "$NVT" --no-mps -g 0 "$APP" launch 1
	has "$out" "tpcs=0,8,16,24 hung=0"
	run_rc out rc "$NVT" --no-mps -g 6 "$LINKED" launch 1
	has "$out" "tpcs=6,14,22,30,37,44,51,58,60 hung=0"
	run_rc out rc "$NVT" --no-mps -g 8-11 "$APP" launch 1
	has "$out" "tpcs=62-65 hung=0"
	start_loop gl "$NVT" --no-mps -g 1 "$APP"
	wait_file "$WORK/gl.state" "1,9,17,25,32,39,46,53"
	run_rc out rc "$NVT" -p -g 0,8 "$PID"
	eq "$rc" 0
	wait_file "$WORK/gl.state" "0,8,16,24,62"
	stop_loop gl "$PID"
}
t_pick_count() {
	run_rc out rc "$NVT" --no-mps -n 8 "$APP" launch 1
	has "$out" "tpcs=1,9,17,25,32,39,46,53 hung=0"
	run_rc out rc "$NVT" --no-mps -n 9 --strategy packed "$APP" launch 1
	has "$out" "tpcs=6,14,22,30,37,44,51,58,60 hung=0"
	run_rc out rc "$NVT" --no-mps -n 12 --strategy spread "$APP" launch 1
	has "$out" "tpcs=0-7,62-65 hung=0"
	# --exclude-running keeps clear of other tasks' TPCs.
	start_loop ex1 "$NVT" --no-mps -n 8 "$APP"
	local first=$PID
	wait_file "$WORK/ex1.state" "1,9,17,25,32,39,46,53"
	start_loop ex2 "$NVT" --no-mps -n 8 --exclude-running "$APP"
	wait_file "$WORK/ex2.state" "2,10,18,26,33,40,47,54"
	run_rc out rc "$NVT" --no-mps -n 60 --exclude-running "$APP" launch 1
	eq "$rc" 1
	eq "$out" "nvtaskset: cannot pick 60 TPCs: only 50 are free of other tasks"
	# -p -n moves a task, leaving its own TPCs in the pool.
	run_rc out rc "$NVT" -p -n 4 --exclude-running -c "$first" 2>&1 || true
	has "$out" "-c, -g and -n exclude each other"
	run_rc out rc "$NVT" -p -n 4 --exclude-running "$first"
	eq "$rc" 0
	wait_file "$WORK/ex1.state" "0,8,16,24"
	stop_loop ex2 "$PID"
	stop_loop ex1 "$first"
}
t_cache_rebuilt() {
	local file
	export NVTASKSET_CACHE_DIR=$WORK/own-cache
	"$NVT" --calibrate >/dev/null 2>&1
	file=$(ls "$NVTASKSET_CACHE_DIR"/GPU-*.topo)
	run_rc out rc "$NVT" --no-mps -c 1 "$APP" launch 1
	hasnt "$out" "calibrating"
	# Corrupt: any changed byte is detected, and the record is measured anew.
	sed -i 's/map=0,9,18/map=0,9,19/' "$file"
	run_rc out rc "$NVT" --no-mps -c 1 "$APP" launch 1
	has "$out" "nvtaskset: calibrating GPU 0"
	has "$out" "tpcs=1 hung=0"
	grep -q "map=0,9,18," "$file" || die "cache not rebuilt"
	# Foreign: a record for another GPU under this GPU's name.
	sed -i 's/uuid=GPU-0/uuid=GPU-f/' "$file"
	run_rc out rc "$NVT" --no-mps -c 1 "$APP" launch 1
	has "$out" "nvtaskset: calibrating GPU 0"
	# Stale: another driver version.
	run_rc out rc env FAKECUDA_DRIVER_VERSION=13010 "$NVT" --no-mps -c 1 "$APP" launch 1
	has "$out" "nvtaskset: calibrating GPU 0"
	grep -q "driver=13010" "$file" || die "stale record not replaced"
	# Writable by others: never trusted.
	chmod 666 "$file"
	run_rc out rc env FAKECUDA_DRIVER_VERSION=13010 "$NVT" --no-mps -c 1 "$APP" launch 1
	has "$out" "nvtaskset: calibrating GPU 0"
	[ "$(stat -c %a "$file")" == 644 ] || die "rewritten cache is not 0644"
	# A cache directory that cannot be written: calibrate, warn, go on.
	run_rc out rc env NVTASKSET_CACHE_DIR=/proc/nvt "$NVT" --no-mps -c 1 "$APP" launch 1
	eq "$rc" 0
	has "$out" "nvtaskset: cannot save the calibration in /proc/nvt"
	has "$out" "tpcs=1 hung=0"
}
t_fast_identification() {
	# With one GPU in /proc and a record measured under this kernel module,
	# nvtaskset starts a task without initialising CUDA itself.
	export NVTASKSET_CACHE_DIR=$WORK/own-cache NVTASKSET_PROC_NVIDIA=$WORK/procnv
	local gpu=$WORK/procnv/gpus/0000:01:00.0 file cuinits
	mkdir -p "$gpu"
	printf 'Model: \t\t Fake H100\nGPU UUID: \t GPU-00010203-0405-0607-0809-0a0b0c0d0e84\n' >"$gpu/information"
	printf 'NVRM version: NVIDIA UNIX x86_64 Kernel Module  580.159.04  Thu Nov 20 2026\n' >"$WORK/procnv/version"
	"$NVT" --calibrate >/dev/null 2>&1
	file=$(ls "$NVTASKSET_CACHE_DIR"/GPU-*.topo)
	grep -q "nvrm=580.159.04" "$file" || die "module version not recorded: $(head -1 "$file")"
	cuinits() { grep -c '^cuInit' "$WORK/fl" 2>/dev/null || true; }
	rm -f "$WORK/fl"
	run_rc out rc env FAKECUDA_LOG="$WORK/fl" "$NVT" --no-mps -c 1 "$APP" launch 1
	has "$out" "tpcs=1 hung=0"
	eq "$(cuinits)" 1 "cuInit calls (the task's only)"
	run_rc out rc "$NVT" --topology
	has "$out" "GPU 0: Fake H100 (GPU-00010203-0405-0607-0809-0a0b0c0d0e84)"
	# Not sure which GPU CUDA calls 0: ask the driver.
	rm -f "$WORK/fl"
	run_rc out rc env FAKECUDA_LOG="$WORK/fl" CUDA_VISIBLE_DEVICES=1 "$NVT" --no-mps -c 1 "$APP" launch 1
	eq "$(cuinits)" 2 "cuInit calls with CUDA_VISIBLE_DEVICES=1"
	mkdir -p "$WORK/procnv/gpus/0000:02:00.0"
	rm -f "$WORK/fl"
	run_rc out rc env FAKECUDA_LOG="$WORK/fl" "$NVT" --no-mps -c 1 "$APP" launch 1
	eq "$(cuinits)" 2 "cuInit calls with two GPUs"
	rmdir "$WORK/procnv/gpus/0000:02:00.0"
	# A new kernel module: measured again.
	printf 'NVRM version: NVIDIA UNIX x86_64 Kernel Module  580.160.01  Fri\n' >"$WORK/procnv/version"
	run_rc out rc "$NVT" --no-mps -c 1 "$APP" launch 1
	has "$out" "nvtaskset: calibrating GPU 0"
	grep -q "nvrm=580.160.01" "$file" || die "record not rebuilt for the new module"
	# A record from before the module was known gets its version on next use.
	unset NVTASKSET_PROC_NVIDIA
	"$NVT" --calibrate >/dev/null 2>&1
	grep -q "nvrm=-" "$file" || die "expected a record without module version"
	export NVTASKSET_PROC_NVIDIA=$WORK/procnv
	"$NVT" --no-mps -c 1 "$APP" launch 1 >/dev/null 2>&1
	grep -q "nvrm=580.160.01" "$file" || die "module version not added"
	rm -f "$WORK/fl"
	run_rc out rc env FAKECUDA_LOG="$WORK/fl" "$NVT" --no-mps -c 1 "$APP" launch 1
	eq "$(cuinits)" 1 "cuInit calls after the upgrade"
}
t_calibration_failures() {
	run_rc out rc env NVTASKSET_CACHE_DIR="$WORK/c1" FAKECUDA_CTX_ERROR=46 "$NVT" --no-mps -c 1 "$APP" launch 1
	eq "$rc" 1
	has "$out" "nvtaskset: cannot calibrate GPU 0: cuDevicePrimaryCtxRetain (is the GPU exclusive to MPS?) failed: CUDA error 46"
	run_rc out rc env NVTASKSET_CACHE_DIR="$WORK/c2" FAKECUDA_TMD_VERSION=0x50 "$NVT" --calibrate
	eq "$rc" 1
	eq "$(tail -1 <<<"$out")" "nvtaskset: cannot calibrate GPU 0: TMD version 0x50 has no known mask layout"
	run_rc out rc env NVTASKSET_CACHE_DIR="$WORK/c3" FAKECUDA_NO_TABLE=1 "$NVT" --calibrate
	eq "$(tail -1 <<<"$out")" "nvtaskset: cannot calibrate GPU 0: the CUDA driver offers no launch callback table"
	run_rc out rc env NVTASKSET_CACHE_DIR="$WORK/c4" FAKECUDA_PARAMS_SIZE=16 "$NVT" --calibrate
	eq "$(tail -1 <<<"$out")" "nvtaskset: cannot calibrate GPU 0: the driver's launch callback never fired"
	run_rc out rc "$NVT" --topology --gpu 3
	eq "$rc" 1
	eq "$out" "nvtaskset: cannot query GPU 3: there is no GPU 3 (1 visible)"
}
t_several_gpus_warned() {
	run_rc out rc env FAKECUDA_DEVICES=2 "$NVT" --no-mps -c 1 "$APP" launch 1
	eq "$rc" 0
	has "$out" "nvtaskset: warning: the task sees 2 GPUs; its partition follows GPU 0's TPC map on every GPU it uses"
	has "$out" "tpcs=1 hung=0"
	run_rc out rc "$NVT" --no-mps -c 1 "$APP" launch 1
	hasnt "$out" "warning"
}
t_pre_hopper() {
	export FAKECUDA_CHIP=a100
	run_rc out rc "$NVT" --topology
	has "$out" "54 TPCs, 108 SMs, 0 GPCs (unknown: needs thread-block clusters)"
	run_rc out rc "$NVT" --no-mps -g 0 "$APP" launch 1
	eq "$out" "nvtaskset: the GPC layout of this GPU is unknown (it is measured with thread-block clusters, which need compute capability 9.0); give TPCs with -c or a mask instead"
	run_rc out rc "$NVT" --no-mps -n 4 "$APP" launch 1
	has "$out" "tpcs=0-3 hung=0 version=0x30"
	run_rc out rc "$NVT" --no-mps -n 3 --strategy spread "$APP" launch 1
	has "$out" "tpcs=0,18,36 hung=0"
	run_rc out rc "$NVT" --no-mps -c 54 "$APP" launch 1
	eq "$out" "nvtaskset: TPC 54 does not exist: this GPU has 54 TPCs (0-53)"
}

# ---- MPS --------------------------------------------------------------------

t_mps_lifecycle() {
	own_mps_dirs mps_lifecycle
	local fake=$ROOT/tests/fake/bin
	mkdir -p "$CUDA_MPS_PIPE_DIRECTORY"
	run_rc out rc env PATH="$fake:$PATH" "$NVT" --mps status
	eq "$rc" 3
	eq "$out" "MPS control daemon: not running (pipe directory $CUDA_MPS_PIPE_DIRECTORY)"
	run_rc out rc env PATH="$fake:$PATH" "$NVT" --mps stop
	eq "$rc" 0
	eq "$out" "MPS control daemon not running"
	run_rc out rc env PATH="$fake:$PATH" "$NVT" --mps start
	eq "$rc" 0
	has "$out" "started MPS control daemon"
	run_rc out rc env PATH="$fake:$PATH" "$NVT" --mps start
	eq "$rc" 0
	has "$out" "MPS control daemon already running (pid"
	run_rc out rc env PATH="$fake:$PATH" "$NVT" --mps status --json
	eq "$rc" 0
	python3 -c 'import json,sys; d=json.loads(sys.argv[1]); assert d["running"] and d["pid"]>0' "$out" ||
		die "bad JSON: $out"
	run_rc out rc env PATH="$fake:$PATH" "$NVT" --mps stop
	eq "$rc" 0
	has "$out" "stopped MPS control daemon"
	run_rc out rc env PATH="$fake:$PATH" "$NVT" --mps status
	eq "$rc" 3
	# Starting a task starts the daemon, says how to stop it, and tells
	# CUDA where it listens.
	run_rc out rc env PATH="$fake:$PATH" "$NVT" -c 0-1 /usr/bin/env
	eq "$rc" 0
	has "$out" "nvtaskset: started the MPS control daemon (pipe directory $CUDA_MPS_PIPE_DIRECTORY); stop it with 'nvtaskset --mps stop'"
	has "$out" "CUDA_MPS_PIPE_DIRECTORY=$CUDA_MPS_PIPE_DIRECTORY"
	has "$out" "CUDA_DEVICE_MAX_CONNECTIONS=8"
	grep -q "args=-d pipe=$CUDA_MPS_PIPE_DIRECTORY log=$CUDA_MPS_LOG_DIRECTORY preload=$" \
		"$CUDA_MPS_PIPE_DIRECTORY/fake.log" || die "daemon not started as expected"
	# A running daemon is reused, not started again.
	run_rc out rc env PATH="$fake:$PATH" "$NVT" -c 0-1 "$APP" launch 1
	hasnt "$out" "started"
	has "$out" "tpcs=0-1 hung=0"
	eq "$(grep -c 'args=-d' "$CUDA_MPS_PIPE_DIRECTORY/fake.log")" 2 "daemon starts (--mps start, then the task)"
	env PATH="$fake:$PATH" "$NVT" --mps stop >/dev/null
}
t_mps_client_limit() {
	own_mps_dirs mps_client_limit
	local fake=$ROOT/tests/fake/bin i server
	export PATH="$fake:$PATH"
	"$NVT" --mps start >/dev/null
	sleep 1000 &
	server=$!
	echo $server >"$CUDA_MPS_PIPE_DIRECTORY/fake-server"
	for ((i = 1; i <= 14; i++)); do echo $((1000 + i)); done >"$CUDA_MPS_PIPE_DIRECTORY/fake-clients"
	run_rc out rc "$NVT" -c 0 "$APP" launch 1
	eq "$rc" 0 "14 clients: room for one more"
	run_rc out rc "$NVT" --mps status
	has "$out" "MPS server: pid $server, 14 clients (it takes at most 15 with 8 channels each)"
	echo 1015 >>"$CUDA_MPS_PIPE_DIRECTORY/fake-clients"
	run_rc out rc "$NVT" -c 0 "$APP" launch 1
	eq "$rc" 1
	eq "$out" "nvtaskset: the MPS server (pid $server) already has 15 clients, the most it takes with 8 channels each (paper 000, section 5.3); this task would fail to start CUDA. Stop a task, or run this one with --no-mps"
	# Fewer channels each leave room for more clients.
	run_rc out rc env CUDA_DEVICE_MAX_CONNECTIONS=4 "$NVT" -c 0 "$APP" launch 1
	eq "$rc" 0
	run_rc out rc "$NVT" --no-mps -c 0 "$APP" launch 1
	eq "$rc" 0 "--no-mps still runs"
	# Another user's server is not ours to count.
	if [ "$(id -u)" == 0 ] && command -v setpriv >/dev/null; then
		kill $server
		setpriv --reuid=65534 --regid=65534 --clear-groups sleep 1000 &
		server=$!
		sleep 0.2
		echo $server >"$CUDA_MPS_PIPE_DIRECTORY/fake-server"
		run_rc out rc "$NVT" -c 0 "$APP" launch 1
		eq "$rc" 0 "another user's full server"
	fi
	kill $server
	"$NVT" --mps stop >/dev/null
}
t_mps_fault_reported() {
	own_mps_dirs mps_fault_reported
	local fake=$ROOT/tests/fake/bin
	export PATH="$fake:$PATH"
	mkdir -p "$CUDA_MPS_LOG_DIRECTORY"
	cat >"$CUDA_MPS_LOG_DIRECTORY/server.log" <<'LOG'
[2026-11-21 20:01:59.353 Server  2483] Client {PID: 2503, Context: 1} encountered a fatal GPU error.
[2026-11-21 20:01:59.353 Server  2483] Server is handling a fatal GPU error.
[2026-11-21 20:01:59.353 Server  2483] Client {PID: 2503, Context ID: 1} on device 0 to be torn down
[2026-11-21 20:01:59.353 Server  2483] Client {PID: 2534, Context ID: 1} on device 0 to be torn down
LOG
	run_rc out rc "$NVT" --mps status
	eq "$rc" 3
	has "$out" "last fatal GPU error: 2026-11-21 20:01:59, in server 2483, blamed on client 2503; the server tore down 2 clients: 2503 2534"
	has "$out" "Pitfall 2"
	out=$(timeout 20 "$NVT" --mps status --json) || true
	python3 -c 'import json,sys; d=json.loads(sys.argv[1]); f=d["last_fault"]; assert f["torn_down"]==[2503,2534] and f["blamed_client"]==2503' "$out" ||
		die "bad JSON: $out"
}
t_mps_daemon_wedged() {
	own_mps_dirs mps_daemon_wedged
	# A daemon that never answers must not hang nvtaskset.
	local fake=$ROOT/tests/fake/bin
	export PATH="$fake:$PATH"
	"$NVT" --mps start >/dev/null
	mkdir -p "$WORK/wedged"
	sed 's/	ps)/	ps) sleep 1000/' "$fake/nvidia-cuda-mps-control" \
		>"$WORK/wedged/nvidia-cuda-mps-control"
	chmod +x "$WORK/wedged/nvidia-cuda-mps-control"
	local start=$SECONDS
	run_rc out rc env PATH="$WORK/wedged:$PATH" "$NVT" -c 0 "$APP" launch 1
	eq "$rc" 0
	has "$out" "nvtaskset: cannot ask the MPS control daemon how many clients it serves"
	[ $((SECONDS - start)) -lt 15 ] || die "took $((SECONDS - start)) s"
	"$NVT" --mps stop >/dev/null
}
t_mps_missing_or_failing() {
	own_mps_dirs mps_missing_or_failing
	local fake=$ROOT/tests/fake/bin d
	for d in /usr/local/nvidia/bin /usr/bin /usr/sbin /usr/local/bin /usr/lib/nvidia /opt/nvidia/bin; do
		[ -x "$d/nvidia-cuda-mps-control" ] && skip "a real MPS is installed in $d"
	done
	run_rc out rc env PATH=/usr/bin:/bin "$NVT" -c 0 "$APP" launch 1
	eq "$rc" 1
	eq "$out" "nvtaskset: cannot start MPS: cannot find nvidia-cuda-mps-control in PATH or the driver's directories; run with --no-mps to run without it"
	run_rc out rc env PATH=/usr/bin:/bin "$NVT" --mps start
	eq "$rc" 1
	run_rc out rc env PATH="$fake:$PATH" FAKEMPS_FAIL=1 "$NVT" -c 0 "$APP" launch 1
	eq "$rc" 1
	has "$out" "nvtaskset: cannot start MPS: $fake/nvidia-cuda-mps-control -d failed (exit status 1); see $CUDA_MPS_LOG_DIRECTORY/control.log; run with --no-mps"
	run_rc out rc env PATH=/usr/bin:/bin "$NVT" --no-mps -c 0 "$APP" launch 1
	eq "$rc" 0 "--no-mps needs no MPS"
}

# ---- Packaging and documentation ---------------------------------------------

t_install_uninstall() {
	local dest=$WORK/dest
	make -s -C "$ROOT" install DESTDIR="$dest" PREFIX=/opt/nvt >"$WORK/install.log" 2>&1 ||
		die "make install failed: $(cat "$WORK/install.log")"
	local f
	for f in bin/nvtaskset lib/nvtaskset/libnvtaskset.so lib/nvtaskset/wrapper/libcuda.so.1 \
		share/man/man1/nvtaskset.1; do
		[ -f "$dest/opt/nvt/$f" ] || die "missing $f after install"
	done
	run_rc out rc "$dest/opt/nvt/bin/nvtaskset" --no-mps -c 2 /usr/bin/env
	has "$out" "LD_PRELOAD=$dest/opt/nvt/lib/nvtaskset/libnvtaskset.so"
	run_rc out rc "$dest/opt/nvt/bin/nvtaskset" --no-mps -c 2 "$APP" launch 1
	has "$out" "tpcs=2 hung=0"
	make -s -C "$ROOT" uninstall DESTDIR="$dest" PREFIX=/opt/nvt >>"$WORK/install.log" 2>&1 ||
		die "make uninstall failed"
	[ -z "$(find "$dest" -type f)" ] || die "files left after uninstall: $(find "$dest" -type f)"
}
t_docs_agree() {
	local opt help man readme
	help=$("$NVT" --help)
	man=$(sed 's/\\-/-/g' "$ROOT/man/nvtaskset.1")
	readme=$(cat "$ROOT/README.md")
	for opt in $(grep -oE -- '--[a-z][a-z-]+' <<<"$help" | sort -u); do
		has "$man" "$opt"
		has "$readme" "$opt"
	done
	for opt in NVTASKSET_QUIET NVTASKSET_RUNDIR NVTASKSET_DRIVER_TIMEOUT NVTASKSET_SHIM NVTASKSET_CACHE_DIR NVTASKSET_PROC_NVIDIA \
		CUDA_MPS_PIPE_DIRECTORY CUDA_MPS_LOG_DIRECTORY CUDA_DEVICE_MAX_CONNECTIONS; do
		has "$man" "$opt"
		has "$readme" "$opt"
	done
	has "$man" "$(sed -n 's/.*NVT_VERSION_STRING "\(.*\)".*/\1/p' "$ROOT/include/nvtaskset.h")"
	# The test command README gives is the one CI runs.
	grep -q '^make check$' "$ROOT/README.md" || die "README lacks 'make check'"
	grep -q 'make check' "$ROOT/.ci/run" || die ".ci/run does not run make check"
}
t_exports() {
	local f syms
	for f in "$SHIM" "$WRAPDIR/libcuda.so.1"; do
		syms=$(nm -D --defined-only "$f" | awk '{print $3}' | grep -v '^_' | sort | tr '\n' ' ')
		eq "$syms" "nvtaskset_shim_instance " "exported symbols of $f"
	done
	readelf -d "$WRAPDIR/libcuda.so.1" | grep -q 'NEEDED.*\[libcuda.so\]' ||
		die "the wrapper does not depend on the real driver"
}

# ---- Driver -------------------------------------------------------------------

# Most tests want the default fake GPU calibrated already, as after a first use.
"$NVT" --calibrate >/dev/null 2>&1 || echo "warning: calibrating the fake GPU failed"

ALL=$(declare -F | sed -n 's/^declare -f t_//p')
for name in ${*:-$ALL}; do
	log=$WORK/log.$name
	(
		set -e
		"t_$name"
	) >"$log" 2>&1
	rc=$?
	stop_fake_mps
	pkill -KILL -f "$WORK/" 2>/dev/null
	wait 2>/dev/null
	if [ $rc == 0 ]; then
		PASS=$((PASS + 1))
		echo "PASS $name"
	elif [ $rc == 77 ]; then
		SKIP=$((SKIP + 1))
		echo "SKIP $name ($(tail -1 "$log"))"
	else
		FAIL=$((FAIL + 1))
		FAILED="$FAILED $name"
		echo "FAIL $name"
		sed 's/^/    /' "$log" | tail -40
	fi
done
[ -z "$FAILED" ] || echo "failed:$FAILED"
echo "$PASS passed, $FAIL failed, $SKIP skipped"
[ $FAIL == 0 ]
