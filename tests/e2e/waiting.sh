# Starts that find too few TPCs free: what their refusal says, and what others see of a start
# that waits (--wait). Sourced by tests/run-tests.sh: each t_NAME function is one test, run in
# a subshell under set -e with the helpers defined there.
# shellcheck shell=bash

# A start that finds too few TPCs free names the tasks that hold the others, most TPCs first,
# by PID and command line (cut to 80 bytes, what a terminal would act on shown as '?'), and
# says that --wait waits for them.
t_reserve_full_names_holders() {
	local h1 h2 c1 c2 esc=$'\e'
	start_loop h1 "$NVT" --no-mps -c 0-59 bash -c 'exec -a "$0" "$@"' $'hold\e]0;x\a' "$APP"
	h1=$PID
	start_loop h2 "$NVT" --no-mps -c 60-63 "$APP"
	h2=$PID
	wait_file "$WORK/h1.state" "0-59"
	wait_file "$WORK/h2.state" "60-63"
	c1="hold?]0;x? loop $WORK/h1.stop $WORK/h1.state"
	c2="$APP loop $WORK/h2.stop $WORK/h2.state"
	run_rc out rc "$NVT" --no-mps -n 4 --exclude-running "$APP" launch 1
	eq "$rc" 1 "exit status with 2 TPCs free"
	eq "$out" "nvtaskset: cannot pick 4 TPCs: only 2 are free of other tasks, the others held by \
pid $h1 (${c1:0:80}): 60, pid $h2 (${c2:0:80}): 4; --wait waits until they free enough"
	hasnt "$out" "$esc"
	stop_loop h2 "$h2"
	stop_loop h1 "$h1"
}

# -p on a start that waits (--wait) for free TPCs: the process is nvtaskset itself, with no
# partition until its command runs; -p refuses, saying so, and changes nothing.
t_wait_pid_says_waiting() {
	local h w verb
	start_loop h "$NVT" --no-mps -c 0-63 "$APP"
	h=$PID
	wait_file "$WORK/h.state" "0-63"
	start_loop w "$NVT" --no-mps -n 4 --exclude-running --wait "$APP"
	w=$PID
	wait_for 10 grep -q "waiting for a task to free them (--wait)" "$WORK/w.err"
	for args in "" "-c 0-3"; do
		verb="get"
		[ -z "$args" ] || verb="set"
		# shellcheck disable=SC2086
		run_rc out rc "$NVT" -p $args "$w"
		eq "$rc" 1 "-p $args on a waiting start: $out"
		has "$out" "nvtaskset: failed to $verb pid $w's partition: it is \
nvtaskset itself, not a task (a start that has not run its command yet, as one waiting with \
--wait for free TPCs, or nvtaskset's agent, top or exporter): a start holds no partition until \
its command runs as this PID; -p shows and changes it then"
	done
	[ ! -s "$WORK/w.state" ] || die "it launched on a full GPU: $(cat "$WORK/w.state")"
	stop_loop h "$h"
	wait_for 20 test -s "$WORK/w.state"
	run_rc out rc "$NVT" -p -c "$w"
	eq "$rc" 0 "-p once it runs: $out"
	stop_loop w "$w"
}
