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
	local bad
	bad=$(python3 "$ROOT/tools/dev/layers.py" "$1" "$ROOT") || true
	eq "$bad" "" "$2"
}

t_functions_short_or_say_why() {
	rule_holds check-sizes "functions over 80 lines without '(over 80 lines: WHY)' at their head"
}

t_failure_reasons_one_shape() {
	rule_holds check-reasons "failure reasons not in the caller's 'char *why, size_t len'"
}

t_names_follow_their_room() { rule_holds check-names "functions whose prefix names another room"; }

t_no_stale_text() { rule_holds check-stale "issue numbers, or paths that are not in the tree"; }
