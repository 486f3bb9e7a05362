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
	eq "$out" "nvtaskset: cannot pick 2 TPCs: only 1 is free of other tasks$(held_by "$PID" 65)"
	stop_loop one "$PID"
}
t_pid_gpc_list_shows_gpcs() {
	# -p -g MASK PID says the partitions before and after as -p -g PID does: GPC lists where
	# they are whole GPCs, else the TPC list and the GPCs it holds whole.
	start_loop gl "$NVT" --no-mps -g 0-1 "$APP"
	wait_file "$WORK/gl.state" "0-1,8-9,16-17,24-25,32,39,46,53"
	run_rc out rc "$NVT" -p -g 2 "$PID"
	eq "$rc" 0 "$out"
	eq "$out" "pid $PID's current GPC list: 0-1
pid $PID's new GPC list: 2"
	eq "$("$NVT" -p -g "$PID")" "pid $PID's current GPC list: 2"
	"$NVT" -p -c 3-40 "$PID" >/dev/null
	run_rc out rc "$NVT" -p -g 5 "$PID"
	eq "$out" "pid $PID's current TPC list: 3-40 (no whole GPC)
pid $PID's new GPC list: 5"
	stop_loop gl "$PID"
}
t_dry_run_as_the_start() {
	# --dry-run answers as the start would: with --priority or --mem, neither MASK nor
	# COMMAND is needed (every TPC), a lone 0x word is MASK; a COMMAND that cannot run is
	# refused with the start's message and status (127, 126), in JSON too, starting nothing.
	local all
	all=$("$NVT" --no-mps --dry-run -c all | sed -n 's/.*: TPCs //p')
	run_rc out rc "$NVT" --no-mps --dry-run --priority low
	eq "$rc" 0 "$out"
	eq "$(sed -n 's/.*: TPCs //p' <<<"$out")" "$all"
	run_rc out rc "$NVT" --no-mps --dry-run --priority low 0xf
	eq "$(sed -n 's/.*: TPCs //p' <<<"$out")" "0-3"
	run_rc out rc "$NVT" --no-mps --dry-run --mem 50%
	has "$out" "TPCs all, GPU memory at most "
	run_rc out rc "$NVT" --no-mps --dry-run -c 0-3 "$WORK/nosuch"
	eq "$rc" 127 "$out"
	eq "$out" "nvtaskset: failed to execute $WORK/nosuch: No such file or directory"
	: >"$WORK/notexec"
	run_rc out rc "$NVT" --no-mps --dry-run -c 0-3 "$WORK/notexec"
	eq "$rc" 126 "$out"
	eq "$out" "nvtaskset: failed to execute $WORK/notexec: Permission denied"
	"$NVT" --no-mps --dry-run --json -c 0-3 "$WORK/nosuch" >"$WORK/dry.json" 2>/dev/null && rc=0 || rc=$?
	eq "$rc" 127 "--json's exit status"
	eq "$(cat "$WORK/dry.json")" "{\"version\":2,\"error\":\"failed to execute $WORK/nosuch: No such file or directory\"}"
	run_rc out rc "$NVT" --no-mps --dry-run --priority low "$APP"
	eq "$rc" 0 "$out"
}
