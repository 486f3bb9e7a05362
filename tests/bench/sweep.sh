#!/usr/bin/env bash
# The shim's cost at process start, without a GPU: the time to start N
# trivial processes (/bin/true with the shim preloaded and the fake driver)
# one after another, in a run directory that holds M segment files
#   none:  nothing else;
#   stale: M files of processes that are gone (made once, before the N starts:
#          the starts remove them);
#   live:  M files named for live processes (sleeping ones, the files empty
#          so that no start removes them), as M running tasks of the user.
# Also prints the system calls of one start (strace -c, with env), where strace is.
# Prints, per case, the N starts' total and slowest time, and the files left.
#
# Usage: tests/bench/sweep.sh [BUILD_DIR [N [M]]]   (BUILD_DIR: default build/,
# where `make check` built the shim and build/test/fake)
set -eu
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
B=${1:-$ROOT/build}
N=${2:-200}
M=${3:-2000}
SHIM=$B/lib/nvtaskset/libnvtaskset.so
[ -f "$SHIM" ] && [ -f "$B/test/fake/libcuda.so.1" ] || { echo "build $B first (make check)" >&2; exit 1; }
export LD_LIBRARY_PATH=$B/test/fake NVTASKSET_QUIET=1
unset NVTASKSET_PARTITION LD_PRELOAD
WORK=$(mktemp -d /tmp/nvtaskset-sweep.XXXXXX)
HELPERS=
cleanup() {
	# shellcheck disable=SC2086
	[ -z "$HELPERS" ] || kill $HELPERS 2>/dev/null || true
	rm -rf "$WORK"
}
trap cleanup EXIT
export NVTASKSET_RUNDIR=$WORK/run
mkdir "$NVTASKSET_RUNDIR"
NS=$(stat -L -c %i /proc/self/ns/pid)
DIR=$NVTASKSET_RUNDIR/nvtaskset-$(id -u)
LD_PRELOAD=$SHIM /bin/true # makes the run directory

# syscalls: the system calls of one start (strace -c), or "?" without strace.
syscalls() {
	command -v strace >/dev/null || { echo "?"; return; }
	strace -f -c -o "$WORK/strace" env LD_PRELOAD="$SHIM" /bin/true
	awk '$NF == "total" {print $4}' "$WORK/strace"
}
# starts LABEL [PRELOAD]: N starts one after another; prints total and slowest in ms.
starts() {
	local i t0 t1 us total=0 worst=0 preload=${2-$SHIM}
	for ((i = 0; i < N; i++)); do
		t0=${EPOCHREALTIME/./}
		LD_PRELOAD=$preload /bin/true
		t1=${EPOCHREALTIME/./}
		us=$((t1 - t0))
		total=$((total + us))
		((us > worst)) && worst=$us
	done
	printf '%-6s %d starts: %6d.%01d ms in all, %5d.%01d ms the slowest; %d files left\n' "$1" "$N" \
		$((total / 1000)) $((total % 1000 / 100)) $((worst / 1000)) $((worst % 1000 / 100)) \
		"$(find "$DIR" -name "nvtaskset.$NS.*" | wc -l)"
}

# stale_files: M files of processes that are gone (PIDs above pid_max, which no process can have).
stale_files() {
	python3 - "$DIR" "$NS" "$M" <<'PY'
import sys
d, ns, m = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
for i in range(m):
    open("%s/nvtaskset.%d.%d" % (d, ns, 4194304 + 1 + i), "w").close()
PY
}
left() { find "$DIR" -name "nvtaskset.$NS.*" | wc -l; }

starts noshim ""
echo "none:  one start makes $(syscalls) system calls"
starts none
stale_files
echo "stale: the first start makes $(syscalls) system calls; $(left) files are left"
stale_files
starts stale
find "$DIR" -name "nvtaskset.$NS.*" -delete
# Live: M sleeping processes.
for ((i = 0; i < M; i++)); do
	sleep 100000 &
	HELPERS+=" $!"
	: >"$DIR/nvtaskset.$NS.$!"
done
echo "live:  one start makes $(syscalls) system calls"
starts live
