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
