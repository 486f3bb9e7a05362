# What a lower task's shim trusts when it looks at higher tasks (docs/priorities.md, "How a lower
# task yields"): dead high tasks, reused PIDs, other PID namespaces, setuid in a container, a
# run directory of many files, idle children that inherit 'high', TPCs borrowed when a claim
# comes, and many threads waiting at once. Sourced by tests/run-tests.sh: each t_NAME function
# is one test, run in a subshell under set -e with the helpers defined there (need_users,
# need_pidns, as_user, user_python, ns_init_of: security.sh; requests, requests_over, PRIOAPP:
# yield.sh).
# shellcheck shell=bash

# yield_watching PID: how many higher tasks task PID's shim follows on its first GPU (-l --json),
# or -1 if -l does not show it yielding. Read by user 65531, whose -l tidies no other user's files
# (root's would remove a dead task's segment, which these tests leave on purpose).
yield_watching() {
	timeout "$HANG" $(as_user 65531) "$NVT" -l --json | python3 -c '
import json, sys
t = [t for t in json.load(sys.stdin)["tasks"] if t["pid"] == int(sys.argv[1])]
print(t[0]["gpus"][0].get("yield", {}).get("watching", -1) if t else -1)' "$1"
}

watching_is() { [ "$(yield_watching "$1")" == "$2" ]; }

# borrowed_launches LOG [AFTER_NS]: a batch job's launches that ran on all 66 TPCs (entered after
# AFTER_NS).
borrowed_launches() { awk -v t="${2:-0}" '$1 == "launch" && $2 > t && $5 == 66' "$1" | wc -l; }

mono_ns() { python3 -c 'import time; print(time.monotonic_ns())'; }

# serve_bg TAG [PREFIX...]: a periodic root service (--priority high -c 0-8, a request of 4
# launches every 20 ms; its log $WORK/TAG.serve) in the background, ready; sets PID.
serve_bg() {
	local tag=$1
	shift
	rm -f "$WORK/$tag.stop" "$WORK/$tag.serve.ready"
	FAKECUDA_KERNEL_US=1000 "$@" "$NVT" --no-mps --priority high -c 0-8 "$PRIOAPP" serve "$WORK/$tag.stop" \
		"$WORK/$tag.serve" 20000 4 2>"$WORK/$tag.serve.err" &
	PID=$!
	wait_for 10 test -e "$WORK/$tag.serve.ready"
}

# batch_bg TAG UID [PREFIX...]: user UID's batch job (--priority low -c 9-65, the words of
# $YIELD_WORDS, default protect,borrow (they yield and borrow); its log $WORK/u/TAG.batch) in the background, ready;
# sets PID.
batch_bg() {
	local tag=$1 uid=$2
	shift 2
	rm -f "$WORK/u/$tag.stop" "$WORK/u/$tag.batch.ready"
	FAKECUDA_KERNEL_US=500 "$@" $(as_user "$uid") "$NVT" --no-mps --priority low --yield "${YIELD_WORDS:-protect,borrow}" \
		-c 9-65 "$PRIOAPP" batch \
		"$WORK/u/$tag.stop" "$WORK/u/$tag.batch" 2>"$WORK/u/$tag.batch.err" &
	PID=$!
	wait_for 10 test -e "$WORK/u/$tag.batch.ready"
}

# stop_batch TAG PID: ends a batch job, which must exit 0.
stop_batch() {
	touch "$WORK/u/$1.stop"
	wait "$2" || die "the batch job failed: $(cat "$WORK/u/$1.batch.err")"
}

t_hostile_dead_high_task_lends_nothing() {
	# Root's periodic high service killed between two requests (SIGKILL: its file stays):
	# another user's low task stops following it within a look and never borrows its TPCs
	# again, and a third user's -n 9 --exclude-running gets them (before, the low task
	# followed the file by its inode, read its frozen activity as "paused", and every launch
	# borrowed 0-8 beside the new task).
	need_users
	local hi lo t0 seg
	serve_bg dh
	hi=$PID
	batch_bg dh 65533
	lo=$PID
	wait_for 10 watching_is "$lo" 1
	wait_for 10 requests_over "$WORK/dh.serve" 10 # periodic: its frozen activity would lend
	seg=$(seg_file "$hi")
	kill -KILL "$hi"
	wait "$hi" 2>/dev/null || true
	[ -e "$seg" ] || die "the killed service's segment is gone: nothing left to test"
	poll_until 10 watching_is "$lo" 0 || die "the low task still follows the dead service"
	t0=$(mono_ns)
	run_rc out rc $(as_user 65532) "$NVT" --no-mps -n 9 --exclude-running "$APP" launch 1
	eq "$rc" 0 "a claim of the dead service's TPCs: $out"
	has "$out" "tpcs=0-8 "
	stop_batch dh "$lo"
	eq "$(borrowed_launches "$WORK/u/dh.batch" "$t0")" 0 "launches on all TPCs after the claim"
}

t_hostile_reused_pid_not_high_task() {
	# A dead root high task's file whose PID a root process of the same PID namespace now has
	# (here a sleep, made to get that PID through ns_last_pid in a PID namespace of the
	# test's own): a user's low task started afterwards follows nothing and borrows nothing
	# (before, the look checked PID, namespace and effective user, not the start time).
	# In a PID namespace of its own nothing else takes PIDs: the PID is reused, or the test
	# fails (it cannot show what it is for), never skips.
	need_users
	need_pidns
	local out
	cat >"$WORK/reuse.sh" <<'EOF'
set -e
FAKECUDA_KERNEL_US=1000 "$NVT" --no-mps --priority high -c 0-8 "$PRIOAPP" serve "$WORK/pr.stop" \
	"$WORK/pr.serve" 20000 4 2>"$WORK/pr.serve.err" &
hi=$!
wait_for 10 requests_over "$WORK/pr.serve" 10
kill -KILL "$hi"
wait "$hi" 2>/dev/null || true
echo $((hi - 1)) >/proc/sys/kernel/ns_last_pid
sleep 1000 &
[ "$!" == "$hi" ] || { echo "the PID was not reused ($! for $hi)"; exit 3; }
echo "reused $hi"
FAKECUDA_KERNEL_US=500 setpriv --reuid=65533 --regid=65533 --clear-groups "$NVT" --no-mps \
	--priority low --yield protect,borrow -c 9-65 "$PRIOAPP" batch "$WORK/u/pr.stop" "$WORK/u/pr.batch" \
	2>"$WORK/u/pr.batch.err" &
lo=$!
wait_for 10 test -e "$WORK/u/pr.batch.ready"
setpriv --reuid=65531 --regid=65531 --clear-groups "$NVT" -l --json >"$WORK/pr.json"
touch "$WORK/u/pr.stop"
wait "$lo"
EOF
	rm -f "$WORK"/pr.* "$WORK"/u/pr.*
	export_waits
	export -f requests requests_over
	run_rc out rc env NVT="$NVT" PRIOAPP="$PRIOAPP" WORK="$WORK" unshare --pid --fork --mount-proc \
		bash "$WORK/reuse.sh"
	eq "$rc" 0 "the PID namespace's script: $out $(cat "$WORK/u/pr.batch.err" 2>/dev/null)"
	has "$out" "reused "
	python3 - "$WORK/pr.json" <<'PY' || die "the low task follows the dead task: $(cat "$WORK/pr.json")"
import json, sys
low = [t["gpus"][0] for t in json.load(open(sys.argv[1]))["tasks"] if t["gpus"][0].get("priority") == "low"]
assert low and low[0]["yield"]["watching"] == 0, low
PY
	eq "$(borrowed_launches "$WORK/u/pr.batch")" 0 "launches on the dead task's TPCs"
}

t_hostile_other_pidns_dead_task() {
	# A root high task in a container (a PID namespace of its own) is followed by a user's low
	# task on the host while it lives; killed (its file stays in the shared run directory),
	# it is dropped within a look, and stays dropped once its namespace is gone too (before,
	# a segment of another PID namespace was trusted on its header alone: it acted as root's
	# live high task for every user on the host).
	need_users
	need_pidns
	local ns hi lo seg
	rm -f "$WORK/cn.stop" "$WORK/cn.serve.ready"
	FAKECUDA_KERNEL_US=1000 unshare --pid --fork --mount-proc bash -c \
		'"$@" & exec sleep 1000' - "$NVT" --no-mps --priority high -c 0-8 "$PRIOAPP" serve "$WORK/cn.stop" \
		"$WORK/cn.serve" 20000 4 2>"$WORK/cn.serve.err" &
	ns=$!
	wait_for 10 test -e "$WORK/cn.serve.ready"
	wait_for 10 requests_over "$WORK/cn.serve" 10
	hi=$(pgrep_here "^$PRIOAPP serve $WORK/cn.stop")
	seg=$(seg_file "$hi")
	batch_bg cn 65533
	lo=$PID
	wait_for 10 watching_is "$lo" 1
	kill -KILL "$hi"
	[ -e "$seg" ] || die "the container task's segment is gone: nothing left to test"
	poll_until 10 watching_is "$lo" 0 || die "the low task still follows the dead container task"
	kill -KILL "$(ns_init_of "$ns")"
	wait "$ns" 2>/dev/null || true
	[ -e "$seg" ] || die "the gone container task's segment is gone: nothing left to test"
	stop_batch cn "$lo"
	batch_bg cn2 65533
	lo=$PID
	watching_is "$lo" 0 || die "a new low task follows the gone container's task"
	stop_batch cn2 "$lo"
	eq "$(borrowed_launches "$WORK/u/cn2.batch")" 0 "launches on the gone container task's TPCs"
}

t_hostile_setuid_in_container_not_roots() {
	# A task root started in a container that became user 65534 by setuid() and wrote 'high'
	# and all TPCs through its mapping of root's segment is not root's higher task for
	# another user's low task on the host (the effective-user check applied only in the
	# looking task's own PID namespace). Root's honest high task in that container is.
	need_users
	need_pidns
	local ns forged lo
	rm -f "$WORK/u/sc.stop" "$WORK/u/sc.state" "$WORK/sh.stop"
	unshare --pid --fork --mount-proc sleep 1000 &
	ns=$(ns_init_of $!)
	nsenter -t "$ns" -p -m "$NVT" --no-mps -c 0-8 "$APP" setuid 65534 forge-high "$WORK/u/sc.stop" \
		"$WORK/u/sc.state" >"$WORK/sc.out" 2>&1 &
	forged=$!
	wait_file "$WORK/u/sc.state" "0-65"
	batch_bg sc 65533
	lo=$PID
	watching_is "$lo" 0 || die "the low task follows the forged high task: $(timeout "$HANG" "$NVT" -l)"
	rm -f "$WORK/sh.serve.ready"
	FAKECUDA_KERNEL_US=1000 nsenter -t "$ns" -p -m "$NVT" --no-mps --priority high -c 0-8 "$PRIOAPP" \
		serve "$WORK/sh.stop" "$WORK/sh.serve" 20000 4 2>"$WORK/sh.serve.err" &
	wait_for 10 test -e "$WORK/sh.serve.ready"
	wait_for 10 watching_is "$lo" 1
	touch "$WORK/sh.stop" "$WORK/u/sc.stop"
	wait "$forged" || die "the forging task failed: $(cat "$WORK/sc.out")"
	stop_batch sc "$lo"
	kill -KILL "$ns" 2>/dev/null || true
	wait 2>/dev/null || true
}

t_hostile_threads_wait_bounded() {
	# No launch waits longer than NVT_YIELD_MAX_HOLD_MS (100 ms) beside a higher task that is
	# busy nearly all the time, whatever the number of launching threads (before, 8 threads'
	# launches waited 403-420 ms: the waits slept under one process-wide mutex, which is not
	# fair, and a thread that launches back to back takes it again first). Side by side, so
	# that a loaded machine stretches both alike: the longest wait of 8 threads launching back
	# to back is under twice the longest of one thread's whose launches come 1 ms apart (each
	# one held back by the next request, up to the bound).
	local hi one eight
	rm -f "$WORK/tw.stop" "$WORK/tw.serve.ready"
	FAKECUDA_KERNEL_US=30000 "$NVT" --no-mps --priority high -c 0-8 "$PRIOAPP" serve "$WORK/tw.stop" \
		"$WORK/tw.serve" 1000 4 2>"$WORK/tw.serve.err" &
	hi=$!
	wait_for 10 test -e "$WORK/tw.serve.ready"
	for n in 1 8; do
		run_rc out rc env FAKECUDA_KERNEL_US=500 "$NVT" --no-mps --priority low --yield gate,any,duty=100 \
			-c 9-65 "$PRIOAPP" threads "$WORK/tw.never" "$WORK/tw.$n" "$n" $((n == 1 ? 10 : 30)) $((n == 1 ? 1000 : 0))
		eq "$rc" 0 "$n threads: $out"
		has "$(cat "$WORK/tw.$n")" "threads $n launches $((n == 1 ? 10 : 240)) "
	done
	touch "$WORK/tw.stop"
	wait "$hi" || die "the service failed: $(cat "$WORK/tw.serve.err")"
	one=$(awk '{print $6}' "$WORK/tw.1")
	eight=$(awk '{print $6}' "$WORK/tw.8")
	echo "longest launch call: 1 thread $one us, 8 threads $eight us"
	[ "$eight" -lt $((2 * one)) ] || die "8 threads' launches waited up to $eight us, one thread's $one us"
}

t_hostile_look_beyond_64_files() {
	# A user with many files in her run directory (here empty ones named like segments of
	# another PID namespace: plain tasks and forked workers cost a look the same) and her own
	# high task whose file lists between the 64th and the 128th: her low task follows both her
	# high task and root's, look after look (the look's one cursor, shared by her directory and
	# root's, never reached her task, and root's was followed only at every other look).
	need_users
	local mine roots lo
	mkdir -m 755 "$NVTASKSET_RUNDIR/nvtaskset-65533"
	chown 65533:65533 "$NVTASKSET_RUNDIR/nvtaskset-65533"
	serve_bg lr
	roots=$PID
	# Files named like segments until hers lists at the 66th to the 126th place of those
	# names (readdir's order: a file system's hash on ext4, newest first on tmpfs). A file
	# whose hash lists among the first few of any number of names cannot be placed: then
	# her high task starts again, under another PID, so another name.
	local try placed=0
	for try in 1 2 3 4 5; do
		rm -f "$WORK/u/lm.serve.ready" "$WORK/u/lm.stop"
		FAKECUDA_KERNEL_US=1000 $(as_user 65533) "$NVT" --no-mps --priority high -c 0-8 "$PRIOAPP" serve \
			"$WORK/u/lm.stop" "$WORK/u/lm.serve" 20000 4 2>"$WORK/u/lm.serve.err" &
		mine=$!
		wait_for 10 test -e "$WORK/u/lm.serve.ready"
		local rc=0
		$(as_user 65533) "$(user_python)" - "$NVTASKSET_RUNDIR/nvtaskset-65533" "$(basename "$(seg_file "$mine")")" <<'PY' || rc=$?
import os, sys
d, target = sys.argv[1], sys.argv[2]
made = []
def place():
    names = [n for n in os.listdir(d) if n.startswith("nvtaskset.")]
    return names.index(target)
n = 0
while place() < 66:
    if n >= 5000:
        for name in made:
            os.unlink(os.path.join(d, name))
        print("her high task's file lists among the first of %d names" % (n + 1))
        sys.exit(3)
    for _ in range(100):
        n += 1
        name = "nvtaskset.12345.%d" % n
        open(os.path.join(d, name), "w").close()
        made.append(name)
while place() > 126:
    names = [x for x in os.listdir(d) if x.startswith("nvtaskset.")]
    os.unlink(os.path.join(d, next(x for x in names[:place()] if x.startswith("nvtaskset.12345."))))
print("her high task's file lists at place %d of %d" % (place(), len([x for x in os.listdir(d) if x.startswith("nvtaskset.")])))
PY
		[ "$rc" = 0 ] && { placed=1; break; }
		[ "$rc" = 3 ] || die "placing her high task's file failed ($rc)"
		touch "$WORK/u/lm.stop"
		wait "$mine" || die "her service failed: $(cat "$WORK/u/lm.serve.err")"
	done
	[ "$placed" = 1 ] || die "her high task's file could not be placed in 5 tries"
	batch_bg lb 65533
	lo=$PID
	poll_until 10 watching_is "$lo" 2 || die "the low task follows $(yield_watching "$lo") of the 2 high tasks"
	for _ in 1 2 3 4 5 6 7 8; do
		watching_is "$lo" 2 || die "the low task follows $(yield_watching "$lo") of the 2 high tasks"
	done
	stop_batch lb "$lo"
	touch "$WORK/u/lm.stop" "$WORK/lr.stop"
	wait "$mine" || die "her service failed: $(cat "$WORK/u/lm.serve.err")"
	wait "$roots" || die "root's service failed: $(cat "$WORK/lr.serve.err")"
}

# yield_holds PID: how many of task PID's launches waited (-l --json), or -1.
yield_holds() {
	timeout "$HANG" $(as_user 65531) "$NVT" -l --json | python3 -c '
import json, sys
t = [t for t in json.load(sys.stdin)["tasks"] if t["pid"] == int(sys.argv[1])]
print(t[0]["gpus"][0].get("yield", {}).get("holds", -1) if t else -1)' "$1"
}

held_back() { [ "$(yield_holds "$1")" -gt 0 ]; }

# segments_at_least UID N: user UID's run directory holds N segment files or more.
segments_at_least() {
	[ "$(find "$NVTASKSET_RUNDIR/nvtaskset-$1" -maxdepth 1 -name 'nvtaskset.*' 2>/dev/null | wc -l)" -ge "$2" ]
}

t_hostile_idle_children_leave_room() {
	# A launcher script of hers started --priority high whose 9 children inherit 'high' and
	# never launch (helpers, DataLoader workers) fills none of her low task's 8 places for good:
	# root's busy service is followed all the same, and gates her low task (before, the
	# idle ones, in her own run directory, looked at first, took all 8 places, and the service
	# held it back 0 times).
	need_users
	local kids hi lo
	rm -f "$WORK/u/ik.stop"
	$(as_user 65533) "$NVT" --no-mps --priority high -c 0-8 bash -c \
		'for i in 1 2 3 4 5 6 7 8 9; do "$0" launch-wait 0 "$1" & done; wait' "$APP" "$WORK/u/ik.stop" \
		>"$WORK/ik.out" 2>&1 &
	kids=$!
	wait_for 10 segments_at_least 65533 10
	FAKECUDA_KERNEL_US=5000 "$NVT" --no-mps --priority high -c 0-8 "$PRIOAPP" serve "$WORK/ik.stop" \
		"$WORK/ik.serve" 20000 4 2>"$WORK/ik.serve.err" &
	hi=$!
	wait_for 10 test -e "$WORK/ik.serve.ready"
	YIELD_WORDS=gate,any,duty=100 batch_bg ik 65533 # held back by a busy task only
	lo=$PID
	wait_for 10 watching_is "$lo" 8
	poll_until 10 held_back "$lo" || die "root's service never held the low task back: $(timeout "$HANG" "$NVT" -l)"
	stop_batch ik "$lo"
	touch "$WORK/ik.stop" "$WORK/u/ik.stop"
	wait "$hi" || die "the service failed: $(cat "$WORK/ik.serve.err")"
	wait "$kids" || die "the launcher failed: $(cat "$WORK/ik.out")"
}

t_hostile_borrowed_tpcs_not_claimed() {
	# A low task whose launches borrow an idle service's TPCs (the default words) shows them in
	# -l's TPCS while it borrows, and a claim never gets them while it does: paused in the
	# middle of borrowing (its last launch ran on all 66 TPCs), the service killed -9, another
	# user's -n 9 --exclude-running is refused; once it launches again (on its own TPCs: its
	# lender ended) the claim gets 0-8 (before, -l showed 9-65 and the claim got 0-8 beside the
	# borrowed launches).
	need_users
	local hi lo tries=0
	serve_bg bt
	hi=$PID
	wait_for 10 requests_over "$WORK/bt.serve" 10 # periodic: it lends
	rm -f "$WORK/u/bw.pause"
	FAKEAPP_PAUSE=$WORK/u/bw.pause start_loop u/bw $(as_user 65533) "$NVT" --no-mps --priority low --yield protect,borrow -c 9-65 "$APP"
	lo=$PID
	# Paused right after a launch that borrowed (a loaded machine may keep the service from
	# being periodic for a while: try again).
	while :; do
		wait_file "$WORK/u/bw.state" "0-65" 20
		touch "$WORK/u/bw.pause"
		wait_for 10 test -e "$WORK/u/bw.pause.seen" # paused: its state is its last launch's
		file_reads "$WORK/u/bw.state" "0-65" && break
		rm -f "$WORK/u/bw.pause"
		wait_for 10 test ! -e "$WORK/u/bw.pause.seen"
		tries=$((tries + 1))
		[ "$tries" -lt 20 ] || die "the low task never stopped on a borrowing launch"
	done
	run_rc out rc "$NVT" -l
	grep -Eq "^ *$lo .* low +borrowing:[0-9]+ms +9-65 +0-65 " <<<"$out" || die "the borrower's row: $out"
	kill -KILL "$hi"
	wait "$hi" 2>/dev/null || true
	run_rc out rc $(as_user 65532) "$NVT" --no-mps -n 9 --exclude-running "$APP" launch 1
	[ "$rc" != 0 ] || die "a claim got TPCs that a borrower runs on: $out"
	rm -f "$WORK/u/bw.pause"
	wait_file "$WORK/u/bw.state" "9-65"
	run_rc out rc $(as_user 65532) "$NVT" --no-mps -n 9 --exclude-running "$APP" launch 1
	eq "$rc" 0 "a claim once the borrower is back on its own TPCs: $out"
	has "$out" "tpcs=0-8 "
	stop_loop u/bw "$lo"
}
