# What the command prints, it accepts, in words that fit. Sourced by tests/run-tests.sh: each
# t_NAME function is one test, run in a subshell under set -e with the helpers defined there.
# shellcheck shell=bash

t_all_accepted() {
	# -l and -p print "all" for a task that is not partitioned; -c and -g take it.
	run_rc out rc "$NVT" --no-mps -c all "$APP" launch 1
	eq "$rc" 0
	has "$out" "tpcs=0-65 hung=0"
	run_rc out rc "$NVT" --no-mps -g all "$APP" launch 1
	has "$out" "tpcs=0-65 hung=0"
	run_rc out rc "$NVT" --no-mps -c all,3 "$APP" launch 1
	eq "$out" "nvtaskset: failed to parse TPC list 'all,3': 'all' stands alone, in no list; give numbers and ranges, such as 0-15,32,40-47:2 (every 2nd of 40-47), or all"
	# A task started with the wrapper, shown by -l, moved and given back every TPC.
	local tpcs
	start_loop allw env LD_LIBRARY_PATH="$WRAPDIR:$FAKEDIR" "$APP"
	wait_file "$WORK/allw.state" "0-65"
	tpcs=$("$NVT" -l | awk -v pid="$PID" '$1 == pid {print $6}')
	eq "$tpcs" "all" "-l's TPCS of an unpartitioned task"
	run_rc out rc "$NVT" -p -c 0-3 "$PID"
	wait_file "$WORK/allw.state" "0-3"
	run_rc out rc "$NVT" -p -c "$tpcs" "$PID"
	eq "$rc" 0
	eq "$out" "pid $PID's current TPC list: 0-3
pid $PID's new TPC list: 0-65"
	wait_file "$WORK/allw.state" "0-65"
	run_rc out rc "$NVT" -p -g all "$PID"
	eq "$rc" 0
	stop_loop allw "$PID"
}
t_pick_one_free() {
	# "only 1 is free", not "only 1 are free".
	start_loop one "$NVT" --no-mps -c 0-64 "$APP"
	wait_file "$WORK/one.state" "0-64"
	run_rc out rc "$NVT" --no-mps -n 2 --exclude-running "$APP" launch 1
	eq "$rc" 1
	eq "$out" "nvtaskset: cannot pick 2 TPCs: only 1 is free of other tasks"
	stop_loop one "$PID"
}
