# The priorities benchmark's own check without a GPU (tests/bench/prio/selftest.sh, its round5
# part: the round5 preset on fake.py's stand-ins, its report, bad knobs, and service.py and
# train.py on faketorch/), so that `make bench-prio`'s harness and its configuration files
# (bridge.json, borrow.json) keep working between GPU runs. About 40 s on 2 idle cores.
# Sourced by tests/run-tests.sh.
# shellcheck shell=bash

t_bench_prio_selftest() {
	local out rc
	# (three times the hang bound: the longest test here, and its stand-ins' phases are timed)
	out=$(timeout $((HANG * 3)) "$ROOT/tests/bench/prio/selftest.sh" "$WORK/st" round5 2>&1) && rc=0 || rc=$?
	eq "$rc" 0 "selftest.sh's exit status: $(grep -E '^FAIL' <<<"$out" | head -5)"
	has "$out" "selftest passed"
	hasnt "$out" "FAIL "
	# Each configuration file parses and names no configuration twice.
	python3 - "$ROOT"/tests/bench/prio/*.json <<'PY' || die "a configuration file of tests/bench/prio is wrong"
import json, sys
for f in sys.argv[1:]:
    names = [c["name"] for c in json.load(open(f))]
    if len(names) != len(set(names)):
        sys.exit("%s: a name twice" % f)
PY
}
