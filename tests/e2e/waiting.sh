# Starts that find too few TPCs free: what their refusal says, and what others see of a start
# that waits (--wait): the record it keeps in its user's run directory while it waits
# (src/nvtaskset.h, NVT_QUEUED_MAGIC), shown by -l and -p, gone once the wait ends, and records
# that are no queued start's passed over. Sourced by tests/run-tests.sh: each t_NAME function
# is one test, run in a subshell under set -e with the helpers defined there.
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

# -p on a start that waits (--wait) for free TPCs: the process is a queued start, with no
# partition until its command runs; -p refuses, saying what it waits for, and changes nothing.
t_wait_pid_says_waiting() {
	local h w verb
	start_loop h "$NVT" --no-mps -c 0-63 "$APP"
	h=$PID
	wait_file "$WORK/h.state" "0-63"
	start_loop w "$NVT" --no-mps -n 4 --exclude-running --wait "$APP"
	w=$PID
	wait_for 10 grep -q "waiting for a task to free them (--wait)" "$WORK/w.err"
	wait_for 10 is_queued "$w"
	for args in "" "-c 0-3"; do
		verb="get"
		[ -z "$args" ] || verb="set"
		# shellcheck disable=SC2086
		run_rc out rc "$NVT" -p $args "$w"
		eq "$rc" 1 "-p $args on a waiting start: $out"
		eq "$out" "nvtaskset: failed to $verb pid $w's partition: it is a start queued with \
--wait for 4 TPCs on GPU 0 (--wait), not a task yet: it holds no partition until it gets its \
TPCs and its command runs as this PID; -p shows and changes it then"
	done
	[ ! -s "$WORK/w.state" ] || die "it launched on a full GPU: $(cat "$WORK/w.state")"
	stop_loop h "$h"
	wait_for 20 test -s "$WORK/w.state"
	run_rc out rc "$NVT" -p -c "$w"
	eq "$rc" 0 "-p once it runs: $out"
	stop_loop w "$w"
}

# fill_gpu: two tasks that leave TPCs 64 and 65 free on the fake H100 (0-59 and 60-63); sets
# H1 and H2.
fill_gpu() {
	start_loop h1 "$NVT" --no-mps -c 0-59 "$APP"
	H1=$PID
	start_loop h2 "$NVT" --no-mps -c 60-63 "$APP"
	H2=$PID
	wait_file "$WORK/h1.state" "0-59"
	wait_file "$WORK/h2.state" "60-63"
}
# queued_line PID: -l's line of the queued start PID ("" for none).
queued_line() { timeout "$HANG" "$NVT" -l | grep "^Queued: pid $1 " || true; }
is_queued() { [ -n "$(queued_line "$1")" ]; }
not_queued() { [ -z "$(queued_line "$1")" ]; }
# records: the queued starts' records of the caller's run directory, one a line.
records() { find "$NVTASKSET_RUNDIR/nvtaskset-$ME_UID" -maxdepth 1 -name 'queued.*' | sort; }
# start_waiter TAG COUNT WAIT: a start of COUNT TPCs queued with WAIT (--wait or --wait=S),
# with SIGINT as its default (a background job of a shell ignores it); sets PID, once it waits.
start_waiter() {
	start_loop "$1" env --default-signal=INT "$NVT" --no-mps -n "$2" --exclude-running "$3" "$APP"
	wait_for 10 grep -q "; waiting .*for a task to free them" "$WORK/$1.err"
	wait_for 10 is_queued "$PID"
}

# A start queued with --wait: -l shows it in its text and JSON while it waits, every field,
# and no more once it gets its TPCs.
t_queued_listed_until_claimed() {
	local w w2 line out
	fill_gpu
	start_waiter w 4 --wait=3600
	w=$PID
	start_waiter w2 7 --wait
	w2=$PID
	line=$(queued_line "$w")
	[[ "$line" =~ ^"Queued: pid $w of $ME waits "[0-9]+" s for 4 TPCs on GPU 0 (--wait=3600): $APP loop $WORK/w.stop $WORK/w.state"$ ]] ||
		die "-l's line: $line"
	line=$(queued_line "$w2")
	[[ "$line" =~ ^"Queued: pid $w2 of $ME waits "[0-9]+" s for 7 TPCs on GPU 0 (--wait): $APP loop " ]] ||
		die "-l's line: $line"
	out=$(timeout "$HANG" "$NVT" -l --json)
	python3 - "$out" "$w" "$w2" "$ME_UID" "$ME" "$APP loop $WORK/w.stop $WORK/w.state" "$(fake_uuid 0)" <<'PY' || die "-l --json: $out"
import json, sys
doc = json.loads(sys.argv[1])
w, w2, uid = int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
q = {s["pid"]: s for s in doc["queued"]}
assert set(q) == {w, w2}, q
a = q[w]
assert set(a) == {"pid", "uid", "user", "command", "gpus", "waited_s", "timeout_s"}, a
assert a["uid"] == uid and a["user"] == sys.argv[5] and a["command"] == sys.argv[6], a
assert a["gpus"] == [{"gpu": 0, "uuid": sys.argv[7], "tpc_count": 4}], a
assert isinstance(a["waited_s"], int) and a["waited_s"] >= 0 and a["timeout_s"] == 3600, a
assert q[w2]["timeout_s"] is None and q[w2]["gpus"][0]["tpc_count"] == 7, q[w2]
assert w not in {t["pid"] for t in doc["tasks"]}, doc["tasks"]
PY
	# The task on 60-63 ends: the first waiter gets 4 of the 6 free TPCs and is queued no more;
	# the second, of 7, fits neither then nor once the first ends (6 free), and is still
	# listed; once the task on 0-59 ends it gets its 7.
	stop_loop h2 "$H2"
	wait_for 20 test -s "$WORK/w.state"
	wait_for 10 not_queued "$w"
	is_queued "$w2" || die "the second waiter is not listed: $(timeout "$HANG" "$NVT" -l)"
	stop_loop w "$w"
	is_queued "$w2" || die "the second waiter is not listed: $(timeout "$HANG" "$NVT" -l)"
	stop_loop h1 "$H1"
	wait_for 20 test -s "$WORK/w2.state"
	wait_for 10 not_queued "$w2"
	eq "$(records)" "" "records left"
	stop_loop w2 "$w2"
}

# --wait=1 gives up: its record goes with it.
t_queued_gone_after_timeout() {
	local out rc
	fill_gpu
	run_rc out rc "$NVT" --no-mps -n 4 --exclude-running --wait=1 "$APP" launch 1
	eq "$rc" 1 "exit status: $out"
	has "$out" "nvtaskset: gave up waiting after 1 s (--wait=1)"
	hasnt "$out" "warning"
	eq "$(records)" "" "records left"
	hasnt "$(timeout "$HANG" "$NVT" -l)" "Queued:"
	stop_loop h2 "$H2"
	stop_loop h1 "$H1"
}

# SIGTERM and SIGINT end a queued start as they would (killed by the signal), its record
# removed first.
t_queued_gone_on_signals() {
	local w sig rc
	fill_gpu
	for sig in TERM INT; do
		start_waiter "w$sig" 4 --wait
		w=$PID
		eq "$(records | wc -l)" 1 "records of the start waiting"
		kill -"$sig" "$w"
		wait "$w" && rc=0 || rc=$?
		eq "$rc" $((128 + $(kill -l "$sig"))) "exit status after SIG$sig: $(cat "$WORK/w$sig.err")"
		eq "$(records)" "" "records left after SIG$sig"
		not_queued "$w" || die "still listed after SIG$sig"
	done
	stop_loop h2 "$H2"
	stop_loop h1 "$H1"
}

# record_text PID START [COMMAND]: a queued start's record (src/nvtaskset.h) of process PID
# that started at START (clock ticks), waiting for 4 TPCs of the fake H100.
record_text() {
	printf 'nvtaskset-queued 1\npid %s\nstart %s\npidns %s\nsince 0\ntimeout 0\ngpu %s 4\ncommand %s\n' \
		"$1" "$2" "$(stat -L -c %i /proc/self/ns/pid)" "$(fake_uuid 0)" "${3:-planted}"
}
# plant PID TEXT: writes TEXT and a newline as the record of PID in the caller's run directory.
plant() {
	[ -d "$NVTASKSET_RUNDIR/nvtaskset-$ME_UID" ] || mkdir -m 0755 "$NVTASKSET_RUNDIR/nvtaskset-$ME_UID"
	printf '%s\n' "$2" >"$NVTASKSET_RUNDIR/nvtaskset-$ME_UID/queued.$(stat -L -c %i /proc/self/ns/pid).$1"
}

# Records that are no live queued start's (a dead PID, another start time, garbage, too large,
# a FIFO; as root, a file of another user's) are neither shown nor hang -l; one of a live
# process is shown (what the others are told from). A later queued start removes those of
# processes gone or changed.
t_queued_bad_records_passed_over() {
	local live big owned gone out rc ns dir w
	sleep 3600 &
	live=$!
	sleep 3600 &
	big=$!
	sleep 3600 &
	owned=$!
	sleep 3600 &
	gone=$!
	kill "$gone"
	wait "$gone" 2>/dev/null || true
	ns=$(stat -L -c %i /proc/self/ns/pid)
	dir=$NVTASKSET_RUNDIR/nvtaskset-$ME_UID
	plant "$live" "$(record_text "$live" "$(start_tick "$live")" "sleep 3600")"
	plant "$gone" "$(record_text "$gone" "$(start_tick "$live")")"
	plant 1 "$(record_text 1 $(($(start_tick 1) + 1)))"
	plant "$((live + 1000000))" "garbage"
	plant "$big" "$(record_text "$big" "$(start_tick "$big")" "$(head -c 5000 /dev/zero | tr '\0' x)")"
	mkfifo "$dir/queued.$ns.$((live + 2000000))"
	if [ "$ME_UID" == 0 ]; then
		plant "$owned" "$(record_text "$owned" "$(start_tick "$owned")")"
		chown 65534 "$dir/queued.$ns.$owned"
	fi
	run_rc out rc "$NVT" -l
	eq "$rc" 0 "-l: $out"
	[[ "$(grep '^Queued:' <<<"$out")" =~ ^"Queued: pid $live of $ME waits "[0-9]+" s for 4 TPCs on GPU 0 (--wait): sleep 3600"$ ]] ||
		die "-l's queued starts: $out"
	run_rc out rc "$NVT" -l --json
	eq "$rc" 0 "-l --json: $out"
	eq "$(python3 -c 'import json, sys; print([q["pid"] for q in json.loads(sys.argv[1])["queued"]])' "$out")" "[$live]"
	# A queued start removes the records of the process gone and of PID 1 (another start time).
	fill_gpu
	start_waiter w 4 --wait
	w=$PID
	[ ! -e "$dir/queued.$ns.$gone" ] || die "the record of a process gone stayed"
	[ ! -e "$dir/queued.$ns.1" ] || die "the record of another start time stayed"
	[ -e "$dir/queued.$ns.$live" ] || die "the record of a live process went"
	kill "$w" "$live" "$big" "$owned"
	wait "$w" "$live" "$big" "$owned" 2>/dev/null || true
	stop_loop h2 "$H2"
	stop_loop h1 "$H1"
}
