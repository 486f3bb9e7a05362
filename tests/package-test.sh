#!/usr/bin/env bash
# The Debian package, as a user meets it: builds it (make deb), checks what is
# in it, installs it with `apt-get install ./nvtaskset_*.deb`, runs what it
# installed against the fake driver, removes and purges it, and checks that
# nothing is left; all beside a `make install` of the tree (in a directory
# of its own) whose command and man page come first on PATH and MANPATH, as
# after README's quick start. Prints one line per check and "N passed, M
# failed" last.
#
# Needs root, apt, dpkg-dev, debhelper, binutils, man-db, bash-completion,
# pkg-config, gcc and python3 (.ci/run installs them; it looks for them first
# and names the packages of those missing), and a machine where nvtaskset is
# not installed. The package
# build skips its own `make check` (DEB_BUILD_OPTIONS=nocheck) unless
# DEB_BUILD_OPTIONS is set; run the suite with `make check`.
#
# Usage: tests/package-test.sh    (through `make check-package`)
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
cd "$ROOT"
B=${B:-build}
VERSION=$(sed -n 's/^#define NVT_VERSION_STRING "\(.*\)"/\1/p' src/nvtaskset.h)
PASS=0 FAIL=0

ok() { # ok WHAT CMD...: one check
	local what=$1 out
	shift
	if out=$("$@" 2>&1); then
		PASS=$((PASS + 1))
		echo "PASS $what"
	else
		FAIL=$((FAIL + 1))
		echo "FAIL $what"
		sed 's/^/    /' <<<"$out" | tail -20
	fi
}
# same WHAT GOT WANT: one check that GOT is WANT, saying what it got when not.
same() {
	local what=$1 got=$2 want=$3
	if [ "$got" == "$want" ]; then
		PASS=$((PASS + 1))
		echo "PASS $what"
	else
		FAIL=$((FAIL + 1))
		echo "FAIL $what"
		echo "    expected '$want', got '$got'"
	fi
}
fatal() {
	echo "package-test: $*" >&2
	exit 1
}
installed() { [ "$(dpkg-query -W -f '${db:Status-Status}' nvtaskset 2>/dev/null)" == installed ]; }
known() { dpkg-query -W nvtaskset >/dev/null 2>&1; }
# Excluded by dpkg (path-exclude, as in slim container images): not installed, not a failure.
excluded() { grep -hqs "^path-exclude=*${1%/*}" /etc/dpkg/dpkg.cfg.d/* /etc/dpkg/dpkg.cfg; }

# Root's calibration cache, which purging the package removes, waits here
# during the test and comes back after it; a run killed before it could put
# the cache back leaves it here, and the next run puts it back first.
SAVED=/var/cache/.nvtaskset.saved-by-package-test
restore_cache() {
	[ -e "$SAVED" ] || return 0
	if [ -e /var/cache/nvtaskset ]; then
		echo "package-test: both /var/cache/nvtaskset and $SAVED exist; keeping both" >&2
		return 0
	fi
	mv "$SAVED" /var/cache/nvtaskset
}

cleanup() {
	if known; then
		echo "package-test: purging the package left by a failed run"
		apt-get purge -y -qq nvtaskset >/dev/null 2>&1 || dpkg --purge nvtaskset >/dev/null 2>&1 || true
	fi
	rm -rf "$WORK"
	restore_cache
}

# What the build and the checks need, looked for first: each missing tool's Debian package,
# all at once, before anything is built or installed.
missing=()
for need in dpkg-buildpackage:dpkg-dev dh:debhelper apt-get:apt dpkg-deb:dpkg readelf:binutils \
	man:man-db pkg-config:pkg-config cc:gcc python3:python3; do
	command -v "${need%%:*}" >/dev/null || missing+=("${need#*:}")
done
[ -r /usr/share/bash-completion/bash_completion ] || missing+=(bash-completion)
[ ${#missing[@]} == 0 ] ||
	fatal "needs ${missing[*]} to build the package and check what it installs: apt-get install ${missing[*]}"
[ "$(id -u)" == 0 ] || fatal "needs root (it installs the package)"
WORK=$(mktemp -d /tmp/nvtaskset-package.XXXXXX)
! known || fatal "nvtaskset is installed already (dpkg); remove it first"
# Purging the package removes root's calibration cache: never someone's real one.
restore_cache
[ ! -e "$SAVED" ] || fatal "$SAVED exists beside /var/cache/nvtaskset; keep one of them"
trap cleanup EXIT
if [ -e /var/cache/nvtaskset ] || [ -L /var/cache/nvtaskset ]; then
	echo "package-test: moving root's calibration cache aside until the test ends"
	mv /var/cache/nvtaskset "$SAVED"
fi

# ---- Build -------------------------------------------------------------------

export DEB_BUILD_OPTIONS=${DEB_BUILD_OPTIONS-nocheck}
[[ " $DEB_BUILD_OPTIONS " != *" nocheck "* ]] || export DEB_BUILD_PROFILES=nocheck
make -s deb B="$B" >"$WORK/build.log" 2>&1 || {
	tail -40 "$WORK/build.log"
	fatal "make deb failed"
}
debs=("$B"/deb/nvtaskset_"$VERSION"_*.deb)
[ -f "${debs[0]}" ] && [ ${#debs[@]} == 1 ] || fatal "expected one nvtaskset_${VERSION}_*.deb in $B/deb: ${debs[*]}"
DEB=$(realpath "${debs[0]}")
echo "built $DEB"
# The fake driver and program, from the source tree.
make -s B="$B" "$B/test/fake/libcuda.so.1" "$B/test/fakeapp-dlopen" "$B/test/fakeapp-linked" >/dev/null
FAKEDIR=$ROOT/$B/test/fake APP=$ROOT/$B/test/fakeapp-dlopen LINKED=$ROOT/$B/test/fakeapp-linked

# Another nvtaskset comes first on PATH and in man's search, as after README's quick start
# (make install, to /usr/local): the checks name the package's by its path, and look for it
# among the others.
# (Staged with DESTDIR: the build's own PREFIX, so that nothing is built again.)
make -s B="$B" SLURM=0 DESTDIR="$WORK/local" install >"$WORK/install.log" 2>&1 || {
	tail -20 "$WORK/install.log"
	fatal "make install DESTDIR=$WORK/local failed"
}
export PATH=$WORK/local/usr/local/bin:$PATH MANPATH=$WORK/local/usr/local/share/man:

# ---- What is in it -----------------------------------------------------------

field() { dpkg-deb -f "$DEB" "$1"; }
dpkg-deb -c "$DEB" | awk '{print $6}' | sed 's|^\./|/|; s|/$||' | grep -v '^$' | sort >"$WORK/contents"
ok "package version is the command's ($VERSION)" test "$(field Version)" == "$VERSION"
ok "depends on libc" grep -q 'libc6' <<<"$(field Depends)"
ok "depends on json-c's library (the command's JSON writer)" grep -Eq 'libjson-c[0-9]' <<<"$(field Depends)"
ok "depends on no CUDA or NVIDIA package (NVIDIA's installer registers none)" \
	bash -c '! grep -Eiq "cuda|nvidia" <<<"$1"' _ "$(field Depends) $(field Pre-Depends) $(field Recommends)"
for f in /usr/bin/nvtaskset /usr/lib/nvtaskset/libnvtaskset.so /usr/lib/nvtaskset/wrapper/libcuda.so.1 \
	/usr/lib/nvtaskset/nvtaskset-hog /usr/lib/nvtaskset/libsmctrl.so /usr/lib/libsmctrl.so \
	/usr/lib/nvtaskset/nvtaskset-exporter /lib/systemd/system/nvtaskset-exporter.service \
	/usr/lib/pkgconfig/libsmctrl.pc /usr/include/libsmctrl.h /usr/share/man/man3/libsmctrl.3.gz \
	/usr/share/man/man1/nvtaskset.1.gz /usr/share/man/man8/spank_nvtaskset.8.gz \
	/usr/share/bash-completion/completions/nvtaskset \
	/usr/share/doc/nvtaskset/copyright /usr/share/doc/nvtaskset/LICENSE \
	/usr/share/doc/nvtaskset/README.md.gz /usr/share/doc/nvtaskset/changelog.gz \
	/usr/share/doc/nvtaskset/docs/examples/prog.c; do
	ok "ships $f" grep -qx "$f" "$WORK/contents"
done
ok "ships no record of make install's directories" bash -c '! grep -q made-directories "$1"' _ "$WORK/contents"
ok "ships nothing outside /usr but the exporter's unit (no ld.so.conf.d entry)" \
	bash -c '! grep -v "^/usr" "$1" | grep -vxE "/?|/lib(/systemd(/system(/nvtaskset-exporter.service)?)?)?"' _ "$WORK/contents"
dpkg-deb --ctrl-tarfile "$DEB" | tar -t | sed 's|^\./||' | grep -v '^$' | sort >"$WORK/control"
ok "no shlibs or symbols (the wrapper is named libcuda.so.1)" \
	bash -c '! grep -Eq "^(shlibs|symbols)$" "$1"' _ "$WORK/control"
ok "an ldconfig trigger (libsmctrl.so in /usr/lib)" \
	bash -c 'dpkg-deb --ctrl-tarfile "$1" | tar -xO ./triggers | grep -qx "activate-noawait ldconfig"' _ "$DEB"
ok "libsmctrl.so in /usr/lib is a link to the shim's neighbour" \
	test "$(dpkg-deb -c "$DEB" | awk '$6 == "./usr/lib/libsmctrl.so" {print $8}')" == nvtaskset/libsmctrl.so
mkdir "$WORK/x" && dpkg-deb -x "$DEB" "$WORK/x"
ok "hardened link of the command (relro, bind now)" \
	bash -c 'readelf -d "$1" | grep -q BIND_NOW && readelf -lW "$1" | grep -q GNU_RELRO' _ "$WORK/x/usr/bin/nvtaskset"
ok "fortified build of the shim" bash -c 'nm -D "$1" | grep -q "_chk@"' _ "$WORK/x/usr/lib/nvtaskset/libnvtaskset.so"
ok "the command has /usr/lib/nvtaskset compiled in" grep -q /usr/lib/nvtaskset "$WORK/x/usr/bin/nvtaskset"

# ---- Installed -----------------------------------------------------------------

DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "$DEB" >"$WORK/apt.log" 2>&1 || {
	cat "$WORK/apt.log"
	fatal "apt-get install $DEB failed"
}
ok "installed" installed
dpkg -L nvtaskset | grep -vx '/\.' | sort >"$WORK/files"
same "nvtaskset --version" "$(/usr/bin/nvtaskset --version)" "nvtaskset $VERSION"
same "nvtaskset found on PATH" "$(type -a -P nvtaskset | grep -x /usr/bin/nvtaskset)" /usr/bin/nvtaskset
if excluded /usr/share/man/; then
	echo "SKIP man page (dpkg excludes /usr/share/man here)"
else
	same "man -w finds the man page" "$(man -a -w nvtaskset 2>&1 | grep -x /usr/share/man/man1/nvtaskset.1.gz)" \
		/usr/share/man/man1/nvtaskset.1.gz
	ok "man nvtaskset shows it" \
		bash -c 'MANPATH=/usr/share/man MANPAGER=cat MANWIDTH=80 man nvtaskset 2>/dev/null | grep -q "EXIT STATUS"'
	ok "man spank_nvtaskset shows the Slurm plugin's page" \
		bash -c 'MANPATH=/usr/share/man MANPAGER=cat MANWIDTH=80 man 8 spank_nvtaskset 2>/dev/null | grep -q "gpu-tpcs"'
fi
if excluded /usr/share/doc/; then
	echo "SKIP docs (dpkg excludes /usr/share/doc here)"
else
	for f in README.md.gz LICENSE copyright; do
		ok "/usr/share/doc/nvtaskset/$f" test -s "/usr/share/doc/nvtaskset/$f"
	done
	ok "README is the project's" bash -c 'zcat /usr/share/doc/nvtaskset/README.md.gz | cmp -s - "$1"' _ "$ROOT/README.md"
	# The documentation pages the man pages name, as they name them (not compressed).
	for f in $(grep -ohE 'docs/[a-z-]+\.md' "$ROOT"/man/*.[138] | sort -u) docs/priorities.md docs/json.md \
		docs/memory-halves.md docs/examples/prog.c; do
		ok "/usr/share/doc/nvtaskset/$f is the project's" cmp -s "/usr/share/doc/nvtaskset/$f" "$ROOT/$f"
	done
fi
ok "bash-completion loads the completion on demand" test "$(bash -c '
	. /usr/share/bash-completion/bash_completion
	_completion_loader nvtaskset
	complete -p nvtaskset')" == "complete -F _nvtaskset nvtaskset"
ok "nothing of /usr/lib/nvtaskset registered with ldconfig" bash -c '! /sbin/ldconfig -p | grep -q /usr/lib/nvtaskset'
ok "libsmctrl.so in the loader's cache (/lib is /usr/lib on merged-/usr systems)" bash -c '/sbin/ldconfig -p | grep -Eq "libsmctrl.so .*=> (/usr)?/lib/libsmctrl.so$"'
ok "ctypes.util.find_library finds libsmctrl" \
	test "$(python3 -c 'import ctypes.util; print(ctypes.util.find_library("smctrl"))')" == libsmctrl.so
# The installed command, shim and wrapper, against the fake driver.
export NVTASKSET_RUNDIR=$WORK/run LD_LIBRARY_PATH=$FAKEDIR
mkdir -m 1777 "$NVTASKSET_RUNDIR"
ok "root's calibration goes to /var/cache/nvtaskset" \
	bash -c '/usr/bin/nvtaskset --calibrate && ls /var/cache/nvtaskset/GPU-*.topo'
ok "a task runs on its TPCs under the installed shim" \
	bash -c 'out=$(/usr/bin/nvtaskset --no-mps -c 2 "$1" launch 1) && echo "$out" && grep -q "tpcs=2 hung=0" <<<"$out"' _ "$APP"
same "the installed shim is the one preloaded" \
	"$(/usr/bin/nvtaskset --no-mps -c 2 /usr/bin/env 2>&1 | grep '^LD_PRELOAD=')" \
	"LD_PRELOAD=/usr/lib/nvtaskset/libnvtaskset.so"
ok "the installed wrapper registers its callback" \
	bash -c 'LD_LIBRARY_PATH=/usr/lib/nvtaskset/wrapper:$LD_LIBRARY_PATH "$1" launch 1 | grep -q "callbacks=1"' _ "$LINKED"
# A program written for libsmctrl, built as README says and started plainly:
# it finds the GPU's map in root's calibration cache.
printf '%s\n' '#include <stdio.h>' '#include <libsmctrl.h>' 'int main(void) {' \
	'	uint32_t n = 0; uint128_t *gpcs; int rc = libsmctrl_get_gpc_info_ext(&n, &gpcs, 0);' \
	'	printf("rc=%d gpcs=%u\n", rc, n); return rc; }' >"$WORK/smctrlprog.c"
ok "a libsmctrl program builds with pkg-config" \
	bash -c 'cc -o "$1/smctrlprog" "$1/smctrlprog.c" $(pkg-config --cflags --libs libsmctrl)' _ "$WORK"
ok "and, started plainly, reads the GPU's GPCs from the cache" \
	bash -c 'test "$("$1/smctrlprog")" == "rc=0 gpcs=12"' _ "$WORK"
# The exporter: installed disabled (no link in a .wants directory), and it serves.
ok "the exporter's unit is not enabled" \
	bash -c '! ls /etc/systemd/system/*.wants/nvtaskset-exporter.service 2>/dev/null | grep -q .'
ok "the exporter's unit runs the installed command on the loopback interface" \
	grep -qx 'ExecStart=/usr/bin/nvtaskset --exporter 127.0.0.1:9433' /lib/systemd/system/nvtaskset-exporter.service
if command -v systemd-analyze >/dev/null; then
	ok "systemd-analyze verify takes the unit" systemd-analyze verify /lib/systemd/system/nvtaskset-exporter.service
fi
/usr/bin/nvtaskset --exporter 127.0.0.1:0 2>"$WORK/exporter.err" &
exporter=$!
for _ in $(seq 100); do grep -q "serving the metrics" "$WORK/exporter.err" && break; sleep 0.1; done
port=$(sed -n 's|.*http://127.0.0.1:\([0-9]*\)/metrics$|\1|p' "$WORK/exporter.err")
ok "the installed exporter serves the metrics" \
	bash -c 'python3 -c "import sys, urllib.request; sys.stdout.write(urllib.request.urlopen(\"http://127.0.0.1:%s/metrics\" % sys.argv[1], timeout=60).read().decode())" "$1" | grep -q "^nvtaskset_tasks "' _ "$port"
kill -TERM "$exporter"
wait "$exporter" || true
unset NVTASKSET_RUNDIR LD_LIBRARY_PATH

# ---- Removed, purged -------------------------------------------------------------

gone() { # gone: none of the package's files or directories of its own are left
	local f left=""
	while read -r f; do
		[ -e "$f" ] || continue
		[ -d "$f" ] && dpkg -S "$f" >/dev/null 2>&1 && continue # a directory other packages own
		left+=" $f"
	done <"$WORK/files"
	[ -e /var/cache/nvtaskset ] && left+=" /var/cache/nvtaskset"
	[ -z "$left" ] || {
		echo "left:$left"
		return 1
	}
}
DEBIAN_FRONTEND=noninteractive apt-get remove -y -qq nvtaskset >"$WORK/apt.log" 2>&1 || {
	cat "$WORK/apt.log"
	fatal "apt-get remove failed"
}
dpkg-query -W -f 'after remove: ${db:Status-Status}\n' nvtaskset 2>/dev/null || echo "after remove: dpkg knows nothing of it"
ok "removed" bash -c '[ "$(dpkg-query -W -f "\${db:Status-Status}" nvtaskset 2>/dev/null)" != installed ]'
ok "remove leaves no file behind (calibration cache included)" gone
DEBIAN_FRONTEND=noninteractive apt-get purge -y -qq nvtaskset >"$WORK/apt.log" 2>&1 || {
	cat "$WORK/apt.log"
	fatal "apt-get purge failed"
}
ok "purged: dpkg knows nothing of it" bash -c '! dpkg-query -W -f "\${db:Status-Status}" nvtaskset 2>/dev/null | grep -qv not-installed'
ok "purge leaves no file behind" gone
same "the command is gone" "$(ls /usr/bin/nvtaskset 2>/dev/null)" ""

echo "$PASS passed, $FAIL failed"
[ "$FAIL" == 0 ]
