# The layout of the code (tools/dev/layers.py, from the Makefile's LAYERS and
# CMD_LAYERS): each folder of src/ includes only its own folder's headers and
# those of the folders below it, nothing in src/ includes the tools above it,
# the command's files call only their own layer and those below, without
# circles, and docs/design.md's picture of it is current; and HACKING.md's
# conventions that a script can check (function sizes, the shape of failure
# reasons, names that follow their room, no stale text). Sourced by
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
