# The layout of src/: each folder's files include only their own folder's
# headers and those of the folders below it (Makefile's LAYERS, lowest
# first), and nothing in src/ includes the tools above it. Sourced by
# tests/run-tests.sh.
# shellcheck shell=bash

t_src_layers_point_down() {
	local layers i=0 l f dir inc idir bad=""
	layers=$(sed -n 's/^LAYERS = //p' "$ROOT/Makefile")
	[ -n "$layers" ] || die "no LAYERS line in the Makefile"
	local -A rank=()
	for l in $layers; do
		rank[$l]=$i
		i=$((i + 1))
	done
	for f in "$ROOT"/src/*/*.[ch]; do
		dir=$(basename "$(dirname "$f")")
		[ -n "${rank[$dir]+x}" ] || bad+=" $f(folder not in LAYERS)"
		while read -r inc; do
			case "$inc" in
			*/*)
				idir=${inc%%/*}
				[ -n "${rank[$idir]+x}" ] || { bad+=" $f->$inc(unknown)"; continue; }
				[ "${rank[$idir]}" -le "${rank[$dir]}" ] || bad+=" $f->$inc"
				;;
			nvtaskset.h) ;; # src/nvtaskset.h: the contract, below every folder
			libsmctrl.h) ;; # include/: the installed header
			*) [ -f "$(dirname "$f")/$inc" ] || bad+=" $f->$inc(not in its folder)" ;;
			esac
		done < <(sed -n 's/^#include "\(.*\)"/\1/p' "$f")
	done
	eq "$bad" "" "includes that point up or out"
	# No file is left in src/ itself but the contract: every file belongs to a subsystem.
	eq "$(find "$ROOT/src" -maxdepth 1 -type f -printf '%f\n')" "nvtaskset.h" "files directly in src/"
}
