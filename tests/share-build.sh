# The build for other users: where a clone lies in a directory that other users cannot enter
# (a clone in `mktemp -d`, a private home, a umask of 077), the tests that run programs as
# another user run a world-readable copy of it instead. Sourced by tests/run-tests.sh,
# tests/slurm/run.sh and tests/faults/run.sh.
# shellcheck shell=bash

# reachable_by UID DIR: true where uid UID may run DIR's nvtaskset, fake driver, shim and
# fake MPS control daemon.
reachable_by() {
	setpriv --reuid="$1" --regid="$1" --clear-groups sh -c \
		'test -x "$1/build/bin/nvtaskset" && test -r "$1/build/test/fake/libcuda.so.1" &&
		test -r "$1/build/lib/nvtaskset/libnvtaskset.so" && test -x "$1/tests/fake/bin/nvidia-cuda-mps-control"' \
		_ "$2" 2>/dev/null
}

# share_build ROOT DEST: copies ROOT's build/ (its programs and libraries), tests/ and
# tools/slurm/ to DEST (a directory that does not exist yet, in one other users can enter),
# world-readable and writable by its owner only.
share_build() {
	local d
	mkdir -p "$2/build" "$2/tools" || return 1
	for d in bin lib test stub gen; do
		[ ! -e "$1/build/$d" ] || cp -a "$1/build/$d" "$2/build/" || return 1
	done
	cp -a "$1/tests" "$2/tests" || return 1
	[ ! -d "$1/tools/slurm" ] || cp -a "$1/tools/slurm" "$2/tools/slurm" || return 1
	chmod -R a+rX,go-w "$2"
}
