# Nested nvtaskset: the inner one wins, as with taskset. Sourced by tests/run-tests.sh:
# each t_NAME function is one test, run in a subshell under set -e with the helpers defined there.
# shellcheck shell=bash

t_nested_inner_wins() {
	# The shell execs its last command (the inner CLI runs in the shell's PID)...
	run_rc out rc "$NVT" --no-mps -c 0-3 sh -c "\"$NVT\" --no-mps -c 40-47 \"$APP\" launch 1"
	eq "$rc" 0 "exit status"
	has "$out" "tpcs=40-47 hung=0"
	# ...or vforks a child for it (dash: no fork handler runs)...
	run_rc out rc "$NVT" --no-mps -c 0-3 sh -c "\"$NVT\" --no-mps -c 40-47 \"$APP\" launch 1; true"
	eq "$rc" 0 "exit status"
	has "$out" "tpcs=40-47 hung=0"
	# ...or forks one (a background job; bash forks every child), which has a
	# segment of its own before the exec.
	run_rc out rc "$NVT" --no-mps -c 0-3 sh -c "\"$NVT\" --no-mps -c 40-47 \"$APP\" launch 1 & wait"
	eq "$rc" 0 "exit status"
	has "$out" "tpcs=40-47 hung=0"
	run_rc out rc "$NVT" --no-mps -c 0-3 sh -c "\"$NVT\" --no-mps -n 2 \"$APP\" launch 1; true"
	eq "$rc" 0 "exit status"
	has "$out" "tpcs=62-63 hung=0"
}
t_nested_disjoint_live() {
	# Two inner tasks run side by side on their own TPCs, and each can be moved.
	local a b
	rm -f "$WORK"/nd.*
	"$NVT" --no-mps -c 0-3 sh -c "
		\"$NVT\" --no-mps -c 40-43 \"$APP\" loop \"$WORK/nd.stop\" \"$WORK/nd.a\" & echo \$! >\"$WORK/nd.apid\"
		\"$NVT\" --no-mps -c 44-47 \"$APP\" loop \"$WORK/nd.stop\" \"$WORK/nd.b\" & echo \$! >\"$WORK/nd.bpid\"
		wait" >"$WORK/nd.out" 2>&1 &
	PID=$!
	wait_file "$WORK/nd.a" "40-43"
	wait_file "$WORK/nd.b" "44-47"
	a=$(cat "$WORK/nd.apid") b=$(cat "$WORK/nd.bpid")
	run_rc out rc "$NVT" -pc "$a"
	eq "$out" "pid $a's current TPC list: 40-43"
	run_rc out rc "$NVT" -pc "$b"
	eq "$out" "pid $b's current TPC list: 44-47"
	run_rc out rc "$NVT" -p -c 50 "$b"
	eq "$rc" 0 "-p exit status"
	wait_file "$WORK/nd.b" "50"
	eq "$(cat "$WORK/nd.a")" "40-43" "the other task's partition"
	touch "$WORK/nd.stop"
	wait "$PID" || die "nested tasks failed: $(cat "$WORK/nd.out")"
}
t_nested_outer_still_applies() {
	# The shell's other children, before and after the inner start, keep the outer partition.
	run_rc out rc "$NVT" --no-mps -c 0-3 sh -c "\"$APP\" launch 1; \"$NVT\" --no-mps -c 40-47 \
\"$APP\" launch 1; \"$APP\" launch 1"
	eq "$rc" 0 "exit status"
	eq "$(echo "$out" | sed -n 's/^\(tpcs=[^ ]*\) .*/\1/p' | tr '\n' ' ')" "tpcs=0-3 tpcs=40-47 tpcs=0-3 "
}
t_nested_calibrate_topology() {
	# The CLI runs without the shim's callback: calibration's probes reach every SM.
	run_rc out rc "$NVT" --no-mps -c 0-3 sh -c "\"$NVT\" --calibrate"
	eq "$rc" 0 "--calibrate exit status: $out"
	has "$out" "66 TPCs, 12 GPCs, calibrated in"
	has "$out" ", TMD layout V04_00 verified; saved in"
	run_rc out rc "$NVT" --no-mps -c 0-3 sh -c "\"$NVT\" --topology"
	eq "$rc" 0 "--topology exit status: $out"
	has "$out" "TMD layout V04_00, verified by calibration"
	# The bandwidth probe too: it sees the fake's two halves, not the shell's partition.
	run_rc out rc env FAKECUDA_MEMBW=halves NVTASKSET_CACHE_DIR="$WORK/nested-halves" \
		"$NVT" --no-mps -c 0-3 sh -c "\"$NVT\" --calibrate"
	eq "$rc" 0 "--calibrate exit status: $out"
	has "$out" "memory halves 0 = GPCs 0,4-6, 1 = GPCs 1-3,7"
}
t_nested_cli_leaves_no_segment() {
	# A CLI in a partitioned shell is no task: -l does not list it, and it leaves no file.
	local cli
	rm -f "$WORK"/nl.*
	"$NVT" --no-mps -c 0-3 sh -c "\"$NVT\" -l >\"$WORK/nl.out\" & echo \$! >\"$WORK/nl.pid\"; wait \$!"
	cli=$(cat "$WORK/nl.pid")
	has "$(cat "$WORK/nl.out")" "0-3"
	[ -z "$(awk -v p="$cli" '$1 == p' "$WORK/nl.out")" ] || die "-l listed itself: $(cat "$WORK/nl.out")"
	[ ! -e "$(seg_file "$cli")" ] || die "the CLI's segment was left behind"
	"$NVT" --no-mps -c 0-3 sh -c "\"$NVT\" --topology >/dev/null & echo \$! >\"$WORK/nl.pid\"; wait \$!"
	cli=$(cat "$WORK/nl.pid")
	[ ! -e "$(seg_file "$cli")" ] || die "the CLI's segment was left behind after --topology"
}
