# 1000 segments of one user whose slots never settle: root's -l and another
# user's -n 4 --exclude-running must cost at most 2x what they cost beside the
# same 1000 tasks with settled slots, and the claim must pick around the 1000
# tasks' TPCs (their slots count as held). The cost is counted, not timed (a
# busy machine stretches times, not counts): the system calls of the command
# and its children (strace -f -c: a reader that sleeps or retries on an
# unsettled slot makes more), and, in runs of their own without strace, their
# CPU time (getrusage of the children: a reader that spins makes more; under
# strace its ptrace stops scattered the CPU time of a busy machine's runs, a
# CI run's least of 5 read 6377 ms unsettled against 2648 settled, 1.29x run
# alone). Of SCALE_RUNS (5) rounds, each a run of both beside the settled slots
# and a run beside the same slots unsettled (segpoke odd, then even again),
# each run counted once under strace and timed SCALE_CPU_RUNS (3) times
# without: the medians of the calls and the least of the CPU times (a busy
# machine only adds to a run's CPU time); 2x plus 20 calls and 20 ms of slack.
# Sourced by tests/faults/run.sh.
# shellcheck shell=bash

# scale_cost WHAT CMD...: runs CMD once under strace -f -c, judging the run, then
# SCALE_CPU_RUNS times without; sets CALLS to the first's system calls and CPU to the least CPU
# ms (user + system) of the others.
scale_cost() {
	local what=$1 rc i
	shift
	timeout 120 strace -f -c -o "$WORK/scale.st" "$@" >"$WORK/scale.out" 2>&1 && rc=0 || rc=$?
	CALLS=$(awk '$NF == "total" {print $4}' "$WORK/scale.st")
	judge "$rc" "$what"
	[ "$rc" == 0 ] || echo "  $what failed: $(tail -2 "$WORK/scale.out")" >&2
	CPU=
	for ((i = 0; i < ${SCALE_CPU_RUNS:-3}; i++)); do
		scale_cpu "$what" "$@"
	done
}
# scale_cpu WHAT CMD...: runs CMD once, judging the run; CPU becomes its CPU ms (user + system
# of it and its children, as bash's time reads them from getrusage) where that is less.
scale_cpu() {
	local what=$1 rc ms TIMEFORMAT='%3U %3S'
	shift
	{ time timeout 120 "$@" >"$WORK/scale.cpu.out" 2>&1; } 2>"$WORK/scale.time" && rc=0 || rc=$?
	judge "$rc" "$what (timed)"
	[ "$rc" == 0 ] || echo "  $what failed: $(tail -2 "$WORK/scale.cpu.out")" >&2
	ms=$(awk '{printf "%d", ($1 + $2) * 1000}' "$WORK/scale.time")
	[ -n "$CPU" ] && [ "$CPU" -le "$ms" ] || CPU=$ms
}
# scale_both odd|even WHAT PIDS: every slot of the tasks PIDS unsettled (odd) or settled again
# (even), then runs of -l and of the claim beside them; sets B_L, B_LCPU, B_C and B_CCPU to
# their system calls and least CPU ms.
scale_both() {
	local poked n
	n=$(wc -w <<<"$3")
	# shellcheck disable=SC2086 # the PIDs, one word each
	poked=$("$T/segpoke" "$1" $3)
	[ "$poked" == "$n" ] || bad lost "only $poked of $n segments could be made $1"
	scale_cost "-l beside $2" "$NVT" -l
	B_L=$CALLS B_LCPU=$CPU
	scale_cost "a claim beside $2" $(as_user 65532) "$NVT" --no-mps -n 4 --exclude-running "$APP" launch 1
	B_C=$CALLS B_CCPU=$CPU
}
# median N...: the median of the numbers.
median() { printf '%s\n' "$@" | sort -n | awk '{v[NR] = $1} END {print v[int((NR + 1) / 2)]}'; }
# least N...: the least of the numbers.
least() { printf '%s\n' "$@" | sort -n | head -1; }

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
	# shellcheck disable=SC2086
	wait $more 2>/dev/null
}

part_scale() {
	local n=${SCALE_TASKS:-1000} i r pids="" up l0 c0 l1 c1 l0cpu c0cpu l1cpu c1cpu got
	local -a L0 C0 L1 C1 L0CPU C0CPU L1CPU C1CPU
	[ "$USERS_OK" == 1 ] || return 0
	part_begin "scale: $n segments left unsettled"
	command -v strace >/dev/null || { bad lost "the scale part counts with strace, which is missing"; part_end; return 0; }
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
	scale_agent
	for ((r = 0; r < ${SCALE_RUNS:-5}; r++)); do
		scale_both even "$n tasks" "$pids"
		L0+=("$B_L") L0CPU+=("$B_LCPU") C0+=("$B_C") C0CPU+=("$B_CCPU")
		scale_both odd "$n unsettled" "$pids"
		L1+=("$B_L") L1CPU+=("$B_LCPU") C1+=("$B_C") C1CPU+=("$B_CCPU")
		got=$(sed -n 's/.*tpcs=\([-0-9,]*\) hung=0.*/\1/p' "$WORK/scale.out")
		case ",$got," in
		,,) bad lost "the claim beside $n unsettled segments got no TPCs: $(tail -1 "$WORK/scale.out")" ;;
		*,[0-3],* | *,[0-3]-*) bad lost "the claim took TPCs of the unsettled segments: $got" ;;
		esac
	done
	l0=$(median "${L0[@]}") c0=$(median "${C0[@]}") l1=$(median "${L1[@]}") c1=$(median "${C1[@]}")
	l0cpu=$(least "${L0CPU[@]}") c0cpu=$(least "${C0CPU[@]}") l1cpu=$(least "${L1CPU[@]}")
	c1cpu=$(least "${C1CPU[@]}")
	echo "  -l: $l0 system calls and $l0cpu CPU ms at least beside $n tasks, $l1 and $l1cpu ms with" \
		"their slots unsettled ($n); a claim: $c0 and $c0cpu ms, $c1 and $c1cpu ms (got $got)"
	if [ "$l1" -gt $((2 * l0 + 20)) ] || [ "$c1" -gt $((2 * c0 + 20)) ] ||
		[ "$l1cpu" -gt $((2 * l0cpu + 20)) ] || [ "$c1cpu" -gt $((2 * c0cpu + 20)) ]; then
		SLOW="$SLOW scale"
		echo "  slow: over 2x the system calls or CPU time beside settled segments"
	fi
	# shellcheck disable=SC2086
	kill -TERM $pids 2>/dev/null
	wait 2>/dev/null
	TASKS=
	timeout 120 "$NVT" -l >/dev/null 2>&1 # tidies the run directories
	part_end
}
