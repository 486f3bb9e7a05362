# MPS: the daemon's directories and its start, against other users and
# against itself. Sourced by tests/run-tests.sh: each
# t_NAME function is one test, run in a subshell under set -e with the helpers
# defined there and in security.sh (as_user, need_users, make_in_tmp).
# shellcheck shell=bash

t_sec_mps_log_dir_planted() {
	# Another user made the victim's per-user log directory first (mode 777,
	# with a forged server.log), or put a symbolic link there: the victim's
	# start, task and status refuse it, say why, and write nothing through it.
	need_users
	make_in_tmp mpslog
	local fake=$FAKEBIN args victim log=/tmp/nvidia-mps-log-65534
	victim=$(as_user 65534)
	unset CUDA_MPS_PIPE_DIRECTORY CUDA_MPS_LOG_DIRECTORY XDG_RUNTIME_DIR
	export PATH="$fake:$PATH"
	trap 'touch "$FAKETMP"/nvidia-mps*/quit 2>/dev/null || true' EXIT
	$IN_TMP $(as_user 65533) mkdir -m 777 "$log"
	$IN_TMP $(as_user 65533) sh -c "echo '[2026-11-22 00:00:00.000 Other 1] Server 1 encountered a fatal exception: forged' >$log/server.log"
	for args in "--mps start" "-c 0 /usr/bin/true" "--mps status"; do
		# shellcheck disable=SC2086
		out=$(timeout "$HANG" $IN_TMP $victim "$NVT" $args 2>&1) && rc=0 || rc=$?
		eq "$rc" 1 "exit status of nvtaskset $args beside a planted log directory: $out"
		has "$out" "nvtaskset: refusing the MPS log directory $log: it belongs to uid 65533"
		hasnt "$out" "forged"
	done
	[ ! -e "$FAKETMP/nvidia-mps-65534/nvidia-cuda-mps-control.pid" ] || die "a daemon started"
	rm -rf "$FAKETMP/nvidia-mps-log-65534" "$FAKETMP/nvidia-mps-65534"
	# A link to a directory of the victim's own (where the daemon would write
	# what the attacker later reads, or over her files): refused too.
	mkdir -m 700 "$WORK/victims"
	chown 65534 "$WORK/victims"
	$IN_TMP $(as_user 65533) ln -s "$WORK/victims" "$log"
	run_rc out rc $IN_TMP $victim "$NVT" --mps start
	eq "$rc" 1 "$out"
	has "$out" "nvtaskset: refusing the MPS log directory $log: it is a symbolic link"
	[ -z "$(ls -A "$WORK/victims")" ] || die "the daemon wrote through the link: $(ls "$WORK/victims")"
	rm -f "$FAKETMP/nvidia-mps-log-65534"
	# Her own directory, but others may write in it: refused; made afresh: 0700, used.
	$IN_TMP $victim mkdir -m 777 "$log"
	$IN_TMP $victim chmod 777 "$log"
	run_rc out rc $IN_TMP $victim "$NVT" --mps start
	eq "$rc" 1 "$out"
	has "$out" "nvtaskset: refusing the MPS log directory $log: others may write in it (mode 0777)"
	rmdir "$FAKETMP/nvidia-mps-log-65534"
	run_rc out rc $IN_TMP $victim "$NVT" --mps start
	eq "$rc" 0 "$out"
	eq "$(stat -c %U:%a "$FAKETMP/nvidia-mps-log-65534")" "nobody:700" "the log directory made"
	$IN_TMP $victim "$NVT" --mps stop >/dev/null
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
