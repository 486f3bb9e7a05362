# The suite itself: it passes from a checkout other users cannot read. Sourced by
# tests/run-tests.sh: each t_NAME function is one test, run in a subshell under set -e with the
# helpers defined there (need_users: security.sh).
# shellcheck shell=bash

t_private_checkout() {
	# A clone in a directory of mode 0700 (mktemp -d's, a private home's): the tests that run
	# something as another user run a copy of the build that they can reach, and pass, whatever
	# the umask.
	need_users
	local c=$WORK/private/nvtaskset out rc
	mkdir -m 700 "$WORK/private"
	mkdir -p "$c/build"
	cp -a "$ROOT/tests" "$ROOT/src" "$ROOT/include" "$c/" # no tools/: the copy makes do
	cp -a "$B/bin" "$B/lib" "$B/test" "$B/stub" "$B/gen" "$c/build/"
	$(as_user 65534) test -x "$c/build/bin/nvtaskset" && die "uid 65534 reaches the private checkout"
	# (A umask of 077 too: the copy must still be made readable by others.)
	run_rc out rc sh -c 'umask 077; exec "$@"' - "$c/tests/run-tests.sh" sec_shim_reads_environment_securely yield_only_higher_and_own_user \
		sec_container_of_other_user permissions
	has "$out" "The checkout is not reachable by other users: their tests run a copy"
	hasnt "$out" "warning:"
	has "$out" "4 passed, 0 failed, 0 skipped"
	eq "$rc" 0 "the suite's status"
}
