# kill -9 of root's priority agent while it lends (AGENT_TRIALS, 10): a low task (--yield guard,
# 9-65, synchronising after each launch) borrows an idle high task's TPCs (0-8); the agent is
# killed at a random moment after, and the high task resumes or stays idle, at random. Within
# 15 s (the lease is 3 s) the low task must run on its own TPCs again, and -p must say so,
# without anybody's help; else "lost". Sourced by tests/faults/run.sh.
# shellcheck shell=bash

# agent_up PID: root's agent is PID (its pid file names it), within 15 s; else "lost". Tasks of a
# lower priority started before then start an agent of their own, and PID exits, refused.
agent_up() {
	local i
	for ((i = 0; i < 750; i++)); do
		[ "$(cut -d' ' -f1 "$NVTASKSET_RUNDIR/nvtaskset-0/agent.pid" 2>/dev/null)" == "$1" ] && return 0
		kill -0 "$1" 2>/dev/null || break
		sleep 0.02
	done
	bad lost "root's agent $1 did not come up: $(tail -1 "$WORK/agent-part.log")"
	return 1
}

part_agent() {
	local i n=${AGENT_TRIALS:-10} hi lo agent t0 ms took=()
	part_begin "agent: kill -9 while it lends ($n trials)"
	rm -f "$WORK/u/ahi.stop" "$WORK/u/alo.stop"
	touch "$WORK/u/ahi.pause"
	# Root's agent first: the low task's start would start one of its own otherwise.
	"$NVT" --agent --hold 50 --guard 4 2>>"$WORK/agent-part.log" &
	agent=$!
	agent_up "$agent"
	FAKEAPP_PAUSE=$WORK/u/ahi.pause "$NVT" --no-mps --priority high -c 0-8 "$APP" loop \
		"$WORK/u/ahi.stop" "$WORK/u/ahi.state" >/dev/null 2>&1 &
	hi=$!
	FAKEAPP_SYNC=1 "$NVT" --no-mps --priority low --yield guard -c 9-65 "$APP" loop \
		"$WORK/u/alo.stop" "$WORK/u/alo.state" >"$WORK/u/alo.out" 2>&1 &
	lo=$!
	TASKS="${TASKS:-} $hi $lo"
	for ((i = 0; i < n; i++)); do
		if ((i)); then
			rm -f "$WORK/u/ahi.pause"
			"$NVT" --agent --hold 50 --guard 4 2>>"$WORK/agent-part.log" &
			agent=$!
			agent_up "$agent"
			touch "$WORK/u/ahi.pause"
		fi
		P_RUNS=$((P_RUNS + 1))
		if ! settles "$WORK/u/alo.state" 0-65 && ! settles "$WORK/u/alo.state" 0-65 &&
			! settles "$WORK/u/alo.state" 0-65; then
			bad lost "trial $i: the low task never borrowed (it runs on $(cat "$WORK/u/alo.state"))"
			kill -KILL "$agent"
			wait "$agent" 2>/dev/null
			continue
		fi
		sleep "$(printf '0.%03d' $((RANDOM % 300)))"
		kill -KILL "$agent"
		wait "$agent" 2>/dev/null
		P_FAULTS=$((P_FAULTS + 1))
		((RANDOM % 2)) && rm -f "$WORK/u/ahi.pause"
		t0=$(date +%s%N)
		if settles "$WORK/u/alo.state" 9-65 || settles "$WORK/u/alo.state" 9-65 ||
			settles "$WORK/u/alo.state" 9-65; then
			took+=($((($(date +%s%N) - t0) / 1000000)))
			[ "$(current "$lo")" == 9-65 ] || bad lost "trial $i: -p says $(current "$lo") after the lease"
		else
			bad lost "trial $i: the low task still runs on $(cat "$WORK/u/alo.state") 15 s after the agent died"
		fi
	done
	ms=$(printf '%s\n' "${took[@]}" | sort -n | awk '{v[NR] = $1} END {if (NR) printf "median %d ms, max %d ms", v[int((NR + 1) / 2)], v[NR]}')
	echo "  the lent TPCs back after the kill: $ms (${#took[@]} of $n trials)"
	touch "$WORK/u/ahi.stop" "$WORK/u/alo.stop"
	wait "$hi" "$lo" 2>/dev/null
	grep -q "no priority agent runs any more" "$WORK/u/alo.out" ||
		bad lost "the low task did not warn that the lent TPCs went back"
	part_end
}
