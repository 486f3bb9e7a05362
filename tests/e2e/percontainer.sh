# Containers' run directories (src/seg/segcontainer.c, docs/security.md "The run directory"): a
# container's tasks keep their segments in $NVTASKSET_RUNDIR/containers/ID/run, whose pidns
# file (root's, out of the container's reach) records the container's PID namespace. Host
# readers list and change the container's tasks there, and trust nothing there that names a
# process outside that namespace. Sourced by tests/run-tests.sh (need_pidns: security.sh).
# shellcheck shell=bash

# make_container ID PIDNS [INIT]: the directory a device's hook makes for container ID (root's),
# its PID namespace PIDNS, its first process INIT (its PID and start time); CTR_RUN is its run
# directory.
make_container() {
	CTR_RUN=$NVTASKSET_RUNDIR/containers/$1/run
	# shellcheck disable=SC2174 # the mode is the last directory's (its parents are there, or the umask's)
	mkdir -p -m 755 "$NVTASKSET_RUNDIR/containers/$1"
	chmod 755 "$NVTASKSET_RUNDIR/containers"
	echo "$2" >"$NVTASKSET_RUNDIR/containers/$1/pidns"
	[ -z "${3:-}" ] || echo "$3 $(sed 's/.*) //' "/proc/$3/stat" | cut -d' ' -f20)" \
		>>"$NVTASKSET_RUNDIR/containers/$1/pidns"
	mkdir -p "$CTR_RUN"
	chmod 1777 "$CTR_RUN"
}

# A task in a PID namespace of its own whose segment lies in its container's run directory is
# listed by the host with its partition, counted by claims, and moved live by -p; a task of the
# host's PID namespace whose segment a container wrote in its own run directory is none of the
# host's: not listed, not counted, not moved, and -l names the file as foreign.
t_container_rundir_read_by_host() {
	local out rc cpid hpid ns row list
	need_pidns
	make_container c1 0
	# The container's task: PID 1 of a namespace of its own, its shim told the container's
	# run directory (as the hook's bind gives it /run/nvtaskset).
	rm -f "$WORK/c.stop" "$WORK/c.state"
	unshare --pid --fork --mount-proc env NVTASKSET_RUNDIR="$CTR_RUN" "$NVT" --no-mps -c 0-3 \
		"$APP" loop "$WORK/c.stop" "$WORK/c.state" >"$WORK/c.out" 2>&1 &
	local c=$!
	wait_file "$WORK/c.state" "0-3"
	cpid=$(pgrep -f "^$APP loop $WORK/c.stop")
	[ -n "$cpid" ] || die "no container task"
	ns=$(stat -L -c %i "/proc/$cpid/ns/pid")
	echo "$ns" >"$NVTASKSET_RUNDIR/containers/c1/pidns"
	# A host task whose segment the container wrote in its own run directory.
	start_loop h env NVTASKSET_RUNDIR="$CTR_RUN" "$NVT" --no-mps -c 4-7 "$APP"
	hpid=$PID
	wait_file "$WORK/h.state" "4-7"
	compgen -G "$CTR_RUN/nvtaskset-0/nvtaskset.*.$hpid" >/dev/null ||
		die "no segment of the host task in the container's run directory: $(ls "$CTR_RUN/nvtaskset-0")"
	run_rc out rc "$NVT" -l
	eq "$rc" 0 "-l ($out)"
	row=$(grep -E "^ *$cpid " <<<"$out") || die "-l does not list the container's task: $out"
	has "$row" " 0-3 "
	grep -Eq "^ *$hpid " <<<"$out" && die "-l lists a host task by a segment its container wrote: $out"
	has "$out" "passed over 1 files of $CTR_RUN/nvtaskset-0 named for processes outside its container"
	# Claims count the container's TPCs, not the host task's forged ones.
	list=$(dry_tpcs -n 62 --exclude-running)
	disjoint_lists "$list" "0-3"
	eq "$(tpc_count "$list")" 62 "TPCs free beside the container's 4"
	# -p: moves the container's task live; the host task has no segment of its own.
	"$NVT" -p -g 1 "$cpid" >/dev/null
	wait_file "$WORK/c.state" "$(dry_tpcs -g 1)"
	run_rc out rc "$NVT" -p -g 0 "$hpid"
	[ "$rc" != 0 ] || die "-p changed a host task through its container's file: $out"
	eq "$(cat "$WORK/h.state")" "4-7" "the host task's partition"
	touch "$WORK/c.stop"
	wait "$c" || die "the container's task failed: $(cat "$WORK/c.out")"
	stop_loop h "$hpid"
}

# Anything but root's directories in containers (a user's, made first in the shared directory;
# a container directory writable by others) is passed over and named; -l still lists the rest.
t_container_rundir_squatted() {
	local out rc
	need_users
	start_loop host "$NVT" --no-mps -c 0-3 "$APP"
	wait_file "$WORK/host.state" "0-3"
	$(as_user 65534) mkdir -m 777 "$NVTASKSET_RUNDIR/containers"
	run_rc out rc "$NVT" -l
	eq "$rc" 0 "-l beside a squatted containers directory ($out)"
	grep -Eq "^ *$PID " <<<"$out" || die "-l lost the host task: $out"
	has "$out" "passed over $NVTASKSET_RUNDIR/containers: not a directory of root's"
	rm -rf "$NVTASKSET_RUNDIR/containers"
	make_container c2 12345
	chmod 777 "$NVTASKSET_RUNDIR/containers/c2"
	run_rc out rc "$NVT" -l
	eq "$rc" 0 "-l beside a container directory others may write in ($out)"
	has "$out" "passed over $NVTASKSET_RUNDIR/containers/c2: not a directory of root's"
	stop_loop host "$PID"
}

# A rootful container's root may chmod the run directory it is given (its /run/nvtaskset): one
# that others may read but not search (mode 1774) is passed over and named, and another
# user's -l and claims still answer, with the host's tasks (they failed: the user directory
# in it could not be looked at, which ended the whole listing).
t_container_rundir_unsearchable() {
	local out rc
	need_users
	start_loop host "$NVT" --no-mps -c 0-3 "$APP"
	wait_file "$WORK/host.state" "0-3"
	make_container c4 12345
	mkdir -m 755 "$CTR_RUN/nvtaskset-0"
	chmod 1774 "$CTR_RUN"
	run_rc out rc $(as_user 65534) "$NVT" -l
	eq "$rc" 0 "another user's -l beside a container's unsearchable run directory ($out)"
	grep -Eq "^ *$PID " <<<"$out" || die "-l lost the host task: $out"
	has "$out" "passed over $NVTASKSET_RUNDIR/containers/c4/run"
	run_rc out rc $(as_user 65534) "$NVT" --no-mps --dry-run -n 62 --exclude-running true
	eq "$rc" 0 "another user's claim beside it ($out)"
	stop_loop host "$PID"
}

# poststop removes the container's directory and nothing outside it: a mount point in it (one
# that propagated from the container's mount namespace, or a host's) is left with what it
# holds (it emptied the mounted directory before: its file was gone). The mount lives in a
# mount namespace of the test's own, gone when it ends.
t_container_poststop_stays_inside() {
	local out rc
	need_pidns
	unshare --mount --propagation private true 2>/dev/null || skip "cannot unshare a mount namespace"
	make_container c5 12345
	mkdir "$CTR_RUN/x" "$WORK/outside"
	echo keep >"$WORK/outside/keep"
	: >"$CTR_RUN/mine"
	run_rc out rc unshare --mount --propagation private sh -c \
		'mount --bind "$1" "$2" && printf %s "$3" | "$4" --cdi-hook poststop' - "$WORK/outside" \
		"$CTR_RUN/x" '{"ociVersion":"1.0.2","id":"c5","status":"stopped","bundle":"/"}' "$NVT"
	eq "$rc" 0 "poststop ($out)"
	[ -e "$WORK/outside/keep" ] || die "poststop removed a file of a directory mounted in the container's"
	[ ! -e "$CTR_RUN/mine" ] || die "poststop left the container's own file"
	has "$out" "cannot remove all of $NVTASKSET_RUNDIR/containers/c5"
}

# poststop removes a container's tree whatever its depth (12 levels with a file filling the
# bottom, 300 levels), never through a link (one to a directory outside, 10 levels down): the
# container's directory is gone, what the link named stays.
t_container_poststop_any_depth() {
	local out rc deep
	need_pidns
	make_container c6 12345
	mkdir -p "$CTR_RUN/$(printf 'd/%.0s' {1..12})" "$WORK/outside"
	head -c 1048576 /dev/zero >"$CTR_RUN/$(printf 'd/%.0s' {1..12})fill"
	deep=$(printf 'e/%.0s' {1..300})
	(cd "$CTR_RUN" && mkdir -p "$deep" && : >"$deep/bottom")
	echo keep >"$WORK/outside/keep"
	ln -s "$WORK/outside" "$CTR_RUN/$(printf 'd/%.0s' {1..10})out"
	run_rc out rc sh -c 'printf %s "$1" | "$2" --cdi-hook poststop' - \
		'{"ociVersion":"1.0.2","id":"c6","status":"stopped","bundle":"/"}' "$NVT"
	eq "$rc" 0 "poststop ($out)"
	eq "$out" "" "poststop's words"
	[ ! -e "$NVTASKSET_RUNDIR/containers/c6" ] ||
		die "poststop left the container's directory: $(find "$NVTASKSET_RUNDIR/containers/c6" | head -3)"
	eq "$(cat "$WORK/outside/keep")" keep "the file the link named"
}

# A poststop hook removes its container's directory only once the first process recorded there
# ended: a directory of the same id whose first process runs (another container of that id: a
# runtime of another state directory, or containerd's other namespace) stays, with its files,
# and the hook says so; once that process ended, the next poststop of that id removes it.
t_container_poststop_leaves_live_one() {
	local out rc state='{"ociVersion":"1.0.2","id":"c11","status":"stopped","bundle":"/"}'
	need_pidns
	ns_init c11
	local c11=$UNSHARE
	make_container c11 "$INIT_NS" "$INIT"
	: >"$CTR_RUN/mine"
	run_rc out rc sh -c 'printf %s "$1" | "$2" --cdi-hook poststop' - "$state" "$NVT"
	eq "$rc" 0 "poststop ($out)"
	[ -e "$CTR_RUN/mine" ] || die "a poststop removed the directory of a live container of its id"
	has "$out" "warning: left $NVTASKSET_RUNDIR/containers/c11: its first process, pid $INIT, runs (another container of that id)"
	touch "$WORK/c11.stop"
	wait "$c11"
	run_rc out rc sh -c 'printf %s "$1" | "$2" --cdi-hook poststop' - "$state" "$NVT"
	eq "$rc" 0 "poststop ($out)"
	eq "$out" "" "poststop's words"
	[ ! -e "$NVTASKSET_RUNDIR/containers/c11" ] || die "poststop left its container's directory"
}

# ns_init TAG: starts a process that is PID 1 of a PID namespace of its own, as a container's
# init (ended by its stop file); sets INIT (its host PID), INIT_NS (its namespace) and UNSHARE.
ns_init() {
	rm -f "$WORK/$1.stop"
	unshare --pid --fork sh -c 'while [ ! -e "$1" ]; do sleep 0.05; done' - "$WORK/$1.stop" &
	UNSHARE=$!
	wait_for 10 eval 'INIT=$(pgrep -P "$UNSHARE")'
	INIT_NS=$(stat -L -c %i "/proc/$INIT/ns/pid")
}
# outlived OUT ID: the size -l gave for container ID's directory ("2.0 MiB in 320 entries").
outlived() {
	sed -n "s|.*warning: $NVTASKSET_RUNDIR/containers/$2 outlived its container (its first process, pid [0-9]*, ended): \(.*\)\. Its poststop hook did not run.*|\1|p" <<<"$1"
}

# A container's directory whose container is gone (its first process, its namespace's init,
# ended; its poststop hook never ran) is named by root's -l with what it holds: a 2 MiB file 12 levels down and a 300-level
# tree are counted whole, nothing a link names nor a mount point holds (a 4 MiB file outside).
# While the container lives, and for a user, -l names nothing; nor a namespace made since.
# The next container's poststop hook removes it, and leaves a live container's directory.
t_container_leftover_named() {
	local out rc size deep dir
	need_pidns
	unshare --mount --propagation private true 2>/dev/null || skip "cannot unshare a mount namespace"
	ns_init c7
	local c7=$UNSHARE
	make_container c7 "$INIT_NS" "$INIT"
	mkdir -p "$CTR_RUN/$(printf 'd/%.0s' {1..12})" "$CTR_RUN/m" "$WORK/outside"
	head -c 2097152 /dev/zero >"$CTR_RUN/$(printf 'd/%.0s' {1..12})fill"
	deep=$(printf 'e/%.0s' {1..300})
	(cd "$CTR_RUN" && mkdir -p "$deep" && : >"$deep/bottom")
	head -c 4194304 /dev/zero >"$WORK/outside/big"
	ln -s "$WORK/outside" "$CTR_RUN/$(printf 'd/%.0s' {1..10})out"
	# Another container, alive throughout.
	ns_init c9
	local c9=$UNSHARE
	make_container c9 "$INIT_NS" "$INIT"
	: >"$CTR_RUN/mine"
	run_rc out rc "$NVT" -l
	eq "$rc" 0 "-l ($out)"
	hasnt "$out" "outlived"
	touch "$WORK/c7.stop"
	wait "$c7"
	# A namespace made now (the kernel gives it the inode of c7's, which ended) is no sign of c7.
	ns_init c10
	local c10=$UNSHARE
	# -l in a mount namespace where a directory of the container's holds a mount (of the
	# directory outside).
	run_rc out rc unshare --mount --propagation private sh -c 'mount --bind "$1" "$2" && "$3" -l' - \
		"$WORK/outside" "$NVTASKSET_RUNDIR/containers/c7/run/m" "$NVT"
	eq "$rc" 0 "-l ($out)"
	# What du and find count there, with no mount: the blocks of each entry below the top
	# (the directories' own too, on the test's file system), never what the link names.
	dir=$NVTASKSET_RUNDIR/containers/c7
	size=$(($(du -sx -B1 "$dir" | cut -f1) - $(stat -c '%b * %B' "$dir")))
	eq "$(outlived "$out" c7)" "$(awk -v b="$size" 'BEGIN { printf "%.1f MiB", b / 1048576 }') in \
$(find "$dir" -mindepth 1 | wc -l) entries" "the leftover's size"
	eq "$(outlived "$out" c9)" "" "a live container's directory"
	run_rc out rc $(as_user 65534) "$NVT" -l
	eq "$rc" 0 "another user's -l ($out)"
	hasnt "$out" "outlived"
	run_rc out rc sh -c 'printf %s "$1" | "$2" --cdi-hook poststop' - \
		'{"ociVersion":"1.0.2","id":"c8","status":"stopped","bundle":"/"}' "$NVT"
	eq "$rc" 0 "another container's poststop ($out)"
	[ ! -e "$NVTASKSET_RUNDIR/containers/c7" ] || die "the leftover stayed: $(ls "$NVTASKSET_RUNDIR/containers/c7")"
	[ -e "$NVTASKSET_RUNDIR/containers/c9/run/mine" ] || die "a poststop removed a live container's directory"
	eq "$(cat "$WORK/outside/big" | wc -c)" 4194304 "the file outside"
	run_rc out rc "$NVT" -l
	hasnt "$out" "outlived"
	touch "$WORK/c9.stop" "$WORK/c10.stop"
	wait "$c9" "$c10"
}

# A container's root writes into the run directory it is given: it sees its own run directory
# alone, so the host's tasks' segments and another container's are out of its reach (on the
# host's, a truncation would leave them unreadable: neither listed nor movable). What it writes
# there goes with it (its directory is removed when it stops).
t_container_root_cannot_touch_others() {
	local out rc host_seg a_seg a_pid
	need_pidns
	cdi_spec
	start_loop host "$NVT" --no-mps -c 0-3 "$APP"
	local host=$PID
	wait_file "$WORK/host.state" "0-3"
	container --pid-file "$WORK/a.pid" tpcs=4
	start_loop a "${CONTAINER[@]}" -- "$APP"
	local a=$PID
	wait_for 20 all_nonempty "$WORK/a.state" "$WORK/a.pid"
	a_pid=$(cat "$WORK/a.pid")
	host_seg=$(seg_file "$host") a_seg=$(seg_file "$a_pid")
	[ -s "$host_seg" ] && [ -s "$a_seg" ] || die "no segments: $host_seg $a_seg"
	# Container b's root truncates every segment it can reach by the names the others have, in
	# the run directory it is given (its /run/nvtaskset: cdirun.py's $CONTAINER_RUNDIR), as the
	# host's layout names them.
	container tpcs=4
	run_rc out rc "${CONTAINER[@]}" -- sh -c 'for f in "$@"; do mkdir -p "$(dirname "$f")"; : >"$f"; done' - \
		"$CONTAINER_RUNDIR/${host_seg#"$NVTASKSET_RUNDIR"/}" "$CONTAINER_RUNDIR/${a_seg#"$NVTASKSET_RUNDIR"/}"
	eq "$rc" 0 "container b ($out)"
	[ -s "$host_seg" ] || die "a container emptied the host task's segment"
	[ -s "$a_seg" ] || die "a container emptied another container's segment"
	out=$("$NVT" -l)
	grep -Eq "$(row_re "$host" root)0-3 " <<<"$out" || die "-l lost the host task: $out"
	grep -Eq "$(row_re "$a_pid" root)$(cat "$WORK/a.state") " <<<"$out" || die "-l lost container a's task: $out"
	"$NVT" -p -g 1 "$host" >/dev/null
	wait_file "$WORK/host.state" "$(dry_tpcs -g 1)"
	stop_loop host "$host"
	stop_loop a "$a"
	[ -z "$(ls -A "$NVTASKSET_RUNDIR/containers")" ] || die "left: $(ls -AR "$NVTASKSET_RUNDIR/containers")"
}

# A container in the host's PID namespace (podman --pid=host) is refused by root's hook: a
# segment in its run directory would name host processes. Nothing runs, nothing is left.
t_container_host_pidns_refused() {
	local out rc
	[ "$(id -u)" == 0 ] || skip "needs root (an ordinary user's hook keeps her own run directory)"
	cdi_spec
	container --host-pidns tpcs=4
	run_rc out rc "${CONTAINER[@]}" -- "$APP" launch 1
	eq "$rc" 126 "status ($out)"
	has "$out" "the container shares the host's PID namespace (--pid=host)"
	hasnt "$out" "hung="
	[ -z "$(ls -A "$NVTASKSET_RUNDIR/containers" 2>/dev/null)" ] || die "left: $(ls -AR "$NVTASKSET_RUNDIR/containers")"
}

# A root container's task with --priority high is root's inside its container only: root's
# agent does not make another user's --yield guard task on the host give way to it (it would
# for host root's high task, which the end checks).
t_container_root_priority_not_roots() {
	local lo c cpid ns mark out rc
	need_users
	need_pidns
	start_agent su -- --hold 100 --guard 4
	FAKEAPP_STAMP=$WORK/u/slo.stamps FAKEAPP_STAMP_LAUNCHES=1 \
		start_loop u/slo $(as_user 65524) "$NVT" --no-mps --priority low --yield guard -c 9-65 "$APP"
	lo=$PID
	wait_file "$WORK/u/slo.state" "9-65"
	make_container c1 0
	rm -f "$WORK/c.stop" "$WORK/c.state"
	unshare --pid --fork --mount-proc env NVTASKSET_RUNDIR="$CTR_RUN" "$NVT" --no-mps --priority high -c 0-8 \
		"$APP" loop "$WORK/c.stop" "$WORK/c.state" >"$WORK/c.out" 2>&1 &
	c=$!
	wait_file "$WORK/c.state" "0-8"
	cpid=$(pgrep -f "^$APP loop $WORK/c.stop")
	[ -n "$cpid" ] || die "no container task"
	ns=$(stat -L -c %i "/proc/$cpid/ns/pid")
	echo "$ns" >"$NVTASKSET_RUNDIR/containers/c1/pidns"
	run_rc out rc "$NVT" -l
	grep -Eq "^ *$cpid .* high " <<<"$out" || die "-l does not show the container's high task: $out"
	mark=$(stamp_mark "$WORK/u/slo.stamps")
	agent_left_alone "$WORK/u/slo.stamps" "$mark"
	eq "$(cat "$WORK/u/slo.state")" "9-65" "another user's low task beside a container's high one"
	start_loop rhi "$NVT" --no-mps --priority high -c 0-8 "$APP"
	wait_for 5 guarded_to "$WORK/u/slo.state" 4 0-8
	stop_loop rhi "$PID"
	stop_agent "$AGENT"
	touch "$WORK/c.stop"
	wait "$c" || die "the container's task failed: $(cat "$WORK/c.out")"
	stop_loop u/slo "$lo"
}
