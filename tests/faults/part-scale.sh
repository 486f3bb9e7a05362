# 1000 segments of one user whose slots never settle (at full
# scale): root's -l and another user's -n 4 --exclude-running must take at
# most 2x what they take beside the same 1000 tasks with settled slots, and
# the claim must pick around the 1000 tasks' TPCs (their slots count as
# held). Medians of SCALE_RUNS (5) runs each. Sourced by tests/faults/run.sh.
# shellcheck shell=bash

# scale_time WHAT CMD...: runs CMD SCALE_RUNS times, judging each run; sets MS to the median ms.
scale_time() {
	local what=$1 i rc t0 ms=()
	shift
	for ((i = 0; i < ${SCALE_RUNS:-5}; i++)); do
		t0=$(date +%s%N)
		timeout 120 "$@" >"$WORK/scale.out" 2>&1 && rc=0 || rc=$?
		ms+=($((($(date +%s%N) - t0) / 1000000)))
		judge "$rc" "$what"
		[ "$rc" == 0 ] || echo "  $what failed: $(tail -2 "$WORK/scale.out")" >&2
	done
	MS=$(printf '%s\n' "${ms[@]}" | sort -n | awk '{v[NR] = $1} END {print v[int((NR + 1) / 2)]}')
}

# guarded PID: task PID's mode is guarded (-l --json).
guarded() {
	timeout 120 "$NVT" -l --json 2>/dev/null | python3 -c '
import json, sys
rows = {t["pid"]: t["gpus"][0] for t in json.load(sys.stdin)["tasks"]}
sys.exit(rows.get(int(sys.argv[1]), {}).get("mode") != "guarded")' "$1"
}

# scale_agent: root's priority agent beside the part's plain tasks and 30 more (past its table
# of 1024, which plain tasks filled: it guarded nobody then, unsaid). Another user's low task
# (--yield guard) must be guarded beside root's high one within 60 s, and the agent's log say
# nothing of tasks it cannot follow.
scale_agent() {
	local i more="" agent hi lo ok=0
	for ((i = 0; i < 30; i++)); do
		$(as_user 65533) "$NVT" --no-mps -c 0-3 sleep 3600 >/dev/null 2>&1 &
		more="$more $!"
	done
	TASKS="${TASKS:-} $more"
	"$NVT" --agent --hold 100000 --guard 4 2>"$WORK/scale-agent.log" &
	agent=$!
	"$NVT" --no-mps --priority high -c 0-8 "$APP" loop "$WORK/u/shi.stop" "$WORK/u/shi.state" \
		>/dev/null 2>&1 &
	hi=$!
	$(as_user 65532) "$NVT" --no-mps --priority low --yield guard -c 9-65 "$APP" launch-wait 0 \
		"$WORK/u/slo.stop" >/dev/null 2>&1 &
	lo=$!
	for ((i = 0; i < 60; i++)); do
		guarded "$lo" && ok=1 && break
		sleep 1
	done
	judge $((1 - ok)) "a low task guarded beside 1030 plain tasks"
	[ "$ok" == 1 ] || bad lost "root's agent did not guard a low task beside 1030 plain tasks"
	grep -q "cannot follow" "$WORK/scale-agent.log" &&
		bad lost "the agent could not follow: $(grep -m1 "cannot follow" "$WORK/scale-agent.log")"
	echo "  root's agent beside 1030 plain tasks: the low task guarded after $i s"
	touch "$WORK/u/shi.stop" "$WORK/u/slo.stop"
	kill -TERM "$agent" 2>/dev/null
	wait "$agent" "$hi" "$lo" 2>/dev/null
	# shellcheck disable=SC2086
	kill -TERM $more 2>/dev/null
}

part_scale() {
	local n=${SCALE_TASKS:-1000} i pids="" up l0 c0 l1 c1 got poked pid
	[ "$USERS_OK" == 1 ] || return 0
	part_begin "scale: $n segments left unsettled"
	for ((i = 0; i < n; i++)); do
		$(as_user 65533) "$NVT" --no-mps -c 0-3 sleep 3600 >/dev/null 2>&1 &
		pids="$pids $!"
	done
	TASKS="${TASKS:-} $pids"
	for ((i = 0; i < 600; i++)); do
		up=$(find "$NVTASKSET_RUNDIR" -name 'nvtaskset.*' -user 65533 2>/dev/null | wc -l)
		[ "$up" -ge "$n" ] && break
		sleep 0.2
	done
	echo "  $up segments after $((SECONDS - P_BEGIN)) s"
	[ "$up" -ge "$n" ] || bad lost "only $up of $n tasks made segments"
	scale_time "-l beside $n tasks" "$NVT" -l
	l0=$MS
	scale_time "a claim beside $n tasks" $(as_user 65532) "$NVT" --no-mps -n 4 --exclude-running "$APP" launch 1
	c0=$MS
	scale_agent
	poked=0
	for pid in $pids; do
		"$T/segpoke" "$pid" allodd >/dev/null 2>&1 && poked=$((poked + 1))
	done
	[ "$poked" == "$n" ] || bad lost "only $poked of $n segments could be left unsettled"
	scale_time "-l beside $n unsettled" "$NVT" -l
	l1=$MS
	scale_time "a claim beside $n unsettled" $(as_user 65532) "$NVT" --no-mps -n 4 --exclude-running "$APP" launch 1
	c1=$MS
	got=$(sed -n 's/.*tpcs=\([-0-9,]*\) hung=0.*/\1/p' "$WORK/scale.out")
	case ",$got," in
	,,) bad lost "the claim beside $n unsettled segments got no TPCs: $(tail -1 "$WORK/scale.out")" ;;
	*,[0-3],* | *,[0-3]-*) bad lost "the claim took TPCs of the unsettled segments: $got" ;;
	esac
	echo "  -l: $l0 ms beside $n tasks, $l1 ms with their slots unsettled ($poked); a claim: $c0 ms, $c1 ms (got $got)"
	if [ "$l1" -gt $((2 * l0)) ] || [ "$c1" -gt $((2 * c0)) ]; then
		SLOW="$SLOW scale"
		echo "  slow: over 2x the time beside settled segments"
	fi
	# shellcheck disable=SC2086
	kill -TERM $pids 2>/dev/null
	wait 2>/dev/null
	TASKS=
	timeout 120 "$NVT" -l >/dev/null 2>&1 # tidies the run directories
	part_end
}
