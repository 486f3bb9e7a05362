#!/usr/bin/env bash
# nvtaskset without a GPU (make try; README's "Try it without a GPU"): the
# built command and shim on the fake driver of the tests (a fake H100), with
# the fake MPS control daemon and `demo`, a program that prints where its
# kernels ran. A short tour runs -c, -g, -n, -p and -l; then, on a terminal,
# a shell with the same environment lets you try more. Everything it makes
# lives in one temporary directory, removed at the end with the demos and
# the fake MPS daemon it started; nothing is installed.
#
# Usage: tests/fake/try.sh [--tour|--shell]   (default: the tour, then the shell on a terminal)
# B=DIR: the build directory (default: build/ of this checkout)
# GPUS=N: N fake GPUs (1 to 8, default 1; make try GPUS=2), H100s floorswept two ways in turn
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
B=$(cd "${B:-$ROOT/build}" 2>/dev/null && pwd) || B=
MODE=${1:-both}
GPUS=${GPUS:-1}
if ! [[ "$GPUS" =~ ^[1-8]$ ]]; then
	echo "try: GPUS takes a count of fake GPUs from 1 to 8, not '$GPUS'" >&2
	exit 2
fi
case "$MODE" in
both | --tour | --shell) ;;
*)
	echo "usage: tests/fake/try.sh [--tour|--shell]" >&2
	exit 2
	;;
esac
for f in bin/nvtaskset test/fake/libcuda.so.1 test/demo; do
	if [ -z "$B" ] || [ ! -x "$B/$f" ]; then
		echo "try: build/$f is missing: run 'make try' (it builds what it needs)" >&2
		exit 1
	fi
done

TRY=$(mktemp -d "${TMPDIR:-/tmp}/nvtaskset-try.XXXXXX")
chmod 755 "$TRY"
# The run directory: only this user makes hers in it (it was mode 1777, in a directory
# whose name anyone can see: another user could make hers first).
mkdir -m 755 "$TRY/run"
mkdir "$TRY/mps-pipe" "$TRY/mps-log" "$TRY/cache"
# The environment, also for the shell: the fake driver first on the library
# path; nvtaskset, demo and the fake nvidia-cuda-mps-control first on PATH;
# the run directory, MPS's directories and the calibration cache in $TRY.
cat >"$TRY/env" <<EOF
export LD_LIBRARY_PATH=$B/test/fake\${LD_LIBRARY_PATH:+:\$LD_LIBRARY_PATH}
export PATH=$B/bin:$B/test:$ROOT/tests/fake/bin:\$PATH
export NVTASKSET_RUNDIR=$TRY/run NVTASKSET_CACHE_DIR=$TRY/cache NVTASKSET_PROC_NVIDIA=$TRY/no-proc-nvidia
export CUDA_MPS_PIPE_DIRECTORY=$TRY/mps-pipe CUDA_MPS_LOG_DIRECTORY=$TRY/mps-log
export PKG_CONFIG_PATH=$B/pkgconfig\${PKG_CONFIG_PATH:+:\$PKG_CONFIG_PATH} LIBRARY_PATH=$B/test/fake\${LIBRARY_PATH:+:\$LIBRARY_PATH}
unset LD_PRELOAD NVTASKSET_PARTITION NVTASKSET_PARTITION_FOR NVTASKSET_PRIORITY CUDA_VISIBLE_DEVICES
EOF
# without_dirs LIST DIR...: the colon-separated LIST without DIRs (they go first, once).
without_dirs() {
	local list=":$1:" dir
	shift
	for dir; do
		while [[ "$list" == *":$dir:"* ]]; do list=${list//:$dir:/:}; done
	done
	list=${list#:}
	echo "${list%:}"
}
PATH=$(without_dirs "$PATH" "$B/bin" "$B/test" "$ROOT/tests/fake/bin")
LD_LIBRARY_PATH=$(without_dirs "${LD_LIBRARY_PATH:-}" "$B/test/fake")
# shellcheck source=/dev/null
. "$TRY/env"
for v in $(env | sed -n 's/^\(FAKECUDA_[A-Z_]*\)=.*/\1/p'); do unset "$v"; done
# Several fake GPUs: the fake driver's knob, in the shell's environment too.
if [ "$GPUS" -gt 1 ]; then
	chips=h100
	for ((i = 1; i < GPUS; i++)); do chips+=",$( ((i % 2)) && echo h100-alt || echo h100)"; done
	echo "export FAKECUDA_CHIPS=$chips" >>"$TRY/env"
	export FAKECUDA_CHIPS=$chips
fi

DEMOS=()
# try_procs: this user's processes started in the shell (its demos: background jobs outlive it),
# found by the variable its rc file exports (this script's own helpers lack it); one PID a line.
try_procs() {
	local f uid
	uid=$(id -u)
	grep -lsxz "NVT_TRY_SHELL=$TRY" /proc/[0-9]*/environ | while read -r f; do
		[ "$(stat -c %u "${f%/environ}" 2>/dev/null)" == "$uid" ] && echo "${f//[^0-9]/}"
	done
	return 0
}
cleanup() {
	local pid i
	# The demos, the shell's too; 5 s at most. Then the MPS daemon, which serves them until they
	# end (--mps stop refuses a daemon with clients).
	for pid in "${DEMOS[@]}" $(try_procs); do
		kill "$pid" 2>/dev/null || true
	done
	for ((i = 0; i < 250; i++)); do
		[ -n "$(try_procs)" ] || break
		sleep 0.02
	done
	wait 2>/dev/null || true
	[ -e "$TRY/mps-pipe/nvidia-cuda-mps-control.pid" ] && nvtaskset --mps stop >/dev/null 2>&1
	rm -rf "$TRY"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# shellcheck source=tests/fake/tour.sh
. "$ROOT/tests/fake/tour.sh"
# show_bg NAME CMD...: prints "CMD &", starts it with its output in $TRY/NAME.out, and
# prints its first line (the demo's first kernel); the PID goes to LAST.
show_bg() {
	local name=$1
	shift
	printf '$ %s &\n' "$*"
	: >"$TRY/$name.out" # (before follow reads it: the child opens it when it runs)
	"$@" >"$TRY/$name.out" 2>&1 &
	LAST=$!
	DEMOS+=("$LAST")
	printf '[%s]\n' "$LAST"
	follow_out "$name" "ran on"
}
# follow_out NAME TEXT: follow for $TRY/NAME.out.
follow_out() { follow "$1" "$2" cat "$TRY/$1.out"; }

tour() {
	say "A fake H100 (66 TPCs in 12 GPCs), a fake MPS control daemon and 'demo', a program" \
		"that launches a kernel every 10 ms and says where its kernels ran. No GPU is used." \
		"The GPU's GPCs and their TPCs:"
	show nvtaskset --topology
	say "Run demo for 1 s on TPCs 0-7 (-c: a TPC list). The first start also starts the MPS" \
		"control daemon, and says so:"
	show nvtaskset -c 0-7 demo 1
	say "On GPC 1 (-g: GPCs), whose TPCs --topology listed above:"
	show nvtaskset -g 1 demo 1
	say "Two demos side by side, each on 33 TPCs no other task holds (-n), whole GPCs first:"
	show_bg first nvtaskset -n 33 --exclude-running demo
	local first=$LAST
	show_bg second nvtaskset -n 33 --exclude-running demo
	local second=$LAST
	say "The tasks, their TPCs and their kernels so far (-l):"
	show nvtaskset -l
	say "Move the first one to GPCs 1 and 2 while it runs (-p); its next kernel runs there:"
	show nvtaskset -p -g 1-2 "$first"
	follow_out first "ran on"
	say "Show its TPCs (-p without a list), end both, and stop the MPS daemon:"
	show nvtaskset -c -p "$first"
	show kill "$first" "$second"
	follow_out first "done"
	follow_out second "done"
	wait "$first" "$second" || true
	DEMOS=()
	show nvtaskset --mps stop
}

shell() {
	local rc=$TRY/bashrc
	# (Its PATH and library path as they are here, where $TRY/env put the directories first
	# already: sourced again, it would add them twice.)
	{
		printf 'export PATH=%q LD_LIBRARY_PATH=%q PKG_CONFIG_PATH=%q LIBRARY_PATH=%q\n' "$PATH" \
			"$LD_LIBRARY_PATH" "$PKG_CONFIG_PATH" "$LIBRARY_PATH"
		grep -v '^export \(PATH\|LD_LIBRARY_PATH\|PKG_CONFIG_PATH\)=' "$TRY/env"
		echo "export NVT_TRY_SHELL=$TRY"
		echo "PS1='(nvtaskset try) \\w\\$ '"
	} >"$rc"
	say "A shell on the fake GPU: nvtaskset, demo and the fake MPS control are on its PATH." \
		"Try 'nvtaskset -c 0-15 demo &', then 'nvtaskset -p -g 3 \$!', 'nvtaskset -l'," \
		"or priorities: 'nvtaskset --priority high -c 0-7 demo --serve &' and" \
		"'nvtaskset --priority low --yield protect -c 8-65 demo &', then 'nvtaskset -l' (MODE)," \
		"'nvtaskset --help', 'man $ROOT/man/nvtaskset.1'. 'exit' ends it; its demos and" \
		"the MPS daemon end with it. Its environment, to set up one of your own:"
	sed 's/^/#   /' "$TRY/env"
	# Commands from a pipe or a file (tests/e2e/try.sh): a shell that is not interactive. An
	# interactive one takes the controlling terminal, where there is one, and stops until
	# its process group is the terminal's (under make check's timeout, never).
	if [ -t 0 ]; then
		bash --rcfile "$rc" -i || true
	else
		BASH_ENV=$rc bash -s || true
	fi
}

case "$MODE" in
--tour) tour ;;
--shell) shell ;;
both)
	tour
	if [ -t 0 ] && [ -t 1 ]; then
		shell
	else
		say "No terminal here, so no shell follows the tour. For one, run 'make try' on a" \
			"terminal, or 'tests/fake/try.sh --shell' (it reads commands from its input too);" \
			"README's 'Try it without a GPU' gives the variables for a shell of your own."
	fi
	;;
esac
