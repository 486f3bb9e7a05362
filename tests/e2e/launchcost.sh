# tests/bench/launchcost.py on the fake driver (fakeapp's "batches" stands for
# the GPU's probe, tests/bench/launch.cu): the launch rate of this build
# against another build's (LAUNCH_BASE), case by case in one run, as the GPU
# machine measures a change. The fake's timings mean nothing; the test checks
# that every case ran in every round and that each comparison is printed.
# Sourced by tests/run-tests.sh.
# shellcheck shell=bash

t_launchcost_against_base_build() {
	local bin=$WORK/bin out rc cases=plain,nvtaskset,nvtaskset@base,priority-low,priority-low@base
	mkdir -p "$bin"
	printf '#!/bin/sh\nexec "%s" "$@"\n' "$T/fakeapp-linked" >"$bin/launch"
	chmod +x "$bin/launch"
	run_rc out rc env LAUNCH_ROUNDS=2 LAUNCH_CPU=0 LAUNCH_BATCHES=50,11 LAUNCH_BASE="$RUN" \
		LAUNCH_CASES=$cases python3 "$ROOT/tests/bench/launchcost.py" "$RUN" "$bin" "$WORK/out"
	eq "$rc" 0 "exit status ($out)"
	has "$out" "nvtaskset   against nvtaskset@base: rate ratio, median of paired: "
	has "$out" "priority-low against priority-low@base: rate ratio, median of paired: "
	# Two rounds of five cases, each a line of the CSV.
	eq "$(tail -n +2 "$WORK/out/launchcost.csv" | cut -d, -f2 | sort | uniq -c | awk '{print $1 " " $2}' |
		tr '\n' ' ')" "2 nvtaskset 2 nvtaskset@base 2 plain 2 priority-low 2 priority-low@base " \
		"the cases of each round"
	# A case the base build lacks a name for is refused, as any unknown case.
	run_rc out rc env LAUNCH_CASES=plain,plain@base python3 "$ROOT/tests/bench/launchcost.py" \
		"$RUN" "$bin" "$WORK/out2"
	eq "$rc" 1 "exit status of an unknown case ($out)"
	has "$out" "LAUNCH_CASES: plain@base"
}
