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

t_src_layers_point_down() {
	local bad
	bad=$(python3 "$ROOT/tools/dev/layers.py" check-src "$ROOT") || true
	eq "$bad" "" "includes that point up or out"
}

t_cmd_layers_point_down() {
	local bad
	bad=$(python3 "$ROOT/tools/dev/layers.py" check-cmd "$ROOT" "$B") || true
	eq "$bad" "" "the command's calls that point up, or circles"
}

t_design_layers_current() {
	python3 "$ROOT/tools/dev/layers.py" design "$ROOT" "$B" ||
		die "docs/design.md's picture of the layers is stale: run make design-picture"
}

t_shim_layers_point_down() {
	local bad
	bad=$(python3 "$ROOT/tools/dev/layers.py" check-shim "$ROOT" "$B") || true
	eq "$bad" "" "the shim's calls and includes that point up, or circles"
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
rule_holds() {
	local bad rc=0
	bad=$(python3 "$ROOT/tools/dev/layers.py" "$1" "$ROOT") || rc=$?
	eq "$bad" "" "$2"
	eq "$rc" 0 "layers.py $1's exit status"
}

# Each rule's check fails where it must, on a tree made to break it once (and to keep it
# once beside): a long function without its reason, reasons of another shape (a parameter,
# a struct's field), a name of another room, an issue number, a path that is not there.
t_rules_check_catches() {
	local r=$WORK/rules bad rc i
	mkdir -p "$r/src/core" "$r/src/alloc" "$r/docs"
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
	printf 'int nvt_core_a(char *err, int n);\nint nvt_core_b(char *why, size_t len);\nstruct s {\n\tchar error[64];\n};\n' \
		>"$r/src/core/reasons.h"
	printf 'int nvt_core_lent(void)\n{\n\treturn 0;\n}\nint nvt_alloc_own(void)\n{\n\treturn 0;\n}\n' \
		>"$r/src/alloc/pick.c"
	rc=0; bad=$(python3 "$ROOT/tools/dev/layers.py" check-sizes "$r") || rc=$?
	eq "$rc" 1 "check-sizes' exit status ($bad)"
	eq "$bad" "src/core/long.c:1: nvt_core_long has 86 lines and no '(over 80 lines: WHY)' at its head"
	rc=0; bad=$(python3 "$ROOT/tools/dev/layers.py" check-reasons "$r") || rc=$?
	eq "$rc" 1 "check-reasons' exit status ($bad)"
	eq "$bad" "src/core/reasons.h:1: 'char *err', not 'char *why, size_t len'
src/core/reasons.h:4: a reason in a struct's field 'error', not in the caller's why"
	rc=0; bad=$(python3 "$ROOT/tools/dev/layers.py" check-names "$r") || rc=$?
	eq "$rc" 1 "check-names' exit status ($bad)"
	eq "$bad" "src/alloc/pick.c:1: nvt_core_... is a name of src/core/, defined in src/alloc/"
	rc=0; bad=$(python3 "$ROOT/tools/dev/layers.py" check-stale "$r") || rc=$?
	eq "$rc" 1 "check-stale's exit status ($bad)"
	eq "$bad" "README.md:1: an issue number (name the subject instead)
Makefile:2: src/core/gone.c is not in the tree"
	rc=0; bad=$(python3 "$ROOT/tools/dev/layers.py" check-rules "$r") || rc=$?
	eq "$rc" 1 "check-rules' exit status"
	eq "$(grep -c . <<<"$bad")" 6 "check-rules finds the four rules' breaks ($bad)"
}

t_functions_short_or_say_why() {
	rule_holds check-sizes "functions over 80 lines without '(over 80 lines: WHY)' at their head"
}

t_failure_reasons_one_shape() {
	rule_holds check-reasons "failure reasons not in the caller's 'char *why, size_t len'"
}

t_names_follow_their_room() { rule_holds check-names "functions whose prefix names another room"; }

t_no_stale_text() { rule_holds check-stale "issue numbers, or paths that are not in the tree"; }
