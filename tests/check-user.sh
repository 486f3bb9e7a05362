#!/usr/bin/env bash
# make check-user CHECK_USER=NAME: `make check` as the ordinary user NAME, as root starts it: in a
# copy of this tree in a directory of NAME's of mode 0700 (a clone in `mktemp -d`), with a login's
# plain environment. Fails if the suite fails, or if a test skipped for another reason than
# needing root (only the tests of other users, namespaces and root's files may skip for an
# ordinary user). CI runs it (.ci/run), beside check-private (the suite as root).
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
user=${1:-}
[ -n "$user" ] || { echo "usage: tests/check-user.sh USER (make check-user CHECK_USER=USER)" >&2; exit 2; }
[ "$(id -u)" == 0 ] || { echo "check-user: run it as root (it runs the suite as $user)" >&2; exit 2; }
uid=$(id -u "$user" 2>/dev/null) || { echo "check-user: no user $user (useradd -m $user)" >&2; exit 2; }
[ "$uid" != 0 ] || { echo "check-user: $user is root; name an ordinary user" >&2; exit 2; }
as_user() { setpriv --reuid="$uid" --regid="$(id -g "$user")" --init-groups "$@"; }
dir=$(as_user mktemp -d)
trap 'rm -rf "$dir"' EXIT
chmod 700 "$dir"
tar -C "$ROOT" -c --exclude=./build --exclude=./.git --exclude=__pycache__ . | as_user tar -x -C "$dir"
as_user chmod 700 "$dir" # the archive's "." gave it the checkout's mode
home=$(getent passwd "$user" | cut -d: -f6)
[ -d "$home" ] && as_user test -w "$home" || home=$dir
echo "check-user: make check as $user (uid $uid) in $dir (mode $(stat -c %a "$dir"))"
start=$SECONDS
as_user env -i HOME="$home" USER="$user" LOGNAME="$user" PATH=/usr/local/bin:/usr/bin:/bin \
	LANG=C.UTF-8 ${CHECK_JOBS:+CHECK_JOBS=$CHECK_JOBS} \
	make -j"$(nproc)" -C "$dir" check 2>&1 | tee "$dir/check.log"
echo "check-user: $((SECONDS - start)) s"
if grep '^SKIP ' "$dir/check.log" | grep -v '(SKIPPED: needs root'; then
	echo "check-user: the tests above skipped as an ordinary user for another reason than root's" >&2
	exit 1
fi
