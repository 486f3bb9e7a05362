# The CUDA driver's interface has one owner, src/gpu/cuda_driver.h: no other
# file of src/, tools/ or the fake driver (tests/fake) writes a callback id, an
# entry point's function type or a machine's GPU limit, the fake hands its
# callbacks named ids, and each binary looks the driver's entry points up in
# one table. Sourced by tests/run-tests.sh.
# shellcheck shell=bash

# The C files the rules cover: the shim, the command and its libraries, the
# Slurm plugin, the fake driver and the programs written for it.
driver_api_files() {
	find "$ROOT/src" "$ROOT/tools" "$ROOT/tests/fake" -name '*.[ch]' ! -path '*/src/gpu/cuda_driver.h' |
		sort
}

# found_none WHAT GREP-ARGS...: grep finds no line (WHAT: what it finds); a grep that fails
# (a file it cannot read: status 2) fails the test, where `|| true` passed it.
found_none() {
	local what=$1 out rc=0
	shift
	out=$(grep "$@") || rc=$?
	[ "$rc" != 2 ] || die "grep failed on $what: $out"
	eq "$out" "" "$what"
}

t_driver_api_one_header() {
	local files
	mapfile -t files < <(driver_api_files)
	[ "${#files[@]}" -gt 50 ] || die "found only ${#files[@]} files"
	# Callback ids: an enumerator or a macro named CBID or CB_cu... with a number.
	found_none "callback ids written outside src/gpu/cuda_driver.h" -nE \
		'(CBID|\<CB_cu)[A-Za-z0-9_]*[[:space:]]*=[[:space:]]*[0-9]|#define[[:space:]]+[A-Za-z0-9_]*(CBID|\<CB_cu)[A-Za-z0-9_]*[[:space:]]+[0-9]' \
		"${files[@]}"
	# Function types of the driver's entry points.
	found_none "driver function types written outside src/gpu/cuda_driver.h" -nE \
		'typedef[[:space:]]+CUresult[[:space:]]*\(\*' "${files[@]}"
	# The fake driver reports its calls by name (CALL and fake_api_callbacks take the id first).
	found_none "bare callback ids in the fake driver" -nE '\<(CALL|fake_api_callbacks)\([[:space:]]*[0-9]' \
		"$ROOT"/tests/fake/*.c
	# One limit of a machine's GPUs, beside the segment's own (src/nvtaskset.h).
	eq "$(grep -lE '#define[[:space:]]+NVT_MACHINE_GPUS\>' "${files[@]}" "$ROOT/src/gpu/cuda_driver.h")" \
		"$ROOT/src/gpu/cuda_driver.h" "where NVT_MACHINE_GPUS is defined"
	found_none "the old name of the machine's GPU limit" -nw 'NVT_GPUS_MAX' "${files[@]}" \
		"$ROOT"/src/gpu/cuda_driver.h "$ROOT"/docs/*.md
}

# One table of driver entry points per binary: every lookup of the driver's
# entry points (dlsym, comments aside; RTLD_DEFAULT looks up the program's
# own names, never the driver's) is in src/shim/shimdriver.c for the shim and
# in src/gpu/driver.c for the command's code (the command, nvtaskset-hog, the
# Slurm plugin), and each table names each entry point once. (cuInit and
# cuGetExportTable were looked up in three files each.)
# driver_lookups DIR...: FILE:LINE:TEXT of each dlsym or dlvsym call in the C files under DIR.
driver_lookups() {
	find "$@" -name '*.[ch]' -exec grep -nE '\<dlv?sym[[:space:]]*\(' {} + |
		grep -vE '^[^:]+:[0-9]+:[[:space:]]*(/?\*|//)' |
		grep -vE 'RTLD_DEFAULT,[[:space:]]*[A-Za-z_]|RTLD_(DEFAULT|NEXT),[[:space:]]*"[^c]' || true
}
# table_names FILE: the driver entry points FILE names ("cu..." strings), one per line.
table_names() { grep -oE '"cu[A-Z][A-Za-z0-9_]*"' "$1" | tr -d '"'; }
t_driver_api_one_table_per_binary() {
	local where table n
	where=$(driver_lookups "$ROOT/src" "$ROOT/tools" | cut -d: -f1 | sort -u)
	eq "$where" "$ROOT/src/gpu/driver.c
$ROOT/src/shim/shimdriver.c" "the files that look the driver's entry points up"
	for table in src/gpu/driver.c src/shim/shimdriver.c; do
		n=$(table_names "$ROOT/$table" | wc -l)
		[ "$n" -ge 20 ] || die "$table names $n entry points"
		eq "$(table_names "$ROOT/$table" | sort | uniq -d)" "" "entry points $table names twice"
		table_names "$ROOT/$table" | grep -qx cuGetExportTable ||
			die "$table does not name cuGetExportTable"
	done
	# The command's binaries link its table (nvtaskset-hog is a program of its own).
	for table in "$B/bin/nvtaskset" "$B/lib/nvtaskset/nvtaskset-hog"; do
		nm "$table" | grep -qw nvt_driver_open || die "$table does not link src/gpu/driver.c"
	done
}

# The rule above fails where it must: on a tree whose command looks an entry
# point up beside its table, and whose shim's table names one twice.
t_driver_api_one_table_check_catches() {
	local r=$WORK/tree where
	mkdir -p "$r/src/gpu" "$r/src/shim" "$r/tools/nvtaskset"
	printf 'void *f(void *l) { return dlsym(l, "cuInit"); }\n' >"$r/src/gpu/driver.c"
	printf '/* dlsym(lib, "cuInit") in a comment */\nvoid *g(void *l) { return dlsym (l, "cuInit"); }\n' \
		>"$r/tools/nvtaskset/hog.c"
	printf 'void *h(void) { return dlsym(RTLD_DEFAULT, "Py_Initialize"); }\n' >"$r/src/shim/shimsetup.c"
	printf 'x = {"cuInit", "cuInit"};\n' >"$r/src/shim/shimdriver.c"
	where=$(driver_lookups "$r/src" "$r/tools" | cut -d: -f1,2 | sort)
	eq "$where" "$r/src/gpu/driver.c:1
$r/tools/nvtaskset/hog.c:2" "the lookups found in the planted tree"
	eq "$(table_names "$r/src/shim/shimdriver.c" | sort | uniq -d)" "cuInit" "a name written twice"
}
