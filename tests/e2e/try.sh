# make try (tests/fake/try.sh): its tour shows what it says, and its shell works. Sourced by
# tests/run-tests.sh: each t_NAME function is one test, run in a subshell under set -e with the
# helpers defined there.
# shellcheck shell=bash

# try_demo_tpcs OUT N: the TPCs of the Nth "ran on TPCs" line of OUT (from 1).
try_demo_tpcs() { sed -n 's/^demo [0-9]*: kernel [0-9]* ran on TPCs \([^ ]*\) .*/\1/p' <<<"$1" | sed -n "$2p"; }

# try_left: the processes whose environment names a directory of the tour's (in $WORK), one a line.
try_left() {
	local f
	for f in /proc/[0-9]*/environ; do
		grep -qs "$WORK/nvtaskset-try" "$f" && echo "${f//[^0-9]/}: $(tr '\0' ' ' <"${f%/environ}/cmdline" 2>/dev/null)"
	done
	return 0
}

t_try_tour() {
	# The tour runs -c, -g, -n, -l and -p, and each demo says it ran where the command said;
	# it ends with nothing left: no demo, no MPS daemon, no directory. Without a terminal (as
	# make try runs here) it says that no shell follows, and how to get one.
	local out rc gpc1 pick1 pick2 moved
	run_rc out rc env TMPDIR="$WORK" B="$B" TRY_WAIT="$HANG" "$ROOT/tests/fake/try.sh" </dev/null
	has "$out" "No terminal here, so no shell follows the tour. For one, run 'make try' on a"
	has "$out" "'tests/fake/try.sh --shell'"
	echo "$out" # (the log's head: a failure's message is its tail)
	eq "$rc" 0 "the tour's exit status"
	local cmd
	for cmd in "nvtaskset --topology" "nvtaskset -c 0-7 demo 1" "nvtaskset -g 1 demo 1" \
		"nvtaskset -n 33 --exclude-running demo &" "nvtaskset -l" "nvtaskset --mps stop"; do
		has "$out" "\$ $cmd"
	done
	has "$out" "started the MPS control daemon"
	has "$out" "stopped MPS control daemon"
	eq "$(try_demo_tpcs "$out" 1)" "0-7" "where -c 0-7's demo ran"
	gpc1=$(awk '$1 == "1" && $2 ~ /,/ { print $2; exit }' <<<"$out")
	[ -n "$gpc1" ] || die "no GPC 1 in the tour's --topology"
	eq "$(try_demo_tpcs "$out" 2)" "$gpc1" "where -g 1's demo ran"
	pick1=$(try_demo_tpcs "$out" 3)
	pick2=$(try_demo_tpcs "$out" 4)
	[ "$(count_of "$pick1")" == 33 ] && [ "$(count_of "$pick2")" == 33 ] &&
		[ "$(overlap "$pick1" "$pick2")" == 0 ] || die "the two -n 33 demos: '$pick1' and '$pick2'"
	# -l lists both; -p's new list is where the demo's next kernel ran.
	eq "$(sed -n '/^\$ nvtaskset -l$/,/^$/p' <<<"$out" | grep -c ' demo$')" 2 "demos -l lists"
	moved=$(sed -n "/^pid [0-9]*'s new GPC list: /,\$ s/^pid [0-9]*'s current TPC list: //p" <<<"$out")
	[ -n "$moved" ] || die "no -p move in the tour"
	eq "$(try_demo_tpcs "$out" 5)" "$moved" "where the moved demo ran"
	eq "$(grep -c '^demo [0-9]*: [0-9]* kernels, done$' <<<"$out")" 4 "demos that ended"
	eq "$(find "$WORK" -maxdepth 1 -name 'nvtaskset-try.*')" "" "the tour's directory, after it"
	eq "$(try_left)" "" "processes the tour left"
}
t_try_shell() {
	# The shell the tour ends in (here fed from a pipe) has the environment it prints: a demo
	# started there runs on its TPCs, and a demo left in its background ends with it.
	local out rc
	run_rc out rc env TMPDIR="$WORK" B="$B" TRY_WAIT="$HANG" "$ROOT/tests/fake/try.sh" --shell <<'EOF'
nvtaskset -c 0-3 demo 1
nvtaskset -c 4-5 demo &
for _ in $(seq 200); do [ "$(cat /proc/$!/comm 2>/dev/null)" = demo ] && break; sleep 0.05; done
echo "background: $(cat /proc/$!/comm)"
echo "PATH is $PATH"
echo "LD_LIBRARY_PATH is $LD_LIBRARY_PATH"
exit
EOF
	echo "$out"
	eq "$rc" 0 "the shell's exit status"
	has "$out" "export LD_LIBRARY_PATH=$B/test/fake"
	# Each of its directories once on PATH and the library path (the shell's rc file added
	# them again to what the tour had set).
	eq "$(sed -n 's/^PATH is //p' <<<"$out" | tr ':' '\n' | grep -cx "$B/bin")" 1 "$B/bin on the shell's PATH"
	eq "$(sed -n 's/^LD_LIBRARY_PATH is //p' <<<"$out" | tr ':' '\n' | grep -cx "$B/test/fake")" 1 \
		"$B/test/fake on the shell's LD_LIBRARY_PATH"
	has "$out" "demo"
	# The background demo was running (nvtaskset had become it) when the shell ended.
	has "$out" "background: demo"
	eq "$(try_demo_tpcs "$out" 1)" "0-3" "where the shell's demo ran"
	eq "$(find "$WORK" -maxdepth 1 -name 'nvtaskset-try.*')" "" "the shell's directory, after it"
	eq "$(try_left)" "" "processes the shell left"
}
t_try_readme_environment() {
	# README's variables for a shell of one's own are make try's: its own run directory and MPS
	# directories too (without them the fake MPS daemon ran in the system's /tmp/nvidia-mps).
	local block want got out rc co=$WORK/co
	block=$(awk '/shell of your own/ {found = 1} found && /^```$/ {if (inside) exit; inside = 1; next}
		inside' "$ROOT/README.md")
	[ -n "$block" ] || die "no block after README's 'shell of your own'"
	want=$(grep -o '^export .*' "$ROOT/tests/fake/try.sh" | grep -oE '[A-Z_]+=' | sort -u | tr '\n' ' ')
	got=$(grep -o '^export .*' <<<"$block" | grep -oE '[A-Z_]+=' | sort -u | tr '\n' ' ')
	eq "$got" "$want" "the variables README exports, against make try's"
	# Run as a reader pastes it, at the top of a checkout (here one made of links to this one's).
	mkdir -p "$co/build"
	ln -s "$B/bin" "$co/build/bin"
	ln -s "$B/test" "$co/build/test"
	ln -s "$ROOT/tests" "$co/tests"
	run_rc out rc env -u NVTASKSET_RUNDIR -u CUDA_MPS_PIPE_DIRECTORY -u CUDA_MPS_LOG_DIRECTORY \
		-u NVTASKSET_CACHE_DIR -u NVTASKSET_PROC_NVIDIA bash -ec "cd '$co'; $block"
	echo "$out"
	eq "$rc" 0 "the block's exit status"
	has "$out" "started the MPS control daemon (pipe directory $co/build/try-mps)"
	has "$out" "stopped MPS control daemon"
	hasnt "$out" "cannot create a control segment"
	[ -d "$co/build/try-run/nvtaskset-$(id -u)" ] || die "no run directory of the task's in build/try-run"
	[ -d "$co/build/try-mps-log" ] || die "no MPS log directory in build/try-mps-log"
}

t_try_run_dir_private() {
	# The tour's run directory is its user's alone: another user cannot make the run directory
	# of the tour's user there first (it was mode 1777 in a directory whose name anyone can
	# see; with hers made by another user, the tour's tasks ran without control segments and
	# its -p step failed).
	need_users
	local out rc
	run_rc out rc env TMPDIR="$WORK" B="$B" TRY_WAIT="$HANG" "$ROOT/tests/fake/try.sh" --shell <<'EOF2'
setpriv --reuid=65534 --regid=65534 --clear-groups mkdir "$NVTASKSET_RUNDIR/nvtaskset-$(id -u)" && echo "squatted-$((1 + 1))"
nvtaskset -c 0-3 demo 1
exit
EOF2
	echo "$out"
	eq "$rc" 0 "the shell's exit status"
	hasnt "$out" "squatted-2"
	eq "$(try_demo_tpcs "$out" 1)" "0-3" "where the shell's demo ran"
	hasnt "$out" "cannot create a control segment"
}

t_try_gpus_and_libsmctrl() {
	# make try GPUS=2: two fake GPUs in the tour's shell, for README's examples of several
	# GPUs; README's libsmctrl lines build and run there from the build tree, with nothing
	# installed (pkg-config finds the build's record, -lcuda the fake driver).
	local out rc
	run_rc out rc env TMPDIR="$WORK" B="$B" GPUS=2 TRY_WAIT="$HANG" "$ROOT/tests/fake/try.sh" --shell <<EOF2
cd '$ROOT'
nvtaskset -c --gpu 0=0-32 --gpu 1=40-65 --dry-run true
cc -o '$WORK/prog' docs/examples/prog.c \$(pkg-config --cflags --libs libsmctrl) -lcuda && echo built
'$WORK/prog'
nvtaskset --no-mps -g 1 '$WORK/prog'
exit
EOF2
	echo "$out"
	eq "$rc" 0 "the shell's exit status"
	has "$out" "export FAKECUDA_CHIPS=h100,h100-alt"
	grep -q '^GPU 0 (.*): TPCs 0-32$' <<<"$out" || die "no partition on GPU 0"
	grep -q '^GPU 1 (.*): TPCs 40-65$' <<<"$out" || die "no partition on GPU 1"
	has "$out" "built"
	has "$out" "GPU 0 has 66 TPCs; masked to TPCs 0-3, this program's kernel ran on TPCs 0-3"
	has "$out" "GPU 0 has 66 TPCs; masked to TPCs 0-3, this program's kernel ran on TPCs 1"
	run_rc out rc env TMPDIR="$WORK" B="$B" GPUS=9 "$ROOT/tests/fake/try.sh" --shell </dev/null
	eq "$rc" 2
	has "$out" "try: GPUS takes a count of fake GPUs from 1 to 8, not '9'"
	eq "$(try_left)" "" "processes the shell left"
}
