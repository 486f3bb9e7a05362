# Static checks of the tree (HACKING.md, "Tests"): shellcheck on the shell scripts (at severity
# warning, with .shellcheckrc's exceptions) and cppcheck on the C code (its warnings), each clean;
# each shown failing on a file made to break it. Each skips where its tool is missing, saying
# what to install. Sourced by tests/run-tests.sh: each t_NAME function is one test.
# shellcheck shell=bash

# The shell scripts of the tree: the suite, its helpers' scripts, CI's, bash completion.
static_scripts() {
	(cd "$ROOT" && printf '%s\n' tests/run-tests.sh tests/*.sh tests/e2e/*.sh tests/fake/*.sh \
		tests/podman/*.sh tests/prometheus/*.sh tests/slurm/*.sh tests/faults/*.sh tests/gpu/*.sh \
		tests/bench/*.sh .ci/run tools/completion/nvtaskset.bash)
}

t_static_shellcheck_clean() {
	local out rc
	command -v shellcheck >/dev/null || skip "needs shellcheck (Debian: shellcheck)"
	mapfile -t scripts < <(static_scripts)
	[ "${#scripts[@]}" -gt 40 ] || die "found ${#scripts[@]} scripts: ${scripts[*]}"
	run_rc out rc sh -c 'cd "$0" && exec shellcheck -S warning -x "$@"' "$ROOT" "${scripts[@]}"
	eq "$rc" 0 "shellcheck: $out"
	# A script made to break a rule (a cd that may fail, then a removal) fails it.
	printf '#!/bin/bash\ncd "$1"\nrm -f ./*.tmp\n' >"$WORK/bad.sh"
	run_rc out rc shellcheck -S warning "$WORK/bad.sh"
	eq "$rc" 1 "shellcheck on a bad script: $out"
	has "$out" SC2164
}

t_static_cppcheck_clean() {
	local out rc
	command -v cppcheck >/dev/null || skip "needs cppcheck (Debian: cppcheck)"
	run_rc out rc cppcheck -q --enable=warning --std=c11 -D_GNU_SOURCE -I"$ROOT/include" -I"$ROOT/src" \
		--inline-suppr --error-exitcode=1 "$ROOT/src" "$ROOT/tools" "$ROOT/tests/fake" "$ROOT/tests/unit"
	eq "$rc" 0 "cppcheck: $out"
	# A file made to break it (a variable read before it is set) fails it.
	printf '#include <stdio.h>\nint f(const char *p)\n{\n\tint n;\n\tFILE *f = fopen(p, "r");\n\tif (!f)\n\t\treturn n;\n\treturn fgetc(f);\n}\n' \
		>"$WORK/bad.c"
	run_rc out rc cppcheck -q --enable=warning --error-exitcode=1 "$WORK/bad.c"
	eq "$rc" 1 "cppcheck on a bad file: $out"
	has "$out" "uninitvar"
}
