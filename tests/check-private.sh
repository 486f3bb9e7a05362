#!/usr/bin/env bash
# make check-private: `make check` in a copy of this tree inside a directory that only its
# owner may enter (mode 0700, like a clone in `mktemp -d` or in a private home), as root: the
# tests that run something as another user must run there too, not skip. CI runs it
# (.ci/run). Fails if the suite fails or if a test skipped because other users could not
# reach the build.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
[ "$(id -u)" == 0 ] || echo "check-private: not root: the tests of other users skip" >&2
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
chmod 700 "$dir"
tar -C "$ROOT" -c --exclude=./build --exclude=./.git --exclude=__pycache__ . | tar -x -C "$dir"
chmod 700 "$dir" # the archive's "." gave it the checkout's mode
[ "$(stat -c %a "$dir")" == 700 ] || { echo "check-private: $dir is not of mode 0700" >&2; exit 1; }
echo "check-private: make check in $dir (mode $(stat -c %a "$dir"))"
env -u MAKEFLAGS -u MFLAGS -u MAKELEVEL make -j"$(nproc)" -C "$dir" check ${CHECK_JOBS:+CHECK_JOBS=$CHECK_JOBS} 2>&1 |
	tee "$dir/check.log"
if grep -q 'cannot run .*tests/run-tests.sh copies the build\|uid 65534 cannot reach\|copying the build for other users' "$dir/check.log"; then
	echo "check-private: tests of other users skipped: they could not reach the build" >&2
	exit 1
fi
