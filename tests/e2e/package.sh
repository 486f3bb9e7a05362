# Packaging and documentation. Sourced by tests/run-tests.sh: each t_NAME function is one test,
# run in a subshell under set -e with the helpers defined there.
# shellcheck shell=bash

t_install_uninstall() {
	local dest=$WORK/dest
	make -s -C "$ROOT" install DESTDIR="$dest" PREFIX=/opt/nvt >"$WORK/install.log" 2>&1 ||
		die "make install failed: $(cat "$WORK/install.log")"
	local f
	for f in bin/nvtaskset lib/nvtaskset/libnvtaskset.so lib/nvtaskset/wrapper/libcuda.so.1 \
		share/man/man1/nvtaskset.1; do
		[ -f "$dest/opt/nvt/$f" ] || die "missing $f after install"
	done
	run_rc out rc "$dest/opt/nvt/bin/nvtaskset" --no-mps -c 2 /usr/bin/env
	has "$out" "LD_PRELOAD=$dest/opt/nvt/lib/nvtaskset/libnvtaskset.so"
	run_rc out rc "$dest/opt/nvt/bin/nvtaskset" --no-mps -c 2 "$APP" launch 1
	has "$out" "tpcs=2 hung=0"
	make -s -C "$ROOT" uninstall DESTDIR="$dest" PREFIX=/opt/nvt >>"$WORK/install.log" 2>&1 ||
		die "make uninstall failed"
	[ -z "$(find "$dest" -type f)" ] || die "files left after uninstall: $(find "$dest" -type f)"
}
t_docs_agree() {
	local opt help man readme
	help=$("$NVT" --help)
	man=$(sed 's/\\-/-/g' "$ROOT/man/nvtaskset.1")
	readme=$(cat "$ROOT/README.md")
	for opt in $(grep -oE -- '--[a-z][a-z-]+' <<<"$help" | sort -u); do
		has "$man" "$opt"
		has "$readme" "$opt"
	done
	for opt in NVTASKSET_QUIET NVTASKSET_RUNDIR NVTASKSET_DRIVER_TIMEOUT NVTASKSET_SHIM NVTASKSET_CACHE_DIR NVTASKSET_PROC_NVIDIA \
		CUDA_MPS_PIPE_DIRECTORY CUDA_MPS_LOG_DIRECTORY CUDA_DEVICE_MAX_CONNECTIONS; do
		has "$man" "$opt"
		has "$readme" "$opt"
	done
	has "$man" "$(sed -n 's/.*NVT_VERSION_STRING "\(.*\)".*/\1/p' "$ROOT/include/nvtaskset.h")"
	# The test command README gives is the one CI runs.
	grep -q '^make check$' "$ROOT/README.md" || die "README lacks 'make check'"
	grep -q 'make check' "$ROOT/.ci/run" || die ".ci/run does not run make check"
}
t_exports() {
	local f syms
	for f in "$SHIM" "$WRAPDIR/libcuda.so.1"; do
		syms=$(nm -D --defined-only "$f" | awk '{print $3}' | grep -v '^_' | sort | tr '\n' ' ')
		eq "$syms" "nvtaskset_shim_instance " "exported symbols of $f"
	done
	readelf -d "$WRAPDIR/libcuda.so.1" | grep -q 'NEEDED.*\[libcuda.so\]' ||
		die "the wrapper does not depend on the real driver"
}
