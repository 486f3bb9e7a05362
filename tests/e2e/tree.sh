# Process trees: children start from their parent's current partition however they
# are started; -a changes a task and its descendants; -l shows the tree. Sourced by
# tests/run-tests.sh: each t_NAME function is one test, run in a subshell under set -e with the
# helpers defined there.
# Over 500 lines on purpose: one subject, a task's process tree, both how children inherit
# (the first part) and how -a and -l follow the tree (the second), on helpers both parts use
# (wait_task, start_moved).
# shellcheck shell=bash

# wait_task PID: waits (poll_until 10) until PID runs under nvtaskset (has a segment -p reads).
wait_task() {
	poll_until 10 sh -c '"$0" -p "$1" >/dev/null 2>&1' "$NVT" "$1" || die "pid $1 never ran under nvtaskset"
}
# has_open PID FILE: process PID has FILE open.
has_open() { readlink /proc/"$1"/fd/* 2>/dev/null | grep -qxF "$2"; }
# has_mode FILE MODE: FILE's mode reads MODE (stat -c %a).
has_mode() { [ "$(stat -c %a "$1" 2>/dev/null)" == "$2" ]; }
# launches_after T FILE N: FILE (fakeapp launch-at lines, "at=NS tpcs=...") has N launches after T.
launches_after() { [ "$(awk -v t="$1" '{ at = $1; sub("at=", "", at) } at + 0 > t + 0' "$2" | wc -l)" -ge "$3" ]; }
# start_moved TAG CMD...: CMD started under nvtaskset --no-mps -c 0-3 in the background (TAG's
# files removed first, its output in TAG.out; sets PID), moved to TPCs 8-9 by -p, which must
# succeed, once it runs under nvtaskset.
start_moved() {
	local tag=$1
	shift
	rm -f "$tag".*
	"$NVT" --no-mps -c 0-3 "$@" >"$tag.out" 2>&1 &
	PID=$!
	wait_task "$PID"
	run_rc out rc "$NVT" -p -c 8-9 "$PID"
	eq "$rc" 0 "-p exit status: $out"
}
# start_spawner TAG HOW: a launcher (fakeapp spawn-on: it starts a child by HOW once TAG.go
# exists, and ends once TAG.stop does) started on TPCs 0-3, moved to 8-9 once it launched there,
# and launching on 8-9; sets PID.
start_spawner() {
	local tag=$1
	rm -f "$tag".*
	"$NVT" --no-mps -c 0-3 "$APP" spawn-on "$tag.go" "$tag.stop" "$tag" "$2" >"$tag.out" 2>&1 &
	PID=$!
	wait_file "$tag.parent" "0-3"
	run_rc out rc "$NVT" -p -c 8-9 "$PID"
	eq "$rc" 0 "-p exit status: $out"
	wait_file "$tag.parent" "8-9"
}
# spawn_case HOW: a launcher started on TPCs 0-3 and moved to 8-9 starts a child by HOW
# (fakeapp spawn-on); the child runs on 8-9, and -p says so.
spawn_case() {
	local how=$1 tag=$WORK/sp_$1 child
	start_spawner "$tag" "$how"
	touch "$tag.go"
	wait_file "$tag.child" "8-9"
	child=$PID # exec: the same process
	# (The child may write its state before its parent, back from the spawn, writes its PID.)
	[ "$how" == exec ] || { wait_for 10 test -s "$tag.childpid" && child=$(cat "$tag.childpid"); }
	run_rc out rc "$NVT" -pc "$child"
	eq "$out" "pid $child's current TPC list: 8-9" "-p of the child"
	touch "$tag.stop"
	wait "$PID" || die "spawn-on $how failed: $(cat "$tag.out")"
}

# suid_app: $WORK/suidapp, the fake app setuid to 65534 (the users and a suid mount needed:
# skips saying why where they are missing).
suid_app() {
	need_users
	command -v gcc >/dev/null || skip "needs gcc"
	findmnt -no OPTIONS --target "$WORK" | grep -q nosuid && skip "$WORK is mounted nosuid"
	unshare --mount --propagation private true 2>/dev/null || skip "cannot unshare a mount namespace"
	gcc -o "$WORK/suidapp" "$ROOT/tests/fake/fakeapp.c" "$ROOT/tests/fake/fakeappgraph.c" "$ROOT/tests/fake/fakeappsms.c" "$ROOT/tests/fake/fakeappioctl.c" -I"$ROOT/tests/fake" \
		-I"$ROOT/src" -I"$ROOT/include" -L"$FAKEDIR" -lcuda \
		-lpthread -Wl,--disable-new-dtags,-rpath,"$WRAPDIR:$FAKEDIR"
	chown 65534 "$WORK/suidapp"
	chmod 4755 "$WORK/suidapp"
}
# OWN_SHM: the head of a script run in a mount namespace of its own (unshare --mount), whose
# default run directory is a /dev/shm of its own; the test exports the waits (export_waits).
OWN_SHM=$(
	cat <<'EOF'
set -e
mount -t tmpfs tmpfs /dev/shm
# The default run directory is /dev/shm's: a /run/nvtaskset of root's (mode 1777, as --cdi
# makes it) would be it instead, the host's: hidden here.
if [ -d /run/nvtaskset ]; then mount -t tmpfs -o mode=0755 tmpfs /run/nvtaskset; fi
unset NVTASKSET_RUNDIR
EOF
)

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
	start_moved "$tag" sh -c 'while [ ! -e "$1" ]; do sleep 0.02; done; "$2" launch 1; "$2" launch 1' \
		sh "$tag.go" "$APP"
	touch "$tag.go"
	wait "$PID" || die "the shell failed: $(cat "$tag.out")"
	eq "$(sed -n 's/^\(tpcs=[^ ]*\) .*/\1/p' "$tag.out" | tr '\n' ' ')" "tpcs=8-9 tpcs=8-9 "
}

t_tree_spawn_posix_spawn_torn_parent() {
	# A process started by posix_spawn while its parent's slot is half-written
	# (a writer died inside it: the sequence odd, new TPCs 40-41 and the rest
	# as it was) takes no torn partition: it starts on the environment's
	# (README: a segment with a slot half-written is not used), and the parent
	# keeps launching on the partition it had.
	local tag=$WORK/sp_torn child
	start_spawner "$tag" posix_spawn
	"$T/segpoke" "$PID" halfwrite 40-41
	run_rc out rc "$NVT" -p "$PID"
	has "$out" "a writer died while changing it"
	touch "$tag.go"
	wait_file "$tag.child" "0-3"
	child=$(cat "$tag.childpid")
	run_rc out rc "$NVT" -pc "$child"
	eq "$out" "pid $child's current TPC list: 0-3" "-p of the child"
	eq "$(cat "$tag.parent")" "8-9" "the parent"
	# A new partition repairs the parent's slot; a child it starts then takes it.
	run_rc out rc "$NVT" -p -c 10-11 "$PID"
	eq "$rc" 0 "-p exit status: $out"
	wait_file "$tag.parent" "10-11"
	touch "$tag.stop"
	wait "$PID" || die "spawn-on failed: $(cat "$tag.out")"
}

# python_case HOW: the same for a Python launcher (tests/e2e/helpers/pyspawn.py).
python_case() {
	local how=$1 tag=$WORK/py_$1 child
	command -v python3 >/dev/null || skip "needs python3"
	start_moved "$tag" python3 "$HELPERS/pyspawn.py" "$how" "$tag.go" "$tag.stop" "$tag" "$APP"
	touch "$tag.go"
	wait_file "$tag.child" "8-9"
	child=$(cat "$tag.childpid")
	run_rc out rc "$NVT" -pc "$child"
	eq "$out" "pid $child's current TPC list: 8-9" "-p of the worker"
	touch "$tag.stop"
	wait "$PID" || die "pyspawn $how failed: $(cat "$tag.out")"
	# multiprocessing's forkserver and resource tracker end once the program's pipes close.
	wait_for 10 python_helpers_gone
}
python_helpers_gone() { [ -z "$(pgrep_here 'from multiprocessing\.')" ]; }

t_tree_spawn_python_popen() { python_case popen; }
t_tree_spawn_python_mp_spawn() { python_case spawn; }
t_tree_spawn_python_mp_forkserver() { python_case forkserver; }

t_tree_spawn_inner_nvtaskset_wins() {
	# A moved shell's children inherit its partition, but an nvtaskset it starts
	# gives its COMMAND the partition of its own command line, and that
	# COMMAND's children inherit that one.
	local tag=$WORK/inner
	start_moved "$tag" sh -c 'while [ ! -e "$1" ]; do sleep 0.02; done
		"$2" --no-mps -c 40-47 "$3" spawn-on "$1" "$1.stop" "$1" posix_spawn; true' \
		sh "$tag.go" "$NVT" "$APP"
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
	suid_app
	cat >"$WORK/suid.sh" <<INNER
$OWN_SHM
"$NVT" --no-mps -c 0-3 $(as_user 65533) sh -c 'while [ ! -e "$WORK/suid.go" ]; do sleep 0.02; done
	"$WORK/suidapp" launch 1; "$APP" launch 1' &
pid=\$!
# Its own segment, made by its shim after the exec of sh (0644 once filled):
# a -p before it would write the one the CLI made before the exec. (run_rc's HANG catches a hang.)
wait_for 10 eval '[ -n "\$(find /dev/shm/nvtaskset-65533 -name "*.'\$pid'" -perm -0044 2>/dev/null)" ]'
"$NVT" -p -c 8-9 "\$pid" >/dev/null
touch "$WORK/suid.go"
wait "\$pid"
INNER
	export_waits
	run_rc out rc unshare --mount --propagation private bash "$WORK/suid.sh"
	eq "$rc" 0 "exit status: $out"
	eq "$(sed -n 's/^\(tpcs=[^ ]*\) .*/\1/p' <<<"$out" | tr '\n' ' ')" "tpcs=0-65 tpcs=8-9 "
}

t_tree_move_during_exec_to_user() {
	# A -p that opened the segment a task had before an exec to another user
	# (root's, its only one then) and waited for its lock, while that user's
	# shim made the task's own segment from it: the change reaches the task's
	# own segment, not only the one it reads no more. Deterministic: segpoke
	# holds the lock until the new segment is made.
	need_users
	local tag=$WORK/u/mx
	start_exec_to_user mx 0 -c 8-9
	release_move mx
	eq "$("$NVT" -pc "$PID" 2>/dev/null)" "pid $PID's current TPC list: 8-9"
	touch "$tag.go2"
	wait "$PID" || die "the task failed: $(cat "$tag.out")"
	eq "$(sed -n 's/^\(tpcs=[^ ]*\) .*/\1/p' "$tag.out")" "tpcs=8-9"
}

t_tree_tidy_keeps_segment_being_copied() {
	# After an exec to another user, root's -l (which tidies) leaves both
	# segments while the new one is not filled in or not opened to readers yet
	# (mode 0600: its shim may still be copying the old one), and removes the
	# old one once the new one is.
	need_users
	local tag=$WORK/u/tk root_seg own i
	rm -f "$tag".*
	"$NVT" --no-mps -c 0-3 sh -c 'while [ ! -e "$1.go" ]; do sleep 0.02; done
		exec '"$(as_user 65533)"' "$2" loop "$1.stop" "$1.state"' sh "$tag" "$APP" >"$tag.out" 2>&1 &
	PID=$!
	wait_task "$PID"
	root_seg=$(seg_file "$PID")
	has "$root_seg" "/nvtaskset-0/"
	own=${root_seg/nvtaskset-0/nvtaskset-65533}
	touch "$tag.go"
	wait_file "$tag.state" "0-3"
	[ "$(stat -c %a "$own")" == 644 ] || die "no segment $own"
	# Not filled in yet (no header): -l's look for the segment PID uses finds
	# root's; the new one stays, as does root's.
	"$T/segpoke" "$PID" making
	"$NVT" -l >/dev/null
	[ -e "$own" ] || die "-l removed $own while it was being made"
	[ -e "$root_seg" ] || die "-l removed $root_seg while $own was being made"
	"$T/segpoke" "$PID" made
	chmod 600 "$own"
	"$NVT" -l >/dev/null
	[ -e "$root_seg" ] || die "-l removed $root_seg while $own was not opened to readers"
	chmod 644 "$own"
	"$NVT" -l >/dev/null
	[ ! -e "$root_seg" ] || die "-l left $root_seg, replaced by $own"
	touch "$tag.stop"
	wait "$PID" || die "the task failed: $(cat "$tag.out")"
}

t_tree_move_waits_while_segment_made() {
	# -p on a task whose shim is still making its segment (mode 0600, no
	# header yet) waits until it is made, then writes it; one never filled in
	# ends in an error (after NVT_SEG_MAKING_WAIT_MS), never in a write elsewhere.
	local pp
	start_loop mk "$NVT" --no-mps -c 0-3 "$APP"
	# Its shim has adopted the segment (it launched): one poked between the
	# exec and the adoption is not adopted but made anew.
	wait_file "$WORK/mk.state" "0-3"
	"$T/segpoke" "$PID" making
	"$NVT" -p -c 8-9 "$PID" >"$WORK/mk.p" 2>&1 &
	pp=$!
	# It waits: 20 of its pauses counted (of up to NVT_SEG_MAKING_WAIT_MS), and it is running.
	wait_sleeps "$pp" 20
	[ "$(awk '/^State:/ {print $2}' "/proc/$pp/status" 2>/dev/null)" != Z ] &&
		kill -0 "$pp" 2>/dev/null || die "-p did not wait: $(cat "$WORK/mk.p")"
	"$T/segpoke" "$PID" made
	wait "$pp" && rc=0 || rc=$?
	eq "$rc" 0 "-p exit status: $(cat "$WORK/mk.p")"
	eq "$("$NVT" -pc "$PID" 2>/dev/null)" "pid $PID's current TPC list: 8-9"
	"$T/segpoke" "$PID" making
	run_rc out rc "$NVT" -p -c 4-5 "$PID"
	[ "$rc" != 0 ] || die "-p on a segment never made succeeded: $out"
	has "$out" "not filled in yet"
	"$T/segpoke" "$PID" made
	eq "$("$NVT" -pc "$PID" 2>/dev/null)" "pid $PID's current TPC list: 8-9"
	stop_loop mk "$PID"
}

# ---- -a and -l's tree ----

# start_tree TAG: R, a task started with the drop-in wrapper (so that the shell it starts loads
# no shim) and moved to TPCs 0-3, starts a shell that starts G (fakeapp fork), which forks GC:
# three tasks, R - (shell) - G - GC. Sets R, SH, G and GC.
start_tree() {
	local tag=$WORK/$1
	rm -f "$tag".*
	env LD_LIBRARY_PATH="$WRAPDIR:$FAKEDIR" "$APP" spawn-on "$tag.go" "$tag.stop" "$tag" sh \
		>"$tag.out" 2>&1 &
	R=$!
	wait_task "$R"
	"$NVT" -p -c 0-3 "$R" >/dev/null
	wait_file "$tag.parent" "0-3"
	touch "$tag.go"
	wait_file "$tag.child.parent" "0-3"
	wait_file "$tag.child.child" "0-3"
	SH=$(cat "$tag.childpid")
	GC=$(cat "$tag.child.childpid")
	G=$(awk '{print $4}' "/proc/$GC/stat")
	[ "$(awk '{print $4}' "/proc/$G/stat")" == "$SH" ] || die "G is not the shell's child"
	[ ! -e "$(seg_file "$SH")" ] || die "the shell between R and G has a segment"
}
stop_tree() {
	touch "$WORK/$1.stop"
	wait "$R" || die "the tree failed: $(cat "$WORK/$1.out")"
}

t_tree_all_tasks_change() {
	local other
	start_tree ac
	start_loop acx "$NVT" --no-mps -c 0-3 "$APP"
	other=$PID
	wait_file "$WORK/acx.state" "0-3"
	run_rc out rc "$NVT" -a -p -c 8-9 "$R"
	eq "$rc" 0 "-a -p exit status: $out"
	# Root first, then each task under its parent: taskset -a's lines for each.
	eq "$out" "pid $R's current TPC list: 0-3
pid $R's new TPC list: 8-9
pid $G's current TPC list: 0-3
pid $G's new TPC list: 8-9
pid $GC's current TPC list: 0-3
pid $GC's new TPC list: 8-9"
	wait_file "$WORK/ac.parent" "8-9"
	wait_file "$WORK/ac.child.parent" "8-9"
	wait_file "$WORK/ac.child.child" "8-9"
	eq "$(cat "$WORK/acx.state")" "0-3" "a task outside the tree"
	# Shown the same way; --all-tasks is -a.
	run_rc out rc "$NVT" --all-tasks -pc "$R"
	eq "$out" "pid $R's current TPC list: 8-9
pid $G's current TPC list: 8-9
pid $GC's current TPC list: 8-9"
	run_rc out rc "$NVT" -a -p --json "$G"
	python3 - "$out" "$G" "$GC" <<'PY' || die "bad JSON: $out"
import json, sys
d = json.loads(sys.argv[1])
assert d["version"] == 2
assert [t["pid"] for t in d["tasks"]] == [int(sys.argv[2]), int(sys.argv[3])]
assert all(t["gpus"][0]["current"]["tpc_ids"] == [8, 9] for t in d["tasks"])
PY
	# A task started in the tree later inherits the new partition (from G, by fork).
	stop_loop acx "$other"
	stop_tree ac
}

t_tree_all_tasks_partial_failure() {
	# A descendant that cannot be changed is reported; the others are changed,
	# and the exit status says that one failed.
	start_tree ap
	"$T/segpoke" "$G" version 99
	run_rc out rc "$NVT" -a -pc 8-9 "$R"
	eq "$rc" 1 "exit status: $out"
	printf '%s\n' "$out" >"$WORK/ap.err"
	has "$out" "pid $R's new TPC list: 8-9"
	has "$out" "nvtaskset: failed to set pid $G's partition: its control segment has version 99; this nvtaskset understands version $SEG_VERSION"
	has "$out" "pid $GC's new TPC list: 8-9"
	wait_file "$WORK/ap.child.child" "8-9"
	eq "$(cat "$WORK/ap.child.parent")" "0-3" "the task that failed"
	out=$(timeout "$HANG" "$NVT" -a -p --json -c 10 "$R" 2>/dev/null) && rc=0 || rc=$?
	eq "$rc" 1
	python3 - "$out" "$R" "$G" "$GC" <<'PY' || die "bad JSON: $out"
import json, sys
d = json.loads(sys.argv[1])
r, g, gc = (int(a) for a in sys.argv[2:5])
assert d["version"] == 2 and d["error"] == "failed to set the partition of 1 of 3 tasks"
t = {x["pid"]: x for x in d["tasks"]}
assert list(t) == [r, g, gc]
assert t[g]["error"].startswith("failed to set pid %d's partition: its control segment has version 99" % g)
assert t[r]["gpus"][0]["previous"]["tpcs"] == "8-9" and t[r]["gpus"][0]["current"]["tpc_ids"] == [10]
assert t[gc]["gpus"][0]["current"]["tpcs"] == "10"
PY
	has "$(cat "$WORK/ap.err")" "nvtaskset: failed to set the partition of 1 of 3 tasks"
	"$T/segpoke" "$G" version current
	stop_tree ap
}

t_tree_all_tasks_root_fails() {
	# PID itself cannot be changed: as taskset -a goes on with the other
	# threads, its descendants are changed all the same, PID is reported, and
	# the exit status is 1 (it used to stop at PID and change none).
	start_tree ar
	"$T/segpoke" "$R" version 99
	run_rc out rc "$NVT" -a -pc 8-9 "$R"
	eq "$rc" 1 "exit status: $out"
	has "$out" "nvtaskset: failed to set pid $R's partition: its control segment has version 99"
	has "$out" "pid $G's new TPC list: 8-9"
	has "$out" "pid $GC's new TPC list: 8-9"
	has "$out" "nvtaskset: failed to set the partition of 1 of 3 tasks"
	wait_file "$WORK/ar.child.parent" "8-9"
	wait_file "$WORK/ar.child.child" "8-9"
	eq "$(cat "$WORK/ar.parent")" "0-3" "the task that failed"
	# With --json: every task's object, and an "error" that says why the status is 1.
	out=$(timeout "$HANG" "$NVT" -a -p --json -c 10 "$R" 2>/dev/null) && rc=0 || rc=$?
	eq "$rc" 1
	python3 - "$out" "$R" "$G" "$GC" <<'PY' || die "bad JSON: $out"
import json, sys
d = json.loads(sys.argv[1])
r, g, gc = (int(a) for a in sys.argv[2:5])
assert d["version"] == 2 and d["error"] == "failed to set the partition of 1 of 3 tasks"
t = {x["pid"]: x for x in d["tasks"]}
assert list(t) == [r, g, gc]
assert t[r]["error"].startswith("failed to set pid %d's partition: its control segment has version 99" % r)
assert t[g]["gpus"][0]["current"]["tpc_ids"] == [10] and t[gc]["gpus"][0]["previous"]["tpcs"] == "8-9"
PY
	# Shown: the same.
	out=$(timeout "$HANG" "$NVT" -a -p --json "$R" 2>/dev/null) && rc=0 || rc=$?
	eq "$rc" 1
	python3 -c 'import json,sys; d=json.loads(sys.argv[1]); assert d["error"]=="failed to get the partition of 1 of 3 tasks" and len(d["tasks"])==3 and "error" in d["tasks"][0]' "$out" ||
		die "bad JSON: $out"
	"$T/segpoke" "$R" version current
	# Without a failure, no "error".
	out=$(timeout "$HANG" "$NVT" -a -p --json "$R" 2>/dev/null)
	python3 -c 'import json,sys; d=json.loads(sys.argv[1]); assert "error" not in d and len(d["tasks"])==3' "$out" ||
		die "bad JSON: $out"
	stop_tree ar
}

# start_gpu_pair TAG CHIPS: on fake GPUs CHIPS (two), a shell on GPU 0's TPCs 0-3 (PID) that
# started a task looping on GPU 1's TPCs 0-3 (CHILD, writing $WORK/TAG.state; TAG.stop ends it).
start_gpu_pair() {
	export FAKECUDA_CHIPS=$2 NVTASKSET_CACHE_DIR=$WORK/cache-$1
	rm -f "$WORK/$1".*
	CUDA_VISIBLE_DEVICES=0 "$NVT" --no-mps -c 0-3 sh -c "
		CUDA_VISIBLE_DEVICES=1 \"$NVT\" --no-mps -c 0-3 \"$APP\" loop \"$WORK/$1.stop\" \"$WORK/$1.state\" &
		echo \$! >\"$WORK/$1.child\"; wait" >"$WORK/$1.out" 2>&1 &
	PID=$!
	wait_file "$WORK/$1.state" "0-3"
	CHILD=$(cat "$WORK/$1.child")
}

t_tree_all_tasks_json_bad_input_below() {
	# MASK that a descendant's GPU cannot take fails that task alone, in a
	# well-formed document (it used to end the command in the middle of the
	# document, which was then no JSON); MASK that PID's own GPUs cannot take
	# changes nothing, and the document is the error object.
	local child
	start_gpu_pair ab h100,a100
	child=$CHILD
	out=$(timeout "$HANG" "$NVT" -a -p --json -c 60 "$PID" 2>"$WORK/ab.err") && rc=0 || rc=$?
	eq "$rc" 1 "exit status: $out $(cat "$WORK/ab.err")"
	python3 - "$out" "$PID" "$child" <<'PY' || die "bad JSON: $out"
import json, sys
d = json.loads(sys.argv[1])
r, c = int(sys.argv[2]), int(sys.argv[3])
assert d["version"] == 2 and d["error"] == "failed to set the partition of 1 of 2 tasks"
t = {x["pid"]: x for x in d["tasks"]}
assert list(t) == [r, c]
assert t[r]["gpus"][0]["current"]["tpcs"] == "60"
assert t[c]["error"] == "failed to set pid %d's partition: TPC 60 does not exist: this GPU has 54 TPCs (0-53)" % c
PY
	has "$(cat "$WORK/ab.err")" "nvtaskset: failed to set pid $child's partition: TPC 60 does not exist"
	eq "$(cat "$WORK/ab.state")" "0-3" "the task that failed"
	out=$(timeout "$HANG" "$NVT" -a -p --json -c 61 "$child" 2>/dev/null) && rc=0 || rc=$?
	eq "$rc" 1
	eq "$out" '{"version":2,"error":"TPC 61 does not exist: this GPU has 54 TPCs (0-53)"}'
	out=$(timeout "$HANG" "$NVT" -pc "$PID" 2>/dev/null)
	eq "$out" "pid $PID's current TPC list: 60" "PID, unchanged by the failed -a"
	touch "$WORK/ab.stop"
	wait "$PID"
}

t_tree_all_tasks_other_users_task() {
	# A tree of user 65533's that holds a task of another user's (a setuid
	# program of 65534's): -a by 65533 changes 65533's tasks, reports the other
	# user's as not permitted and leaves it as it was, and exits 1; -a by root
	# changes them all. In a mount namespace with a /dev/shm of its own: the
	# setuid program's run directory is the default one (as in
	# tree_spawn_setuid_program).
	local d=$WORK/u/ou
	suid_app
	mkdir -m 1777 "$d"
	cat >"$WORK/ou.sh" <<INNER
$OWN_SHM
"$NVT" --no-mps -c 0-3 $(as_user 65533) sh -c '"\$1" loop "\$3/stop" "\$3/s" & "\$2" loop "\$3/stop" "\$3/g" & wait' \
	sh "$WORK/suidapp" "$APP" "$d" &
r=\$!
wait_file "$d/g" 0-3
wait_file "$d/s" 0-65
echo "\$r \$(pgrep -f "^$WORK/suidapp loop") \$(pgrep -f "^$APP loop $d")" >"$d/pids"
$(as_user 65533) "$NVT" -a -p -c 8-9 "\$r" >"$d/user.out" 2>&1 && echo 0 >"$d/user.rc" || echo \$? >"$d/user.rc"
$(as_user 65533) "$NVT" -a -p --json -c 8-9 "\$r" >"$d/user.json" 2>/dev/null || true
$(as_user 65533) "$NVT" -p -c 5 "\$(pgrep -f "^$WORK/suidapp loop")" >"$d/p.out" 2>&1 || true
wait_file "$d/g" 8-9
cat "$d/s" >"$d/s.after-user"
"$NVT" -a -p -c 10-11 "\$r" >"$d/root.out" 2>&1 && echo 0 >"$d/root.rc" || echo \$? >"$d/root.rc"
wait_file "$d/s" 10-11
wait_file "$d/g" 10-11
touch "$d/stop"
wait "\$r"
INNER
	export_waits
	run_rc out rc unshare --mount --propagation private bash "$WORK/ou.sh"
	eq "$rc" 0 "the tree: $out"
	read -r R S G <"$d/pids"
	[ -n "$S" ] && [ -n "$G" ] || die "pids: $(cat "$d/pids")"
	eq "$(cat "$d/user.rc")" 1 "exit status of -a by user 65533: $(cat "$d/user.out")"
	out=$(cat "$d/user.out")
	has "$out" "pid $R's new TPC list: 8-9"
	has "$out" "pid $G's new TPC list: 8-9"
	has "$out" "nvtaskset: failed to set pid $S's partition: $(denied 65534)"
	has "$out" "nvtaskset: failed to set the partition of 1 of 3 tasks"
	eq "$(cat "$d/s.after-user")" "0-65" "the other user's task after -a by user 65533"
	# (Its segment from before the exec to 65534 lies in 65533's run directory:
	# -p and -a wrote that one, which it reads no more, and said they changed it.)
	eq "$(cat "$d/p.out")" "nvtaskset: failed to set pid $S's partition: $(denied 65534)" "-p by user 65533"
	python3 - "$(cat "$d/user.json")" "$R" "$S" "$G" "$(denied 65534)" <<'PY' || die "bad JSON: $(cat "$d/user.json")"
import json, sys
d = json.loads(sys.argv[1])
r, s, g = (int(a) for a in sys.argv[2:5])
t = {x["pid"]: x for x in d["tasks"]}
assert list(t)[0] == r and set(t) == {r, s, g}
assert t[s] == {"pid": s, "error": "failed to set pid %d's partition: %s" % (s, sys.argv[5])}
assert t[g]["gpus"][0]["current"]["tpcs"] == "8-9" and d["error"] == "failed to set the partition of 1 of 3 tasks"
PY
	eq "$(cat "$d/root.rc")" 0 "exit status of -a by root: $(cat "$d/root.out")"
	has "$(cat "$d/root.out")" "pid $S's new TPC list: 10-11"
}

t_tree_all_tasks_exclude_running() {
	# -a -p -n COUNT --exclude-running: each task of the tree claims a pick of
	# its own, clear of every other task's (the tree's too), race-free.
	local lists=()
	start_tree ax
	out=$(timeout "$HANG" "$NVT" -a -p -n 2 --exclude-running --json "$R" 2>/dev/null) && rc=0 || rc=$?
	eq "$rc" 0 "exit status: $out"
	for p in "$R" "$G" "$GC"; do
		lists+=("$(python3 -c 'import json,sys; print([t for t in json.loads(sys.argv[1])["tasks"] if t["pid"]==int(sys.argv[2])][0]["gpus"][0]["current"]["tpcs"])' "$out" "$p")")
	done
	disjoint_lists "${lists[@]}"
	wait_file "$WORK/ax.parent" "${lists[0]}"
	wait_file "$WORK/ax.child.parent" "${lists[1]}"
	wait_file "$WORK/ax.child.child" "${lists[2]}"
	stop_tree ax
}

t_tree_all_tasks_usage() {
	run_rc out rc "$NVT" -a -l
	eq "$rc" 1
	has "$out" "nvtaskset: -a goes with -p"
	run_rc out rc "$NVT" --launched -p 1
	has "$out" "nvtaskset: --launched goes with -l"
	# Neither the root nor a process below it runs under nvtaskset.
	sleep 30 &
	run_rc out rc "$NVT" -a -p -c 1 $!
	eq "$rc" 1
	eq "$out" "nvtaskset: failed to set pid $!'s partition: not running under nvtaskset, nor is any process below it"
	kill $!
}

t_tree_all_tasks_root_not_a_task() {
	# -a on a process started without nvtaskset (a job's shell that started
	# two tasks): the tasks below it are moved (it used to refuse, exit 1).
	local tag=$WORK/rn sh
	rm -f "$tag".*
	bash -c '"$1" --no-mps -c 0-3 "$2" loop "$3.stop" "$3.a" &
		"$1" --no-mps -c 4-7 "$2" loop "$3.stop" "$3.b" & wait' sh "$NVT" "$APP" "$tag" \
		>"$tag.out" 2>&1 &
	sh=$!
	wait_file "$tag.a" "0-3"
	wait_file "$tag.b" "4-7"
	run_rc out rc "$NVT" -a -p -c 8-9 "$sh"
	eq "$rc" 0 "exit status: $out"
	eq "$(grep -c "new TPC list: 8-9" <<<"$out")" 2 "$out"
	wait_file "$tag.a" "8-9"
	wait_file "$tag.b" "8-9"
	# Shown, as JSON: the two tasks.
	out=$("$NVT" -a -p --json "$sh")
	python3 -c 'import json,sys; d=json.loads(sys.argv[1]); assert len(d["tasks"])==2 and "error" not in d' "$out" ||
		die "bad JSON: $out"
	# A MASK that fits none of the machine's GPUs changes nothing.
	run_rc out rc "$NVT" -a -p -c 70 "$sh"
	eq "$rc" 1
	eq "$out" "nvtaskset: TPC 70 does not exist: this GPU has 66 TPCs (0-65)"
	touch "$tag.stop"
	wait "$sh" || die "the tasks failed: $(cat "$tag.out")"
}

t_tree_list() {
	# -l shows each task under the nearest task it descends from: PPID, indented COMMAND.
	local row
	start_tree lt
	run_rc out rc "$NVT" -l
	eq "$rc" 0
	# USER is as wide as its widest name, at least 10.
	local uw=$(( ${#ME} > 10 ? ${#ME} : 10 ))
	eq "$(head -1 <<<"$out")" "$(printf "%7s  %7s  %-${uw}s  %-5s  %8s  %-20s  %s" PID PPID USER GPU LAUNCHES TPCS COMMAND)"
	row=$(grep -E "^ *$R " <<<"$out") || die "no row for R in: $out"
	grep -Eq "^ *$R +[0-9]+ +$ME +0 +[0-9]+ +0-3 +$APP spawn-on" <<<"$row" || die "R's row: $row"
	row=$(grep -E "^ *$G " <<<"$out") || die "no row for G in: $out"
	grep -Eq "^ *$G +$SH +$ME +0 +[0-9]+ +0-3 +\\\\_ $APP fork" <<<"$row" || die "G's row: $row"
	row=$(grep -E "^ *$GC " <<<"$out") || die "no row for GC in: $out"
	grep -Eq "^ *$GC +$G +$ME +0 +[0-9]+ +0-3 {5,}\\\\_ $APP fork" <<<"$row" || die "GC's row: $row"
	# In tree order: G right after R, GC right after G.
	eq "$(awk -v r="$R" '$1 == r {getline; print $1; getline; print $1}' <<<"$out" | tr '\n' ' ')" "$G $GC "
	run_rc out rc "$NVT" -l --json
	python3 - "$out" "$R" "$SH" "$G" "$GC" <<'PY' || die "bad JSON: $out"
import json, sys
d = json.loads(sys.argv[1])
r, sh, g, gc = (int(a) for a in sys.argv[2:6])
t = {x["pid"]: x for x in d["tasks"]}
assert t[r]["parent"] is None and t[r]["depth"] == 0
assert t[g]["ppid"] == sh and t[g]["parent"] == r and t[g]["depth"] == 1
assert t[gc]["ppid"] == g and t[gc]["parent"] == g and t[gc]["depth"] == 2
pids = [x["pid"] for x in d["tasks"]]
assert pids.index(g) == pids.index(r) + 1 and pids.index(gc) == pids.index(g) + 1
PY
	stop_tree lt
}

t_tree_list_launch_count_threads() {
	# The counter is exact with many launching threads: 3 (a stripe each)
	# and 12 (more than the 7 own stripes: the rest share the last one).
	local n pid i out
	for n in 3 12; do
		rm -f "$WORK/lc.stop" "$WORK/lc.out"
		"$NVT" --no-mps -c 0-3 "$APP" threads "$n" 5000 "$WORK/lc.stop" >"$WORK/lc.out" 2>&1 &
		pid=$!
		poll_until 20 grep -q launched= "$WORK/lc.out" || true
		grep -q "launched=$((n * 5000))" "$WORK/lc.out" || die "$n threads did not finish: $(cat "$WORK/lc.out")"
		run_rc out rc "$NVT" -l --json
		python3 - "$out" "$pid" "$((n * 5000))" <<'PY' || die "$n threads: wrong count: $out"
import json, sys
t = [x for x in json.loads(sys.argv[1])["tasks"] if x["pid"] == int(sys.argv[2])][0]
assert t["launches"] == int(sys.argv[3]), t["launches"]
PY
		touch "$WORK/lc.stop"
		wait "$pid" || die "$n threads: exit status"
	done
}

t_tree_list_launches() {
	# LAUNCHES counts the kernels a task launched; --launched leaves out those that launched none.
	local a b i
	rm -f "$WORK/ll.stop"
	"$NVT" --no-mps -c 0-3 "$APP" launch-wait 7 "$WORK/ll.stop" >"$WORK/ll.a" 2>&1 &
	a=$!
	"$NVT" --no-mps -c 4-5 "$APP" launch-wait 0 "$WORK/ll.stop" >"$WORK/ll.b" 2>&1 &
	b=$!
	wait_task "$a"
	wait_task "$b"
	# It prints its last launch once all 7 are done.
	poll_until 10 grep -q tpcs= "$WORK/ll.a" || true
	run_rc out rc "$NVT" -l
	grep -Eq "^ *$a +[0-9]+ +$ME +0 +7 +0-3 +$APP launch-wait 7" <<<"$out" || die "no row for $a: $out"
	grep -Eq "^ *$b +[0-9]+ +$ME +0 +0 +4-5 \\(not applied\\) +$APP launch-wait 0" <<<"$out" || die "no row for $b: $out"
	run_rc out rc "$NVT" -l --launched
	grep -Eq "^ *$a +" <<<"$out" || die "--launched left out $a: $out"
	hasnt "$out" " $b "
	run_rc out rc "$NVT" -l --json --launched
	python3 - "$out" "$a" <<'PY' || die "bad JSON: $out"
import json, sys
d = json.loads(sys.argv[1])
t = [x for x in d["tasks"] if x["pid"] == int(sys.argv[2])][0]
assert d["version"] == 2 and t["launches"] == 7 and t["gpus"][0]["launches"] == 7
assert t["gpus"][0]["applied"] is True and t["gpus"][0]["tpc_ids"] == [0, 1, 2, 3]
PY
	touch "$WORK/ll.stop"
	wait "$a" "$b"
}

t_tree_json_nulls() {
	# Sets as arrays beside the lists; null where there is no value; a version.
	local u0
	export FAKECUDA_CHIPS=h100,h100-alt NVTASKSET_CACHE_DIR=$WORK/cache.json_nulls
	u0=$(fake_uuid 0)
	start_loop jn "$NVT" --no-mps --gpu 1 -c 4,6-7 "$APP"
	wait_file "$WORK/jn.state" "0-65"
	run_rc out rc "$NVT" -l --json
	python3 - "$out" "$PID" "$u0" <<'PY' || die "bad JSON: $out"
import json, sys
d = json.loads(sys.argv[1])
t = [x for x in d["tasks"] if x["pid"] == int(sys.argv[2])][0]
assert d["version"] == 2 and isinstance(t["ppid"], int) and t["parent"] is None
g = {x["gpu"]: x for x in t["gpus"]}
assert g[0]["uuid"] == sys.argv[3] and g[0]["partitioned"] is False
assert all(g[0][k] is None for k in ("tpcs", "tpc_mask", "tpc_count", "tpc_ids"))
assert g[1]["tpcs"] == "4,6-7" and g[1]["tpc_ids"] == [4, 6, 7] and g[1]["tpc_count"] == 3
assert g[1]["tpc_mask"] == "d0" and g[1]["launches"] == 0 and g[0]["launches"] > 0
PY
	out=$(timeout "$HANG" "$NVT" -p --json "$PID" 2>/dev/null)
	python3 - "$out" <<'PY' || die "bad JSON: $out"
import json, sys
d = json.loads(sys.argv[1])
assert d["version"] == 2
g = {x["gpu"]: x for x in d["gpus"]}
assert g[0]["current"]["tpc_ids"] is None and g[1]["current"]["tpc_ids"] == [4, 6, 7]
PY
	out=$(timeout "$HANG" "$NVT" -p --json --gpu 0 -c 1 "$PID" 2>/dev/null)
	python3 - "$out" <<'PY' || die "bad JSON: $out"
import json, sys
d = json.loads(sys.argv[1])
assert d["version"] == 2 and len(d["gpus"]) == 1
assert d["gpus"][0]["previous"]["partitioned"] is False and d["gpus"][0]["previous"]["tpc_ids"] is None
assert d["gpus"][0]["current"]["tpc_ids"] == [1]
PY
	stop_loop jn "$PID"
	# A task with no slot (the wrapper, never moved): no GPU, launches unknown.
	start_loop jw env LD_LIBRARY_PATH="$WRAPDIR:$FAKEDIR" "$APP"
	wait_file "$WORK/jw.state" "0-65"
	run_rc out rc "$NVT" -l --json
	python3 -c 'import json,sys; t=[x for x in json.loads(sys.argv[1])["tasks"] if x["pid"]==int(sys.argv[2])][0]; assert t["gpus"]==[] and t["launches"] is None' \
		"$out" "$PID" || die "bad JSON: $out"
	run_rc out rc "$NVT" -l --launched
	grep -Eq "^ *$PID +[0-9]+ +$ME +- +- +all +" <<<"$out" || die "--launched left out a task it cannot count: $out"
	stop_loop jw "$PID"
}

t_tree_json_errors() {
	# With --json, an error is a JSON object on stdout too (and the message on stderr).
	local gone
	sleep 0.01 &
	gone=$!
	wait "$gone"
	out=$(timeout "$HANG" "$NVT" -p --json "$gone" 2>"$WORK/je.err") && rc=0 || rc=$?
	eq "$rc" 1
	eq "$out" "{\"version\":2,\"error\":\"failed to get pid $gone's partition: No such process\"}"
	eq "$(cat "$WORK/je.err")" "nvtaskset: failed to get pid $gone's partition: No such process"
	out=$(timeout "$HANG" "$NVT" -a -p --json -c 0 "$gone" 2>/dev/null) && rc=0 || rc=$?
	eq "$out" "{\"version\":2,\"error\":\"failed to set pid $gone's partition: No such process\"}"
	out=$(NVTASKSET_RUNDIR=$WORK/none timeout "$HANG" "$NVT" -l --json 2>/dev/null) && rc=0 || rc=$?
	eq "$rc" 1
	eq "$out" "{\"version\":2,\"error\":\"cannot read $WORK/none: No such file or directory\"}"
	out=$(timeout "$HANG" "$NVT" -p --json 2>/dev/null) && rc=0 || rc=$?
	eq "$rc" 1
	eq "$out" "{\"version\":2,\"error\":\"no PID given\"}"
	start_loop je "$NVT" --no-mps -c 0-3 "$APP"
	wait_file "$WORK/je.state" "0-3"
	out=$(timeout "$HANG" "$NVT" -p --json -c 70 "$PID" 2>/dev/null) && rc=0 || rc=$?
	eq "$rc" 1
	eq "$out" "{\"version\":2,\"error\":\"TPC 70 does not exist: this GPU has 66 TPCs (0-65)\"}"
	# Without --json, stdout stays empty.
	out=$(timeout "$HANG" "$NVT" -p -c 70 "$PID" 2>/dev/null) && rc=0 || rc=$?
	eq "$out" ""
	stop_loop je "$PID"
}

t_tree_all_tasks_while_spawning() {
	# A shell whose child shell starts one short-lived task after another while
	# -a moves the tree: once -a has returned, every launch in the tree runs on
	# the new partition (tasks that copied the old one from the child shell
	# before -a wrote it were found by -a's next look and moved), and -a
	# finishes although new tasks keep appearing.
	local tag=$WORK/ws t bad i
	rm -f "$tag".*
	printf '%s\n' 'while [ ! -e "$1" ]; do "$2" launch-at; done' >"$tag.loop"
	"$NVT" --no-mps -c 0-3 sh -c 'sh "$0" "$1" "$2"; true' "$tag.loop" "$tag.stop" "$APP" \
		>"$tag.out" 2>"$tag.err" &
	PID=$!
	poll_until 10 grep -q "tpcs=0-3" "$tag.out" || true
	run_rc out rc "$NVT" -a -p -c 8-9 "$PID"
	eq "$rc" 0 "-a exit status: $out"
	t=$(python3 -c 'import time; print(time.monotonic_ns())')
	has "$out" "pid $PID's new TPC list: 8-9"
	poll_until 10 launches_after "$t" "$tag.out" 20 || true
	touch "$tag.stop"
	wait "$PID" || die "the shell failed: $(cat "$tag.err")"
	bad=$(awk -v t="$t" '{ at = $1; sub("at=", "", at) } at + 0 > t + 0 && $2 != "tpcs=8-9"' "$tag.out")
	[ -z "$bad" ] || die "launches after -a returned on another partition: $bad"
	[ "$(awk -v t="$t" '{ at = $1; sub("at=", "", at) } at + 0 > t + 0' "$tag.out" | wc -l)" -ge 20 ] ||
		die "too few launches after -a: $(tail -5 "$tag.out")"
}
t_tree_all_tasks_other_gpu() {
	# A descendant on another GPU than the root's: -a plans the change for
	# each task's own GPUs (it used to give the child a slot on the root's GPU
	# and leave its own GPU as it was).
	local child
	start_gpu_pair ag h100,h100
	child=$CHILD
	run_rc out rc "$NVT" -a -p -c 8-9 "$PID"
	eq "$rc" 0 "-a -p exit status: $out"
	wait_file "$WORK/ag.state" "8-9"
	run_rc out rc "$NVT" -p --json "$child"
	python3 -c 'import json,sys; g=json.loads(sys.argv[1])["gpus"]; assert [x["gpu"] for x in g]==[1] and g[0]["current"]["tpcs"]=="8-9", g' "$out" ||
		die "the child's partitions: $out"
	touch "$WORK/ag.stop"
	wait "$PID"
}

t_tree_json_one_convention() {
	# Every document names a partition's fields alike (JSON version 2): tpcs the
	# list as text, tpc_mask, tpc_count, tpc_ids the array (version 1's --dry-run
	# and -n's pick had tpc_list, and tpcs as the array).
	local show list dry pick
	start_loop oc "$NVT" --no-mps -c 0-3,8 "$APP"
	wait_file "$WORK/oc.state" "0-3,8"
	show=$(timeout "$HANG" "$NVT" -p --json "$PID")
	list=$(timeout "$HANG" "$NVT" -l --json)
	dry=$(timeout "$HANG" "$NVT" --dry-run --json -c 0-3,8)
	# (-n 5 picks from TPC 0, sharing 0 and 8 with oc: under --json no warning line joins the
	# document on standard error)
	pick=$(timeout "$HANG" "$NVT" --no-mps --json -n 5 "$APP" launch 1 2>&1 >/dev/null)
	[[ $pick != *"warning:"* ]] || die "a warning line in --json's standard error: $pick"
	python3 - "$show" "$list" "$dry" "$pick" "$PID" <<'PY' || die "documents differ: $show $list $dry $pick"
import json, sys
show, lst, dry, pick = (json.loads(a) for a in sys.argv[1:5])
pid = int(sys.argv[5])
assert {d["version"] for d in (show, lst, dry, pick)} == {2}
keys = ("partitioned", "tpcs", "tpc_mask", "tpc_count", "tpc_ids")
want = {"partitioned": True, "tpcs": "0-3,8", "tpc_mask": "10f", "tpc_count": 5, "tpc_ids": [0, 1, 2, 3, 8]}
got = [show["gpus"][0]["current"],
       [t for t in lst["tasks"] if t["pid"] == pid][0]["gpus"][0],
       dry["partition"][0]]
for g in got:
    assert {k: g[k] for k in keys} == want, g
p = pick["picked"][0]
assert set(p) == {"gpu", "uuid", "memory_limit_bytes"} | set(keys) and p["tpc_count"] == 5 and len(p["tpc_ids"]) == 5, p
assert "tpc_list" not in json.dumps([show, lst, dry, pick])
PY
	stop_loop oc "$PID"
}

# start_exec_to_user TAG UID ARGS...: a task as user UID (0: root; TPCs 0-3)
# that, once TAG.go exists, execs as user 65533 (through a setuid-root
# setpriv for a UID not 0) a shell that waits for TAG.go2 and launches once;
# "nvtaskset -p ARGS... PID" as UID (PP, output in TAG.p) waits for the lock
# of the task's first segment (segpoke holds it: HOLD) while the task's own
# segment is made. Sets PID, FIRST_SEG, OWN_SEG, HOLD and PP.
start_exec_to_user() {
	local tag=$WORK/u/$1 uid=$2 i become run=()
	shift 2
	rm -f "$tag".*
	become=$(as_user 65533)
	if [ "$uid" != 0 ]; then
		cp "$(command -v setpriv)" "$WORK/u/setpriv-suid"
		chmod 4755 "$WORK/u/setpriv-suid"
		# (A setuid exec drops LD_PRELOAD and LD_LIBRARY_PATH: set them again.)
		become="${become/setpriv/$WORK/u/setpriv-suid} env LD_PRELOAD=$SHIM LD_LIBRARY_PATH=$FAKEDIR"
		read -ra run <<<"$(as_user "$uid")"
	fi
	"${run[@]}" "$NVT" --no-mps -c 0-3 sh -c 'while [ ! -e "$1.go" ]; do sleep 0.02; done
		exec '"$become"' sh -c '\''while [ ! -e "$1.go2" ]; do sleep 0.02; done
			"$2" launch 1'\'' sh "$1" "$2"' sh "$tag" "$APP" >"$tag.out" 2>&1 &
	PID=$!
	wait_task "$PID"
	FIRST_SEG=$(seg_file "$PID")
	has "$FIRST_SEG" "/nvtaskset-$uid/"
	"$T/segpoke" "$PID" hold >"$tag.hold" &
	HOLD=$!
	wait_file "$tag.hold" held
	"${run[@]}" "$NVT" -p "$@" "$PID" >"$tag.p" 2>&1 &
	PP=$!
	poll_until 10 has_open "$PP" "$FIRST_SEG" || die "-p never opened $FIRST_SEG"
	touch "$tag.go"
	# The task's own segment, made and filled (mode 0644) by its shim as 65533.
	OWN_SEG=${FIRST_SEG/nvtaskset-$uid/nvtaskset-65533}
	poll_until 10 has_mode "$OWN_SEG" 644 || die "no segment $OWN_SEG was made"
}
# release_move TAG: lets start_exec_to_user's -p go on (ends HOLD); it must exit 0.
release_move() {
	kill "$HOLD"
	wait "$PP" && rc=0 || rc=$?
	eq "$rc" 0 "-p exit status: $(cat "$WORK/u/$1.p")"
}

t_tree_move_exec_reopen_fails() {
	# A user's -p on its task, which a setuid program makes another user's:
	# the change went into the user's segment, and the task's own cannot be
	# opened for writing: -p says what it wrote and warns that the program
	# may not have it, rather than failing as if nothing was written.
	need_users
	local tag=$WORK/u/rf
	start_exec_to_user rf 65534 -c 8-9
	release_move rf
	has "$(cat "$tag.p")" "pid $PID's new TPC list: 8-9"
	has "$(cat "$tag.p")" "its new control segment cannot be opened (Permission denied)"
	touch "$tag.go2"
	wait "$PID" || die "the task failed: $(cat "$tag.out")"
}

t_tree_claim_during_exec_to_user() {
	# -p -n 2 --exclude-running across an exec to another user: the pick is
	# claimed in the task's own segment, and the one from before the exec
	# keeps what it had (no pick left behind in it; its scan tidies it away
	# once the task's own is opened to readers).
	need_users
	local tag=$WORK/u/cx
	start_exec_to_user cx 0 -n 2 --exclude-running
	# Not opened to readers: tidying (the claim's scan) keeps the first one.
	chmod 600 "$OWN_SEG"
	release_move cx
	has "$(cat "$tag.p")" "pid $PID's new TPC mask"
	eq "$("$T/segpoke" "$PID" show "$FIRST_SEG")" "0-3"
	chmod 644 "$OWN_SEG"
	touch "$tag.go2"
	wait "$PID" || die "the task failed: $(cat "$tag.out")"
}

t_list_overlaps_and_topology_use() {
	# -l names tasks whose TPCs overlap (neither started the other), and
	# --topology shows which TPCs of each GPC the tasks hold and which are free.
	local a b out
	start_loop ov1 "$NVT" --no-mps -c 0-3 "$APP"
	a=$PID
	start_loop ov2 "$NVT" --no-mps -c 2-5 "$APP"
	b=$PID
	wait_file "$WORK/ov1.state" "0-3"
	wait_file "$WORK/ov2.state" "2-5"
	# Two workers of one task (a pool, a DataLoader) share its TPCs by design:
	# no overlap is named between them.
	rm -f "$WORK/sib1.stop" "$WORK/sib1.state" "$WORK/sib2.state"
	"$NVT" --no-mps -c 40-41 sh -c '"$1" loop "$2" "$3" & "$1" loop "$2" "$4" & wait' sh \
		"$APP" "$WORK/sib1.stop" "$WORK/sib1.state" "$WORK/sib2.state" >/dev/null 2>&1 &
	local sib=$!
	wait_file "$WORK/sib1.state" "40-41"
	wait_file "$WORK/sib2.state" "40-41"
	out=$("$NVT" -l)
	has_overlap "$out" "$a" "$b" 2-3
	hasnt "$out" "TPCs 40-41"
	# --launched hides their shell (it launched nothing): they are one tree all the same.
	out=$("$NVT" -l --launched)
	has_overlap "$out" "$a" "$b" 2-3
	hasnt "$out" "TPCs 40-41"
	out=$("$NVT" -l --launched --json)
	python3 -c 'import json,sys; w=[x for x in json.loads(sys.argv[1])["tasks"] if x["gpus"][0]["tpcs"] == "40-41"]; assert len(w) == 2 and not any(x["overlaps"] for x in w), w' "$out" ||
		die "the workers of one tree overlap in -l --launched --json: $out"
	touch "$WORK/sib1.stop"
	wait "$sib"
	out=$("$NVT" -l --json)
	python3 -c 'import json,sys; d=json.loads(sys.argv[1]); t={x["pid"]:x for x in d["tasks"]}; assert t[int(sys.argv[2])]["overlaps"] and t[int(sys.argv[3])]["overlaps"]' "$out" "$a" "$b" ||
		die "bad JSON: $out"
	out=$("$NVT" --topology)
	has "$out" "  TPCs the tasks hold (nvtaskset -l lists them):"
	grep -Eq "^  0 +8,16,24 +0 by $a$" <<<"$out" || die "GPC 0's row: $out"
	grep -Eq "^  2 +10,18,26,33,40,47,54 +2 by $a; 2 by $b$" <<<"$out" || die "GPC 2's row: $out"
	grep -Eq "^  6 +6,14,22,30,37,44,51,58,60 +-$" <<<"$out" || die "GPC 6's row: $out"
	out=$("$NVT" --topology --json)
	python3 -c '
import json, sys
d = json.loads(sys.argv[1]); a, b = int(sys.argv[2]), int(sys.argv[3])
assert d["version"] == 2
g = d["gpus"][0]["gpcs"]
assert g[2]["free"] == "10,18,26,33,40,47,54", g[2]
assert g[2]["held"] == [{"pid": a, "tpcs": "2"}, {"pid": b, "tpcs": "2"}], g[2]
assert g[6]["held"] == [] and g[6]["free"] == "6,14,22,30,37,44,51,58,60"' "$out" "$a" "$b" ||
		die "bad JSON: $out"
	# In 80 columns, COMMAND keeps the program's name (not its directory).
	if command -v script >/dev/null; then
		out=$(script -qc "stty cols 80; '$NVT' -l" /dev/null | tr -d '\r')
		grep -Eq "^ *$a .* fakeapp-dlopen lo\.\.\.$" <<<"$out" || die "80 columns: $out"
	fi
	stop_loop ov1 "$a"
	stop_loop ov2 "$b"
	out=$("$NVT" --topology)
	has "$out" "  No task holds TPCs of this GPU (nvtaskset -l lists the tasks)."
}
# has_overlap OUT PID PID TPCS: -l's output OUT has the lines for two tasks (fakeapps) that share
# TPCS of GPU 0 and no other task's TPCs: one from each.
has_overlap() {
	has "$1" "Overlap: pid $2 shares TPCs $4 of GPU 0 with pid $3 (fakeapp-dlopen)"
	has "$1" "Overlap: pid $3 shares TPCs $4 of GPU 0 with pid $2 (fakeapp-dlopen)"
}
t_tree_overlap_by_design() {
	# Tasks that share TPCs by design are no "Overlap": a high and a low task on the whole GPU
	# (--priority without a MASK), a --yield slice pair; two tasks of one level are.
	local hi lo n1 n2 out
	start_loop bdh "$NVT" --no-mps --priority high "$APP"
	hi=$PID
	start_loop bdl "$NVT" --no-mps --priority low "$APP"
	lo=$PID
	wait_file "$WORK/bdh.state" "0-65"
	wait_file "$WORK/bdl.state" "0-65"
	out=$("$NVT" -l)
	hasnt "$out" "Overlap:"
	python3 -c 'import json,sys; d=json.loads(sys.argv[1]); assert not any(t["overlaps"] for t in d["tasks"]), d' \
		"$("$NVT" -l --json)" || die "-l --json calls the pair overlapping"
	start_loop bdn "$NVT" --no-mps --priority low -c 0-3 "$APP"
	n1=$PID
	wait_file "$WORK/bdn.state" "0-3"
	out=$("$NVT" -l)
	has_overlap "$out" "$lo" "$n1" 0-3
	hasnt "$(grep '^Overlap:' <<<"$out")" " $hi "
	stop_loop bdn "$n1"
	stop_loop bdl "$lo"
	start_loop bds "$NVT" --no-mps --priority low --yield slice -c 0-7 "$APP"
	n2=$PID
	wait_file "$WORK/bds.state" "0-7"
	out=$("$NVT" -l)
	hasnt "$out" "Overlap:"
	stop_loop bds "$n2"
	stop_loop bdh "$hi"
}

# warned PID LIST: the warning a start gives whose partition shares TPCs LIST with task PID.
shares_warning() {
	echo "nvtaskset: warning: ${3:-}TPCs $2 of GPU 0 are pid $1's too: the two tasks share them (-n N --exclude-running picks TPCs no task holds)"
}
# picked OUT: the TPCs of GPU 0 that -n's report in OUT names.
picked() { sed -n 's/^nvtaskset: GPU 0 ([^)]*): TPCs \([0-9,-]*\)$/\1/p' <<<"$1"; }
t_tree_count_overlap_warns() {
	# -n COUNT without --exclude-running picks as if no task ran: a start, and -p, say whose
	# TPCs the pick shares after saying the pick, as for a MASK; with --exclude-running or
	# --json, no warning.
	local a b pick out
	start_loop ca "$NVT" --no-mps -c all "$APP"
	a=$PID
	start_loop cb "$NVT" --no-mps -c 0 "$APP"
	b=$PID
	wait_file "$WORK/ca.state" "0-65"
	wait_file "$WORK/cb.state" "0"
	run_rc out rc "$NVT" --no-mps -n 2 "$APP" launch 1
	eq "$rc" 0 "$out"
	pick=$(picked "$out")
	[ -n "$pick" ] || die "no pick said: $out"
	eq "$(grep '^nvtaskset: warning' <<<"$out")" "$(shares_warning "$a" "$pick")" "the start's warning"
	run_rc out rc "$NVT" -p -n 2 "$b"
	eq "$rc" 0 "$out"
	pick=$("$NVT" -p -c "$b" | sed -n "s/^pid $b's current TPC list: //p")
	eq "$(grep '^nvtaskset:' <<<"$out")" "$(shares_warning "$a" "$pick" "pid $b's ")" "-p's warning"
	run_rc out rc "$NVT" -p --json -n 2 "$b"
	eq "$rc" 0 "$out"
	hasnt "$out" "warning"
	stop_loop ca "$a"
	start_loop cc "$NVT" --no-mps -c 0-31 "$APP"
	a=$PID
	wait_file "$WORK/cc.state" "0-31"
	run_rc out rc "$NVT" -p -n 2 --exclude-running "$b"
	eq "$rc" 0 "$out"
	hasnt "$out" "warning"
	run_rc out rc "$NVT" --no-mps -n 2 --exclude-running "$APP" launch 1
	eq "$rc" 0 "$out"
	hasnt "$out" "warning"
	stop_loop cc "$a"
	stop_loop cb "$b"
}
t_tree_overlap_warns_at_once() {
	# A MASK at start, or -p, that shares a live task's TPCs says so at once, a line naming
	# the task and the TPCs; not where they share by design (the -l rule: tasks of other
	# levels, a --yield slice pair, the tasks of one tree).
	local a c hi sl out
	start_loop wa "$NVT" --no-mps -c 0-7 "$APP"
	a=$PID
	wait_file "$WORK/wa.state" "0-7"
	run_rc out rc "$NVT" --no-mps -c 4-11 "$APP" launch 1
	eq "$rc" 0 "$out"
	eq "$(grep '^nvtaskset:' <<<"$out")" "$(shares_warning "$a" 4-7)" "the start's warning"
	has "$out" "tpcs=4-11 hung=0"
	run_rc out rc "$NVT" --no-mps -c 40-47 "$APP" launch 1
	eq "$(grep -c '^nvtaskset:' <<<"$out")" 0 "a start beside it: $out"
	# A start inside a task's tree (a shell's child: it narrows the shell's partition): by
	# design. (The shell forks it, and lives on beside it.)
	run_rc out rc "$NVT" --no-mps -c 40-47 bash -c "\"\$1\" --no-mps -c 40-43 \"\$2\" launch 1 & wait \$!" - "$NVT" "$APP"
	eq "$(grep -c '^nvtaskset:' <<<"$out")" 0 "a start inside a tree: $out"
	has "$out" "tpcs=40-43 hung=0"
	# -p: the task's new TPCs that are another's.
	start_loop wc "$NVT" --no-mps -c 20-23 "$APP"
	c=$PID
	wait_file "$WORK/wc.state" "20-23"
	run_rc out rc "$NVT" -p -c 6-21 "$c"
	eq "$rc" 0 "$out"
	eq "$(grep '^nvtaskset:' <<<"$out")" "$(shares_warning "$a" 6-7 "pid $c's ")" "-p's warning"
	run_rc out rc "$NVT" -p -c 30-33 "$c"
	eq "$(grep -c '^nvtaskset:' <<<"$out")" 0 "-p clear of it: $out"
	stop_loop wc "$c"
	stop_loop wa "$a"
	# Priorities: a high task on the whole GPU shares with a low one by design, with another
	# high one not; a --yield slice pair by design.
	start_loop wh "$NVT" --no-mps --priority high "$APP"
	hi=$PID
	wait_file "$WORK/wh.state" "0-65"
	run_rc out rc "$NVT" --no-mps --priority low -c 0-3 "$APP" launch 1
	eq "$(grep -c '^nvtaskset:' <<<"$out")" 0 "a low task beside a high one: $out"
	run_rc out rc "$NVT" --no-mps --priority high -c 0-3 "$APP" launch 1
	eq "$(grep '^nvtaskset:' <<<"$out")" "$(shares_warning "$hi" 0-3)" "two high tasks"
	start_loop ws "$NVT" --no-mps --priority low --yield slice -c 0-7 "$APP"
	sl=$PID
	wait_file "$WORK/ws.state" "0-7"
	run_rc out rc "$NVT" --no-mps --priority low --yield slice -c 4-7 "$APP" launch 1
	eq "$(grep -c '^nvtaskset:' <<<"$out")" 0 "a --yield slice pair: $out"
	stop_loop ws "$sl"
	stop_loop wh "$hi"
}

t_list_not_applied_names_gpu() {
	# A task on two GPUs whose partition on one is not applied yet: -l says on which.
	export FAKECUDA_CHIPS=h100,h100 NVTASKSET_CACHE_DIR=$WORK/cache-na
	start_loop na "$NVT" --no-mps -c 0-3 "$APP"
	wait_file "$WORK/na.state" "0-3"
	out=$("$NVT" -l)
	grep -Eq "^ *$PID .* 0:0-3 1:0-3 \(GPU 1 not applied\) " <<<"$out" || die "no row for $PID: $out"
	stop_loop na "$PID"
}

t_tree_json_list_keys_documented() {
	# Every key of -l --json (the document's, a task's, its GPUs', their yield, requests and
	# memory, the agents') is named in docs/json.md's section on -l, or the partition object's
	# that it refers to: a key added without its words fails.
	local out rc
	start_loop lk "$NVT" --no-mps --priority low --mem 64M -c 0-3 "$APP"
	wait_file "$WORK/lk.state" "0-3"
	run_rc out rc "$NVT" -l --json
	eq "$rc" 0 "-l --json: $out"
	python3 - "$out" "$ROOT/docs/json.md" <<'PY' || die "keys of -l --json missing in docs/json.md"
import json, re, sys
doc = open(sys.argv[2]).read()
part = re.search(r"^## The partition object\n.*?(?=^## )", doc, re.S | re.M).group(0)
sect = re.search(r"^## `-l`\n.*?(?=^## )", doc, re.S | re.M).group(0) + part
keys = set()
def walk(v):
    if isinstance(v, dict):
        for k, w in v.items():
            keys.add(k)
            walk(w)
    elif isinstance(v, list):
        for w in v:
            walk(w)
d = json.loads(sys.argv[1])
walk(d)
assert {"tasks", "agents", "agent_logs", "yield", "requests"} <= keys, sorted(keys)
named = set(re.findall(r"`(?:[\w\[\]]+\.)*(\w+)`", sect)) | set(re.findall(r'"(\w+)"', sect))
missing = sorted(keys - named)
print("keys:", len(keys))
assert not missing, missing
PY
	stop_loop lk "$PID"
}
