# 1000 segments of one user whose slots never settle (issue 23, 2, at full
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

part_scale() {
	local n=${SCALE_TASKS:-1000} i pids="" up l0 c0 l1 c1 got poked pid
	[ "$USERS_OK" == 1 ] || return 0
	part_begin "scale: $n segments left unsettled"
	for ((i = 0; i < n; i++)); do
		$(as_user 65533) "$NVT" --no-mps -c 0-3 sleep 600 >/dev/null 2>&1 &
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
