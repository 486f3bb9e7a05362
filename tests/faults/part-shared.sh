# The shared directory of run directories under hostile and faulty conditions, each in a run
# directory of its own that root's --cdi made (a tmpfs of 128 MiB, as containers get it):
#
#   entries     an entry of every type named like a run directory, or like a segment in a
#               user's own run directory, beside root's and a user's tasks: -l by root and by
#               users, claims, -p, -a -p, a container's tpcs=4 and root's agent go on, every
#               task listed and counted, each bad entry named in -l
#   full        that run directory filled by a user: -l, -p, claims and a container's start
#               end, saying why where they cannot make a segment
#   groups      /proc files of any length: tasks in PID namespaces and readers in 0 to 65,536
#               supplementary groups: listed, counted, never removed
#   namespaces  60 tasks that are PID 1 of namespaces of their own (40 root's, started at once:
#               one clock tick for many; 20 of another user's) beside 2000 files of that user's
#               named for PIDs 1 and 2 of other namespaces: every root task listed and counted by
#               a third user, whose -l and claim make fewer extra system calls than there are
#               files ("slow" otherwise; the counts are printed)
#
# Sourced by tests/faults/run.sh.
# shellcheck shell=bash

CDIRUN=$ROOT/tests/e2e/helpers/cdirun.py

# shared_dir NAME: a fresh run directory $WORK/NAME that root's --cdi makes a tmpfs of its own,
# with its spec in $WORK/NAME.cdi; exported as NVTASKSET_RUNDIR (shared_done puts it back).
shared_dir() {
	SHARED_SAVED=$NVTASKSET_RUNDIR
	export NVTASKSET_RUNDIR=$WORK/$1
	mkdir -m 1777 "$NVTASKSET_RUNDIR"
	OUT=$(timeout 60 "$NVT" --cdi --cdi-dir "$WORK/$1.cdi" --vendor f 2>&1) && RC=0 || RC=$?
	judge "$RC" "$1: --cdi"
	[ "$RC" == 0 ] || bad lost "$1: --cdi failed: $OUT"
}
shared_done() {
	local pid i
	touch "$WORK"/u/*.stop
	for pid in ${SHARED_TASKS:-}; do
		for ((i = 0; i < 100; i++)); do
			kill -0 "$pid" 2>/dev/null || break
			sleep 0.02
		done
		kill -KILL "$pid" 2>/dev/null
		wait "$pid" 2>/dev/null
	done
	SHARED_TASKS=
	umount -l "$NVTASKSET_RUNDIR" 2>/dev/null
	export NVTASKSET_RUNDIR=$SHARED_SAVED
}
# shared_task TAG LIST [PREFIX...]: "fakeapp loop" on LIST (PREFIX: setpriv ..., unshare ...),
# in the background; sets PID once its launches run on LIST (0 on a hang).
shared_task() {
	local tag=$1 list=$2 i
	shift 2
	rm -f "$WORK/u/$tag.stop" "$WORK/u/$tag.state"
	"$@" "$NVT" --no-mps -c "$list" "$APP" loop "$WORK/u/$tag.stop" "$WORK/u/$tag.state" \
		>"$WORK/u/$tag.out" 2>&1 &
	SHARED_TASKS="${SHARED_TASKS:-} $!"
	PID=0
	for ((i = 0; i < 1000; i++)); do
		[ "$(cat "$WORK/u/$tag.state" 2>/dev/null)" == "$list" ] && { PID=$!; return; }
		sleep 0.01
	done
	bad hang "task $tag did not start on $list: $(cat "$WORK/u/$tag.out")"
}
# pid_here PATTERN: the PID (of this host) of the newest process whose command line matches.
pid_here() { pgrep -n -f -- "$1"; }
# listed OUT PID LIST: -l's OUT shows task PID on LIST.
listed() { grep -Eq "^ *$2 +[0-9-]+ +[^ ]+ +[-0-9?,]+ +[-0-9]+ +$3 " <<<"$1"; }
# apart LIST...: "ok" if the TPC lists share no TPC, else the first shared one.
apart() {
	python3 - "$@" <<'PY'
import sys
seen = set()
for lst in sys.argv[1:]:
    for item in filter(None, lst.split(",")):
        a, _, b = item.partition("-")
        for t in range(int(a), int(b or a) + 1):
            if t in seen:
                print(t)
                sys.exit(0)
            seen.add(t)
print("ok")
PY
}
# picked OUT: the TPCs of the first GPU in an NVTASKSET_PARTITION that OUT (an environment) shows.
picked() { sed -n 's/^NVTASKSET_PARTITION=[^ ]* \([^ ]*\) .*/\1/p' <<<"$1"; }
# claim_apart WHAT USER N AVOID: USER's (root: none) -n N --exclude-running must end 0 with N
# TPCs none of which AVOID holds.
claim_apart() {
	local what=$1 who=() got
	[ "$2" == root ] || read -ra who <<<"$(as_user "$2")"
	OUT=$(timeout 60 "${who[@]}" "$NVT" --no-mps -n "$3" --exclude-running /usr/bin/env 2>&1) && RC=0 || RC=$?
	judge "$RC" "$what"
	got=$(picked "$OUT")
	if [ "$RC" != 0 ] || [ -z "$got" ]; then
		bad lost "$what: the claim failed ($RC): $(tail -2 <<<"$OUT")"
	elif [ "$(apart "$got" "$4")" != ok ]; then
		bad lost "$what: the claim got $got, beside tasks on $4"
	fi
}
# A python3 that other users may run (root's may be a private pyenv's).
SHARED_PY=/usr/bin/python3
[ -x "$SHARED_PY" ] || SHARED_PY=$(command -v python3)
# "${IN_GROUPS[@]}" N UID CMD...: CMD as UID in N supplementary groups (1000000 on).
IN_GROUPS=("$SHARED_PY" -c '
import os, sys
n, uid = int(sys.argv[1]), int(sys.argv[2])
os.setgroups(list(range(1000000, 1000000 + n)))
os.setresgid(uid, uid, uid)
os.setresuid(uid, uid, uid)
os.execvp(sys.argv[3], sys.argv[3:])')

# ---- Entries of every type ----------------------------------------------------------------

# shared_make_entries: uid 65533 makes an entry of each kind named like a run directory in the
# shared directory, and bad entries named like segments in her own run directory (FIFO, link,
# directory, empty, sparse 1 GiB, for a live process of hers); root makes a character device
# and uid 65531's directory that others may write in. Sets SHARED_NAMES to the UIDs named.
shared_make_entries() {
	local d=$NVTASKSET_RUNDIR ns sleeper
	ns=$(stat -L -c %i /proc/self/ns/pid)
	$(as_user 65533) sleep 3600 </dev/null >/dev/null 2>&1 &
	sleeper=$!
	SHARED_TASKS="${SHARED_TASKS:-} $sleeper"
	$(as_user 65533) "$SHARED_PY" - "$d" "$ns" "$sleeper" <<'PY'
import os, socket, sys
d, ns, pid = sys.argv[1:]
os.chdir(d)
open("nvtaskset-4242", "w").close()
os.symlink("/tmp", "nvtaskset-4243")
os.symlink("nowhere", "nvtaskset-4244")
os.symlink("nvtaskset-0", "nvtaskset-4245")
os.mkfifo("nvtaskset-4246")
socket.socket(socket.AF_UNIX).bind("nvtaskset-4247")
os.mkdir("nvtaskset-4248", 0o755)
os.mkdir("nvtaskset-65533", 0o755)
own = "nvtaskset-65533/nvtaskset.%s." % ns
os.mkfifo(own + pid)
os.symlink("/etc/passwd", own + "1")
os.mkdir(own + "2")
open(own + "3", "w").close()
with open(own + "4", "w") as f:
    f.truncate(1 << 30)
os.mkfifo("nvtaskset-65533/writers.lock")
PY
	# Her own run directories with modes that keep others out: made as those users.
	$(as_user 65530) sh -c 'mkdir -m 755 "$1/nvtaskset-65530" && : >"$1/nvtaskset-65530/nvtaskset.$2.$3" && chmod 744 "$1/nvtaskset-65530"' _ "$d" "$ns" "$sleeper"
	$(as_user 65529) mkdir -m 700 "$d/nvtaskset-65529"
	$(as_user 65528) mkdir -m 711 "$d/nvtaskset-65528"
	mknod "$d/nvtaskset-4249" c 1 3
	mkdir -m 777 "$d/nvtaskset-65531"
	chown 65531 "$d/nvtaskset-65531"
	chmod 777 "$d/nvtaskset-65531"
	SHARED_NAMES="4242 4243 4244 4245 4246 4247 4248 4249 65531 65530 65529 65528"
}

shared_entries() {
	local root_task user_task names n out who agent lo hi i ok
	shared_dir shared-entries
	shared_task sroot 0-7
	root_task=$PID
	shared_task suser 8-15 $(as_user 65532)
	user_task=$PID
	shared_make_entries
	names=$SHARED_NAMES
	for who in root 65532 65534; do
		local pre=()
		[ "$who" == root ] || read -ra pre <<<"$(as_user "$who")"
		OUT=$(timeout 60 "${pre[@]}" "$NVT" -l 2>&1) && RC=0 || RC=$?
		judge "$RC" "entries: -l by $who"
		[ "$RC" == 0 ] || bad lost "entries: -l by $who failed: $(tail -2 <<<"$OUT")"
		listed "$OUT" "$root_task" 0-7 && listed "$OUT" "$user_task" 8-15 ||
			bad lost "entries: -l by $who lost a task: $OUT"
		for n in $names; do
			[ "$who" == root ] && [ "$n" -ge 65528 ] && [ "$n" -le 65530 ] && continue
			grep -q "passed over $NVTASKSET_RUNDIR/nvtaskset-$n:" <<<"$OUT" ||
				bad lost "entries: -l by $who does not name nvtaskset-$n"
		done
		OUT=$(timeout 60 "${pre[@]}" "$NVT" -l --json 2>&1) && RC=0 || RC=$?
		judge "$RC" "entries: -l --json by $who"
		claim_apart "entries: a claim by $who" "$who" 8 0-15
	done
	OUT=$(timeout 60 "$NVT" -a -p -c 0-3 "$root_task" 2>&1) && RC=0 || RC=$?
	judge "$RC" "entries: -a -p"
	{ [ "$RC" == 0 ] && settles "$WORK/u/sroot.state" 0-3; } || bad lost "entries: -a -p: $OUT"
	OUT=$(timeout 60 $(as_user 65532) "$NVT" -p -c 8-11 "$user_task" 2>&1) && RC=0 || RC=$?
	judge "$RC" "entries: her -p"
	{ [ "$RC" == 0 ] && settles "$WORK/u/suser.state" 8-11; } || bad lost "entries: her -p: $OUT"
	mkdir -p "$WORK/bundle.entries"
	OUT=$(timeout 60 python3 "$CDIRUN" --bundle "$WORK/bundle.entries" --spec-dir "$WORK/shared-entries.cdi" \
		--device f/tpcs=4 -- "$APP" launch 1 2>&1) && RC=0 || RC=$?
	judge "$RC" "entries: a container's tpcs=4"
	{ [ "$RC" == 0 ] && [ "$(apart "$(sed -n 's/.*tpcs=\([-0-9,]*\) hung=0.*/\1/p' <<<"$OUT")" 0-3,8-11)" == ok ]; } ||
		bad lost "entries: a container's tpcs=4: $OUT"
	# Root's agent takes on a new guarded task beside them.
	"$NVT" --agent --hold 100000 --guard 4 2>"$WORK/shared-agent.log" &
	agent=$!
	# (tags of their own: the scale part leaves its shi.stop and slo.stop)
	rm -f "$WORK/u/sehi.stop" "$WORK/u/selo.stop"
	"$NVT" --no-mps --priority high -c 16-24 "$APP" loop "$WORK/u/sehi.stop" "$WORK/u/sehi.state" \
		>/dev/null 2>&1 &
	hi=$!
	SHARED_TASKS="$SHARED_TASKS $hi"
	"$NVT" --no-mps --priority low --yield guard -c 25-65 "$APP" launch-wait 0 "$WORK/u/selo.stop" \
		>/dev/null 2>&1 &
	lo=$!
	SHARED_TASKS="$SHARED_TASKS $lo $agent"
	ok=0
	for ((i = 0; i < 60 && !ok; i++)); do
		guarded "$lo" && ok=1 || sleep 1
	done
	judge $((1 - ok)) "entries: root's agent guards a new low task"
	[ "$ok" == 1 ] || bad lost "entries: root's agent never guarded the low task: $(tail -3 "$WORK/shared-agent.log")"
	touch "$WORK/u/selo.stop"
	kill -TERM "$agent" 2>/dev/null
	shared_done
}

# ---- A full run directory ------------------------------------------------------------------

shared_full() {
	local task
	shared_dir shared-full
	shared_task ftask 0-3
	task=$PID
	$(as_user 65534) dd if=/dev/zero of="$NVTASKSET_RUNDIR/fill" bs=1M 2>/dev/null
	for args in "-l" "-p $task" "-p -c 4-5 $task" "-a -p -c 0-3 $task" \
		"--no-mps -c 6-7 $APP launch 1" "--no-mps -n 4 --exclude-running $APP launch 1"; do
		# shellcheck disable=SC2086
		OUT=$(timeout 60 "$NVT" $args 2>&1) && RC=0 || RC=$?
		judge "$RC" "full: nvtaskset $args"
		[ "$RC" == 0 ] || grep -q '^nvtaskset: ' <<<"$OUT" ||
			bad lost "full: nvtaskset $args failed ($RC) without a word: $OUT"
		[[ $args != "--no-mps -c"* ]] || grep -q "tpcs=6-7 hung=0" <<<"$OUT" ||
			bad lost "full: a start ran on: $OUT"
	done
	mkdir -p "$WORK/bundle.full"
	OUT=$(timeout 60 python3 "$CDIRUN" --bundle "$WORK/bundle.full" --spec-dir "$WORK/shared-full.cdi" \
		--device f/tpcs=4 -- "$APP" launch 1 2>&1) && RC=0 || RC=$?
	judge "$RC" "full: a container's tpcs=4"
	[ "$RC" == 0 ] || grep -q "nvtaskset: f/tpcs=4: " <<<"$OUT" ||
		bad lost "full: a container's start failed without its reason: $OUT"
	grep -q "hung=[1-9]" <<<"$OUT" && bad lost "full: a container's program hung: $OUT"
	rm -f "$NVTASKSET_RUNDIR/fill"
	claim_apart "full: a claim once there is room again" root 4 "$(cat "$WORK/u/ftask.state")"
	shared_done
}

# ---- /proc files of any length ---------------------------------------------------------------

shared_groups() {
	local n task seg list i=0
	shared_dir shared-groups
	for n in 0 100 2200 3000 10000 65536; do
		list=$((i * 8))-$((i * 8 + 7))
		i=$((i + 1))
		shared_task "g$n" "$list" unshare --pid --fork --mount-proc "$SHARED_PY" -c '
import os, sys
n = int(sys.argv[1])
os.setgroups(list(range(1000000, 1000000 + n)))
os.execvp(sys.argv[2], sys.argv[2:])' "$n"
		[ "$PID" != 0 ] || continue
		task=$(pid_here "^$APP loop $WORK/u/g$n.stop")
		seg=$NVTASKSET_RUNDIR/nvtaskset-0/nvtaskset.$(stat -L -c %i "/proc/$task/ns/pid").1
		OUT=$(timeout 60 "$NVT" -l 2>&1) && RC=0 || RC=$?
		judge "$RC" "groups: $n: root's -l"
		listed "$OUT" "$task" "$list" || bad lost "groups: $n: root's -l lost the task: $OUT"
		[ -e "$seg" ] || bad lost "groups: $n: root's -l removed the live task's segment"
		OUT=$(timeout 60 "${IN_GROUPS[@]}" "$n" 65532 "$NVT" -l 2>&1) && RC=0 || RC=$?
		judge "$RC" "groups: $n: -l of a user in as many groups"
		listed "$OUT" "$task" "$list" || bad lost "groups: $n: her -l lost the task: $OUT"
		OUT=$(timeout 60 "${IN_GROUPS[@]}" "$n" 65532 "$NVT" --no-mps -n 4 --exclude-running /usr/bin/env 2>&1) &&
			RC=0 || RC=$?
		judge "$RC" "groups: $n: her claim"
		[ "$RC" == 0 ] && [ "$(apart "$(picked "$OUT")" "$list")" == ok ] ||
			bad lost "groups: $n: her claim got $(picked "$OUT") beside $list ($RC)"
		touch "$WORK/u/g$n.stop"
	done
	shared_done
}

# ---- Many namespaces ---------------------------------------------------------------------------

# strace_calls CMD...: sets CALLS to the system calls CMD and its children make (strace -f
# -c), OUT and RC to its output and status.
strace_calls() {
	timeout 120 strace -f -c -o "$WORK/shared.st" "$@" >"$WORK/shared.out" 2>&1 && RC=0 || RC=$?
	OUT=$(cat "$WORK/shared.out")
	CALLS=$(awk '$NF == "total" {print $4}' "$WORK/shared.st")
}

shared_namespaces() {
	local i tasks="" l0 c0 l1 c1 pid out files=${SHARED_FILES:-2000}
	local roots=${SHARED_ROOT_NS:-40} all=$((${SHARED_ROOT_NS:-40} + ${SHARED_USER_NS:-20}))
	command -v strace >/dev/null || { echo "  skipped: namespaces: needs strace"; return; }
	shared_dir shared-ns
	rm -f "$WORK/u/ns.stop"
	# Root's at once (many in one clock tick), then uid 65533's.
	for ((i = 0; i < all; i++)); do
		rm -f "$WORK/u/ns$i.state"
		if ((i < roots)); then
			unshare --pid --fork --mount-proc "$NVT" --no-mps -c 0-3 "$APP" loop "$WORK/u/ns.stop" \
				"$WORK/u/ns$i.state" >/dev/null 2>&1 &
		else
			unshare --pid --fork --mount-proc $(as_user 65533) "$NVT" --no-mps -c 4-5 "$APP" loop \
				"$WORK/u/ns.stop" "$WORK/u/ns$i.state" >/dev/null 2>&1 &
		fi
		SHARED_TASKS="${SHARED_TASKS:-} $!"
	done
	for ((i = 0; i < all; i++)); do
		settles "$WORK/u/ns$i.state" "$( ((i < roots)) && echo 0-3 || echo 4-5)" ||
			bad hang "namespaces: task $i did not start"
	done
	tasks=$(pgrep -u 0 -f -- "^$APP loop $WORK/u/ns.stop")
	strace_calls $(as_user 65532) "$NVT" -l
	l0=$CALLS
	strace_calls $(as_user 65532) "$NVT" --no-mps -n 4 --exclude-running /usr/bin/env
	c0=$CALLS
	$(as_user 65533) bash -c 'mkdir -p -m 755 "$1" && cd "$1" && for ((i = 1; i <= $2; i++)); do : >"nvtaskset.$((4026540000 + i)).$((i % 2 + 1))"; done' \
		_ "$NVTASKSET_RUNDIR/nvtaskset-65533" "$files"
	strace_calls $(as_user 65532) "$NVT" -l
	l1=$CALLS
	judge "$RC" "namespaces: -l beside $files files"
	out=$OUT
	# Root's tasks, every one; hers may be hidden by her own files (a run directory holds its
	# user's segments only: she can hide no one else's).
	for pid in $tasks; do
		grep -Eq "^ *$pid " <<<"$out" || bad lost "namespaces: -l lost root's task $pid"
	done
	strace_calls $(as_user 65532) "$NVT" --no-mps -n 4 --exclude-running /usr/bin/env
	c1=$CALLS
	judge "$RC" "namespaces: a claim beside $files files"
	[ "$RC" == 0 ] && [ "$(apart "$(picked "$OUT")" 0-3)" == ok ] ||
		bad lost "namespaces: the claim got $(picked "$OUT") beside root's tasks on 0-3 ($RC)"
	echo "  namespaces: system calls of uid 65532 beside $roots tasks of root's and $((all - roots))" \
		"of uid 65533's in namespaces: -l $l0, a claim $c0; with $files files of uid 65533's named" \
		"for their PIDs: -l $l1, a claim $c1 ($(grep -c " 65533 " <<<"$out") of her tasks listed)"
	((l1 - l0 < files && c1 - c0 < files)) || SLOW="$SLOW namespaces(-l $l0->$l1, claim $c0->$c1)"
	touch "$WORK/u/ns.stop"
	shared_done
}

# SHARED_PARTS: which of them (default: all); SHARED_FILES (2000), SHARED_ROOT_NS (40) and
# SHARED_USER_NS (20): the namespaces part's files and tasks.
part_shared() {
	local p
	part_begin "shared: entries, full, /proc lengths, namespaces"
	for p in ${SHARED_PARTS:-entries full groups namespaces}; do
		"shared_$p"
	done
	part_end
}
