# The priority agent's looks at the run directories beside many tasks without a priority
# (docs/priorities.md, "Limits"): what it opens per look, and in which look it follows a task
# with a priority. Counted from the agent's system calls under strace, never timed.
# Sourced by tests/run-tests.sh: each t_NAME function is one test, run in a subshell under set -e
# with the helpers defined there.
# shellcheck shell=bash

# look_re: what strace shows of the start of a look, the listing of the directory of run
# directories (opendir: O_NONBLOCK; taking its lock opens that directory too, without).
look_re() { echo "openat(AT_FDCWD, \"$NVTASKSET_RUNDIR\", O_RDONLY|O_NONBLOCK"; }
# looks_before FILE PATTERN: the agent's looks in strace's FILE before the first line that
# matches PATTERN; none if no line does.
looks_before() {
	awk -v base="$(look_re)" -v pat="$2" '
		index($0, base) { looks++ }
		$0 ~ pat { print looks + 0; exit }' "$1"
}
# strace's FILE is written with -ttt: each line holds the time of its call, in seconds since
# the epoch (the first field of the form S.U), which awk's at() reads.
AT_AWK='function at(  i) { for (i = 1; i <= NF; i++) if ($i ~ /^[0-9]+\.[0-9]+$/) return $i + 0 }'
# segment_opens FILE [SINCE]: for each complete look in strace's FILE (that began at SINCE, in
# seconds since the epoch, or later), the segment files it opened.
segment_opens() {
	awk -v base="$(look_re)" -v since="${2:-0}" "$AT_AWK"'
		index($0, base) && at() >= since { if (looks++) print n; n = 0 }
		looks && /openat\([0-9]+, "nvtaskset\.[0-9]+\.[0-9]+", / { n++ }' "$1"
}
# looks_reach FILE SINCE N: N looks in strace's FILE began at SINCE or later.
looks_reach() {
	[ "$(awk -v base="$(look_re)" -v since="$2" "$AT_AWK"'
		index($0, base) && at() >= since { n++ } END { print n + 0 }' "$1")" -ge "$3" ]
}
# newest_change DIR: the second in which the newest of DIR's segment files changed (ctime).
newest_change() {
	stat -c %Z "$1"/nvtaskset.[0-9]*.[0-9]* | sort -n | tail -n 1
}

t_prio_agent_looks_beside_plain_tasks() {
	# The agent started beside 150 plain tasks and a low and a high task follows both in
	# its first look (it does not open every task's segment at each look, nor 48 it does not
	# know yet in PID order, which put the low task in its fourth look; beside 1030 tasks in
	# the fault suite, 22 looks); a priority that -p gives a plain task changes its file's
	# ctime and is followed within two looks after -p returns; and once their files are a few
	# seconds old a look opens at most 64 + 8 of the 150 files, not all 150. (No --yield
	# guard: a task with it would start an agent of its own before this one.)
	command -v strace >/dev/null || skip "needs strace"
	local n=150 plain pid lo hi agent tracer name looks opens first out rc i ctime since
	# The plain tasks: sleeps of a partitioned shell, each with a segment its shim made.
	"$NVT" --no-mps -c 0-3 bash -c 'for ((i = 0; i < $0; i++)); do sleep 600 & done; wait' "$n" \
		>/dev/null 2>&1 &
	plain=$!
	# Ended here if the test fails: the sleeps and their shell, the agent once started, the
	# loops (the harness ends strace's).
	# shellcheck disable=SC2064 # (the PIDs as they are now)
	trap "pkill -TERM -P $plain || :; kill -TERM $plain 2>/dev/null || :; touch '$WORK/slo.stop' '$WORK/shi.stop' || :" EXIT
	wait_for 30 sh -c "[ \$(ls '$NVTASKSET_RUNDIR/nvtaskset-$ME_UID' | grep -c '^nvtaskset\.') -gt $n ]"
	start_loop slo "$NVT" --no-mps --priority low -c 9-65 "$APP"
	lo=$PID
	start_loop shi "$NVT" --no-mps --priority high -c 0-8 "$APP"
	hi=$PID
	wait_file "$WORK/slo.state" "9-65"
	wait_file "$WORK/shi.state" "0-8"
	strace -f -ttt -o "$WORK/agent.st" -e trace=openat bash -c 'exec -a "$0" "$@"' "$WORK/agent.scan" \
		"$NVT" --agent --hold 1000 --guard 4 2>"$WORK/scan.log" &
	tracer=$!
	wait_for 10 grep -q "poll" "$WORK/scan.log"
	agent=$(pgrep -f "^$WORK/agent.scan")
	# shellcheck disable=SC2064 # (the PIDs as they are now)
	trap "pkill -TERM -P $plain || :; kill -TERM $plain $agent 2>/dev/null || :; touch '$WORK/slo.stop' '$WORK/shi.stop' || :" EXIT
	name=$(basename "$(seg_file "$lo")")
	wait_for 30 grep -q "\"$name\", O_RDWR" "$WORK/agent.st"
	looks=$(looks_before "$WORK/agent.st" "\"$name\", O_RDWR")
	echo "the low task followed in look $looks beside $n plain tasks"
	eq "$looks" 1 "the look that followed the low task"
	# A priority given by -p changes the file's ctime after it is written (a write through
	# a mapping changes it at its first fault only), by which the agent reads it at its
	# next look.
	pid=$(pgrep -P "$plain" sleep | head -1)
	name=$(basename "$(seg_file "$pid")")
	ctime=$(stat -c %.9Z "$(seg_file "$pid")")
	# Counted from -p's return: on a loaded machine the agent may start several looks
	# while -p runs, before the priority is written.
	first=$(wc -l <"$WORK/agent.st")
	run_rc out rc "$NVT" -p --priority low "$pid"
	eq "$rc" 0 "-p --priority low: $out"
	[ "$(stat -c %.9Z "$(seg_file "$pid")")" != "$ctime" ] || die "-p --priority left the ctime"
	after=$(wc -l <"$WORK/agent.st")
	wait_for 30 sh -c "tail -n +$((first + 1)) '$WORK/agent.st' | grep -q '\"$name\", O_RDWR'"
	looks=0
	if ! head -n "$after" "$WORK/agent.st" | tail -n +$((first + 1)) | grep -q "\"$name\", O_RDWR"; then
		looks=$(tail -n +$((after + 1)) "$WORK/agent.st" | looks_before /dev/stdin "\"$name\", O_RDWR")
	fi
	echo "a plain task given a priority by -p followed after $looks looks from -p's return"
	[ "$looks" -le 2 ] || die "the agent followed a task -p gave a priority only after $looks looks"
	# A look that begins two seconds after the second in which the newest file changed
	# (the agent keeps what it read of a file only once its ctime is over a second old)
	# reads 64 files it knows again in turn (and whatever changed): a bounded number,
	# whatever the number of tasks. The first such look may read them all once more (on a
	# loaded machine no look may have come while they were between one and two seconds old,
	# and what it read of them younger it did not keep); counted in the 3 looks after it, by
	# strace's clock.
	since=$(($(newest_change "$NVTASKSET_RUNDIR/nvtaskset-$ME_UID") + 2))
	wait_for 60 looks_reach "$WORK/agent.st" "$since" 5
	opens=$(segment_opens "$WORK/agent.st" "$since" | sed -n 2,4p)
	echo "segment files opened in the 3 looks after the first from $since:" $opens
	eq "$(wc -w <<<"$opens")" 3 "looks counted"
	for i in $opens; do
		[ "$i" -le 72 ] || die "a look beside $n plain tasks opened $i segment files:" $opens
	done
	trap - EXIT
	kill -TERM "$agent"
	wait "$tracer" || true
	stop_loop shi "$hi"
	stop_loop slo "$lo"
	pkill -TERM -P "$plain"
	kill -TERM "$plain"
	wait
}
