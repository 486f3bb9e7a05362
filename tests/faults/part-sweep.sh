# ENOSPC and EMFILE at every segment operation, one point a run: the Nth
# counted call of each process fails, for N = 1, 2, ... until a run has no
# Nth call. Sourced by tests/faults/run.sh.
# shellcheck shell=bash

# sweep ERRNO WHAT CHECK CMD...: runs CMD with the fault at each point, then
# CHECK (a function that judges RC and OUT); stops after the first run in
# which nothing was injected (or 400 points).
sweep() {
	local e=$1 what=$2 check=$3 at
	shift 3
	for ((at = 1; at <= 400; at++)); do
		inj "$e" "$at" "$@"
		judge "$RC" "$what, $e at call $at: $(tail -1 <<<"$OUT")"
		"$check" "$what, $e at call $at"
		[ "$INJ" != 0 ] || break
	done
	echo "  $what, $e: $((at - 1)) points"
}

# A start runs its task, partitioned, or says why it cannot: never unpartitioned.
check_start() {
	if [ "$RC" == 0 ]; then
		grep -q "tpcs=0-3 hung=0" <<<"$OUT" || bad lost "$1: the task ran on: $OUT"
	elif [ "$RC" -lt 124 ] && ! grep -q '^nvtaskset: ' <<<"$OUT"; then
		bad lost "$1: failed ($RC) without a word: $OUT"
	fi
	true
}
check_list() {
	[ "$RC" -ge 124 ] || [ "$RC" == 0 ] || grep -q '^nvtaskset: ' <<<"$OUT" ||
		bad lost "$1: -l failed ($RC) without a word: $OUT"
	tasks_intact "$1"
}
# Every task of the sweep still has its partition (-l tidies: it must remove
# no live task's segment, whatever fails meanwhile).
tasks_intact() {
	local pid want now pid_want
	for pid_want in "$HOLDER:0-31" "$MOVE:0-3" "$CLAIMED:14-15" "$TREE:10-11" "$TREE_CHILD:10-11"; do
		pid=${pid_want%%:*} want=${pid_want#*:}
		now=$(current "$pid")
		[ "$now" == "$want" ] || bad lost "$1: afterwards task $pid has $now, not $want"
	done
}
check_move() { check_change "$1" "$MOVE" "$WORK/u/move.state" 0-3 8-9 "$RC"; }
check_tree() {
	check_change "$1 (parent)" "$TREE" "$WORK/u/tree.state.parent" 10-11 12-13 "$RC"
	# The parent is back on 10-11: the child is 10-11 or 12-13 as -a -p left it.
	local now
	now=$(current "$TREE_CHILD")
	if [ "$RC" == 0 ] && [ "$now" != 12-13 ]; then
		bad lost "$1: reported done, but the child's partition is $now"
	elif [ "$now" != 10-11 ] && [ "$now" != 12-13 ]; then
		bad lost "$1: the child's partition is $now"
	fi
	timeout 20 "$NVT" -p -c 10-11 "$TREE_CHILD" >/dev/null 2>&1 || bad lost "$1: cannot put the child back"
}
check_claim() {
	local got
	got=$(sed -n 's/.*tpcs=\([-0-9,]*\) hung=0.*/\1/p' <<<"$OUT")
	if [ "$RC" == 0 ] && ! python3 - "$got" <<'PY'; then
import sys
def tpcs(text):
    out = set()
    for part in text.split(","):
        lo, _, hi = part.partition("-")
        out.update(range(int(lo), int(hi or lo) + 1))
    return out
got = tpcs(sys.argv[1])
sys.exit(0 if len(got) == 4 and not got & set(range(32)) else 1)
PY
		bad lost "$1: the claim got TPCs held by a live task, or not 4: $OUT"
	fi
	check_start_word "$1"
}
check_start_word() {
	[ "$RC" -ge 124 ] || [ "$RC" == 0 ] || grep -q '^nvtaskset: ' <<<"$OUT" ||
		bad lost "$1: failed ($RC) without a word: $OUT"
	true
}
check_claim_move() {
	local now
	now=$(current "$CLAIMED")
	if [ "$now" != 14-15 ] && ! python3 - "$now" <<'PY'; then
import sys
t = sys.argv[1]
ok = all(32 <= int(x) <= 65 for part in t.split(",") for x in part.split("-"))
sys.exit(0 if ok else 1)
PY
		bad lost "$1: the claimed move left $now"
	fi
	[ "$RC" != 0 ] || [ "$now" != 14-15 ] || bad lost "$1: reported done, but the task kept 14-15"
	timeout 20 "$NVT" -p -c 14-15 "$CLAIMED" >/dev/null 2>&1 || bad lost "$1: cannot put 14-15 back"
	settles "$WORK/u/claimed.state" 14-15 || bad lost "$1: the task does not take 14-15 back"
}
# An MPS start (the fake daemon) starts one daemon or says why; stop and
# status work afterwards, and no daemon is left that the pid file does not name.
check_mps_start() {
	local left
	check_start_word "$1"
	timeout 20 "$NVT" --mps stop >/dev/null 2>&1 || bad lost "$1: --mps stop fails afterwards"
	for left in $(pgrep -f "fake/bin/nvidia-cuda-mps-control -d"); do
		tr '\0' '\n' <"/proc/$left/environ" 2>/dev/null |
			grep -qx "CUDA_MPS_PIPE_DIRECTORY=$CUDA_MPS_PIPE_DIRECTORY" || continue
		bad lost "$1: a daemon left running ($left)"
		touch "$CUDA_MPS_PIPE_DIRECTORY/quit"
	done
	[ "$RC" != 0 ] || [ "$(grep -c 'args=-d' "$CUDA_MPS_PIPE_DIRECTORY/fake.log")" == 1 ] ||
		bad lost "$1: $(grep -c 'args=-d' "$CUDA_MPS_PIPE_DIRECTORY/fake.log") daemons started"
	rm -f "$CUDA_MPS_PIPE_DIRECTORY/fake.log"
}
check_calibrate() {
	check_start_word "$1"
	timeout 20 "$NVT" --topology >/dev/null 2>&1 || bad lost "$1: --topology fails afterwards"
}

part_sweep() {
	local e
	part_begin "sweep: ENOSPC, EMFILE at each call"
	start_fixture
	for e in ENOSPC EMFILE; do
		sweep "$e" start check_start "$NVT" --no-mps -c 0-3 "$APP" launch 2
		sweep "$e" -p check_move "$NVT" -p -c 8-9 "$MOVE"
		sweep "$e" "-a -p" check_tree "$NVT" -a -p -c 12-13 "$TREE"
		sweep "$e" "claim (start)" check_claim "$NVT" --no-mps -n 4 --exclude-running "$APP" launch 1
		sweep "$e" "claim (-p -n)" check_claim_move "$NVT" -p -n 4 --exclude-running "$CLAIMED"
		sweep "$e" -l check_list "$NVT" -l
		sweep "$e" --calibrate check_calibrate "$NVT" --calibrate
		(
			export CUDA_MPS_PIPE_DIRECTORY=$WORK/mps-pipe CUDA_MPS_LOG_DIRECTORY=$WORK/mps-log
			export PATH="$ROOT/tests/fake/bin:$PATH"
			sweep "$e" "--mps start" check_mps_start "$NVT" --mps start
			echo "P_RUNS=$P_RUNS P_FAULTS=$P_FAULTS P_CRASHES=$P_CRASHES P_HANGS=$P_HANGS P_LOST=$P_LOST" >"$WORK/mps.counts"
		)
		. "$WORK/mps.counts"
	done
	no_dead_claims "after the sweep" 32-65
	touch "$WORK/u/holder.stop" "$WORK/u/move.stop" "$WORK/u/claimed.stop" "$WORK/u/tree.stop"
	wait
	TASKS=
	part_end
}
