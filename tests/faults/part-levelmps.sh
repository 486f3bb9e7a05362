# A level's MPS server killed under its clients (LEVELMPS_TRIALS, 10): two time-sliced tasks of
# priority low (--yield slice) join the low level's MPS daemon, which the first one's start
# starts (the fake daemon, tests/fake/bin/nvidia-cuda-mps-control: its PID stands for its
# server's while it has clients); it is killed (kill -9) at a random moment under them. Then,
# each within 20 s: the clients go on (the fake driver's clients need no server after their
# start) and end when told, with status 0; --mps status answers and names no low daemon; the
# level's next task starts, with a new daemon; --mps stop stops it. A command that does not
# end is a hang, a client that stops launching or a daemon left "lost". Sourced by
# tests/faults/run.sh.
# shellcheck shell=bash

# level_client TAG: a time-sliced low task in the background (its launches stamped); sets PID
# once it runs.
level_client() {
	local i
	rm -f "$WORK/u/$1.stop" "$WORK/u/$1.state" "$WORK/u/$1.stamps"
	FAKEAPP_STAMP=$WORK/u/$1.stamps FAKEAPP_STAMP_LAUNCHES=1 "$NVT" --priority low --yield slice \
		"$APP" loop "$WORK/u/$1.stop" "$WORK/u/$1.state" >"$WORK/u/$1.out" 2>&1 &
	PID=$!
	TASKS="${TASKS:-} $PID"
	for ((i = 0; i < 1000; i++)); do
		[ -s "$WORK/u/$1.state" ] && return 0
		sleep 0.02
	done
	bad hang "$1: the time-sliced task did not start: $(cat "$WORK/u/$1.out")"
	return 1
}
# launches_go_on TAG: the task's launches go on (more stamps within 20 s).
launches_go_on() {
	local n i
	n=$(wc -l <"$WORK/u/$1.stamps" 2>/dev/null)
	for ((i = 0; i < 1000; i++)); do
		[ "$(wc -l <"$WORK/u/$1.stamps" 2>/dev/null)" -gt "${n:-0}" ] && return 0
		sleep 0.02
	done
	return 1
}
# ends TAG PID WHAT: the task ends within 20 s of its stop file, status 0.
ends() {
	local i rc
	touch "$WORK/u/$1.stop"
	for ((i = 0; i < 1000; i++)); do
		kill -0 "$2" 2>/dev/null || break
		sleep 0.02
	done
	if kill -0 "$2" 2>/dev/null; then
		bad hang "$3: $1 did not end"
		kill -KILL "$2"
	fi
	wait "$2" && rc=0 || rc=$?
	judge "$rc" "$3: $1's end"
	[ "$rc" == 0 ] || [ "$rc" -ge 124 ] || bad lost "$3: $1 ended $rc: $(tail -2 "$WORK/u/$1.out")"
}
# mps CMD WHAT: nvtaskset --mps CMD within 20 s (status 0, or 3 for status without the shared
# daemon); sets OUT.
mps() {
	OUT=$(timeout 20 "$NVT" --mps "$1" 2>&1) && RC=0 || RC=$?
	judge "$RC" "$2: --mps $1"
	[ "$RC" == 0 ] || [ "$RC" == 3 ] || [ "$RC" -ge 124 ] || bad lost "$2: --mps $1 ($RC): $OUT"
}

part_levelmps() {
	local i n=${LEVELMPS_TRIALS:-10} a b daemon what saved_path=$PATH
	part_begin "levelmps: a level's MPS server killed ($n trials)"
	export PATH=$ROOT/tests/fake/bin:$PATH CUDA_MPS_PIPE_DIRECTORY=$WORK/mps-level \
		CUDA_MPS_LOG_DIRECTORY=$WORK/mps-level-log
	mkdir -p "$CUDA_MPS_PIPE_DIRECTORY"
	for ((i = 0; i < n; i++)); do
		what="trial $i"
		level_client la || break
		a=$PID
		level_client lb || break
		b=$PID
		daemon=$(cat "$CUDA_MPS_PIPE_DIRECTORY-low/nvidia-cuda-mps-control.pid" 2>/dev/null)
		if [ -z "$daemon" ] || ! kill -0 "$daemon" 2>/dev/null; then
			bad lost "$what: no daemon of the low level: $(cat "$WORK/u/la.out")"
			ends la "$a" "$what"
			ends lb "$b" "$what"
			continue
		fi
		sleep "$(printf '0.%03d' $((RANDOM % 500)))"
		kill -KILL "$daemon"
		P_FAULTS=$((P_FAULTS + 1))
		launches_go_on la && launches_go_on lb || bad lost "$what: a client stopped launching"
		mps status "$what"
		! grep -q "of priority low: running" <<<"$OUT" || bad lost "$what: --mps status names the killed daemon: $OUT"
		OUT=$(timeout 20 "$NVT" --priority low --yield slice "$APP" launch 1 2>&1) && RC=0 || RC=$?
		judge "$RC" "$what: the level's next task"
		{ [ "$RC" == 0 ] && grep -q "hung=0" <<<"$OUT" &&
			grep -q "started the MPS control daemon of priority low" <<<"$OUT"; } ||
			bad lost "$what: the level's next task: $OUT"
		ends la "$a" "$what"
		ends lb "$b" "$what"
		mps stop "$what"
		grep -q "stopped MPS control daemon of priority low" <<<"$OUT" ||
			bad lost "$what: --mps stop did not stop the new daemon: $OUT"
		mps status "$what: after"
		! grep -q "of priority low: running" <<<"$OUT" || bad lost "$what: a low daemon runs after --mps stop: $OUT"
	done
	export PATH=$saved_path
	unset CUDA_MPS_PIPE_DIRECTORY CUDA_MPS_LOG_DIRECTORY
	part_end
}
