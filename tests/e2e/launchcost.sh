# tests/bench/launchcost.py on the fake driver (fakeapp's "batches" stands for
# the GPU's probe, tests/bench/launch.cu): the launch rate of this build
# against another build's (LAUNCH_BASE), case by case in one run, as the GPU
# machine measures a change. The fake's timings mean nothing; the test checks
# that every case ran in every round and that each comparison is printed.
# And the launch path's instructions, counted on the fake driver (tests/bench/launchpath.py),
# held to a committed baseline.
# Sourced by tests/run-tests.sh.
# shellcheck shell=bash

t_launchcost_against_base_build() {
	local bin=$WORK/bin out rc cases=plain,nvtaskset,nvtaskset@base,priority-low,priority-low@base,slice
	mkdir -p "$bin"
	printf '#!/bin/sh\nexec "%s" "$@"\n' "$T/fakeapp-linked" >"$bin/launch"
	chmod +x "$bin/launch"
	run_rc out rc env LAUNCH_ROUNDS=2 LAUNCH_CPU=0 LAUNCH_BATCHES=50,11 LAUNCH_BASE="$RUN" \
		LAUNCH_CASES=$cases python3 "$ROOT/tests/bench/launchcost.py" "$RUN" "$bin" "$WORK/out"
	eq "$rc" 0 "exit status ($out)"
	has "$out" "nvtaskset   against nvtaskset@base: rate ratio, median of paired: "
	has "$out" "priority-low against priority-low@base: rate ratio, median of paired: "
	# Two rounds of six cases, each a line of the CSV.
	eq "$(tail -n +2 "$WORK/out/launchcost.csv" | cut -d, -f2 | sort | uniq -c | awk '{print $1 " " $2}' |
		tr '\n' ' ')" "2 nvtaskset 2 nvtaskset@base 2 plain 2 priority-low 2 priority-low@base 2 slice " \
		"the cases of each round"
	# A case the base build lacks a name for is refused, as any unknown case.
	run_rc out rc env LAUNCH_CASES=plain,plain@base python3 "$ROOT/tests/bench/launchcost.py" \
		"$RUN" "$bin" "$WORK/out2"
	eq "$rc" 1 "exit status of an unknown case ($out)"
	has "$out" "LAUNCH_CASES: plain@base"
}

# The launch path's instructions, counted (tests/bench/launchpath.py: callgrind on the fake
# driver, only the shim's driver callback, between R and 2R batches of launches so that set-up
# and exit do not count), in every form a task can take, each against its line of
# tests/bench/launchpath.baseline for this compiler and its flags: more than 10 % over fails.
# (A form that grows on purpose gets a new line: launchpath.py --write-baseline.)
LAUNCH_FORMS="unset partitioned high low low-yield slice mem unset-ex partitioned-ex high-ex low-yield-ex"
t_launch_path_instructions() {
	local out rc
	command -v valgrind >/dev/null || skip "needs valgrind (Debian: valgrind) to count the launch path's instructions"
	# shellcheck disable=SC2086
	run_rc out rc python3 "$ROOT/tests/bench/launchpath.py" --build "$B" --work "$WORK/lp" \
		--check "$ROOT/tests/bench/launchpath.baseline" $LAUNCH_FORMS
	[ "$rc" != 4 ] || skip "no instruction counts for this compiler: $out"
	eq "$rc" 0 "exit status ($out)"
	# Every form was counted, mem too (this tree's nvtaskset has --mem), and held to its line.
	hasnt "$out" "no --mem"
	eq "$(grep -c '^launchpath: .* instructions a launch, within' <<<"$out")" \
		"$(wc -w <<<"$LAUNCH_FORMS")" "forms checked ($out)"
}

# The check fails when a count grows more than 10 % over its line: the partitioned form held to
# lines 20 % and 5 % below what it counts (a launch path grown by 25 % and by 5 %).
t_launch_path_check_fails_over_baseline() {
	local out rc count key
	command -v valgrind >/dev/null || skip "needs valgrind (Debian: valgrind) to count the launch path's instructions"
	run_rc out rc python3 "$ROOT/tests/bench/launchpath.py" --build "$B" --work "$WORK/lp" \
		--write-baseline "$WORK/base" partitioned
	eq "$rc" 0 "exit status ($out)"
	key=$(grep '^build ' "$WORK/base")
	count=$(awk '$1 == "partitioned" {print $2}' "$WORK/base")
	awk -v k="$key" -v c="$count" 'BEGIN {printf "%s\npartitioned %.1f\n", k, c / 1.25}' >"$WORK/lower"
	run_rc out rc python3 "$ROOT/tests/bench/launchpath.py" --build "$B" --work "$WORK/lp" \
		--check "$WORK/lower" partitioned
	eq "$rc" 1 "exit status 25 % over ($out)"
	has "$out" "launchpath: partitioned: $count instructions a launch, over"
	awk -v k="$key" -v c="$count" 'BEGIN {printf "%s\npartitioned %.1f\n", k, c / 1.05}' >"$WORK/lower"
	run_rc out rc python3 "$ROOT/tests/bench/launchpath.py" --build "$B" --work "$WORK/lp" \
		--check "$WORK/lower" partitioned
	eq "$rc" 0 "exit status 5 % over ($out)"
	# A build the file has no section for is held to one of its compiler's, which is named;
	# without one of its compiler, it is said.
	printf '%s 0: -O9\npartitioned %s\n' "$(awk '{print $1 " " $2}' <<<"$key")" "$count" >"$WORK/other"
	run_rc out rc python3 "$ROOT/tests/bench/launchpath.py" --build "$B" --work "$WORK/lp" \
		--check "$WORK/other" partitioned
	eq "$rc" 0 "exit status with another version's section ($out)"
	has "$out" "held to $(awk '{print $2}' <<<"$key") 0: -O9's"
	printf 'build nocc 0: -O9\npartitioned %s\n' "$count" >"$WORK/other"
	run_rc out rc python3 "$ROOT/tests/bench/launchpath.py" --build "$B" --work "$WORK/lp" \
		--check "$WORK/other" partitioned
	eq "$rc" 4 "exit status without a section of its compiler ($out)"
}
