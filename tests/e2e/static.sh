# Static checks of the tree (HACKING.md, "Tests"): shellcheck on the shell scripts (at severity
# warning, with .shellcheckrc's exceptions) and cppcheck on the C code (its warnings), each clean,
# and every function of the suite's one shell defined once; each shown failing on a file made to
# break it. The first two skip where their tool is missing, saying what to install. Sourced by
# tests/run-tests.sh: each t_NAME function is one test.
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

# The suite is one shell (tests/run-tests.sh): it defines its helpers, sources
# tests/share-build.sh, then every tests/e2e/*.sh in turn, so that a function defined in two of
# them, or twice in one, is the last definition everywhere, silently. static_definitions [DIR]
# (DIR: a tree, $ROOT by default): "NAME FILE" for each definition of a function at the top
# level of one of those files (a line that starts "NAME()" or "function NAME"); of a sourced
# file only the names bash defines when it sources that file alone, not text in a string or a
# here-document (a function a test defines inside its own is its subshell's: not counted).
static_definitions() {
	local root=${1:-$ROOT} f defined
	for f in "$root/tests/run-tests.sh" "$root/tests/share-build.sh" "$root"/tests/e2e/*.sh; do
		[ -e "$f" ] || continue
		defined='[A-Za-z_][A-Za-z0-9_]*'
		if [ "${f##*/}" != run-tests.sh ]; then # (the runner itself runs the suite: read only)
			defined=$(env -i PATH="$PATH" ROOT="$root" B="$root/build" \
				bash -c '. "$1" >/dev/null 2>&1; declare -F' _ "$f" |
				sed 's/^declare -f[a-z]* //' | paste -sd '|')
			[ -n "$defined" ] || continue
		fi
		sed -nE "s/^(function[[:space:]]+)?($defined)[[:space:]]*\(\).*/\2/p;
			s/^function[[:space:]]+($defined)([[:space:]]|\{|$).*/\1/p" "$f" |
			awk -v file="${f#"$root"/}" '{print $1, file}'
	done
}
# static_clashes [DIR]: each function defined more than once, "NAME: FILE FILE ..." a line.
static_clashes() {
	static_definitions "$@" | awk '{n[$1]++; at[$1] = at[$1] " " $2}
		END {for (f in n) if (n[f] > 1) print f ":" at[f]}' | LC_ALL=C sort
}

t_static_functions_defined_once() {
	local defs
	defs=$(static_definitions)
	# It finds them: the runner's, share-build.sh's and a suite's, each once.
	has "$defs" "start_loop tests/run-tests.sh"
	has "$defs" "share_build tests/share-build.sh"
	has "$defs" "static_scripts tests/e2e/static.sh"
	[ "$(wc -l <<<"$defs")" -gt 300 ] || die "found $(wc -l <<<"$defs") definitions: $defs"
	eq "$(static_clashes)" "" "functions defined more than once in the suite's shell"
	# In a tree made for it: a name in two suites, one twice in a suite and one of the runner's
	# again in a suite clash; a function in a string, in a here-document or inside a test's
	# function does not count.
	mkdir -p "$WORK/tree/tests/e2e"
	printf 'start_loop() { :; }\nrunner_only() { :; }\n' >"$WORK/tree/tests/run-tests.sh"
	printf 'both() { :; }\nt_a() {\n\tlocal_one() { :; }\n}\nstart_loop() { :; }\n' \
		>"$WORK/tree/tests/e2e/a.sh"
	printf 'function both {\n\t:\n}\ntwice() { :; }\ntwice() { :; }\nS="\nin_string() { :; }\n"\n' \
		>"$WORK/tree/tests/e2e/b.sh"
	printf 'cat <<X >/dev/null\nin_doc() { :; }\nX\nt_b() {\n\tlocal_one() { :; }\n}\n' \
		>"$WORK/tree/tests/e2e/c.sh"
	eq "$(static_clashes "$WORK/tree")" "both: tests/e2e/a.sh tests/e2e/b.sh
start_loop: tests/run-tests.sh tests/e2e/a.sh
twice: tests/e2e/b.sh tests/e2e/b.sh" "clashes in a tree made for it"
}
