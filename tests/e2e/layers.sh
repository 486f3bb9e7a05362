# The layout of the code (tools/dev/layers.py, from the Makefile's LAYERS,
# CMD_LAYERS and SHIM_LAYERS): each folder of src/ includes only its own
# folder's headers and those of the folders below it, nothing in src/
# includes the tools above it, the command's files call only their own layer
# and those below, the shim's files call and include only their own layer and
# those below, both without circles, and docs/design.md's picture of it is
# current; and HACKING.md's conventions that a script can check (function
# sizes, the shape of failure reasons, names that follow their room, no stale
# text). Sourced by
# tests/run-tests.sh.
# shellcheck shell=bash

# layers_clean WHAT CHECK ARGS...: layers.py CHECK ARGS finds nothing (WHAT: what it finds)
# and exits 0. Its status and its error output count too: a checker that crashes, or that
# read no file (it says so, and fails), fails the test.
layers_clean() {
	local what=$1 out rc=0
	shift
	out=$(python3 "$ROOT/tools/dev/layers.py" "$@" 2>&1) || rc=$?
	eq "$out" "" "$what"
	eq "$rc" 0 "layers.py $1's exit status"
}

t_src_layers_point_down() { layers_clean "includes that point up or out" check-src "$ROOT"; }

t_cmd_layers_point_down() {
	layers_clean "the command's calls that point up, or circles" check-cmd "$ROOT" "$B"
}

t_design_layers_current() {
	python3 "$ROOT/tools/dev/layers.py" design "$ROOT" "$B" ||
		die "docs/design.md's picture of the layers is stale: run make design-picture"
}

t_shim_layers_point_down() {
	layers_clean "the shim's calls and includes that point up, or circles" check-shim "$ROOT" "$B"
}

# check-src fails where it must, on a tree made for it (the Makefile's LAYERS): an include
# that points up, one of a folder not in LAYERS, one of a header not in its folder, a
# folder in no layer, and files directly in src/ beside the contract.
t_src_layers_check_catches() {
	local r=$WORK/tree bad rc=0
	mkdir -p "$r/src/low" "$r/src/high" "$r/src/stray"
	printf 'LAYERS = low high\n' >"$r/Makefile"
	printf '/* contract */\n' >"$r/src/nvtaskset.h"
	printf 'int extra;\n' >"$r/src/extra.c"
	printf '#include "high/b.h"\n#include "missing.h"\n#include "zzz/x.h"\n#include "nvtaskset.h"\n' \
		>"$r/src/low/a.c"
	printf 'int a;\n' >"$r/src/low/a.h"
	printf 'int b;\n' >"$r/src/high/b.h"
	printf '#include "low/a.h"\n#include "b.h"\n' >"$r/src/high/b.c"
	printf 'int s;\n' >"$r/src/stray/s.c"
	bad=$(python3 "$ROOT/tools/dev/layers.py" check-src "$r") || rc=$?
	eq "$rc" 1 "check-src's exit status ($bad)"
	# What points down passes: high/b.c includes low/a.h and its own b.h.
	eq "$bad" "src/low/a.c->high/b.h
src/low/a.c->missing.h(not in its folder)
src/low/a.c->zzz/x.h(unknown)
src/stray/s.c(folder not in LAYERS)
files directly in src/: extra.c nvtaskset.h"
}

# check-cmd fails where it must, on a tree made for it (CMD_LAYERS, files compiled here):
# a call that points up, a circle within a layer, a file in no layer.
t_cmd_layers_check_catches() {
	local r=$WORK/tree bad rc=0 f
	mkdir -p "$r/tools/nvtaskset" "$r/build/cmd"
	printf 'CMD_LAYERS = out main\nCMD_out = a b\nCMD_main = m\n' >"$r/Makefile"
	# a calls m (above it) and b, b calls a (a circle); m calls b (down).
	printf 'int b_fn(int);\nint m_fn(void);\nint a_fn(int n) { return n ? b_fn(n - 1) : m_fn(); }\n' \
		>"$r/tools/nvtaskset/a.c"
	printf 'int a_fn(int);\nint b_fn(int n) { return n ? a_fn(n - 1) : 0; }\n' >"$r/tools/nvtaskset/b.c"
	printf 'int b_fn(int);\nint m_fn(void) { return b_fn(0); }\n' >"$r/tools/nvtaskset/m.c"
	printf 'int stray_fn(void) { return 0; }\n' >"$r/tools/nvtaskset/stray.c"
	for f in a b m; do
		"${CC:-cc}" -c -o "$r/build/cmd/$f.o" "$r/tools/nvtaskset/$f.c" || die "cannot compile $f.c"
	done
	bad=$(python3 "$ROOT/tools/dev/layers.py" check-cmd "$r" "$r/build") || rc=$?
	eq "$rc" 1 "check-cmd's exit status ($bad)"
	eq "$bad" "tools/nvtaskset/stray.c is in no CMD_ layer
a.c calls m.c, a layer above it
a circle: a -> b -> a"
}

# Every check fails on a tree where it reads nothing (empty layers, no files), saying so:
# a checker that reads nothing passes nothing.
t_checks_fail_reading_nothing() {
	local r=$WORK/empty out rc check
	mkdir -p "$r/src/shim" "$r/tools/nvtaskset" "$r/build"
	printf 'LAYERS = \nCMD_LAYERS = \nSHIM_LAYERS = \n' >"$r/Makefile"
	printf 'Conventions.\n' >"$r/HACKING.md"
	printf 'Read me.\n' >"$r/README.md"
	for check in "check-src:read no layer or no file of src/" \
		"check-cmd:CMD_LAYERS names no file of the command" \
		"check-shim:SHIM_LAYERS names no file of the shim" \
		"check-sizes:found no .c file in src tools" "check-sizes:found no C file or shell script in tests" \
		"check-reasons:found no .c .h file in src" \
		"check-names:found no .c file in src" "check-stale:found no .c .h" \
		"check-json:found no .c file in src tools"; do
		rc=0
		out=$(python3 "$ROOT/tools/dev/layers.py" "${check%%:*}" "$r" "$r/build" 2>&1) || rc=$?
		eq "$rc" 1 "${check%%:*}'s exit status ($out)"
		has "$out" "${check#*:}"
	done
}

# The shim's check fails where it must, on a tree made for it (the Makefile's
# SHIM_LAYERS, files compiled here): a call and an include that point up, a
# circle within a layer, a file in no layer, a header of no file.
t_shim_layers_check_catches() {
	local r=$WORK/tree bad f
	mkdir -p "$r/src/shim" "$r/build/obj/shim"
	printf 'SHIM_LAYERS = low mid high\nSHIM_low = a b\nSHIM_mid = m\nSHIM_high = top\n' >"$r/Makefile"
	# a includes m.h and calls top_fn (both above it), and a and b call each other.
	printf '#include "m.h"\nint b_fn(int);\nint top_fn(void);\nint a_fn(int n) { return n ? b_fn(n - 1) : top_fn(); }\n' \
		>"$r/src/shim/a.c"
	printf 'int a_fn(int);\nint b_fn(int n) { return n ? a_fn(n - 1) : 0; }\n' >"$r/src/shim/b.c"
	printf 'int m_fn(void);\n' >"$r/src/shim/m.h"
	printf '#include "m.h"\nint m_fn(void) { return 0; }\n' >"$r/src/shim/m.c"
	printf 'int m_fn(void);\nint top_fn(void) { return m_fn(); }\n' >"$r/src/shim/top.c"
	printf 'int top_fn(void);\nint lib_fn(void) { return top_fn(); }\n' >"$r/src/shim/libsmctrl.c"
	printf 'int stray_fn(void) { return 0; }\n' >"$r/src/shim/stray.c"
	printf 'int orphan_fn(void);\n' >"$r/src/shim/orphan.h"
	for f in a b m top libsmctrl stray; do
		"${CC:-cc}" -c -o "$r/build/obj/shim/$f.o" "$r/src/shim/$f.c" || die "cannot compile $f.c"
	done
	bad=$(python3 "$ROOT/tools/dev/layers.py" check-shim "$r" "$r/build") && die "check-shim passed: $bad"
	has "$bad" "src/shim/a.c includes m.h, a layer above it"
	has "$bad" "src/shim/a.c calls top.c, a layer above it"
	has "$bad" "a circle: a -> b -> a"
	has "$bad" "src/shim/stray.c is in no SHIM_ layer"
	has "$bad" "src/shim/orphan.h is the header of no file of a SHIM_ layer"
	# What points down passes: top calls m, libsmctrl.c (above every layer) calls top.
	hasnt "$bad" "top.c calls"
	hasnt "$bad" "libsmctrl.c calls"
	eq "$(grep -c . <<<"$bad")" 5 "what check-shim found ($bad)"
}

# HACKING.md's conventions, checked by tools/dev/layers.py: each test names what breaks one.
# rule_holds CHECK WHAT: layers.py CHECK finds nothing (WHAT: what it finds).
rule_holds() { layers_clean "$2" "$1" "$ROOT"; }

# Each rule's check fails where it must, on a tree made to break it once (and to keep it
# once beside): a long function without its reason, long files without theirs (C files of
# src/ and tests/, scripts of tests/ by name or #! line), reasons of another shape (a parameter,
# a struct's field), a name of another room (of src/, and of tools/ where that room's
# functions take it), an issue number, a path that is not there, JSON written by hand (a
# member and an array; an XML attribute, a quote in a comment and a character literal are
# no JSON) and a JSON string made past the writer's neutraliser.
t_rules_check_catches() {
	local r=$WORK/rules bad rc i
	mkdir -p "$r/src/core" "$r/src/alloc" "$r/docs" "$r/tools/slurm" "$r/tools/nvtaskset"
	printf 'all:\n\tcc src/core/long.c src/core/gone.c\n' >"$r/Makefile"
	printf 'Conventions.\n' >"$r/HACKING.md"
	printf 'See iss%s 12 and src/core/long.c.\n' ue >"$r/README.md"
	{
		printf 'int nvt_core_long(void)\n{\n\tint n = 0;\n'
		for ((i = 0; i < 81; i++)); do printf '\tn++;\n'; done
		printf '\treturn n;\n}\n\n/* Long on purpose (over 80 lines: one table). */\nint nvt_core_table(void)\n{\n'
		for ((i = 0; i < 81; i++)); do printf '\t;\n'; done
		printf '\treturn 0;\n}\n'
	} >"$r/src/core/long.c"
	# Files over 500 lines: one says why at its head, one does not.
	{ printf '/*\n * big.h - a table.\n */\n'; for ((i = 0; i < 500; i++)); do printf '#define X%d 1\n' "$i"; done; } \
		>"$r/src/core/big.h"
	{ printf '/*\n * table.h - a table.\n * Over 500 lines on purpose: one table, read whole.\n */\n'
		for ((i = 0; i < 500; i++)); do printf '#define X%d 1\n' "$i"; done; } >"$r/src/core/table.h"
	# And in tests/: C files and shell scripts (by name or by their #! line), not other files;
	# a script's head is its first comment lines.
	mkdir -p "$r/tests/unit" "$r/tests/e2e" "$r/tests/fake/bin"
	{ printf '/*\n * test_big.c - cases.\n */\n'; for ((i = 0; i < 500; i++)); do printf ';\n'; done; } \
		>"$r/tests/unit/test_big.c"
	{ printf '# A suite.\n'; for ((i = 0; i < 501; i++)); do printf 'true\n'; done; } >"$r/tests/e2e/bare.sh"
	{ printf '# A suite.\n# Over 500 lines on purpose: one subject.\n# shellcheck shell=bash\n'
		for ((i = 0; i < 501; i++)); do printf 'true\n'; done; } >"$r/tests/e2e/said.sh"
	{ printf '#!/bin/sh\n# A tool.\n'; for ((i = 0; i < 500; i++)); do printf 'true\n'; done
		printf '# Over 500 lines on purpose: too late, not at its head.\n'; } >"$r/tests/fake/bin/tool"
	for ((i = 0; i < 600; i++)); do printf 'data\n'; done >"$r/tests/e2e/data.txt"
	printf 'int nvt_core_a(char *err, int n);\nint nvt_core_b(char *why, size_t len);\nstruct s {\n\tchar error[64];\n};\n' \
		>"$r/src/core/reasons.h"
	printf 'int nvt_core_lent(void)\n{\n\treturn 0;\n}\nint nvt_alloc_own(void)\n{\n\treturn 0;\n}\n' \
		>"$r/src/alloc/pick.c"
	# tools/slurm/place.c's functions take "place"; tools/nvtaskset/pick.c's take none.
	printf 'int nvt_place_step(void)\n{\n\treturn 0;\n}\n' >"$r/tools/slurm/place.c"
	printf 'int nvt_place_near(void)\n{\n\treturn 0;\n}\nint nvt_pick_it(void)\n{\n\treturn 0;\n}\n' \
		>"$r/src/alloc/near.c"
	printf 'int cmd_pick(void)\n{\n\treturn 0;\n}\n' >"$r/tools/nvtaskset/pick.c"
	cat >"$r/tools/nvtaskset/show.c" <<'C'
/* Prints {"pid":N}: '"' */
void show(int pid, char c)
{
	printf("<g class=\"%s\">", c == '"' ? "q" : "p");
	printf("{\"pid\":%d,", pid);
	printf("\"args\":[\"%c\"]}\n", c);
	json_object_new_string("x"); /* json_object_new_string_len() */
}
C
	rc=0; bad=$(python3 "$ROOT/tools/dev/layers.py" check-sizes "$r") || rc=$?
	eq "$rc" 1 "check-sizes' exit status ($bad)"
	eq "$bad" "src/core/big.h: 503 lines and no 'Over 500 lines ...: WHY' in the comment at its head (or split it)
tests/e2e/bare.sh: 502 lines and no 'Over 500 lines ...: WHY' in the comment at its head (or split it)
tests/fake/bin/tool: 503 lines and no 'Over 500 lines ...: WHY' in the comment at its head (or split it)
tests/unit/test_big.c: 503 lines and no 'Over 500 lines ...: WHY' in the comment at its head (or split it)
src/core/long.c:1: nvt_core_long has 86 lines and no '(over 80 lines: WHY)' at its head"
	rc=0; bad=$(python3 "$ROOT/tools/dev/layers.py" check-reasons "$r") || rc=$?
	eq "$rc" 1 "check-reasons' exit status ($bad)"
	eq "$bad" "src/core/reasons.h:1: 'char *err', not 'char *why, size_t len'
src/core/reasons.h:4: a reason in a struct's field 'error', not in the caller's why"
	rc=0; bad=$(python3 "$ROOT/tools/dev/layers.py" check-names "$r") || rc=$?
	eq "$rc" 1 "check-names' exit status ($bad)"
	eq "$bad" "src/alloc/near.c:1: nvt_place_... is a name of tools/slurm/, defined in src/alloc/
src/alloc/pick.c:1: nvt_core_... is a name of src/core/, defined in src/alloc/"
	rc=0; bad=$(python3 "$ROOT/tools/dev/layers.py" check-stale "$r") || rc=$?
	eq "$rc" 1 "check-stale's exit status ($bad)"
	eq "$bad" "README.md:1: an issue number (name the subject instead)
Makefile:2: src/core/gone.c is not in the tree"
	rc=0; bad=$(python3 "$ROOT/tools/dev/layers.py" check-json "$r") || rc=$?
	eq "$rc" 1 "check-json's exit status ($bad)"
	eq "$bad" "$(printf '%s\n' \
		"tools/nvtaskset/show.c:5: JSON written by hand (\"{\\\"pid\\\":%d,\"): build it with jsonout.h's writer" \
		"tools/nvtaskset/show.c:6: JSON written by hand (\"\\\"args\\\":[\\\"%c\\\"]}\\n\"): build it with jsonout.h's writer" \
		"tools/nvtaskset/show.c:7: a JSON string made past jsonout_text (which neutralises it)")"
	rc=0; bad=$(python3 "$ROOT/tools/dev/layers.py" check-rules "$r") || rc=$?
	eq "$rc" 1 "check-rules' exit status"
	eq "$(grep -c . <<<"$bad")" 14 "check-rules finds the five rules' breaks ($bad)"
}

t_functions_short_or_say_why() {
	rule_holds check-sizes "functions over 80 lines without '(over 80 lines: WHY)' at their head, files over 500 without 'Over 500 lines ...: WHY'"
}

t_failure_reasons_one_shape() {
	rule_holds check-reasons "failure reasons not in the caller's 'char *why, size_t len'"
}

t_names_follow_their_room() { rule_holds check-names "functions whose prefix names another room"; }

t_no_stale_text() { rule_holds check-stale "issue numbers, or paths that are not in the tree"; }

# Every --json goes through one writer (tools/nvtaskset/jsonout.c, on json-c): no JSON by hand.
t_json_one_writer() { rule_holds check-json "JSON written by hand outside jsonout.h's writer"; }

# One reader of a segment's bytes: where a slot lies in the file (its offset, the header's
# size) is known in src/seg/segfile.c alone, which reads segments by pread for every reader
# (the agent, -p, inheritance); the other files of src/ and tools/ that pread read text
# files, not segments.
t_segment_layout_in_segfile() {
	local out rc=0
	out=$(grep -rnE 'offsetof\(struct nvt_segment,|sizeof\(struct nvt_gpu_slot\)|SLOT_OFFSET' \
		"$ROOT/src" "$ROOT/tools" --include='*.[ch]' |
		grep -v "^$ROOT/src/seg/segfile.c:" | grep -v "^$ROOT/src/core/segment.c:") || rc=$?
	[ "$rc" != 2 ] || die "grep failed: $out"
	eq "$out" "" "the segment's layout outside src/seg/segfile.c"
	rc=0
	out=$(grep -rlE '\<pread[[:space:]]*\(' "$ROOT/src" "$ROOT/tools" --include='*.[ch]' | sort) || rc=$?
	[ "$rc" != 2 ] || die "grep failed: $out"
	eq "$out" "$ROOT/src/os/sysutil.c
$ROOT/src/prio/agentlock.c
$ROOT/src/seg/segfile.c" "the files that pread"
}
