# MPS: the daemon's directories and its start, against other users and
# against itself. Sourced by tests/run-tests.sh: each
# t_NAME function is one test, run in a subshell under set -e with the helpers
# defined there and in security.sh (as_user, need_users, make_in_tmp, mps_of_task).
# shellcheck shell=bash

# The advice of a refusal of default directories another user made first, which the
# victim may not remove from sticky /tmp.
SQUAT_ADVICE="(ask root to remove it, or set XDG_RUNTIME_DIR to a directory of yours, or CUDA_MPS_PIPE_DIRECTORY and CUDA_MPS_LOG_DIRECTORY to directories of yours)"

t_sec_mps_log_dir_planted() {
	# Another user made the victim's per-user log directory first (mode 777,
	# with a forged server.log), or put a symbolic link there: the victim's
	# --mps start and status refuse it, say why, and write nothing through it;
	# her task's start warns so and runs the task without MPS, as --no-mps does
	# (she cannot remove the directory: sticky /tmp). The same directory named
	# by her, and a directory of hers that others may write in, are refused.
	need_users
	make_in_tmp mpslog
	local fake=$FAKEBIN args victim log=/tmp/nvidia-mps-log-65534
	victim=$(as_user 65534)
	unset CUDA_MPS_PIPE_DIRECTORY CUDA_MPS_LOG_DIRECTORY XDG_RUNTIME_DIR
	export PATH="$fake:$PATH" FAKECUDA_LOG=$WORK/u/cuda.log
	trap 'touch "$FAKETMP"/nvidia-mps*/quit 2>/dev/null || true' EXIT
	$IN_TMP $(as_user 65533) mkdir -m 777 "$log"
	$IN_TMP $(as_user 65533) sh -c "echo '[2026-11-22 00:00:00.000 Other 1] Server 1 encountered a fatal exception: forged' >$log/server.log"
	for args in "--mps start" "--mps status"; do
		# shellcheck disable=SC2086
		out=$(timeout "$HANG" $IN_TMP $victim "$NVT" $args 2>&1) && rc=0 || rc=$?
		eq "$rc" 1 "exit status of nvtaskset $args beside a planted log directory: $out"
		has "$out" "nvtaskset: refusing the MPS log directory $log: it belongs to uid 65533 $SQUAT_ADVICE"
		hasnt "$out" "forged"
	done
	rm -f "$WORK/u/cuda.log"
	run_rc out rc $IN_TMP $victim "$NVT" -c 0 "$APP" launch 1
	eq "$rc" 0 "her task's start beside a planted log directory: $out"
	has "$out" "tpcs=0 hung=0"
	has "$out" "nvtaskset: warning: refusing the MPS log directory $log: it belongs to uid 65533 $SQUAT_ADVICE; running without MPS, as --no-mps does"
	hasnt "$out" "forged"
	eq "$(mps_of_task "$WORK/u/cuda.log")" /dev/null "her task's MPS pipe directory"
	[ ! -e "$FAKETMP/nvidia-mps-65534/nvidia-cuda-mps-control.pid" ] || die "a daemon started"
	# Named by her, it is refused, task or not.
	run_rc out rc $IN_TMP $victim env CUDA_MPS_LOG_DIRECTORY=$log "$NVT" -c 0 "$APP" launch 1
	eq "$rc" 1 "her task's start on the planted log directory she named: $out"
	eq "$out" "nvtaskset: refusing the MPS log directory $log: it belongs to uid 65533 (ask root to remove it, or set CUDA_MPS_LOG_DIRECTORY to a directory of yours); run with --no-mps to run without MPS"
	rm -rf "$FAKETMP/nvidia-mps-log-65534" "$FAKETMP/nvidia-mps-65534"
	# A link to a directory of the victim's own (where the daemon would write
	# what the attacker later reads, or over her files): refused too; her task runs without MPS.
	mkdir -m 700 "$WORK/victims"
	chown 65534 "$WORK/victims"
	$IN_TMP $(as_user 65533) ln -s "$WORK/victims" "$log"
	run_rc out rc $IN_TMP $victim "$NVT" --mps start
	eq "$rc" 1 "$out"
	has "$out" "nvtaskset: refusing the MPS log directory $log: it is a symbolic link $SQUAT_ADVICE"
	rm -f "$WORK/u/cuda.log"
	run_rc out rc $IN_TMP $victim "$NVT" -c 0 "$APP" launch 1
	eq "$rc" 0 "her task's start beside a planted link: $out"
	has "$out" "nvtaskset: warning: refusing the MPS log directory $log: it is a symbolic link $SQUAT_ADVICE; running without MPS"
	eq "$(mps_of_task "$WORK/u/cuda.log")" /dev/null "her task's MPS pipe directory"
	[ -z "$(ls -A "$WORK/victims")" ] || die "the daemon wrote through the link: $(ls "$WORK/victims")"
	rm -f "$FAKETMP/nvidia-mps-log-65534"
	# Her own directory, but others may write in it: refused, task or not (she may mend it);
	# made afresh: 0700, used.
	$IN_TMP $victim mkdir -m 777 "$log"
	$IN_TMP $victim chmod 777 "$log"
	for args in "--mps start" "-c 0 $APP launch 1"; do
		# shellcheck disable=SC2086
		run_rc out rc $IN_TMP $victim "$NVT" $args
		eq "$rc" 1 "nvtaskset $args beside her log directory of mode 0777: $out"
		has "$out" "nvtaskset: refusing the MPS log directory $log: others may write in it (mode 0777) (remove it, or set CUDA_MPS_LOG_DIRECTORY)"
	done
	rmdir "$FAKETMP/nvidia-mps-log-65534"
	run_rc out rc $IN_TMP $victim "$NVT" --mps start
	eq "$rc" 0 "$out"
	eq "$(stat -c %U:%a "$FAKETMP/nvidia-mps-log-65534")" "nobody:700" "the log directory made"
	$IN_TMP $victim "$NVT" --mps stop >/dev/null
}
t_sec_mps_pipe_dir_squatted() {
	# Another user made the victim's per-user pipe directory first, and runs a daemon of hers
	# there; and the pipe directory of the victim's priority level (a time-sliced task's):
	# the victim's task starts run their tasks without MPS (neither joins hers), with a
	# warning that names the directory, its owner and what she can do; her --mps start and
	# --mps status still refuse it, and so does a task's start on the directory she named.
	need_users
	make_in_tmp mpssquat
	local fake=$FAKEBIN victim pipe=/tmp/nvidia-mps-65534 level=/tmp/nvidia-mps-low-65534
	victim=$(as_user 65534)
	unset CUDA_MPS_PIPE_DIRECTORY CUDA_MPS_LOG_DIRECTORY XDG_RUNTIME_DIR
	export PATH="$fake:$PATH" FAKECUDA_LOG=$WORK/u/cuda.log
	trap 'touch "$FAKETMP"/nvidia-mps*/quit 2>/dev/null || true' EXIT
	$IN_TMP $(as_user 65533) mkdir -m 755 "$pipe"
	$IN_TMP $(as_user 65533) env CUDA_MPS_PIPE_DIRECTORY="$pipe" CUDA_MPS_LOG_DIRECTORY=/tmp/squatter-log \
		"$fake/nvidia-cuda-mps-control" -d
	[ -e "$FAKETMP/nvidia-mps-65534/nvidia-cuda-mps-control.pid" ] || die "the squatter's daemon did not start"
	rm -f "$WORK/u/cuda.log"
	run_rc out rc $IN_TMP $victim "$NVT" -c 0 "$APP" launch 1
	eq "$rc" 0 "her task's start beside a squatted pipe directory: $out"
	has "$out" "tpcs=0 hung=0"
	has "$out" "nvtaskset: warning: refusing the MPS pipe directory $pipe: it belongs to uid 65533 $SQUAT_ADVICE; running without MPS, as --no-mps does"
	eq "$(mps_of_task "$WORK/u/cuda.log")" /dev/null "her task's MPS pipe directory"
	[ ! -e "$FAKETMP/nvidia-mps-65534/fake-clients.d" ] || die "a task joined the squatter's daemon: $(ls "$FAKETMP/nvidia-mps-65534/fake-clients.d")"
	[ ! -e "$FAKETMP/nvidia-mps-log-65534" ] || die "her start made a log directory"
	# The exit status is the program's.
	run_rc out rc $IN_TMP $victim "$NVT" -c 0 /usr/bin/false
	eq "$rc" 1 "exit status of false beside a squatted pipe directory: $out"
	for args in "--mps start" "--mps status"; do
		# shellcheck disable=SC2086
		run_rc out rc $IN_TMP $victim "$NVT" $args
		eq "$rc" 1 "nvtaskset $args beside a squatted pipe directory: $out"
		eq "$out" "nvtaskset: refusing the MPS pipe directory $pipe: it belongs to uid 65533 $SQUAT_ADVICE"
	done
	run_rc out rc $IN_TMP $victim env CUDA_MPS_PIPE_DIRECTORY="$pipe" CUDA_MPS_LOG_DIRECTORY="$WORK/u/log" \
		"$NVT" -c 0 "$APP" launch 1
	eq "$rc" 1 "her task's start on the squatted pipe directory she named: $out"
	eq "$out" "nvtaskset: refusing the MPS pipe directory $pipe: it belongs to uid 65533 (ask root to remove it, or set CUDA_MPS_PIPE_DIRECTORY to a directory of yours); run with --no-mps to run without MPS"
	# A time-sliced task's level directory (--priority without a partition).
	$IN_TMP $(as_user 65533) mkdir -m 755 "$level"
	rm -f "$WORK/u/cuda.log"
	run_rc out rc $IN_TMP $victim "$NVT" --priority low "$APP" launch 1
	eq "$rc" 0 "her time-sliced task's start beside a squatted level directory: $out"
	has "$out" "nvtaskset: warning: refusing the MPS pipe directory $level: it belongs to uid 65533 $SQUAT_ADVICE; running without MPS, as --no-mps does"
	eq "$(mps_of_task "$WORK/u/cuda.log")" /dev/null "her time-sliced task's MPS pipe directory"
	[ -z "$(ls -A "$FAKETMP/nvidia-mps-low-65534")" ] || die "a daemon started in the level directory"
	# --sm-limit works through MPS: refused rather than run without it.
	run_rc out rc $IN_TMP $victim "$NVT" --sm-limit -c 0 "$APP" launch 1
	eq "$rc" 1 "--sm-limit beside a squatted pipe directory: $out"
	has "$out" "nvtaskset: refusing the MPS pipe directory $pipe: it belongs to uid 65533"
	# The squatter's daemon ends (it removes its pid file as it quits).
	touch "$FAKETMP/nvidia-mps-65534/quit"
	wait_for 10 test ! -e "$FAKETMP/nvidia-mps-65534/nvidia-cuda-mps-control.pid"
}
t_mps_parallel_starts() {
	# Two starts at once (two tasks, and two --mps start) start one daemon:
	# the fake sees one -d call, the loser uses the winner's daemon and says
	# nothing of starting one.
	own_mps_dirs parallel
	local fake=$FAKEBIN a b ra rb
	export PATH="$fake:$PATH" FAKEMPS_START_DELAY=0.5
	"$NVT" -c 0 "$APP" launch 1 >"$WORK/par.a" 2>&1 &
	a=$!
	"$NVT" -c 1 "$APP" launch 1 >"$WORK/par.b" 2>&1 &
	b=$!
	wait "$a" && ra=0 || ra=$?
	wait "$b" && rb=0 || rb=$?
	eq "$ra:$rb" "0:0" "exit status of the two tasks: $(cat "$WORK/par.a" "$WORK/par.b")"
	eq "$(grep -c 'args=-d' "$CUDA_MPS_PIPE_DIRECTORY/fake.log")" 1 "-d calls of two tasks at once"
	eq "$(cat "$WORK/par.a" "$WORK/par.b" | grep -c 'started the MPS control daemon')" 1 \
		"tasks that say they started it"
	"$NVT" --mps stop >/dev/null
	rm -f "$CUDA_MPS_PIPE_DIRECTORY/fake.log"
	"$NVT" --mps start >"$WORK/par.a" 2>&1 &
	a=$!
	"$NVT" --mps start >"$WORK/par.b" 2>&1 &
	b=$!
	wait "$a" && ra=0 || ra=$?
	wait "$b" && rb=0 || rb=$?
	eq "$ra:$rb" "0:0" "exit status of two --mps start: $(cat "$WORK/par.a" "$WORK/par.b")"
	eq "$(grep -c 'args=-d' "$CUDA_MPS_PIPE_DIRECTORY/fake.log")" 1 "-d calls of two --mps start"
	has "$(cat "$WORK/par.a" "$WORK/par.b")" "MPS control daemon already running (pid"
	eq "$(stat -c %a "$CUDA_MPS_PIPE_DIRECTORY/nvtaskset-start.lock")" 600 "the start lock's mode"
	"$NVT" --mps stop >/dev/null
}
t_sec_mps_root_daemon_not_hers() {
	# Root's daemon on the system's pipe directory, which a user joins: her --mps stop is
	# refused at once with one line that names the daemon, its directory and root, and the
	# daemon runs on; where root's daemon is gone but its start lock is left, her start is
	# refused with what she may do instead (not "remove" root's lock). Neither asks the
	# control binary anything (a wrapper before the fake counts its calls).
	need_users
	make_in_tmp notours
	local fake=$FAKEBIN pid t0 spent calls=$WORK/u/control.calls user
	user=$(as_user 65534)
	unset CUDA_MPS_PIPE_DIRECTORY XDG_RUNTIME_DIR
	mkdir -m 755 "$WORK/mps-log.root" "$WORK/wrap"
	export CUDA_MPS_LOG_DIRECTORY=$WORK/mps-log.root PATH="$WORK/wrap:$fake:$PATH"
	printf '#!/bin/sh\necho "$(id -u) $*" >>%s\nexec %s/nvidia-cuda-mps-control "$@"\n' \
		"$calls" "$fake" >"$WORK/wrap/nvidia-cuda-mps-control"
	chmod 755 "$WORK/wrap/nvidia-cuda-mps-control"
	: >"$calls"
	chmod 666 "$calls"
	trap 'touch "$FAKETMP/nvidia-mps/quit" 2>/dev/null || true' EXIT
	run_rc out rc $IN_TMP "$NVT" --mps start
	eq "$rc" 0 "root's --mps start: $out"
	pid=$(cat "$FAKETMP/nvidia-mps/nvidia-cuda-mps-control.pid")
	run_rc out rc $IN_TMP $user "$NVT" --mps status
	has "$out" "MPS control daemon: running (pid $pid), pipe directory /tmp/nvidia-mps"
	: >"$calls"
	t0=${EPOCHREALTIME//[!0-9]/}
	run_rc out rc $IN_TMP $user "$NVT" --mps stop
	spent=$((${EPOCHREALTIME//[!0-9]/} - t0))
	eq "$rc" 1 "exit status of her --mps stop of root's daemon: $out"
	# The whole output, stderr with it: one line, nothing of the control binary's (touch: ...).
	eq "$out" "nvtaskset: cannot stop MPS: the MPS control daemon (pid $pid) of pipe directory /tmp/nvidia-mps runs as root; only root may stop it"
	eq "$(cat "$calls")" "" "control calls of her --mps stop"
	# Not a bound on speed: asking the daemon to quit waited its whole 10 s (NVT_MPS_TIMEOUT_MS)
	# before failing, which no refusal that waits nothing takes.
	((spent < 10000000)) || die "her --mps stop took $((spent / 1000)) ms, the daemon's 10 s wait"
	kill -0 "$pid" || die "root's daemon ended"
	run_rc out rc $IN_TMP "$NVT" --mps status
	has "$out" "MPS control daemon: running (pid $pid), pipe directory /tmp/nvidia-mps"
	run_rc out rc $IN_TMP "$NVT" --mps stop
	eq "$rc" 0 "root's --mps stop: $out"
	[ -e "$FAKETMP/nvidia-mps/nvtaskset-start.lock" ] || die "root's start left no lock"
	# Her start on root's directory, which she named, with no daemon there.
	: >"$calls"
	run_rc out rc $IN_TMP $user env CUDA_MPS_PIPE_DIRECTORY=/tmp/nvidia-mps "$NVT" --mps start
	eq "$rc" 1 "exit status of her --mps start on root's directory: $out"
	eq "$out" "nvtaskset: cannot start MPS: the MPS pipe directory /tmp/nvidia-mps is root's and no daemon runs there: only root may start one there; ask root to, or start a daemon of your own (unset CUDA_MPS_PIPE_DIRECTORY, or set it to a directory of yours)"
	run_rc out rc $IN_TMP $user env CUDA_MPS_PIPE_DIRECTORY=/tmp/nvidia-mps "$NVT" -c 0 /usr/bin/env
	eq "$rc" 1 "exit status of her task's start on root's directory: $out"
	has "$out" "nvtaskset: cannot start MPS: the MPS pipe directory /tmp/nvidia-mps is root's and no daemon runs there"
	hasnt "$out" "remove it"
	eq "$(cat "$calls")" "" "control calls of her starts"
	[ ! -e "$FAKETMP/nvidia-mps/nvidia-cuda-mps-control.pid" ] || die "a daemon started"
}
