# Packaging and documentation. Sourced by tests/run-tests.sh: each t_NAME function is one test,
# run in a subshell under set -e with the helpers defined there.
# shellcheck shell=bash

# submake ARGS...: make in the source tree, as a user would run it (not as part of
# the make that runs these tests: no jobserver, no variables passed down).
submake() { env -u MAKEFLAGS -u MFLAGS -u MAKELEVEL make -C "$ROOT" "$@"; }
# install_tree DEST MAKE-ARGS...: `make install` into DEST from a build tree of its own (so
# that the paths compiled into the command do not change the one under test).
install_tree() {
	local dest=$1
	shift
	submake -s B="$WORK/build.$(basename "$dest")" install DESTDIR="$dest" "$@" \
		>"$WORK/install.log" 2>&1 || die "make install $* failed: $(cat "$WORK/install.log")"
}
uninstall_tree() {
	local dest=$1
	shift
	submake -s B="$WORK/build.$(basename "$dest")" uninstall DESTDIR="$dest" "$@" \
		>"$WORK/install.log" 2>&1 || die "make uninstall $* failed: $(cat "$WORK/install.log")"
	[ -z "$(find "$dest" ! -type d)" ] || die "left after uninstall: $(find "$dest" ! -type d)"
}
t_install_uninstall() {
	local dest=$WORK/dest f
	install_tree "$dest" PREFIX=/opt/nvt
	for f in bin/nvtaskset lib/nvtaskset/libnvtaskset.so lib/nvtaskset/wrapper/libcuda.so.1 \
		share/man/man1/nvtaskset.1 share/bash-completion/completions/nvtaskset \
		share/doc/nvtaskset/README.md share/doc/nvtaskset/LICENSE; do
		[ -f "$dest/opt/nvt/$f" ] || die "missing $f after install"
	done
	cmp "$ROOT/tools/completion/nvtaskset.bash" "$dest/opt/nvt/share/bash-completion/completions/nvtaskset"
	cmp "$ROOT/README.md" "$dest/opt/nvt/share/doc/nvtaskset/README.md"
	[ "$(find "$dest" -type f | wc -l)" == 7 ] || die "unexpected files: $(find "$dest" -type f)"
	run_rc out rc "$dest/opt/nvt/bin/nvtaskset" --no-mps -c 2 /usr/bin/env
	has "$out" "LD_PRELOAD=$dest/opt/nvt/lib/nvtaskset/libnvtaskset.so"
	run_rc out rc "$dest/opt/nvt/bin/nvtaskset" --no-mps -c 2 "$APP" launch 1
	has "$out" "tpcs=2 hung=0"
	uninstall_tree "$dest" PREFIX=/opt/nvt
	for f in lib/nvtaskset share/doc/nvtaskset; do
		[ ! -e "$dest/opt/nvt/$f" ] || die "$f left after uninstall"
	done
}
t_install_libdir() {
	# A distribution's LIBDIR: the command finds its shim there, staged or not.
	local dest=$WORK/dest64 root=$WORK/root64 f
	install_tree "$dest" PREFIX=/usr LIBDIR=/usr/lib64/nvtaskset
	for f in lib64/nvtaskset/libnvtaskset.so lib64/nvtaskset/wrapper/libcuda.so.1; do
		[ -f "$dest/usr/$f" ] || die "missing $f after install"
	done
	[ ! -e "$dest/usr/lib/nvtaskset" ] || die "installed into lib/ despite LIBDIR"
	run_rc out rc "$dest/usr/bin/nvtaskset" --no-mps -c 2 /usr/bin/env
	eq "$rc" 0
	has "$out" "LD_PRELOAD=$dest/usr/lib64/nvtaskset/libnvtaskset.so"
	run_rc out rc "$dest/usr/bin/nvtaskset" --no-mps -c 2 "$APP" launch 1
	has "$out" "tpcs=2 hung=0"
	# The LIBDIR compiled in, when the command is not beside its tree.
	grep -q /usr/lib64/nvtaskset "$dest/usr/bin/nvtaskset" || die "LIBDIR not compiled in"
	uninstall_tree "$dest" PREFIX=/usr LIBDIR=/usr/lib64/nvtaskset
	submake -s B="$WORK/build.root64" install PREFIX="$root/usr" LIBDIR="$root/usr/lib64/nvt" \
		>"$WORK/install.log" 2>&1 || die "make install failed: $(cat "$WORK/install.log")"
	mkdir -p "$WORK/elsewhere"
	cp "$root/usr/bin/nvtaskset" "$WORK/elsewhere/"
	run_rc out rc "$WORK/elsewhere/nvtaskset" --no-mps -c 2 /usr/bin/env
	eq "$rc" 0
	has "$out" "LD_PRELOAD=$root/usr/lib64/nvt/libnvtaskset.so"
	# NVTASKSET_SHIM still wins.
	run_rc out rc env NVTASKSET_SHIM="$SHIM" "$WORK/elsewhere/nvtaskset" --no-mps -c 2 /usr/bin/env
	has "$out" "LD_PRELOAD=$SHIM"
	rm -rf "$root"
	run_rc out rc "$WORK/elsewhere/nvtaskset" --no-mps -c 2 /usr/bin/env
	eq "$rc" 1
	eq "$out" "nvtaskset: cannot find the nvtaskset shim in $WORK/elsewhere/../lib64/nvt, $WORK/elsewhere/../lib/nvtaskset or $root/usr/lib64/nvt"
}
t_build_flags() {
	# A packager's flags: a fortification level of their own, hardening link flags.
	local b=$WORK/build.flags
	submake -s B="$b" CFLAGS="-O2 -g -Wp,-D_FORTIFY_SOURCE=3" CPPFLAGS="-DNVT_PACKAGER_FLAG" \
		LDFLAGS="-Wl,-z,relro -Wl,-z,now" WERROR=1 >"$WORK/flags.log" 2>&1 ||
		die "build with packager flags failed: $(cat "$WORK/flags.log")"
	hasnt "$(cat "$WORK/flags.log")" "warning"
	readelf -d "$b/bin/nvtaskset" | grep -q 'BIND_NOW' || die "LDFLAGS not used to link the command"
	readelf -d "$b/lib/nvtaskset/libnvtaskset.so" | grep -q 'BIND_NOW' || die "LDFLAGS not used for the shim"
	readelf -lW "$b/bin/nvtaskset" | grep -q GNU_RELRO || die "no RELRO segment"
	has "$(cat "$b/flags")" "-DNVT_PACKAGER_FLAG"
	# New flags rebuild everything; the same flags rebuild nothing.
	submake B="$b" CFLAGS="-O1" >"$WORK/flags.log" 2>&1 || die "rebuild failed"
	has "$(cat "$WORK/flags.log")" "-O1 -c -o $b/cli/tpcset.o"
	submake B="$b" CFLAGS="-O1" >"$WORK/flags.log" 2>&1 || die "rebuild failed"
	hasnt "$(cat "$WORK/flags.log")" " -c -o "
	# A warning fails the build only with WERROR=1 (make check's and CI's build).
	submake -s B="$b" CFLAGS="-O2 -D_FORTIFY_SOURCE=1 -Wp,-D_FORTIFY_SOURCE=3" \
		>"$WORK/flags.log" 2>&1 || die "a warning failed the packager's build: $(cat "$WORK/flags.log")"
	has "$(cat "$WORK/flags.log")" "warning: \"_FORTIFY_SOURCE\" redefined"
	if submake -s B="$b.werror" CFLAGS="-O2 -D_FORTIFY_SOURCE=1 -Wp,-D_FORTIFY_SOURCE=3" WERROR=1 \
		>"$WORK/flags.log" 2>&1; then
		die "WERROR=1 let a warning pass"
	fi
	has "$(cat "$WORK/flags.log")" "error: \"_FORTIFY_SOURCE\" redefined"
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
t_package_version() {
	# The Debian package's version is the command's (make deb checks it too).
	local version
	version=$(sed -n 's/.*NVT_VERSION_STRING "\(.*\)".*/\1/p' "$ROOT/include/nvtaskset.h")
	eq "$(sed -n '1s/^nvtaskset (\([^)]*\)).*/\1/p' "$ROOT/debian/changelog")" "$version" "debian/changelog's version"
	eq "$("$NVT" --version)" "nvtaskset $version"
	[ -x "$ROOT/debian/rules" ] || die "debian/rules is not executable"
	# The .ci/run that CI runs builds and tests the package too.
	grep -qx 'make check-package' "$ROOT/.ci/run" || die ".ci/run does not run make check-package"
}
t_messages_plain() {
	# What users read says what happened, not where a paper says so.
	local f found
	for f in "$NVT" "$SHIM" "$WRAPDIR/libcuda.so.1"; do
		found=$(strings "$f" | grep -Ei 'paper|pitfall|section [0-9]|HARDWARE-FACTS' || true)
		[ -z "$found" ] || die "$f says: $found"
	done
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
