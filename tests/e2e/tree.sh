# Process trees (issue 11): children start from their parent's current partition however they
# are started; -a changes a task and its descendants; -l shows the tree. Sourced by
# tests/run-tests.sh: each t_NAME function is one test, run in a subshell under set -e with the
# helpers defined there.
# shellcheck shell=bash

# wait_task PID: waits (10 s at most) until PID runs under nvtaskset (has a segment -p reads).
wait_task() {
	local i
	for ((i = 0; i < 500; i++)); do
		"$NVT" -p "$1" >/dev/null 2>&1 && return 0
		sleep 0.02
	done
	die "pid $1 never ran under nvtaskset"
}
# spawn_case HOW: a launcher started on TPCs 0-3 and moved to 8-9 starts a child by HOW
# (fakeapp spawn-on); the child runs on 8-9, and -p says so.
spawn_case() {
	local how=$1 tag=$WORK/sp_$1 child
	rm -f "$tag".*
	"$NVT" --no-mps -c 0-3 "$APP" spawn-on "$tag.go" "$tag.stop" "$tag" "$how" >"$tag.out" 2>&1 &
	PID=$!
	wait_file "$tag.parent" "0-3"
	run_rc out rc "$NVT" -p -c 8-9 "$PID"
	eq "$rc" 0 "-p exit status: $out"
	wait_file "$tag.parent" "8-9"
	touch "$tag.go"
	wait_file "$tag.child" "8-9"
	child=$PID # exec: the same process
	[ "$how" == exec ] || child=$(cat "$tag.childpid")
	run_rc out rc "$NVT" -pc "$child"
	eq "$out" "pid $child's current TPC list: 8-9" "-p of the child"
	touch "$tag.stop"
	wait "$PID" || die "spawn-on $how failed: $(cat "$tag.out")"
}

t_tree_spawn_fork() { spawn_case fork; }
t_tree_spawn_fork_exec() { spawn_case fork-exec; }
t_tree_spawn_vfork() { spawn_case vfork; }
t_tree_spawn_posix_spawn() { spawn_case posix_spawn; }
t_tree_spawn_exec() { spawn_case exec; }

t_tree_spawn_shell() {
	# A shell (dash, as sh on Debian, starts commands with vfork: no fork
	# handler runs) moved before it starts a command: the command runs where the
	# shell runs now, and a command the shell execs too.
	local tag=$WORK/shell
	rm -f "$tag".*
	"$NVT" --no-mps -c 0-3 sh -c 'while [ ! -e "$1" ]; do sleep 0.02; done; "$2" launch 1; "$2" launch 1' \
		sh "$tag.go" "$APP" >"$tag.out" 2>&1 &
	PID=$!
	wait_task "$PID"
	run_rc out rc "$NVT" -p -c 8-9 "$PID"
	eq "$rc" 0
	touch "$tag.go"
	wait "$PID" || die "the shell failed: $(cat "$tag.out")"
	eq "$(sed -n 's/^\(tpcs=[^ ]*\) .*/\1/p' "$tag.out" | tr '\n' ' ')" "tpcs=8-9 tpcs=8-9 "
}

# python_case HOW: the same for a Python launcher (tests/e2e/helpers/pyspawn.py).
python_case() {
	local how=$1 tag=$WORK/py_$1 child
	command -v python3 >/dev/null || skip "needs python3"
	rm -f "$tag".*
	"$NVT" --no-mps -c 0-3 python3 "$ROOT/tests/e2e/helpers/pyspawn.py" "$how" "$tag.go" "$tag.stop" \
		"$tag" "$APP" >"$tag.out" 2>&1 &
	PID=$!
	wait_task "$PID"
	run_rc out rc "$NVT" -p -c 8-9 "$PID"
	eq "$rc" 0 "-p exit status: $out"
	touch "$tag.go"
	wait_file "$tag.child" "8-9"
	child=$(cat "$tag.childpid")
	run_rc out rc "$NVT" -pc "$child"
	eq "$out" "pid $child's current TPC list: 8-9" "-p of the worker"
	touch "$tag.stop"
	wait "$PID" || die "pyspawn $how failed: $(cat "$tag.out")"
}

t_tree_spawn_python_popen() { python_case popen; }
t_tree_spawn_python_mp_spawn() { python_case spawn; }
t_tree_spawn_python_mp_forkserver() { python_case forkserver; }

t_tree_spawn_inner_nvtaskset_wins() {
	# A moved shell's children inherit its partition, but an nvtaskset it starts
	# gives its COMMAND the partition of its own command line, and that
	# COMMAND's children inherit that one.
	local tag=$WORK/inner
	rm -f "$tag".*
	"$NVT" --no-mps -c 0-3 sh -c 'while [ ! -e "$1" ]; do sleep 0.02; done
		"$2" --no-mps -c 40-47 "$3" spawn-on "$1" "$1.stop" "$1" posix_spawn; true' \
		sh "$tag.go" "$NVT" "$APP" >"$tag.out" 2>&1 &
	PID=$!
	wait_task "$PID"
	run_rc out rc "$NVT" -p -c 8-9 "$PID"
	touch "$tag.go"
	wait_file "$tag.go.child" "40-47"
	eq "$(cat "$tag.go.parent")" "40-47"
	touch "$tag.go.stop"
	wait "$PID" || die "failed: $(cat "$tag.out")"
}

t_tree_spawn_setuid_program() {
	# A setuid program takes no partition from its caller's tasks: their user
	# could not have set it one (the environment's is ignored in it too, by
	# secure_getenv). The caller's other programs inherit as usual. In a mount
	# namespace with a /dev/shm of its own: the setuid program's run directory
	# is the default one.
	need_users
	command -v gcc >/dev/null || skip "needs gcc"
	findmnt -no OPTIONS --target "$WORK" | grep -q nosuid && skip "$WORK is mounted nosuid"
	unshare --mount --propagation private true 2>/dev/null || skip "cannot unshare a mount namespace"
	gcc -o "$WORK/suidapp" "$ROOT/tests/fake/fakeapp.c" -I"$ROOT/tests/fake" -L"$FAKEDIR" -lcuda \
		-lpthread -Wl,--disable-new-dtags,-rpath,"$WRAPDIR:$FAKEDIR"
	chown 65534 "$WORK/suidapp"
	chmod 4755 "$WORK/suidapp"
	cat >"$WORK/suid.sh" <<INNER
set -e
mount -t tmpfs tmpfs /dev/shm
unset NVTASKSET_RUNDIR
"$NVT" --no-mps -c 0-3 $(as_user 65533) sh -c 'while [ ! -e "$WORK/suid.go" ]; do sleep 0.02; done
	"$WORK/suidapp" launch 1; "$APP" launch 1' &
pid=\$!
for i in \$(seq 500); do "$NVT" -p "\$pid" >/dev/null 2>&1 && break; sleep 0.02; done
"$NVT" -p -c 8-9 "\$pid" >/dev/null
touch "$WORK/suid.go"
wait "\$pid"
INNER
	run_rc out rc unshare --mount --propagation private bash "$WORK/suid.sh"
	eq "$rc" 0 "exit status: $out"
	eq "$(sed -n 's/^\(tpcs=[^ ]*\) .*/\1/p' <<<"$out" | tr '\n' ' ')" "tpcs=0-65 tpcs=8-9 "
}
