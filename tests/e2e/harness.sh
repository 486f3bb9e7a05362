# The suite itself: a test that fails, hangs or passes ends with nothing it started left running.
# Sourced by tests/run-tests.sh: each t_NAME function is one test, run in a subshell under set -e
# with the helpers defined there.
# shellcheck shell=bash

# The planted tests (tests/run-tests.sh sources the file NVT_TEST_EXTRA names): each starts
# programs the ways tests do, records their PIDs in $PLANT, and fails, hangs or passes.
PLANTED_TESTS=$(
	cat <<'EOF'
# plant TAG: starts a partitioned shell's 20 sleeps (their command lines name nothing of the
# test's), one in a session of its own, a shell's loop that forks without exec, and a sleep
# whose parent is gone; records their PIDs in $PLANT/TAG.pids once all run.
plant() {
	"$NVT" --no-mps -c 0-3 bash -c 'for ((i = 0; i < 20; i++)); do sleep 600 & done; wait' \
		>/dev/null 2>&1 &
	setsid sleep 601 </dev/null >/dev/null 2>&1 &
	(while :; do sleep 602; done) &
	echo "$!" >"$PLANT/$1.pids"
	bash -c 'sleep 603 </dev/null >/dev/null 2>&1 & echo "$!"' >>"$PLANT/$1.pids"
	wait_for 30 all_planted
	pgrep_here '^sleep 60[0-3]$' >>"$PLANT/$1.pids"
	echo "planted $(wc -l <"$PLANT/$1.pids") processes"
}
all_planted() { [ "$(pgrep_here '^sleep 60[0-3]$' | wc -l)" -ge 23 ]; }
t_planted_fails() {
	plant fails
	die "a planted failure"
}
t_planted_passes() {
	plant passes
}
t_planted_hangs() {
	plant hangs
	sleep 600
}
# A process that names itself with a terminal's escapes (a window title, CSI as UTF-8's C1, a
# text-direction override), left running by a test that passes.
t_planted_hostile_name() {
	bash -c 'exec -a "$0" sleep 604' $'\e]0;planted\a\xc2\x9b2J\xe2\x80\xaeleft' &
	wait_for 30 eval '[ -n "$(pgrep_here "left 604$")" ]'
}
EOF
)
# running PID: PID is a process (not a zombie), one of the planted sleeps or shells.
planted_running() {
	local stat
	read -r stat 2>/dev/null <"/proc/$1/stat" || return 1
	stat=${stat##*) }
	[ "${stat%% *}" != Z ]
}
# check_planted TAG: every process test TAG planted is gone, and none of the inner suite's is left.
check_planted() {
	local pid n=0
	[ -s "$PLANT/$1.pids" ] || die "planted_$1 recorded no processes"
	while read -r pid; do
		n=$((n + 1))
		! planted_running "$pid" || die "pid $pid of planted_$1 still runs: $(tr '\0' ' ' <"/proc/$pid/cmdline")"
	done <"$PLANT/$1.pids"
	[ "$n" -ge 24 ] || die "planted_$1 recorded $n processes, not 24"
}

t_harness_ends_what_tests_left() {
	# A test that fails or passes ends with every process it started gone, whether the
	# process left its process group or session or lost its parent (a failed test once left
	# 150 sleeps of a partitioned shell running); one that hangs too, after its time.
	local out rc
	export PLANT=$WORK/plant
	mkdir "$PLANT"
	printf '%s\n' "$PLANTED_TESTS" >"$PLANT/tests.sh"
	run_rc out rc env NVT_TEST_EXTRA="$PLANT/tests.sh" "$ROOT/tests/run-tests.sh" -j2 \
		planted_fails planted_passes planted_hostile_name
	echo "$out"
	eq "$rc" 1 "the suite's status"
	has "$out" "FAIL planted_fails"
	has "$out" "PASS planted_passes"
	has "$out" "FAILED: a planted failure"
	has "$out" "2 passed, 1 failed, 0 skipped"
	# What the suite ended is named as plain text: the escapes of a program's name never
	# reach the terminal of whoever runs the suite.
	has "$out" ": ?]0;planted???2J???left 604"
	[[ "$out" != *[$'\e\a']* && "$out" != *$'\xc2\x9b'* && "$out" != *$'\xe2\x80\xae'* ]] ||
		die "the suite's output holds the name's escapes"
	check_planted fails
	check_planted passes
	# Hung: ended after TEST_TIMEOUT (5 s of an idle machine's time, time enough to plant).
	run_rc out rc env NVT_TEST_EXTRA="$PLANT/tests.sh" TEST_TIMEOUT=5 "$ROOT/tests/run-tests.sh" \
		planted_hangs
	echo "$out"
	eq "$rc" 1 "the suite's status"
	has "$out" "FAIL planted_hangs"
	has "$out" "FAILED: no end after 5 s"
	check_planted hangs
	procs_of "$PLANT"
	[ ${#PROCS[@]} == 0 ] || die "the inner suites left processes:"$'\n'"$PROCS_WHAT"
}

# Planted tests for NVT_TEST_KEEP: each records its directory in $PLANT/NAME.work and leaves a
# file there; the failing one logs more lines than its FAIL report shows.
KEEP_TESTS=$(
	cat <<'EOF2'
t_planted_keep_fails() {
	echo "$WORK" >"$PLANT/planted_keep_fails.work"
	echo failed >"$WORK/made"
	for ((i = 1; i <= 60; i++)); do echo "line $i of 60"; done
	die "a planted failure"
}
t_planted_keep_passes() {
	echo "$WORK" >"$PLANT/planted_keep_passes.work"
	echo passed >"$WORK/made"
}
EOF2
)
# keep_run [ENV...]: runs the inner suite on the planted keep tests with ENV; sets out and
# KEPT (the directory its FAIL report names kept, if any), and checks what both tests report.
keep_run() {
	local rc failed_work passed_work
	rm -f "$PLANT"/planted_keep_*.work
	run_rc out rc env -u NVT_TEST_KEEP "$@" NVT_TEST_EXTRA="$PLANT/tests.sh" \
		"$ROOT/tests/run-tests.sh" -j2 planted_keep_fails planted_keep_passes
	echo "$out"
	eq "$rc" 1 "the suite's status"
	has "$out" "FAIL planted_keep_fails"
	has "$out" "PASS planted_keep_passes"
	has "$out" "FAILED: a planted failure"
	hasnt "$out" "line 1 of 60"
	KEPT=$(sed -n 's/^    its directory, kept: //p' <<<"$out")
	# Where the tests ran is gone, whatever was kept.
	failed_work=$(cat "$PLANT/planted_keep_fails.work")
	passed_work=$(cat "$PLANT/planted_keep_passes.work")
	[ ! -e "$failed_work" ] || die "the failed test's directory is left in place: $failed_work"
	[ ! -e "$passed_work" ] || die "the passing test's directory is left: $passed_work"
}

t_harness_keeps_failed_work() {
	# With NVT_TEST_KEEP=DIR, a failed test's directory, its whole log with it, is moved into
	# DIR and named under its FAIL line; a passing test's is removed. Without it, neither is
	# kept. (DIR lies in this test's own directory, and the test removes it.)
	local out listed
	export PLANT=$WORK/plant
	mkdir "$PLANT"
	printf '%s\n' "$KEEP_TESTS" >"$PLANT/tests.sh"
	keep_run NVT_TEST_KEEP="$WORK/kept"
	[[ "$KEPT" == "$WORK/kept/planted_keep_fails."* ]] || die "kept as '$KEPT', not in $WORK/kept"
	listed=$(ls -A "$WORK/kept")
	eq "$listed" "${KEPT##*/}" "what $WORK/kept holds"
	eq "$(cat "$KEPT/made")" failed "the kept directory's file"
	eq "$(head -1 "$KEPT/log")" "line 1 of 60" "the kept log's first line"
	eq "$(tail -1 "$KEPT/log")" "FAILED: a planted failure" "the kept log's last line"
	rm -rf "$WORK/kept"
	keep_run
	eq "$KEPT" "" "the directory kept without NVT_TEST_KEEP"
	hasnt "$out" "its directory, kept"
	[ ! -e "$WORK/kept" ] || die "a run without NVT_TEST_KEEP made $WORK/kept"
}
