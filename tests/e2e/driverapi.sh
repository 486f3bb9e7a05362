# The CUDA driver's interface has one owner, src/gpu/cuda_driver.h: no other
# file of src/, tools/ or the fake driver (tests/fake) writes a callback id, an
# entry point's function type or a machine's GPU limit, the fake hands its
# callbacks named ids, and the shim looks each entry point up once. Sourced by
# tests/run-tests.sh.
# shellcheck shell=bash

# The C files the rules cover: the shim, the command and its libraries, the
# Slurm plugin, the fake driver and the programs written for it.
driver_api_files() {
	find "$ROOT/src" "$ROOT/tools" "$ROOT/tests/fake" -name '*.[ch]' ! -path '*/src/gpu/cuda_driver.h' |
		sort
}

t_driver_api_one_header() {
	local files bad
	mapfile -t files < <(driver_api_files)
	[ "${#files[@]}" -gt 50 ] || die "found only ${#files[@]} files"
	# Callback ids: an enumerator or a macro named CBID or CB_cu... with a number.
	bad=$(grep -nE '(CBID|\<CB_cu)[A-Za-z0-9_]*[[:space:]]*=[[:space:]]*[0-9]|#define[[:space:]]+[A-Za-z0-9_]*(CBID|\<CB_cu)[A-Za-z0-9_]*[[:space:]]+[0-9]' \
		"${files[@]}") || true
	eq "$bad" "" "callback ids written outside src/gpu/cuda_driver.h"
	# Function types of the driver's entry points.
	bad=$(grep -nE 'typedef[[:space:]]+CUresult[[:space:]]*\(\*' "${files[@]}") || true
	eq "$bad" "" "driver function types written outside src/gpu/cuda_driver.h"
	# The fake driver reports its calls by name (CALL and fake_api_callbacks take the id first).
	bad=$(grep -nE '\<(CALL|fake_api_callbacks)\([[:space:]]*[0-9]' "$ROOT"/tests/fake/*.c) || true
	eq "$bad" "" "bare callback ids in the fake driver"
	# One limit of a machine's GPUs, beside the segment's own (src/nvtaskset.h).
	eq "$(grep -lE '#define[[:space:]]+NVT_MACHINE_GPUS\>' "${files[@]}" "$ROOT/src/gpu/cuda_driver.h")" \
		"$ROOT/src/gpu/cuda_driver.h" "where NVT_MACHINE_GPUS is defined"
	bad=$(grep -nw 'NVT_GPUS_MAX' "${files[@]}" "$ROOT"/src/gpu/cuda_driver.h "$ROOT"/docs/*.md) || true
	eq "$bad" "" "the old name of the machine's GPU limit"
}

# Each driver entry point the shim calls is looked up once, in one file: its
# function pointers are the shim's state (cuDeviceGetUuid was looked up twice).
# cuGetExportTable is also how shimsms.c finds the driver's own library (its
# address, for dladdr), and set-up looks it up again in a library it loads.
t_driver_api_shim_looks_up_once() {
	local dups
	dups=$(grep -ohE 'dlsym\([^,]+,[[:space:]]*"cu[A-Za-z0-9_]+"' "$ROOT"/src/shim/*.c |
		sed -E 's/.*"(cu[A-Za-z0-9_]+)"/\1/' | grep -vx cuGetExportTable | sort | uniq -d)
	eq "$dups" "" "driver entry points the shim looks up more than once"
	eq "$(grep -c '"cuDeviceGetUuid"' "$ROOT"/src/shim/*.c | grep -v ':0$')" "$ROOT/src/shim/shimsetup.c:1" \
		"the shim's files that look cuDeviceGetUuid up"
}
