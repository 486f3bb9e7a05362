# Race-free -n --exclude-running: claims in the control segment, every user's tasks,
# the segment made before the exec. Sourced by tests/run-tests.sh: each t_NAME function is one
# test, run in a subshell under set -e with the helpers defined there (as_user: security.sh).
# shellcheck shell=bash

# CLAIM_WAIT: NVTASKSET_CLAIM_TIMEOUT for claimers that meet only each other: the most it takes.
# No claimer here stops mid-way, so the timeout never passes on a machine that runs them; a
# loaded machine took longer than 40 s to bring 32 of them through, and that is no failure.
# (The test's own time limit catches a claim that never ends.)
CLAIM_WAIT=3600
# all_nonempty FILE...: every FILE has something in it.
all_nonempty() {
	local f
	for f in "$@"; do [ -s "$f" ] || return 1; done
}

# concurrent_starts OTHER: 32 tasks started at once, each asking for 2 free TPCs,
# the odd ones with the command prefix OTHER (another user's, or none): no two
# get the same TPC (picks from one look gave most of them 1,9), and -l --json shows the same.
concurrent_starts() {
	local i other=$1 tags=() pids=() lists=() states=() out
	# shellcheck disable=SC2174 # the mode is the last directory's (its parents are there, or the umask's)
	mkdir -p -m 1777 "$WORK/u"
	for ((i = 0; i < 32; i++)); do
		tags+=("u/rc$i")
		states+=("$WORK/u/rc$i.state")
		if ((i % 2)); then
			start_loop "u/rc$i" $other env NVTASKSET_CLAIM_TIMEOUT=$CLAIM_WAIT "$NVT" \
				--no-mps -n 2 --exclude-running "$APP"
		else
			start_loop "u/rc$i" env NVTASKSET_CLAIM_TIMEOUT=$CLAIM_WAIT "$NVT" \
				--no-mps -n 2 --exclude-running "$APP"
		fi
		pids+=("$PID")
	done
	# Every task runs (its first launch wrote its TPCs), or one failed.
	poll_until 20 all_nonempty "${states[@]}" || true
	for ((i = 0; i < 32; i++)); do
		kill -0 "${pids[i]}" 2>/dev/null || die "task $i failed: $(cat "$WORK/${tags[i]}.err")"
		[ -s "$WORK/${tags[i]}.state" ] || die "task $i did not launch: $(cat "$WORK/${tags[i]}.err")"
		lists+=("$(cat "$WORK/${tags[i]}.state")")
	done
	echo "launched on: ${lists[*]}"
	disjoint_lists "${lists[@]}"
	# -l --json shows the same: 32 tasks (both users'), 2 TPCs each, none shared.
	out=$(timeout "$HANG" "$NVT" -l --json)
	python3 - "$out" "${pids[@]}" <<'PY' || die "-l --json: $out"
import json, sys
rows = {t["pid"]: t for t in json.loads(sys.argv[1])["tasks"]}
seen = set()
for pid in map(int, sys.argv[2:]):
    g = rows[pid]["gpus"]
    assert len(g) == 1 and g[0]["tpc_count"] == 2, g
    t = set(g[0]["tpc_ids"])
    assert len(t) == 2 and not seen & t, (g, seen)
    seen |= t
PY
	[ -z "$other" ] || [ "$(awk '$3 == "nobody"' <<<"$(timeout "$HANG" "$NVT" -l)" | wc -l)" == 16 ] ||
		die "not 16 tasks of the other user: $(timeout "$HANG" "$NVT" -l)"
	for ((i = 0; i < 32; i++)); do
		stop_loop "${tags[i]}" "${pids[i]}"
	done
}
t_reserve_concurrent_disjoint() { concurrent_starts ""; }
t_reserve_concurrent_disjoint_users() {
	# The same, half of the tasks another user's (as root, with setpriv; the
	# harness reports it skipped otherwise, as security.sh's tests).
	need_users
	concurrent_starts "$(as_user 65534)"
}
t_reserve_killed_task_freed() {
	# A task's TPCs are held while it lives, and free once it is killed outright.
	local first
	start_loop rk "$NVT" --no-mps -n 64 --exclude-running "$APP"
	first=$PID
	wait_for 10 test -s "$WORK/rk.state"
	run_rc out rc "$NVT" --no-mps -n 4 --exclude-running "$APP" launch 1
	eq "$rc" 1 "exit status with 2 TPCs free"
	eq "$out" "nvtaskset: cannot pick 4 TPCs: only 2 are free of other tasks$(held_by "$first" 64)"
	kill -KILL "$first"
	wait "$first" 2>/dev/null || true
	run_rc out rc "$NVT" --no-mps -n 4 --exclude-running "$APP" launch 1
	eq "$rc" 0 "exit status after the kill: $out"
	has "$out" "tpcs=0,8,16,24 hung=0" # TPC 0 was the killed task's
}

# --wait: a claim that finds the GPU full waits, and starts once a task that ends (its shim
# removes its segment: an event) or is killed (its segment stays: a later look) frees its TPCs.
t_reserve_wait_for_room() {
	local h1 h2 w w2 state
	start_loop h1 "$NVT" --no-mps -c 0-59 "$APP"
	h1=$PID
	start_loop h2 "$NVT" --no-mps -c 60-63 "$APP"
	h2=$PID
	wait_file "$WORK/h1.state" "0-59"
	wait_file "$WORK/h2.state" "60-63"
	start_loop w "$NVT" --no-mps -n 4 --exclude-running --wait "$APP"
	w=$PID
	wait_for 10 grep -qx "nvtaskset: cannot pick 4 TPCs: only 2 are free of other tasks; waiting for a task to free them (--wait)" "$WORK/w.err"
	# It waits: alive, no launch, no segment of its own (a waiting claim holds nothing).
	kill -0 "$w" || die "the waiting claim ended: $(cat "$WORK/w.err")"
	[ ! -s "$WORK/w.state" ] || die "it launched on a full GPU: $(cat "$WORK/w.state")"
	[ -z "$(seg_file "$w")" ] || [ ! -e "$(seg_file "$w")" ] || die "it holds a segment while it waits"
	# The task on 60-63 ends: the claim takes 4 of the 6 free TPCs, clear of 0-59.
	stop_loop h2 "$h2"
	wait_for 20 test -s "$WORK/w.state"
	state=$(cat "$WORK/w.state")
	disjoint_lists 0-59 "$state"
	eq "$(tpc_count "$state")" 4 "the waiting claim's TPCs ($state)"
	has "$(cat "$WORK/w.err")" "nvtaskset: the TPCs are free after"
	has "$(cat "$WORK/w.err")" "nvtaskset: GPU 0 ("
	# A task killed outright leaves its segment (no event): a later look finds its TPCs free.
	start_loop w2 "$NVT" --no-mps -n 3 --exclude-running --wait=3600 "$APP"
	w2=$PID
	wait_for 10 grep -qx "nvtaskset: cannot pick 3 TPCs: only 2 are free of other tasks; waiting up to 3600 s for a task to free them (--wait=3600)" "$WORK/w2.err"
	[ ! -s "$WORK/w2.state" ] || die "it launched on a full GPU: $(cat "$WORK/w2.state")"
	kill -KILL "$w"
	wait "$w" 2>/dev/null || true
	wait_for 20 test -s "$WORK/w2.state"
	disjoint_lists 0-59 "$(cat "$WORK/w2.state")"
	eq "$(tpc_count "$(cat "$WORK/w2.state")")" 3 "the second claim's TPCs"
	stop_loop w2 "$w2"
	stop_loop h1 "$h1"
}

# --wait=TIMEOUT ends with the reason, and who holds the TPCs, once TIMEOUT passed; --wait goes
# with -n N --exclude-running.
t_reserve_wait_timeout() {
	local h started c
	start_loop h "$NVT" --no-mps -c 0-63 "$APP"
	h=$PID
	c="$APP loop $WORK/h.stop $WORK/h.state"
	wait_file "$WORK/h.state" "0-63"
	started=$(date +%s%N)
	run_rc out rc "$NVT" --no-mps -n 4 --exclude-running --wait=1 "$APP" launch 1
	eq "$rc" 1 "exit status: $out"
	eq "$out" "nvtaskset: cannot pick 4 TPCs: only 2 are free of other tasks; waiting up to 1 s for a task to free them (--wait=1)
nvtaskset: gave up waiting after 1 s (--wait=1): cannot pick 4 TPCs: only 2 are free of other tasks, the others held by pid $h (${c:0:80}): 64"
	[ $(($(date +%s%N) - started)) -ge 1000000000 ] || die "gave up before the timeout"
	# What fits starts at once, waiting for nothing.
	run_rc out rc "$NVT" --no-mps -n 2 --exclude-running --wait=1 "$APP" launch 1
	eq "$rc" 0 "$out"
	hasnt "$out" "waiting"
	has "$out" "tpcs=64-65 hung=0"
	for bad in "--wait -n 4" "--wait=0 -n 4 --exclude-running" "--wait=x -n 4 --exclude-running" \
		"--wait=31622401 -n 4 --exclude-running" "--wait -c 0-3" "--wait --dry-run -n 4 --exclude-running"; do
		# shellcheck disable=SC2086 # the words
		run_rc out rc "$NVT" --no-mps $bad "$APP" launch 1
		eq "$rc" 1 "$bad: $out"
		has "$out" "--wait"
		has "$out" "Try 'nvtaskset --help' for more information."
	done
	run_rc out rc "$NVT" -p -n 4 --exclude-running --wait "$h"
	eq "$rc" 1 "-p --wait: $out"
	has "$out" "nvtaskset: --wait goes with starting a command with -n N --exclude-running"
	stop_loop h "$h"
}

# A waiting claim looks again on an event of the run directories (a task's segment removed)
# or once a second without one: a task that ends wakes its wait (the wait returns an event,
# counted under strace) even where what it frees is not enough, and its waits stay within the
# seconds it waited and the events it got (never a busy loop).
t_reserve_wait_no_busy_loop() {
	local h h2 w started elapsed_ms waits events
	command -v strace >/dev/null || skip "needs strace to count a waiting claim's waits"
	start_loop h "$NVT" --no-mps -c 0-59 "$APP"
	h=$PID
	start_loop h2 "$NVT" --no-mps -c 60 "$APP"
	h2=$PID
	wait_file "$WORK/h.state" "0-59"
	wait_file "$WORK/h2.state" "60"
	started=$(date +%s%N)
	# (its own process only, no -f: a child's line between a call and its end would cut
	# the call's line in two)
	start_loop w strace -o "$WORK/w.strace" -e trace=poll,ppoll,openat \
		"$NVT" --no-mps -n 7 --exclude-running --wait "$APP"
	w=$PID
	wait_for 20 grep -q "only 5 are free of other tasks; waiting for a task to free them (--wait)" "$WORK/w.err"
	# A wait without an event (a second), then the task on TPC 60 ends: an event, and 6 TPCs
	# free are not 7: it waits on, claiming nothing.
	wait_for 20 eval '[ "$(waits_ending "= 0 (Timeout)")" -ge 1 ]'
	eq "$(waits_ending "= 1 ")" 0 "events before the task's end"
	stop_loop h2 "$h2"
	wait_for 20 eval '[ "$(waits_ending "= 1 ")" -ge 1 ]'
	kill -0 "$w" && [ ! -s "$WORK/w.state" ] || die "the claim did not wait on: $(cat "$WORK/w.err")"
	# The task on 0-59 ends: it starts.
	stop_loop h "$h"
	wait_for 20 test -s "$WORK/w.state"
	elapsed_ms=$((($(date +%s%N) - started) / 1000000))
	waits=$(waits_ending "= ")
	events=$(waits_ending "= 1 ")
	echo "waits=$waits events=$events in ${elapsed_ms} ms"
	[ "$waits" -le $((elapsed_ms / 1000 + events + 2)) ] || die "$waits waits in $elapsed_ms ms with $events events"
	# It claimed twice, making its segment each time: when it found the GPU full, and once
	# a look found room. Its looks while it waited made nothing (that would wake the
	# others that wait).
	eq "$(grep -c 'openat([^"]*"nvtaskset\.[0-9]*\.[0-9]*", [^)]*O_CREAT' "$WORK/w.strace")" 2 \
		"the claims it made: $(grep O_CREAT "$WORK/w.strace")"
	eq "$(tpc_count "$(cat "$WORK/w.state")")" 7 "its TPCs"
	stop_loop w "$w"
}
# waits_ending TEXT: the waiting claim's waits (polls of its one watch, in w.strace) whose
# result begins with TEXT. strace splits a call that another traced call interrupts into
# "poll(... <unfinished ...>" and "<... poll resumed>) = RESULT": the resumed half counts too.
waits_ending() {
	grep -c "poll(\[{fd=[0-9]*, events=POLLIN}\], 1, [0-9]*) *$1\|<\.\.\. poll resumed>) *$1" \
		"$WORK/w.strace" || :
}

t_reserve_claim_respected() {
	# A claim that a claimer left (stopped mid-way; segpoke makes one) holds its
	# TPCs: a start that fits beside it runs, one that needs them waits for it,
	# then says so. A claimer killed outright holds nothing.
	local holder started
	start_loop rh "$NVT" --no-mps -c 0-64 "$APP"
	holder=$PID
	wait_file "$WORK/rh.state" "0-64"
	"$T/segpoke" "$holder" claim
	run_rc out rc env NVTASKSET_CLAIM_TIMEOUT=1 "$NVT" --no-mps -n 1 --exclude-running "$APP" launch 1
	eq "$rc" 0 "exit status beside the claim: $out"
	has "$out" "tpcs=65 hung=0"
	started=$(date +%s%N)
	run_rc out rc env NVTASKSET_CLAIM_TIMEOUT=1 "$NVT" --no-mps -n 2 --exclude-running "$APP" launch 1
	eq "$rc" 1 "exit status under the claim: $out"
	eq "$out" "nvtaskset: cannot pick 2 TPCs: 66 are free of other tasks' partitions, but other starting tasks held claims on them for 1 s"
	[ $(($(date +%s%N) - started)) -ge 1000000000 ] || die "gave up before the timeout"
	kill -KILL "$holder"
	wait "$holder" 2>/dev/null || true
	[ -e "$(seg_file "$holder")" ] || die "expected the killed claimer's segment to be left"
	run_rc out rc env NVTASKSET_CLAIM_TIMEOUT=1 "$NVT" --no-mps -n 2 --exclude-running "$APP" launch 1
	eq "$rc" 0 "exit status after the claimer died: $out"
	has "$out" "tpcs=62-63 hung=0"
}
t_reserve_slow_scans_not_failed() {
	# A claimer that nobody contends, whose first scans a loaded host stretches past its
	# timeout and the re-picks after it (strace holds its first directory reads 1.2 s
	# each, timeout 1 s: the first round ends past 2 s), still confirms: it gives up only
	# after rounds it ran past the deadline, not for time it was kept from running.
	run_rc out rc env NVTASKSET_CLAIM_TIMEOUT=1 timeout "$HANG" strace -f -o /dev/null \
		-e trace=getdents64 -e inject=getdents64:delay_enter=1200000:when=1..3 \
		"$NVT" --no-mps -n 2 --exclude-running "$APP" launch 1
	eq "$rc" 0 "exit status after slow scans: $out"
	has "$out" "tpcs=62-63 hung=0"
}
t_reserve_waits_for_later_claim() {
	# A claimer started earlier than another claims over the later one's claim,
	# and waits for it to go before it confirms (it would otherwise wait for the
	# timeout and pick around it).
	local p q
	rm -f "$WORK/rw.go"
	mkfifo "$WORK/rw.go"
	# (It waits NVTASKSET_CLAIM_TIMEOUT for the later claim: CLAIM_WAIT, longer than the test
	# takes however loaded the machine.) It starts now, and claims once the FIFO is written.
	sh -c "read -r _ <\"$WORK/rw.go\"; exec env NVTASKSET_CLAIM_TIMEOUT=$CLAIM_WAIT \"$NVT\" --no-mps -n 3 --exclude-running \"$APP\" launch 1" \
		>"$WORK/rw.out" 2>&1 &
	p=$!
	wait_later_start "$p"
	start_loop rq "$NVT" --no-mps -c 0-64 "$APP"
	q=$PID
	wait_file "$WORK/rq.state" "0-64"
	"$T/segpoke" "$q" claim
	echo go >"$WORK/rw.go"
	wait_for 10 has_segment "$p" # it claims in its segment
	wait_sleeps "$p" 50 # 50 rounds of its wait (1 ms or less each)
	kill -0 "$p" 2>/dev/null || die "did not wait for the later claim: $(cat "$WORK/rw.out")"
	kill -KILL "$q"
	wait "$q" 2>/dev/null || true
	wait "$p" || die "the earlier claimer failed: $(cat "$WORK/rw.out")"
	has "$(cat "$WORK/rw.out")" "tpcs=62-64 hung=0" # under the later claim
}
t_reserve_segment_before_exec() {
	# The command makes the task's segment before it execs: a program that
	# loads no shim still holds its partition; a failed exec leaves none.
	local pid
	NVTASKSET_SHIM=$B/stub/libcuda.so "$NVT" --no-mps -c 62-65 sleep 30 &
	pid=$!
	poll_until 5 has_segment "$pid" || true
	run_rc out rc "$NVT" -pc "$pid"
	has "$out" "pid $pid's current TPC list: 62-65"
	# It counts for -n --exclude-running, and for --dry-run's pick (which claims nothing).
	run_rc out rc "$NVT" --no-mps -n 2 --exclude-running --dry-run
	eq "$out" "GPU 0 ($(fake_uuid)): TPCs 0,8"
	run_rc out rc "$NVT" --no-mps -n 63 --exclude-running "$APP" launch 1
	eq "$out" "nvtaskset: cannot pick 63 TPCs: only 62 are free of other tasks$(held_by "$pid" 4)"
	kill "$pid"
	wait "$pid" 2>/dev/null || true
	for args in "-c 0-3" "-n 2 --exclude-running"; do
		# shellcheck disable=SC2086
		"$NVT" --no-mps $args "$WORK/no-such-program" 2>"$WORK/rx.err" &
		pid=$!
		wait "$pid" && rc=0 || rc=$?
		eq "$rc" 127 "exit status of a failed exec ($args)"
		has "$(cat "$WORK/rx.err")" "failed to execute"
		[ ! -e "$(seg_file "$pid")" ] || die "a failed exec ($args) left $(seg_file "$pid")"
	done
}
t_reserve_nested_inner_wins() {
	# Inside a partitioned shell, -n --exclude-running claims clear of the shell's
	# TPCs, and the program runs on the claim, not on the shell's partition. The
	# shell holds the TPCs that the pick takes on a free GPU (62-63: the lone TPCs
	# fit 2 best), so a claim that passed over the shell would take them.
	run_rc out rc "$NVT" --no-mps -n 2 --exclude-running --dry-run
	eq "$out" "GPU 0 ($(fake_uuid)): TPCs 62-63" "the pick on a free GPU"
	run_rc out rc "$NVT" --no-mps -c 60-65 sh -c "\"$NVT\" --no-mps -n 2 --exclude-running \"$APP\" launch 1 & wait"
	eq "$rc" 0 "exit status: $out"
	has "$out" "nvtaskset: GPU 0 ($(fake_uuid)): TPCs 0,8"
	has "$out" "tpcs=0,8 hung=0"
	disjoint_lists 60-65 0,8
}
t_reserve_multigpu() {
	# Claims on several GPUs at once; a GPU left unpartitioned (--gpu) claims nothing.
	local a
	two_gpus
	start_loop rm env FAKEAPP_ALL=1 "$NVT" --no-mps --gpu 1 -n 4 --exclude-running "$APP"
	a=$PID
	wait_file "$WORK/rm.state" "0-65|0,8,16,24"
	# GPU 0 is free (the task runs there unpartitioned); GPU 1 has its 4 taken.
	run_rc out rc env FAKEAPP_ALL=1 "$NVT" --no-mps -n 4 --exclude-running "$APP" launch 1
	eq "$rc" 0 "exit status: $out"
	has "$out" "tpcs=0,8,16,24|62-65 hung=0"
	run_rc out rc "$NVT" --no-mps -n 63 --exclude-running "$APP" launch 1
	eq "$rc" 1
	eq "$out" "nvtaskset: cannot pick 63 TPCs on $(fake_uuid 1): only 62 are free of other tasks$(held_by "$a" 4)"
	stop_loop rm "$a"
}
t_reserve_claim_timeout_values() {
	# NVTASKSET_CLAIM_TIMEOUT: unset or empty is 10 s; 1-3600 is taken; anything
	# else (negative, 0, not a number, a trailing word, huge) is refused before
	# anything starts, with the value in the message. Only -n --exclude-running
	# reads it.
	local v
	rm -f "$WORK/ct.flag"
	run_rc out rc env NVTASKSET_CLAIM_TIMEOUT= "$NVT" --no-mps -n 2 --exclude-running "$APP" launch 1
	eq "$rc" 0 "empty: $out"
	for v in 1 3600 +5; do
		run_rc out rc env NVTASKSET_CLAIM_TIMEOUT="$v" "$NVT" --no-mps -n 2 --exclude-running "$APP" launch 1
		eq "$rc" 0 "NVTASKSET_CLAIM_TIMEOUT=$v: $out"
	done
	for v in -1 0 abc 2s 1.5 3601 99999999999999999999 " "; do
		run_rc out rc env NVTASKSET_CLAIM_TIMEOUT="$v" "$NVT" -n 2 --exclude-running touch "$WORK/ct.flag"
		eq "$rc" 1 "NVTASKSET_CLAIM_TIMEOUT='$v': $out"
		eq "$out" "nvtaskset: NVTASKSET_CLAIM_TIMEOUT must be 1-3600 seconds, not '$v'"
	done
	[ ! -e "$WORK/ct.flag" ] || die "a command started with a bad NVTASKSET_CLAIM_TIMEOUT"
	# (MPS was not started either: no daemon answers.)
	run_rc out rc "$NVT" --mps status
	eq "$rc" 3 "MPS after the refusals: $out"
	run_rc out rc env NVTASKSET_CLAIM_TIMEOUT=abc "$NVT" --no-mps -c 0-3 "$APP" launch 1
	eq "$rc" 0 "a MASK claims nothing: $out"
}
t_reserve_concurrent_moves() {
	# Tasks moved at once with -p -n COUNT --exclude-running, while other tasks
	# start with -n --exclude-running, never share a TPC: a move claims its pick
	# in the moved task's segment, as a start does (picks from one look
	# took the same TPCs).
	local i tags=() pids=() movers=() lists=() out
	for ((i = 0; i < 16; i++)); do
		start_loop "cm$i" "$NVT" --no-mps -c 65 "$APP"
		tags+=("cm$i")
		pids+=("$PID")
	done
	for tag in "${tags[@]}"; do wait_file "$WORK/$tag.state" "65"; done
	export NVTASKSET_CLAIM_TIMEOUT=$CLAIM_WAIT
	for ((i = 0; i < 16; i++)); do
		"$NVT" -p -n 3 --exclude-running "${pids[i]}" >"$WORK/cm$i.move" 2>&1 &
		movers+=($!)
		if ((i % 4 == 0)); then
			start_loop "cs$i" "$NVT" --no-mps -n 3 --exclude-running "$APP"
			tags+=("cs$i")
			pids+=("$PID")
		fi
	done
	for ((i = 0; i < 16; i++)); do
		wait "${movers[i]}" || die "move $i failed: $(cat "$WORK/cm$i.move")"
	done
	# The tasks started meanwhile have launched (their start claimed and wrote its segment): a
	# start that still claims is left out of -l, its segment not filled in yet.
	for ((i = 16; i < ${#tags[@]}; i++)); do
		wait_nonempty "$WORK/${tags[i]}.state" 30
	done
	local tagged=()
	for ((i = 0; i < ${#tags[@]}; i++)); do tagged+=("${tags[i]}:${pids[i]}"); done
	out=$(timeout "$HANG" "$NVT" -l --json 2>"$WORK/l.err")
	python3 - "$out" "${tagged[@]}" <<'PY' && rc=0 || rc=$?
import json, sys
rows = {t["pid"]: t for t in json.loads(sys.argv[1])["tasks"]}
tasks = [(tag, int(pid)) for tag, pid in (a.split(":") for a in sys.argv[2:])]
missing = [(tag, pid) for tag, pid in tasks if pid not in rows]
if missing:
    print("missing from -l --json:", ", ".join("%s (pid %d)" % m for m in missing))
    sys.exit(2)
print("partitions:", [(tag, pid, rows[pid]["gpus"][0]["tpcs"]) for tag, pid in tasks])
seen = {}
for tag, pid in tasks:
    g = rows[pid]["gpus"]
    assert len(g) == 1 and g[0]["tpc_count"] == 3, (tag, pid, g)
    for t in g[0]["tpc_ids"]:
        assert t not in seen, "TPC %d: %s and %s (pid %d)" % (t, seen[t], tag, pid)
        seen[t] = "%s (pid %d)" % (tag, pid)
PY
	case $rc in
	0) ;;
	2) die "-l --json left out a task (a task is left out while its segment cannot be read: being made, or being written by another nvtaskset; -l said: $(cat "$WORK/l.err"))" ;;
	*) die "overlapping partitions, or a task not on 3 TPCs (above)" ;;
	esac
	# Each task launches on what -l shows.
	for ((i = 0; i < ${#tags[@]}; i++)); do
		lists+=("$(python3 -c 'import json,sys; print([t for t in json.loads(sys.argv[1])["tasks"] if t["pid"]==int(sys.argv[2])][0]["gpus"][0]["tpcs"])' "$out" "${pids[i]}")")
		wait_file "$WORK/${tags[i]}.state" "${lists[i]}"
	done
	disjoint_lists "${lists[@]}"
	for ((i = 0; i < ${#tags[@]}; i++)); do
		stop_loop "${tags[i]}" "${pids[i]}"
	done
}
t_reserve_move_claims() {
	# -p -n COUNT --exclude-running PID: the task's own TPCs count as free, a
	# pick that does not fit fails with the task left on its partition, naming
	# the tasks that hold the others (a JSON error with --json), and the pick
	# goes through the claim protocol: the
	# task, started before a claimer stopped mid-way (segpoke), waits for that
	# later claim as long as NVTASKSET_CLAIM_TIMEOUT says, then picks around it.
	local h t c started held
	start_loop mh "$NVT" --no-mps -c 0-61 "$APP"
	h=$PID
	start_loop mt "$NVT" --no-mps -c 62 "$APP"
	t=$PID
	wait_file "$WORK/mh.state" "0-61"
	wait_file "$WORK/mt.state" "62"
	held=$(held_by "$h" 62)
	held=${held%; --wait waits until they free enough} # (-p does not wait)
	run_rc out rc "$NVT" -p -n 5 --exclude-running "$t"
	eq "$rc" 1 "exit status: $out"
	eq "$out" "nvtaskset: failed to set pid $t's partition: cannot pick 5 TPCs: only 4 are free of other tasks$held"
	out=$(timeout "$HANG" "$NVT" -p --json -n 5 --exclude-running "$t" 2>/dev/null) && rc=0 || rc=$?
	eq "$rc" 1
	eq "$out" "{\"version\":2,\"error\":\"failed to set pid $t's partition: cannot pick 5 TPCs: only 4 are free of other tasks$held\"}"
	out=$(timeout "$HANG" "$NVT" -pc "$t" 2>/dev/null)
	eq "$out" "pid $t's current TPC list: 62" "the task after the failed moves"
	run_rc out rc "$NVT" -p -n 4 --exclude-running "$t"
	eq "$rc" 0 "exit status: $out"
	wait_file "$WORK/mt.state" "62-65"
	run_rc out rc "$NVT" -p -c 62 "$t"
	wait_file "$WORK/mt.state" "62"
	# A claimer that started after the task, stopped with a claim on 63-64.
	start_loop mc "$NVT" --no-mps -c 63-64 "$APP"
	c=$PID
	wait_file "$WORK/mc.state" "63-64"
	"$T/segpoke" "$c" claim
	started=$(date +%s%N)
	run_rc out rc env NVTASKSET_CLAIM_TIMEOUT=1 "$NVT" -p -n 2 --exclude-running "$t"
	eq "$rc" 0 "exit status beside the claim: $out"
	eq "$out" "pid $t's current TPC mask: 4000000000000000
pid $t's new TPC mask: 24000000000000000" "around the claim, at once"
	wait_file "$WORK/mt.state" "62,65"
	# 3 fit only on the claim's TPCs: the task (the earlier claimer) claims over
	# it and waits for it to yield; it does not, and the move fails after the
	# timeout, saying so, the task back on its partition.
	started=$(date +%s%N)
	run_rc out rc env NVTASKSET_CLAIM_TIMEOUT=1 "$NVT" -p -n 3 --exclude-running "$t"
	eq "$rc" 1 "exit status under the claim: $out"
	eq "$out" "nvtaskset: failed to set pid $t's partition: cannot pick 3 TPCs: 4 are free of other tasks' partitions, but other starting tasks held claims on them for 1 s"
	[ $(($(date +%s%N) - started)) -ge 1000000000 ] || die "did not wait for the later claim"
	out=$(timeout "$HANG" "$NVT" -pc "$t" 2>/dev/null)
	eq "$out" "pid $t's current TPC list: 62,65" "the task after the failed move"
	wait_file "$WORK/mt.state" "62,65"
	stop_loop mc "$c"
	stop_loop mt "$t"
	stop_loop mh "$h"
}
t_reserve_dry_run_counts_as_a_claim() {
	# --dry-run -n --exclude-running counts what a claim counts: a task whose
	# slot every read finds mid-write (unsettled) holds every TPC a copy
	# showed, so the dry run picks around it as the start itself does.
	local dry real
	start_loop du "$NVT" --no-mps -c 0-31 "$APP"
	wait_file "$WORK/du.state" "0-31"
	"$T/segpoke" "$PID" allodd || die "segpoke allodd"
	run_rc out rc "$NVT" --no-mps -n 8 --exclude-running --dry-run
	eq "$rc" 0 "the dry run: $out"
	dry=$(sed -n 's/^GPU 0 ([^)]*): TPCs //p' <<<"$out")
	run_rc out rc "$NVT" --no-mps -n 8 --exclude-running env
	eq "$rc" 0 "the start: $out"
	real=$(sed -n 's/^NVTASKSET_PARTITION=[^ ]* \([^ ]*\) .*/\1/p' <<<"$out")
	eq "$dry" "$real" "the dry run's pick and the start's"
	disjoint_lists 0-31 "$dry"
	stop_loop du "$PID"
}
