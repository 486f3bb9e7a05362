# The layout of the code (tools/dev/layers.py, from the Makefile's LAYERS and
# CMD_LAYERS): each folder of src/ includes only its own folder's headers and
# those of the folders below it, nothing in src/ includes the tools above it,
# the command's files call only their own layer and those below, without
# circles, and docs/design.md's picture of it is current. Sourced by
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
