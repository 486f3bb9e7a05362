# Static checks of the tree (HACKING.md, "Tests"): shellcheck on the shell scripts (at severity
# warning, with .shellcheckrc's exceptions) and cppcheck on the C code (its warnings), each clean;
# each shown failing on a file made to break it. Each skips where its tool is missing, saying
# what to install. Sourced by tests/run-tests.sh: each t_NAME function is one test.
# shellcheck shell=bash

# Every shell script of the tree, found rather than listed, so that a new one is checked too: a
# file named *.sh or *.bash, or one whose first line runs sh, bash or dash (the suite and its
# helpers, the GPU probes and benchmarks, the fake MPS control, CI's, the Debian package's
# hooks, bash completion). Not in build/, .git or __pycache__, nor in what dpkg-buildpackage
# leaves in debian/ (.gitignore's).
static_scripts() {
	(cd "$ROOT" && find . \( -path ./.git -o -path ./build -o -path ./debian/nvtaskset \
		-o -path ./debian/.debhelper -o -name __pycache__ \) -prune -o -type f -print0 |
		xargs -0 awk 'FNR == 1 {
			if (FILENAME ~ /\.(sh|bash)$/ || $0 ~ /^#! *[^ ]*\/(env +)?(ba|da)?sh( |$)/)
				print substr(FILENAME, 3)
			nextfile
		}' | LC_ALL=C sort)
}

t_static_shellcheck_clean() {
	local out rc
	command -v shellcheck >/dev/null || skip "needs shellcheck (Debian: shellcheck)"
	mapfile -t scripts < <(static_scripts)
	[ "${#scripts[@]}" -gt 100 ] || die "found ${#scripts[@]} scripts: ${scripts[*]}"
	# Scripts of every kind are among them: named by their shebang alone, a hook, completion.
	local s
	for s in .ci/run debian/nvtaskset.postrm tests/fake/bin/nvidia-cuda-mps-control \
		tests/e2e/helpers/knee tools/completion/nvtaskset.bash tests/gpu/probes/graphs/run.sh; do
		has "$(printf "|%s" "${scripts[@]}")|" "|$s|"
	done
	# In a tree made for it: a shebang of sh, bash or env bash, or a name; not build/ or a text.
	mkdir -p "$WORK/tree/bin" "$WORK/tree/build" "$WORK/tree/docs"
	printf '#!/bin/sh\n' >"$WORK/tree/bin/a"
	printf '#!/usr/bin/env bash\n' >"$WORK/tree/bin/b"
	printf '#!/bin/bash -e\n' >"$WORK/tree/bin/c"
	printf 'complete -F f g\n' >"$WORK/tree/d.bash"
	printf 'echo\n' >"$WORK/tree/build/e.sh"
	printf '#!/usr/bin/python3\n' >"$WORK/tree/bin/f"
	printf 'sh is a shell\n' >"$WORK/tree/docs/g"
	eq "$(ROOT=$WORK/tree static_scripts | tr '\n' ' ')" "bin/a bin/b bin/c d.bash " "scripts found"
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
