# Containers through CDI devices (docs/containers.md): nvtaskset --cdi's spec, and its hooks run
# as podman and runc run them, by a stand-in runtime (tests/e2e/helpers/cdirun.py: it applies the
# spec's variables and hooks, and holds the container's first process before its exec, in a PID
# namespace of its own with --pidns). The same with real podman: tests/podman/ (make
# check-podman). Sourced by tests/run-tests.sh: each t_NAME function is one test, run in a
# subshell under set -e with the helpers defined there (need_users, as_user: security.sh).
# Over 500 lines on purpose: one subject, the spec and the hooks it names, whose tests share
# the stand-in runtime and the helpers that write and apply the spec.
# shellcheck shell=bash

CDIRUN=$ROOT/tests/e2e/helpers/cdirun.py

# cdi_spec: nvtaskset --cdi writes the spec of vendor t into $WORK/cdi.
cdi_spec() {
	"$NVT" --cdi --cdi-dir "$WORK/cdi" --vendor t >"$WORK/cdi.out" 2>&1 ||
		die "--cdi failed: $(cat "$WORK/cdi.out")"
}
# container [--pidns | --host-pidns] [--uid U] [--userns OUTSIDE] [--pid-file F] DEVICE...: sets CONTAINER to
# the command line of a stand-in container given devices t/DEVICE, to be followed by "--
# COMMAND..." (its status: COMMAND's, 126 when a hook refused; cdirun.py's own failures 2, and 77
# where this machine cannot make the namespaces asked).
container() {
	local bundle
	bundle=$(mktemp -d "$WORK/bundle.XXXXXX")
	# (as root, cdirun.py binds the run directory at $bundle/rootfs/run/nvtaskset)
	CONTAINER_RUNDIR=$bundle/rootfs/run/nvtaskset
	CONTAINER=(python3 "$CDIRUN" --bundle "$bundle" --spec-dir "$WORK/cdi")
	while [ $# -gt 0 ]; do
		case $1 in
		--pidns | --host-pidns) CONTAINER+=("$1") && shift ;;
		--*) CONTAINER+=("$1" "$2") && shift 2 ;;
		*) CONTAINER+=(--device "t/$1") && shift ;;
		esac
	done
}
# dry_tpcs ARGS...: the TPCs nvtaskset --dry-run ARGS gives on the fake GPU.
dry_tpcs() { "$NVT" --no-mps --dry-run "$@" | sed -n 's/.*: TPCs //p'; }

# The spec: a device for each range of GPCs, each count of TPCs and each priority, of every
# GPU and of each; the shim and the run directory mounted; every device's hook is this command.
t_cdi_spec() {
	local out rc
	cdi_spec
	has "$(cat "$WORK/cdi.out")" "t-tpcs.json: 132 devices"
	has "$(cat "$WORK/cdi.out")" "t-priority.json: 6 devices"
	python3 - "$WORK/cdi" "$(readlink -f "$NVT")" "$(readlink -f "$NVTASKSET_RUNDIR")" <<'PY' ||
import json, os, sys
d, nvt, run = sys.argv[1:]
want = {"gpc": ["0", "0-3", "11", "0-11", "0:0-3", "0:11"],
        "tpcs": ["1", "16", "66", "0:16", "0:66"],
        "priority": ["high", "normal", "low", "high-slice", "normal-slice", "low-slice"]}
for cls, names in want.items():
    spec = json.load(open(os.path.join(d, "t-%s.json" % cls)))
    assert spec["cdiVersion"] == "0.5.0" and spec["kind"] == "t/" + cls, spec["kind"]
    have = {x["name"]: x for x in spec["devices"]}
    assert all(n in have for n in names), (cls, sorted(have))
    assert "67" not in have and "0-12" not in have and "1:0" not in have
    common = spec["containerEdits"]
    mounts = {m["containerPath"]: m["hostPath"] for m in common["mounts"]}
    assert mounts["/run/nvtaskset"] == run, mounts
    assert "NVTASKSET_RUNDIR=/run/nvtaskset" in common["env"], common["env"]
    preload = open(mounts["/etc/ld.so.preload"]).read()
    assert preload.startswith("/") and preload.endswith("/libnvtaskset.so\n"), preload
    assert not [e for e in common["env"] if e.startswith("LD_PRELOAD=")], common["env"]
    [post] = common["hooks"]
    assert post["hookName"] == "poststop" and post["path"] == nvt, post
    for n, dev in have.items():
        [hook] = dev["containerEdits"]["hooks"]
        assert hook["hookName"] == "createRuntime" and hook["path"] == nvt, hook
        assert hook["args"] == ["nvtaskset", "--cdi-hook", "t/%s=%s" % (cls, n)], hook["args"]
        env = dict(v.split("=", 1) for v in dev["containerEdits"]["env"])
        if cls == "priority":
            level, _, slice = n.partition("-")
            # (LEVEL: the default by partition, which the hook and the shims resolve)
            assert env["NVTASKSET_PRIORITY"] == level + (",yield=slice" if slice else ",yield=auto"), env
            # (a time-sliced task runs in its level's context: no MPS client priority; a
            # partitioned one's shim sets it, as the high time-sliced one's bridge's connections)
            assert "CUDA_MPS_CLIENT_PRIORITY" not in env, env
            assert ("CUDA_DEVICE_MAX_CONNECTIONS" in env) == (n == "high-slice"), env
            # (without MPS, a time-sliced device's hook is told no level daemon)
            assert not [v for v in hook["env"] if v.startswith("CUDA_MPS_PIPE_DIRECTORY=")], hook
        else:
            assert env["NVTASKSET_CDI"] == "%s=%s" % (cls, n), env
        assert ("NVTASKSET_PARTITION" in env) == (cls == "gpc"), env
PY
		die "the spec is not as expected"
	run_rc out rc "$NVT" --cdi --cdi-dir "$WORK/cdi" --vendor 'a/b'
	eq "$rc" 1 "--vendor a/b"
	has "$out" "--vendor takes a CDI vendor name"
	[ "$(id -u)" != 0 ] || hasnt "$(cat "$WORK/cdi.out")" "warning"
	# A run directory that processes podman exec starts would not take (not root's mode 1777):
	# root's --cdi mounts its tmpfs there (mode 1777); another user's warns.
	mkdir -m 755 "$WORK/run755"
	run_rc out rc env NVTASKSET_RUNDIR="$WORK/run755" "$NVT" --cdi --cdi-dir "$WORK/cdi3"
	eq "$rc" 0 "--cdi with a run directory of mode 755 ($out)"
	if [ "$(id -u)" == 0 ]; then
		eq "$(stat -c %a "$WORK/run755")" 1777 "the mode of the tmpfs --cdi mounted"
		hasnt "$out" "warning"
	else
		has "$out" "is not root's with mode 1777: processes that podman exec starts"
		has "$out" "only root can mount one there"
	fi
	run_rc out rc env NVTASKSET_RUNDIR=/dev/shm "$NVT" --cdi --cdi-dir "$WORK/cdi2"
	eq "$rc" 1 "--cdi with /dev/shm"
	has "$out" "would give containers all of /dev/shm"
	[ ! -e "$WORK/cdi2" ] || die "--cdi wrote a spec it refused"
}

# gpc=0-1: the container's program runs on GPCs 0 and 1, as -g 0-1 gives them, and a second
# program started in it (as podman exec does, not below its first process) too.
t_cdi_gpc_partition() {
	local out rc want
	need_pidns
	cdi_spec
	want=$(dry_tpcs -g 0-1)
	container --pidns gpc=0-1
	run_rc out rc "${CONTAINER[@]}" -- "$APP" launch 1
	eq "$rc" 0 "status ($out)"
	has "$out" "tpcs=$want "
	container gpc=0:2
	run_rc out rc "${CONTAINER[@]}" -- "$APP" launch 1
	has "$out" "tpcs=$(dry_tpcs -g 2) "
}

# A container does not choose its partition: a variable of its own (podman run -e, a pod's
# env) that names every TPC, beside a gpc device or a tpcs one, is refused with the reason,
# and the program never runs.
t_cdi_container_env_refused() {
	local out rc all dev
	cdi_spec
	all=$("$NVT" --no-mps -c all /usr/bin/env | sed -n 's/^NVTASKSET_PARTITION=//p')
	for dev in gpc=0-1 tpcs=4; do
		container --env "NVTASKSET_PARTITION=$all" "$dev"
		run_rc out rc "${CONTAINER[@]}" -- "$APP" launch 1
		eq "$rc" 126 "$dev: status ($out)"
		has "$out" "a container does not choose its partition"
		hasnt "$out" "hung="
	done
	# Nor its priority: NVTASKSET_PRIORITY of its own beside a partition device is refused,
	# and runs nothing; given by a priority device, it is the container's.
	container --env NVTASKSET_PRIORITY=high tpcs=4
	run_rc out rc "${CONTAINER[@]}" -- "$APP" launch 1
	eq "$rc" 126 "-e NVTASKSET_PRIORITY: status ($out)"
	has "$out" "a container does not choose its priority"
	hasnt "$out" "hung="
	container tpcs=4 priority=high
	run_rc out rc "${CONTAINER[@]}" -- "$APP" launch 1
	eq "$rc" 0 "priority=high's device: $out"
	# The device's level with ways of yielding of its own (borrowing), beside a partition
	# device or alone: refused too.
	for dev in "tpcs=4 priority=low" priority=low; do
		# shellcheck disable=SC2086 # the devices, one word each
		container --env NVTASKSET_PRIORITY=low,yield=borrow $dev
		run_rc out rc "${CONTAINER[@]}" -- "$APP" launch 1
		eq "$rc" 126 "$dev, low with borrowing: status ($out)"
		has "$out" "is low,yield=borrow, not the device"
		hasnt "$out" "hung="
	done
	# A spec whose gpc hooks carry no partition of their own (written before they did) is
	# refused at the start, saying to write it again.
	python3 - "$WORK/cdi/t-gpc.json" <<'PY' || die "cannot edit the spec"
import json, sys
spec = json.load(open(sys.argv[1]))
for d in spec["devices"]:
    for h in d["containerEdits"].get("hooks", []):
        h["env"] = [v for v in h.get("env", []) if not v.startswith("NVTASKSET_PARTITION=")]
json.dump(spec, open(sys.argv[1], "w"))
PY
	container gpc=0-1
	run_rc out rc "${CONTAINER[@]}" -- "$APP" launch 1
	eq "$rc" 126 "a spec without the hook's partition: status ($out)"
	has "$out" "write the spec again (nvtaskset --cdi)"
	hasnt "$out" "hung="
	cdi_spec
	# The device's own value, given again, is the device's: it runs on the device's GPCs.
	container --env "NVTASKSET_PARTITION=$("$NVT" --no-mps -g 0-1 /usr/bin/env | sed -n 's/^NVTASKSET_PARTITION=//p')" gpc=0-1
	run_rc out rc "${CONTAINER[@]}" -- "$APP" launch 1
	eq "$rc" 0 "the device's own value: $out"
	has "$out" "tpcs=$(dry_tpcs -g 0-1) "
}

# A --cdi that fails after it mounted the run directory's tmpfs (its spec directory cannot be
# made) unmounts it again, saying so: a refused command leaves no mount (it left one); one
# refused for its arguments mounts none.
t_cdi_refused_leaves_no_mount() {
	local out rc
	[ "$(id -u)" == 0 ] || skip "needs root (only root's --cdi mounts a tmpfs)"
	: >"$WORK/file"
	run_rc out rc "$NVT" --cdi --cdi-dir "$WORK/file/cdi" --vendor t
	eq "$rc" 1 "--cdi with a spec directory under a file ($out)"
	has "$out" "--cdi: cannot make $WORK/file/cdi"
	has "$out" "unmounted the tmpfs it mounted on $NVTASKSET_RUNDIR"
	findmnt -n -M "$NVTASKSET_RUNDIR" && die "a refused --cdi left a mount on the run directory"
	run_rc out rc "$NVT" --cdi --cdi-dir relative
	eq "$rc" 1 "--cdi with a relative spec directory ($out)"
	findmnt -n -M "$NVTASKSET_RUNDIR" && die "--cdi refused for its arguments mounted the run directory"
	cdi_spec
	findmnt -n -M "$NVTASKSET_RUNDIR" >/dev/null || die "--cdi mounted nothing on the run directory"
}

# The run directory containers mount is a file system of its own (root's --cdi mounts a tmpfs
# there: nosuid, nodev, noexec, 128 MiB): a setuid-root program that a container's root leaves
# there does not run as root on the host, and a container that writes there fills that tmpfs,
# not the file system the directory lies on (the host's /run). A container whose run directory
# is no such mount (unmounted, or made again by hand after /run was cleared at boot) is refused
# at start; --cdi mounts none over live tasks' segments, nor over a directory of other files.
t_cdi_rundir_own_file_system() {
	need_users
	local out rc used
	cdi_spec
	out=$(findmnt -n -M "$NVTASKSET_RUNDIR" -o FSTYPE,OPTIONS) || die "--cdi mounted nothing on the run directory"
	has "$out" "tmpfs"
	for opt in nosuid nodev noexec size=131072k nr_inodes=65536; do
		has "$out" "$opt"
	done
	eq "$(stat -c %a "$NVTASKSET_RUNDIR")" 1777 "the mode of the run directory's tmpfs"
	# A container whose root copies a program into its run directory, setuid root: run on the
	# host while the container runs (its directory goes with it).
	container tpcs=4
	"${CONTAINER[@]}" -- sh -c 'cp /usr/bin/id "$NVTASKSET_RUNDIR/id" && chmod 4755 "$NVTASKSET_RUNDIR/id" &&
		touch "$1/copied" && while [ ! -e "$1/ran" ]; do sleep 0.05; done' - "$WORK" >"$WORK/copy.out" 2>&1 &
	local copier=$!
	wait_for 20 test -e "$WORK/copied"
	set -- "$NVTASKSET_RUNDIR"/containers/*/run/id
	[ -e "$1" ] || die "the container's copy is not in its run directory: $(cat "$WORK/copy.out")"
	run_rc out rc $(as_user 65534) "$1" -u
	touch "$WORK/ran"
	wait "$copier" || die "the container's copy: $(cat "$WORK/copy.out")"
	[ "$out" != 0 ] || die "another user ran the container's program as root"
	eq "$rc" 126 "another user ran the container's program ($out)"
	# A container that fills it: 128 MiB at most, and none of it in the file system below.
	used=$(df -k --output=used "$WORK" | tail -1)
	container tpcs=4
	run_rc out rc "${CONTAINER[@]}" -- sh -c 'dd if=/dev/zero of="$NVTASKSET_RUNDIR/fill" bs=1M count=160;
		echo "size=$(stat -c %s "$NVTASKSET_RUNDIR/fill")"; exit 1'
	has "$out" "No space left on device"
	[ "$(sed -n 's/^size=//p' <<<"$out")" -le $((128 << 20)) ] || die "the fill is larger than 128 MiB: $out"
	[ "$(df -k --output=used "$WORK" | tail -1)" -lt $((used + (64 << 10))) ] || die "the fill went below"
	[ -z "$(ls -A "$NVTASKSET_RUNDIR/containers")" ] || die "the containers left their run directories: $(ls -A "$NVTASKSET_RUNDIR/containers")"
	# Unmounted: the hook refuses, and the program never runs.
	umount "$NVTASKSET_RUNDIR"
	container tpcs=4
	run_rc out rc "${CONTAINER[@]}" -- "$APP" launch 1
	eq "$rc" 126 "a container beside a run directory of no file system of its own ($out)"
	has "$out" "is not a file system of its own mounted nosuid, nodev and noexec"
	hasnt "$out" "hung="
	# --cdi mounts none over live tasks' segments, nor over other files.
	start_loop host "$NVT" --no-mps -c 0-3 "$APP"
	wait_file "$WORK/host.state" "0-3"
	run_rc out rc "$NVT" --cdi --cdi-dir "$WORK/cdi" --vendor t
	eq "$rc" 1 "--cdi over a task's segment ($out)"
	has "$out" "1 tasks keep their control segments in"
	findmnt -n -M "$NVTASKSET_RUNDIR" >/dev/null && die "--cdi mounted over a live task's segment"
	stop_loop host "$PID"
	run_rc out rc env NVTASKSET_RUNDIR="$WORK" "$NVT" --cdi --cdi-dir "$WORK/cdi" --vendor t
	eq "$rc" 1 "--cdi over a directory of other files ($out)"
	has "$out" "holds other files than run directories"
}

# Root's --cdi mounts its tmpfs (mode 1777) on NVTASKSET_RUNDIR, and its hooks act there as
# root: only on a path that root alone can change. Another user's link in a sticky directory
# (as /tmp is) naming an empty directory of root's ($WORK/victim, as /etc/udev/rules.d may be),
# or a directory of hers there (which she could swap for such a link before the mount), is
# refused with the reason, and nothing is mounted; a path of root's through that directory is
# taken.
t_cdi_rundir_path_of_roots() {
	local out rc
	need_users
	mkdir -m 755 "$WORK/victim"
	mkdir -m 1777 "$WORK/pub"
	$(as_user 65534) ln -s "$WORK/victim" "$WORK/pub/link"
	$(as_user 65534) mkdir -m 755 "$WORK/pub/hers"
	run_rc out rc env NVTASKSET_RUNDIR="$WORK/pub/link" "$NVT" --cdi --cdi-dir "$WORK/cdi" --vendor t
	eq "$rc" 1 "--cdi through another user's link ($out)"
	has "$out" "--cdi: the run directory $WORK/pub/link is not on a path that only root can change: $WORK/pub/link is a symbolic link of uid 65534"
	findmnt -n -M "$WORK/victim" >/dev/null && die "--cdi mounted a tmpfs where another user's link points"
	$(as_user 65534) touch "$WORK/victim/mine" 2>/dev/null && die "another user writes in root's directory"
	run_rc out rc env NVTASKSET_RUNDIR="$WORK/pub/hers" "$NVT" --cdi --cdi-dir "$WORK/cdi" --vendor t
	eq "$rc" 1 "--cdi on another user's directory ($out)"
	has "$out" "$WORK/pub/hers belongs to uid 65534"
	findmnt -n -M "$WORK/pub/hers" >/dev/null && die "--cdi mounted a tmpfs on another user's directory"
	mkdir -m 755 "$WORK/pub/roots"
	run_rc out rc env NVTASKSET_RUNDIR="$WORK/pub/roots" "$NVT" --cdi --cdi-dir "$WORK/cdi" --vendor t
	eq "$rc" 0 "--cdi on root's directory in a sticky one ($out)"
	findmnt -n -M "$WORK/pub/roots" >/dev/null || die "--cdi mounted nothing on root's directory"
}

# Nor its run directory: a variable of its own (first, as podman run -e puts it, which a runtime
# that hands the program the first of two variables would give it) beside any device is refused,
# and the program never runs (it would make its segment where no claim looks, run on every TPC,
# and leave the device's claim held in its name).
t_cdi_container_rundir_refused() {
	local out rc dev
	cdi_spec
	mkdir -m 1777 "$WORK/elsewhere"
	for dev in gpc=0-1 tpcs=4 priority=high; do
		container --env "NVTASKSET_RUNDIR=$WORK/elsewhere" "$dev"
		run_rc out rc "${CONTAINER[@]}" -- "$APP" launch 1
		eq "$rc" 126 "$dev: status ($out)"
		has "$out" "a container does not choose its run directory"
		hasnt "$out" "hung="
	done
	# The spec's own value, given again, is the spec's.
	container --env NVTASKSET_RUNDIR=/run/nvtaskset tpcs=4
	run_rc out rc "${CONTAINER[@]}" -- "$APP" launch 1
	eq "$rc" 0 "the spec's own run directory: $out"
	[ -z "$(ls -A "$WORK/elsewhere")" ] || die "a container wrote in its own run directory: $(ls -A "$WORK/elsewhere")"
}

# Nor whether its programs are a priority level's MPS server: the shim of a program given
# NVTASKSET_MPS_SERVER makes no partition (a daemon's, or a server's), so the container's would
# run on every TPC.
t_cdi_container_mps_server_refused() {
	local out rc dev
	cdi_spec
	for dev in gpc=0-1 tpcs=4 priority=high; do
		container --env "NVTASKSET_MPS_SERVER=low,yield=slice" "$dev"
		run_rc out rc "${CONTAINER[@]}" -- "$APP" launch 1
		eq "$rc" 126 "$dev: status ($out)"
		has "$out" "a container is no MPS server of nvtaskset's"
		hasnt "$out" "hung="
	done
}

# Two containers started at once with tpcs=33 get disjoint halves; -l lists them with their
# TPCs, a start on the host finds no TPC free, -p moves one live, and once one is killed its
# TPCs are free again and its segment is gone.
t_cdi_tpcs_claims_disjoint() {
	local out rc a b a_pid b_pid list seg
	need_pidns
	cdi_spec
	container --pidns --pid-file "$WORK/a.pid" tpcs=33
	start_loop a "${CONTAINER[@]}" -- "$APP"
	a=$PID
	container --pidns --pid-file "$WORK/b.pid" tpcs=33
	start_loop b "${CONTAINER[@]}" -- "$APP"
	b=$PID
	poll_until 20 all_nonempty "$WORK/a.state" "$WORK/b.state" ||
		die "the containers did not launch: $(cat "$WORK/a.err" "$WORK/b.err")"
	a_pid=$(cat "$WORK/a.pid") b_pid=$(cat "$WORK/b.pid")
	disjoint_lists "$(cat "$WORK/a.state")" "$(cat "$WORK/b.state")"
	eq "$(tpc_count "$(cat "$WORK/a.state")")" 33 "TPCs of a"
	eq "$(tpc_count "$(cat "$WORK/b.state")")" 33 "TPCs of b"
	out=$("$NVT" -l)
	grep -Eq "$(row_re "$a_pid" root)$(cat "$WORK/a.state") " <<<"$out" || die "-l: $out"
	grep -Eq "$(row_re "$b_pid" root)$(cat "$WORK/b.state") " <<<"$out" || die "-l: $out"
	run_rc out rc "$NVT" --no-mps -n 1 --exclude-running "$APP" launch 1
	eq "$rc" 1 "a host start beside them ($out)"
	"$NVT" -p -g 0 "$a_pid" >/dev/null
	wait_file "$WORK/a.state" "$(dry_tpcs -g 0)"
	seg=$(seg_file "$b_pid")
	[ -e "$seg" ] || die "no segment of the container's process: $seg"
	kill -KILL "$b_pid"
	wait "$b" || true
	[ ! -e "$seg" ] || die "the killed container's segment is left: $seg"
	list=$(dry_tpcs -n 33 --exclude-running)
	disjoint_lists "$list" "$(cat "$WORK/a.state")"
	eq "$(tpc_count "$list")" 33 "TPCs free once b was killed"
	stop_loop a "$a"
}

# A claim that cannot be met stops the container before its program runs, and says why.
t_cdi_tpcs_full_fails_clearly() {
	local out rc
	cdi_spec
	start_loop host "$NVT" --no-mps -n 60 --exclude-running "$APP"
	wait_for 10 all_nonempty "$WORK/host.state"
	container tpcs=16
	run_rc out rc "${CONTAINER[@]}" -- "$APP" launch 1
	eq "$rc" 126 "status ($out)"
	has "$out" "t/tpcs=16: the container does not start:"
	has "$out" "6 TPCs"
	hasnt "$out" "hung="
	stop_loop host "$PID"
}

# A priority goes with the partition device's segment, partitioned (MPS client priority), or
# alone (every TPC), time-sliced as priority=LEVEL-slice gives it: the segment's ways, what its
# shim sets for CUDA (a lower partitioned task's client priority, a high sliced one's one
# connection for its bridge), and what -p finds it started with.
t_cdi_priority() {
	local g n c h out rc vars='echo "cp=$CUDA_MPS_CLIENT_PRIORITY cc=$CUDA_DEVICE_MAX_CONNECTIONS" >"$1"; shift; exec "$@"'
	cdi_spec
	container --pid-file "$WORK/g.pid" gpc=0-1 priority=high
	start_loop g "${CONTAINER[@]}" -- sh -c "$vars" - "$WORK/g.vars" "$APP"
	g=$PID
	container --pid-file "$WORK/n.pid" priority=low
	start_loop n "${CONTAINER[@]}" -- sh -c "$vars" - "$WORK/n.vars" "$APP"
	n=$PID
	container --pid-file "$WORK/c.pid" tpcs=8 priority=normal
	start_loop c "${CONTAINER[@]}" -- sh -c "$vars" - "$WORK/c.vars" "$APP"
	c=$PID
	container --pid-file "$WORK/h.pid" priority=high
	start_loop h "${CONTAINER[@]}" -- sh -c "$vars" - "$WORK/h.vars" "$APP"
	h=$PID
	wait_for 20 all_nonempty "$WORK/g.state" "$WORK/n.state" "$WORK/c.state" "$WORK/h.state"
	eq "$(cat "$WORK/g.vars")" "cp= cc=" "gpc=0-1 priority=high: CUDA's variables"
	eq "$(cat "$WORK/n.vars")" "cp= cc=" "priority=low: CUDA's variables"
	eq "$(cat "$WORK/c.vars")" "cp=1 cc=" "tpcs=8 priority=normal: CUDA's variables"
	eq "$(cat "$WORK/h.vars")" "cp= cc=1" "priority=high: CUDA's variables"
	"$NVT" -l --json >"$WORK/l.json"
	python3 - "$WORK/l.json" "$(cat "$WORK/g.pid")" "$(cat "$WORK/n.pid")" "$(cat "$WORK/c.pid")" "$(cat "$WORK/h.pid")" <<'PY' ||
import json, sys
tasks = {t["pid"]: t for t in json.load(open(sys.argv[1]))["tasks"]}
g, n, c, h = (tasks[int(p)]["gpus"][0] for p in sys.argv[2:])
assert g["priority"] == "high" and g["partitioned"] and g["yield"]["ways"] == "client", g
assert n["priority"] == "low" and not n["partitioned"] and n["yield"]["ways"] == "slice", n
assert c["priority"] == "normal" and c["tpc_count"] == 8 and c["yield"]["ways"] == "client", c
assert h["priority"] == "high" and not h["partitioned"] and h["yield"]["ways"] == "slice", h
PY
		die "-l --json: $(cat "$WORK/l.json")"
	# -p finds each started as its shim set it up: --yield slice takes effect on the one alone
	# (its shim follows its channel groups), not on the partitioned one.
	run_rc out rc "$NVT" -p --priority low --yield slice "$(cat "$WORK/n.pid")"
	eq "$rc" 0 "-p --yield slice on priority=low alone ($out)"
	run_rc out rc "$NVT" -p --priority normal --yield slice "$(cat "$WORK/c.pid")"
	eq "$rc" 1 "-p --yield slice on tpcs=8 priority=normal ($out)"
	has "$out" "was started with --yield client, so its shim follows no channel group"
	stop_loop g "$g"
	stop_loop n "$n"
	stop_loop c "$c"
	stop_loop h "$h"
}

# A time-sliced priority device (priority=LEVEL-slice): its tasks get the level and yield=slice,
# alone (every TPC) or beside a partition device; outside MPS (the spec without --with-mps) in a
# context of their own. The same level twice, sliced and not, is two priorities: refused.
t_cdi_priority_slice() {
	local n g out rc
	cdi_spec
	container --pid-file "$WORK/n.pid" priority=low-slice
	start_loop n "${CONTAINER[@]}" -- sh -c 'echo "mps=$CUDA_MPS_PIPE_DIRECTORY" >"$1"; shift; exec "$@"' - "$WORK/n.mps" "$APP"
	n=$PID
	container --pid-file "$WORK/g.pid" gpc=0-1 priority=high-slice
	start_loop g "${CONTAINER[@]}" -- "$APP"
	g=$PID
	wait_for 20 all_nonempty "$WORK/n.state" "$WORK/g.state"
	eq "$(cat "$WORK/n.mps")" "mps=/dev/null" "the container's MPS pipe directory (no MPS)"
	"$NVT" -l --json >"$WORK/l.json"
	python3 - "$WORK/l.json" "$(cat "$WORK/n.pid")" "$(cat "$WORK/g.pid")" <<'PY' ||
import json, sys
tasks = {t["pid"]: t for t in json.load(open(sys.argv[1]))["tasks"]}
n, g = (tasks[int(p)]["gpus"][0] for p in sys.argv[2:])
assert n["priority"] == "low" and not n["partitioned"] and n["yield"]["ways"] == "slice", n
assert g["priority"] == "high" and g["partitioned"] and g["yield"]["ways"] == "slice", g
PY
		die "-l --json: $(cat "$WORK/l.json")"
	stop_loop n "$n"
	stop_loop g "$g"
	container priority=low priority=low-slice
	run_rc out rc "${CONTAINER[@]}" -- "$APP" launch 1
	eq "$rc" 126 "priority=low priority=low-slice ($out)"
	has "$out" "another priority device too (t/priority=low-slice)"
	container --env NVTASKSET_PRIORITY=low,yield=slice gpc=0
	run_rc out rc "${CONTAINER[@]}" -- "$APP" launch 1
	eq "$rc" 126 "NVTASKSET_PRIORITY=low,yield=slice without its device ($out)"
	has "$out" "it was given no device t/priority=low-slice: a container does not choose its priority"
}

# Two partition devices, or two priorities: the hook refuses, naming both.
t_cdi_two_devices_refused() {
	local out rc
	cdi_spec
	container gpc=0 gpc=1
	run_rc out rc "${CONTAINER[@]}" -- "$APP" launch 1
	eq "$rc" 126 "gpc=0 gpc=1 ($out)"
	has "$out" "t/gpc=0: the container was given another partition device too (t/gpc=1)"
	container gpc=0 tpcs=8
	run_rc out rc "${CONTAINER[@]}" -- "$APP" launch 1
	eq "$rc" 126 "gpc=0 tpcs=8 ($out)"
	has "$out" "another partition device too (t/tpcs=8)"
	container priority=high priority=low
	run_rc out rc "${CONTAINER[@]}" -- "$APP" launch 1
	eq "$rc" 126 "two priorities ($out)"
	has "$out" "another priority device too (t/priority=low)"
	hasnt "$out" "hung="
}

# A user namespace that maps the container's uid to another: refused at start, with the reason.
t_cdi_user_namespace_refused() {
	local out rc
	[ "$(id -u)" == 0 ] || skip "needs root to map a user namespace"
	cdi_spec
	container --userns 65534 gpc=0-1
	run_rc out rc "${CONTAINER[@]}" -- "$APP" launch 1
	# (77: cdirun.py could not make the namespace; its other failures are 2, and fail here.)
	[ "$rc" != 77 ] || skip "cannot make a user namespace here: $out"
	eq "$rc" 126 "status ($out)"
	has "$out" "maps user ids (its uid 0 is uid 65534 outside)"
	hasnt "$out" "hung="
}

# The container's user is not root: its segment lies in its own run directory, and its
# program adopts the claim made for it.
t_cdi_other_user() {
	local out rc
	need_users
	cdi_spec
	container --uid 65534 tpcs=8
	run_rc out rc "${CONTAINER[@]}" -- sh -c 'echo "owner=$(stat -c %u "$NVTASKSET_RUNDIR/nvtaskset-65534")"; exec "$@"' - "$APP" launch 1
	eq "$rc" 0 "status ($out)"
	eq "$(tpc_count "$(sed -n 's/^tpcs=\([^ ]*\) .*/\1/p' <<<"$out")")" 8 "TPCs ($out)"
	eq "$(sed -n 's/^owner=//p' <<<"$out")" 65534 "owner of its run directory"
}

# Another user's entry where the hook makes the run directory of the container's user, in the
# container's own run directory (mode 1777 on the host: a user who watches containers/ makes it
# while the hook works; real podman: 4 starts in 5 refused that way): renamed aside, and the
# container starts (without the rename: "it belongs to uid 65534, not to uid 65533").
t_cdi_other_user_squatted() {
	local out rc ctr
	need_users
	cdi_spec
	ctr=$NVTASKSET_RUNDIR/containers/squatted
	mkdir -p "$ctr"
	chmod 0755 "$NVTASKSET_RUNDIR/containers" "$ctr"
	mkdir -m 1777 "$ctr/run"
	chmod 1777 "$ctr/run"
	$(as_user 65534) mkdir "$ctr/run/nvtaskset-65533"
	container --uid 65533 --id squatted tpcs=8
	run_rc out rc "${CONTAINER[@]}" -- sh -c 'echo "owner=$(stat -c %u "$NVTASKSET_RUNDIR/nvtaskset-65533")"; exec "$@"' - "$APP" launch 1
	eq "$rc" 0 "status ($out)"
	eq "$(tpc_count "$(sed -n 's/^tpcs=\([^ ]*\) .*/\1/p' <<<"$out")")" 8 "TPCs ($out)"
	eq "$(sed -n 's/^owner=//p' <<<"$out")" 65533 "owner of its run directory"
}

# A process of a tpcs container that is not below its first process (podman exec) finds no
# partition and says so; one of a gpc container takes the device's partition.
t_cdi_exec_without_partition_warns() {
	local out
	out=$(env NVTASKSET_CDI=tpcs=16 LD_PRELOAD="$SHIM" "$APP" launch 1 2>&1)
	has "$out" "this process has no partition: its container's tpcs=16 device"
	cdi_spec
	out=$(env NVTASKSET_CDI=gpc=0 NVTASKSET_PARTITION="$(python3 -c 'import json, sys
spec = json.load(open(sys.argv[1]))
[dev] = [d for d in spec["devices"] if d["name"] == "0"]
print([v for v in dev["containerEdits"]["env"] if v.startswith("NVTASKSET_PARTITION=")][0][20:])' \
		"$WORK/cdi/t-gpc.json")" LD_PRELOAD="$SHIM" "$APP" launch 1 2>&1)
	hasnt "$out" "no partition"
	has "$out" "tpcs=$(dry_tpcs -g 0) "
}

# A process started in the container from outside it (podman exec: nsenter here, its parent
# outside the container's PID namespace) takes the partition of the container's first process.
t_cdi_exec_takes_first_process() {
	local out first
	need_pidns
	command -v nsenter >/dev/null || skip "needs nsenter"
	cdi_spec
	container --pidns --pid-file "$WORK/a.pid" tpcs=8
	start_loop a "${CONTAINER[@]}" -- "$APP"
	wait_for 20 all_nonempty "$WORK/a.state"
	first=$(cat "$WORK/a.pid")
	# (its run directory as the container's mount namespace shows it: cdirun.py's root file
	# system, where a process podman exec starts finds /run/nvtaskset)
	out=$(nsenter -t "$first" -p -m -- env LD_PRELOAD="$SHIM" NVTASKSET_RUNDIR="$CONTAINER_RUNDIR" "$APP" launch 1 2>&1)
	has "$out" "tpcs=$(cat "$WORK/a.state") "
	stop_loop a "$PID"
}

# The same, as another user (podman exec --user 65533 sh -c ...), after a host user made
# nvtaskset-65533 in the container's run directory once the container started (mode 1777 on the
# host, where the hook can no longer set it aside): the shell and its program make no segment
# (they say why: "it belongs to uid 65534"), and the program still takes the first process's
# partition, through its shell, whose parent lies outside the container. It ran on every TPC
# (the shell's private segment was the end of its chain).
t_cdi_exec_squatted_after_start() {
	local out first
	need_pidns
	need_users
	command -v nsenter >/dev/null || skip "needs nsenter"
	cdi_spec
	container --pidns --pid-file "$WORK/a.pid" --id sq tpcs=8
	start_loop a "${CONTAINER[@]}" -- "$APP"
	wait_for 20 all_nonempty "$WORK/a.state"
	first=$(cat "$WORK/a.pid")
	$(as_user 65534) mkdir "$NVTASKSET_RUNDIR/containers/sq/run/nvtaskset-65533"
	# (a shell first, as podman exec sh -c runs one: the program is its child)
	out=$(nsenter -t "$first" -p -m -- $(as_user 65533) env LD_PRELOAD="$SHIM" \
		NVTASKSET_RUNDIR="$CONTAINER_RUNDIR" sh -c '"$@"; exit $?' - "$APP" launch 1 2>&1)
	has "$out" "tpcs=$(cat "$WORK/a.state") "
	has "$out" "$CONTAINER_RUNDIR/nvtaskset-65533 (it belongs to uid 65534, not to uid 65533)"
	stop_loop a "$PID"
}

# --with-mps: containers are clients of the host's MPS control daemon (started if none runs):
# its pipe directory and the host's /dev/shm are mounted, and CUDA_MPS_PIPE_DIRECTORY names it.
# Without it, containers run outside MPS (/dev/null, as --no-mps).
t_cdi_with_mps() {
	own_mps_dirs cdi
	export PATH=$ROOT/tests/fake/bin:$PATH
	cdi_spec
	grep -q '"CUDA_MPS_PIPE_DIRECTORY=/dev/null"' "$WORK/cdi/t-gpc.json" || die "no /dev/null pipe directory"
	"$NVT" --cdi --with-mps --cdi-dir "$WORK/cdi" --vendor t >"$WORK/cdi.out" 2>&1 ||
		die "--cdi --with-mps failed: $(cat "$WORK/cdi.out")"
	has "$(cat "$WORK/cdi.out")" "started the MPS control daemon"
	python3 - "$WORK/cdi/t-tpcs.json" "$CUDA_MPS_PIPE_DIRECTORY" <<'PY' || die "the spec: $(head -c 2000 "$WORK/cdi/t-tpcs.json")"
import json, sys
common = json.load(open(sys.argv[1]))["containerEdits"]
mounts = {m["containerPath"]: m["hostPath"] for m in common["mounts"]}
assert mounts[sys.argv[2]] == sys.argv[2] and mounts["/dev/shm"] == "/dev/shm", mounts
assert "CUDA_MPS_PIPE_DIRECTORY=" + sys.argv[2] in common["env"], common["env"]
PY
}

# --with-mps and a time-sliced priority device: --cdi starts each level's MPS control daemon
# (its server loads the shim, told the level), the device's hook is told its level's pipe
# directory and binds it over the container's CUDA_MPS_PIPE_DIRECTORY, where the spec mounts
# the shared daemon's: the container's programs are clients of their level's server. A
# container of no sliced priority keeps the shared one. A level daemon that does not run: the
# hook refuses the container, saying what to do, and starts none.
t_cdi_with_mps_slice() {
	local out rc dir devs lvl reached
	need_pidns
	own_mps_dirs slice
	export PATH=$ROOT/tests/fake/bin:$PATH
	dir=$CUDA_MPS_PIPE_DIRECTORY
	"$NVT" --cdi --with-mps --cdi-dir "$WORK/cdi" --vendor t >"$WORK/cdi.out" 2>&1 ||
		die "--cdi --with-mps failed: $(cat "$WORK/cdi.out")"
	for lvl in low normal high; do
		has "$(cat "$WORK/cdi.out")" "started the MPS control daemon of priority $lvl (pipe directory $dir-$lvl)"
		has "$(cat "$dir-$lvl/fake.env")" "NVTASKSET_MPS_SERVER=$lvl,yield=slice"
		has "$(cat "$dir-$lvl/fake.env")" "LD_PRELOAD=$SHIM"
	done
	python3 - "$WORK/cdi/t-priority.json" "$dir" <<'PY' || die "the spec: $(head -c 3000 "$WORK/cdi/t-priority.json")"
import json, sys
spec, pipe = json.load(open(sys.argv[1])), sys.argv[2]
for dev in spec["devices"]:
    [hook] = dev["containerEdits"]["hooks"]
    # (every priority device's: a LEVEL device's container alone is time-sliced too)
    level = dev["name"].partition("-")[0]
    want = ["CUDA_MPS_PIPE_DIRECTORY=%s-%s" % (pipe, level)]
    assert [v for v in hook["env"] if v.startswith("CUDA_MPS_PIPE_DIRECTORY=")] == want, dev
PY
	# (each container prints the pid file its pipe directory shows: whose daemon it reaches)
	for devs in "priority=low-slice:low" "gpc=0-1 priority=high-slice:high" "gpc=0-1 priority=high:" \
		"priority=normal:normal" "tpcs=8 priority=low:"; do
		# shellcheck disable=SC2086 # the devices
		container --pidns ${devs%:*}
		run_rc out rc "${CONTAINER[@]}" -- sh -c 'cat "$CUDA_MPS_PIPE_DIRECTORY/nvidia-cuda-mps-control.pid"'
		[ "$rc" != 77 ] || skip "cannot make the container's namespaces here: $out"
		eq "$rc" 0 "${devs%:*}: status ($out)"
		lvl=${devs##*:} reached=$dir
		[ -z "$lvl" ] || reached=$dir-$lvl
		eq "$out" "$(cat "$reached/nvidia-cuda-mps-control.pid")" "${devs%:*}: the daemon the container reaches"
	done
	# A container does not choose where the level's pipe directory goes (over its run
	# directory, its segments would lie where no claim looks).
	container --pidns --env CUDA_MPS_PIPE_DIRECTORY=/run/nvtaskset tpcs=8 priority=low-slice
	run_rc out rc "${CONTAINER[@]}" -- "$APP" launch 1
	eq "$rc" 126 "-e CUDA_MPS_PIPE_DIRECTORY=/run/nvtaskset ($out)"
	has "$out" "t/priority=low-slice: the container's CUDA_MPS_PIPE_DIRECTORY is not the spec's $dir: a container does not choose its MPS pipe directory"
	# The low level's daemon stopped: refused with the reason; the hook starts none.
	touch "$dir-low/quit"
	wait_for 10 eval '[ ! -e "$dir-low/nvidia-cuda-mps-control.pid" ]'
	rm -f "$dir-low/fake.env"
	container --pidns priority=low-slice
	run_rc out rc "${CONTAINER[@]}" -- "$APP" launch 1
	eq "$rc" 126 "no daemon of priority low ($out)"
	has "$out" "t/priority=low-slice: the MPS control daemon of priority low does not run (pipe directory $dir-low): run nvtaskset --cdi --with-mps again (as root), which starts it"
	[ ! -e "$dir-low/fake.env" ] || die "the hook started the MPS control daemon"
	run_rc out rc "$NVT" --mps stop
	eq "$rc" 0 "--mps stop: $out"
}

# mps_daemons DIR: how many MPS control daemons of pipe directory DIR run (the tests' fake:
# processes of its name whose environment names DIR; one that ended is none).
mps_daemons() {
	local p comm vars n=0
	for p in /proc/[0-9]*; do
		read -r comm 2>/dev/null <"$p/comm" && [ "$comm" == nvidia-cuda-mps ] || continue
		mapfile -d '' -t vars 2>/dev/null <"$p/environ" || continue
		[[ $'\n'"$(printf '%s\n' "${vars[@]}")" == *$'\n'"CUDA_MPS_PIPE_DIRECTORY=$1"$'\n'* ]] && n=$((n + 1))
	done
	echo "$n"
}

# A --cdi --with-mps that fails once it started its MPS control daemons (its spec directory
# cannot be made) stops the daemons it started, saying so, and fails as it would without them;
# a daemon that ran before it (the shared one, a level's) runs on, never told to quit, and so
# does one it started that serves a task by then (a container of an earlier spec's).
t_cdi_with_mps_refused_stops_its_daemons() {
	local out rc dir d lvl shared low
	own_mps_dirs refused
	export PATH=$ROOT/tests/fake/bin:$PATH
	dir=$CUDA_MPS_PIPE_DIRECTORY
	: >"$WORK/file"
	# None runs: it starts the four, then stops the four.
	run_rc out rc "$NVT" --cdi --with-mps --cdi-dir "$WORK/file/cdi" --vendor t
	eq "$rc" 1 "--cdi --with-mps with a spec directory under a file ($out)"
	has "$out" "--cdi: cannot make $WORK/file/cdi"
	has "$out" "started the MPS control daemon (pipe directory $dir)"
	has "$out" "--cdi: stopped the MPS control daemon it started (pipe directory $dir)"
	for lvl in low normal high; do
		has "$out" "started the MPS control daemon of priority $lvl (pipe directory $dir-$lvl)"
		has "$out" "--cdi: stopped the MPS control daemon of priority $lvl it started (pipe directory $dir-$lvl)"
	done
	for d in "$dir" "$dir-low" "$dir-normal" "$dir-high"; do
		eq "$(mps_daemons "$d")" 0 "daemons of $d left by a refused --cdi"
		[ ! -e "$d/nvidia-cuda-mps-control.pid" ] || die "a refused --cdi left the pid file of $d"
	done
	# The shared daemon and the low level's run before: they run on. The high level's, once
	# started, serves a task (this shell, staged as its server's client): it runs on too.
	"$NVT" --mps start >"$WORK/start.out" 2>&1 || die "--mps start: $(cat "$WORK/start.out")"
	echo $$ >"$dir-high/fake-server"
	echo $$ >"$dir-high/fake-clients"
	CUDA_MPS_PIPE_DIRECTORY=$dir-low CUDA_MPS_LOG_DIRECTORY=$CUDA_MPS_LOG_DIRECTORY-low nvidia-cuda-mps-control -d
	shared=$(cat "$dir/nvidia-cuda-mps-control.pid") low=$(cat "$dir-low/nvidia-cuda-mps-control.pid")
	run_rc out rc "$NVT" --cdi --with-mps --cdi-dir "$WORK/file/cdi" --vendor t
	eq "$rc" 1 "--cdi --with-mps beside running daemons ($out)"
	has "$out" "--cdi: cannot make $WORK/file/cdi"
	has "$out" "--cdi: stopped the MPS control daemon of priority normal it started (pipe directory $dir-normal)"
	eq "$(mps_daemons "$dir-normal")" 0 "daemons of priority normal left by a refused --cdi"
	has "$out" "warning: --cdi: leaves the MPS control daemon of priority high it started running (pipe directory $dir-high): it serves tasks"
	eq "$(mps_daemons "$dir-high")" 1 "daemons of priority high, which serves a task, after a refused --cdi"
	rm "$dir-high/fake-server" "$dir-high/fake-clients"
	hasnt "$out" "(pipe directory $dir)"
	hasnt "$out" "(pipe directory $dir-low)"
	eq "$(cat "$dir/nvidia-cuda-mps-control.pid")" "$shared" "the shared daemon's pid"
	eq "$(cat "$dir-low/nvidia-cuda-mps-control.pid")" "$low" "the low level's daemon's pid"
	eq "$(mps_daemons "$dir")" 1 "shared daemons after a refused --cdi"
	eq "$(mps_daemons "$dir-low")" 1 "daemons of priority low after a refused --cdi"
	# (each was told to quit once, in the first round: never since)
	eq "$(grep -c '^command=quit' "$dir/fake.log")" 1 "quits sent to the shared daemon"
	eq "$(grep -c '^command=quit' "$dir-low/fake.log")" 1 "quits sent to the low level's daemon"
	run_rc out rc "$NVT" --mps stop
	eq "$rc" 0 "--mps stop: $out"
}

# The hook run at the wrong stage or fed what is not a runtime's state: it refuses, saying
# what it needs, and makes nothing.
t_cdi_hook_bad_state() {
	local out rc
	run_rc out rc sh -c 'echo "not json" | "$1" --cdi-hook t/gpc=0' - "$NVT"
	eq "$rc" 1 "not JSON ($out)"
	has "$out" "t/gpc=0: the runtime's state is not a JSON object"
	run_rc out rc sh -c 'echo "{\"ociVersion\":\"1.0.2\",\"id\":\"x\",\"status\":\"creating\",\"pid\":0,\"bundle\":\"/nonexistent\"}" |
		"$1" --cdi-hook t/gpc=0' - "$NVT"
	eq "$rc" 1 "pid 0 ($out)"
	has "$out" "t/gpc=0: the runtime's state names no process: run this hook as createRuntime"
	eq "$(find "$NVTASKSET_RUNDIR" -name 'nvtaskset.*' | wc -l)" 0 "segments made"
}

# A config.json that names a member twice in one object, or one the hook reads in another case,
# is refused before the hook reads it: runc merges a repeated "process" into the one before it
# and takes "Process" for "process", so it would run with a variable (here one the hook refuses)
# that the hook, reading the last "process" only, never saw.
t_cdi_hook_config_names_twice() {
	local out rc config bundle=$WORK/bundle-twice env='"env":["NVTASKSET_MPS_SERVER=low,yield=slice"]'
	mkdir -p "$bundle/rootfs"
	for config in "{\"process\":{$env},\"process\":{\"args\":[\"sh\"]},\"root\":{\"path\":\"rootfs\"}}" \
		"{\"process\":{\"args\":[\"sh\"]},\"Process\":{$env},\"root\":{\"path\":\"rootfs\"}}" \
		"{\"process\":{\"args\":[\"sh\"]},\"root\":{\"path\":\"rootfs\",\"path\":\"/\"}}"; do
		printf '%s' "$config" >"$bundle/config.json"
		run_rc out rc sh -c 'printf "{\"id\":\"x\",\"status\":\"creating\",\"pid\":%s,\"bundle\":\"%s\"}" "$2" "$3" |
			"$1" --cdi-hook t/gpc=0' - "$NVT" "$$" "$bundle"
		eq "$rc" 1 "$config ($out)"
		has "$out" "t/gpc=0: the container's config.json names a member twice in one object"
	done
	eq "$(find "$NVTASKSET_RUNDIR" -name 'nvtaskset.*' | wc -l)" 0 "segments made"
}

# A partition device's hook whose container's config.json lacks the device's NVTASKSET_CDI (no
# process at all, or an environment the device's edits never reached) refuses, saying so, and
# makes nothing.
t_cdi_hook_config_without_device_env() {
	local out rc config bundle=$WORK/bundle-noenv
	mkdir -p "$bundle/rootfs"
	for config in '{"root":{"path":"rootfs"}}' '{"process":{"args":["sh"],"env":["PATH=/bin"]},"root":{"path":"rootfs"}}'; do
		printf '%s' "$config" >"$bundle/config.json"
		run_rc out rc sh -c 'printf "{\"id\":\"x\",\"status\":\"creating\",\"pid\":%s,\"bundle\":\"%s\"}" "$2" "$3" |
			"$1" --cdi-hook t/gpc=0' - "$NVT" "$$" "$bundle"
		eq "$rc" 1 "$config ($out)"
		eq "$out" "nvtaskset: t/gpc=0: the container's environment lacks the device's NVTASKSET_CDI (its config.json has no process, or the device's environment was not applied): give the device through CDI (--device t/gpc=0)" "$config"
	done
	eq "$(find "$NVTASKSET_RUNDIR" -name 'nvtaskset.*' | wc -l)" 0 "segments made"
}

# What a container's config.json carries and the hook's refusal quotes (a terminal's escape
# sequence, a newline that would forge a line of the runtime's log) is shown as task text is:
# its controls as '?', the refusal one line.
t_cdi_hook_config_text_shown() {
	local out rc var want bundle=$WORK/bundle-text forged='\u001b]0;owned\u0007\nnvtaskset: forged'
	mkdir -p "$bundle/rootfs"
	while IFS='|' read -r var want; do
		printf '{"process":{"args":["sh"],"env":["NVTASKSET_CDI=tpcs=4","%s=%s"]},"root":{"path":"rootfs"}}' \
			"$var" "$forged" >"$bundle/config.json"
		run_rc out rc sh -c 'printf "{\"id\":\"x\",\"status\":\"creating\",\"pid\":%s,\"bundle\":\"%s\"}" "$2" "$3" |
			"$1" --cdi-hook t/tpcs=4' - "$NVT" "$$" "$bundle"
		eq "$rc" 1 "$var: status"
		eq "$out" "nvtaskset: t/tpcs=4: the container's $var=?]0;owned??nvtaskset: forged $want" "$var"
	done <<'REFUSALS'
NVTASKSET_PRIORITY|is malformed
NVTASKSET_MEM|names no memory device: a container does not choose its memory limit (give the device, not -e NVTASKSET_MEM)
REFUSALS
	eq "$(find "$NVTASKSET_RUNDIR" -name 'nvtaskset.*' | wc -l)" 0 "segments made"
}

# mem=SIZE: a GPU memory limit of SIZE GiB on each GPU, beside a partition device or alone (the
# whole GPU), with a priority too; the container's own NVTASKSET_MEM is refused, as two limits.
# (mem=GPU:SIZE, the limit on one GPU: t_cdi_memory_one_gpu)
t_cdi_memory() {
	local out rc dev mib=1048576 memapp=$T/memapp
	cdi_spec
	# (80 for every GPU, 80 for GPU 0)
	has "$(cat "$WORK/cdi.out")" "t-mem.json: 160 devices"
	python3 - "$WORK/cdi/t-mem.json" <<'PY' || die "the memory devices are not as expected"
import json, sys
spec = json.load(open(sys.argv[1]))
assert spec["kind"] == "t/mem", spec["kind"]
have = {x["name"]: x for x in spec["devices"]}
assert sorted(n for n in have if ":" not in n) == sorted("%dG" % g for g in range(1, 81)), sorted(have)
assert sorted(n for n in have if ":" in n) == sorted("0:%dG" % g for g in range(1, 81)), sorted(have)
env = dict(v.split("=", 1) for v in have["16G"]["containerEdits"]["env"])
assert env == {"NVTASKSET_MEM": str(16 << 30)}, env
[hook] = have["16G"]["containerEdits"]["hooks"]
assert hook["args"] == ["nvtaskset", "--cdi-hook", "t/mem=16G"], hook["args"]
PY
	for dev in "gpc=0-1 mem=1G" "tpcs=4 mem=1G" mem=1G "priority=high mem=1G" "mem=1G priority=low"; do
		# shellcheck disable=SC2086 # the devices, one word each
		container $dev
		run_rc out rc "${CONTAINER[@]}" -- "$memapp" alloc:768M alloc:512M info
		eq "$rc" 0 "$dev: $out"
		eq "$(grep ' rc=' <<<"$out")" "alloc rc=0
alloc rc=2
info rc=0 free=$((256 * mib)) total=$((1024 * mib))" "$dev"
	done
	container --env NVTASKSET_MEM=$((1 << 30)) tpcs=4
	run_rc out rc "${CONTAINER[@]}" -- "$memapp" info
	eq "$rc" 126 "-e NVTASKSET_MEM: status ($out)"
	has "$out" "but it was given no device t/mem=1G: a container does not choose its memory limit"
	hasnt "$out" "info rc="
	container --env NVTASKSET_MEM=$((3 << 30)) tpcs=4 mem=1G
	run_rc out rc "${CONTAINER[@]}" -- "$memapp" info
	eq "$rc" 126 "-e NVTASKSET_MEM beside mem=1G: status ($out)"
	hasnt "$out" "info rc="
	container mem=1G mem=2G
	run_rc out rc "${CONTAINER[@]}" -- "$memapp" info
	eq "$rc" 126 "two memory devices: status ($out)"
	has "$out" "the container was given another memory limit too"
	hasnt "$out" "info rc="
}

# mem=GPU:SIZE: the limit on that GPU (as the host numbers it) alone, named in the container's
# NVTASKSET_MEM by its UUID; GPU 0 of two is not limited. Alone, beside a partition device of
# every GPU or of that GPU; -l shows it on that GPU; beside a partition device of the other GPU
# (whose segment would not hold it), or forged with the other GPU's UUID, refused.
t_cdi_memory_one_gpu() {
	local out rc dev mib=1048576 memapp=$T/memapp uuid0 uuid1 pid part
	two_gpus
	uuid0=$(fake_uuid 0)
	uuid1=$(fake_uuid 1)
	cdi_spec
	# (80 for every GPU, 80 for each of the two)
	has "$(cat "$WORK/cdi.out")" "t-mem.json: 240 devices"
	python3 - "$WORK/cdi/t-mem.json" "$uuid1" <<'PY' || die "the memory devices of GPU 1 are not as expected"
import json, sys
spec = json.load(open(sys.argv[1]))
have = {x["name"]: x for x in spec["devices"]}
assert "1:80G" in have and "1:81G" not in have and "2:1G" not in have, sorted(have)
env = dict(v.split("=", 1) for v in have["1:16G"]["containerEdits"]["env"])
assert env == {"NVTASKSET_MEM": "%s=%d" % (sys.argv[2], 16 << 30)}, env
[hook] = have["1:16G"]["containerEdits"]["hooks"]
assert hook["args"] == ["nvtaskset", "--cdi-hook", "t/mem=1:16G"], hook["args"]
[part] = [v for v in hook["env"] if v.startswith("NVTASKSET_PARTITION=")]
assert part.split("=", 1)[1].startswith(sys.argv[2] + " ") and ";" not in part, part
PY
	for dev in mem=1:1G "tpcs=4 mem=1:1G" "gpc=1:0-1 mem=1:1G" "priority=low mem=1:1G"; do
		# shellcheck disable=SC2086 # the devices, one word each
		container $dev
		# GPU 1 (the program's device 0 where only GPU 1 is visible): at most 1G.
		run_rc out rc "${CONTAINER[@]}" -- env CUDA_VISIBLE_DEVICES=1 "$memapp" alloc:768M alloc:512M info
		eq "$rc" 0 "$dev, GPU 1: $out"
		eq "$(grep ' rc=' <<<"$out")" "alloc rc=0
alloc rc=2
info rc=0 free=$((256 * mib)) total=$((1024 * mib))" "$dev, GPU 1"
		# GPU 0: no limit.
		run_rc out rc "${CONTAINER[@]}" -- "$memapp" alloc:768M alloc:512M info
		eq "$rc" 0 "$dev, GPU 0: $out"
		eq "$(grep ' rc=' <<<"$out")" "alloc rc=0
alloc rc=0
info rc=0 free=$(((80 * 1024 - 1280) * mib)) total=$((80 * 1024 * mib))" "$dev, GPU 0"
	done
	# -l: the limit on GPU 1, none on GPU 0.
	container --pid-file "$WORK/m.pid" tpcs=4 mem=1:1G
	"${CONTAINER[@]}" -- env CUDA_VISIBLE_DEVICES=1 "$memapp" alloc:256M wait:"$WORK/go" >"$WORK/m.out" 2>&1 &
	pid=$!
	wait_file "$WORK/go.ready" ready
	"$NVT" -l --json >"$WORK/l.json"
	python3 - "$WORK/l.json" "$(cat "$WORK/m.pid")" "$uuid0" "$uuid1" <<'PY' ||
import json, sys
tasks = {t["pid"]: t for t in json.load(open(sys.argv[1]))["tasks"]}
gpus = {g["uuid"]: g for g in tasks[int(sys.argv[2])]["gpus"]}
assert gpus[sys.argv[4]]["memory_limit_bytes"] == 1 << 30, gpus
assert gpus[sys.argv[4]]["memory_bytes"] == 256 << 20, gpus
assert gpus[sys.argv[3]]["memory_limit_bytes"] is None, gpus
PY
		die "-l --json: $(cat "$WORK/l.json")"
	out=$("$NVT" -l)
	has "$out" "256M/1G"
	touch "$WORK/go"
	wait "$pid" || die "the container's memapp: $(cat "$WORK/m.out")"
	# Beside a priority device, either first: the priority on both GPUs, the limit on GPU 1.
	for dev in "mem=1:1G priority=low" "priority=low mem=1:1G"; do
		rm -f "$WORK/go" "$WORK/go.ready"
		# shellcheck disable=SC2086 # the devices, one word each
		container --pid-file "$WORK/m.pid" $dev
		"${CONTAINER[@]}" -- "$memapp" wait:"$WORK/go" >"$WORK/m.out" 2>&1 &
		pid=$!
		wait_file "$WORK/go.ready" ready
		"$NVT" -l --json >"$WORK/l.json"
		python3 - "$WORK/l.json" "$(cat "$WORK/m.pid")" "$uuid0" "$uuid1" <<'PY' ||
import json, sys
tasks = {t["pid"]: t for t in json.load(open(sys.argv[1]))["tasks"]}
gpus = {g["uuid"]: g for g in tasks[int(sys.argv[2])]["gpus"]}
assert gpus[sys.argv[4]]["memory_limit_bytes"] == 1 << 30, gpus
assert gpus[sys.argv[3]]["memory_limit_bytes"] is None, gpus
assert gpus[sys.argv[3]]["priority"] == gpus[sys.argv[4]]["priority"] == "low", gpus
PY
			die "$dev: -l --json: $(cat "$WORK/l.json")"
		touch "$WORK/go"
		wait "$pid" || die "$dev: the container's memapp: $(cat "$WORK/m.out")"
	done
	# Beside a partition device of GPU 0 alone: refused, the program never runs.
	container gpc=0:0-1 mem=1:1G
	run_rc out rc "${CONTAINER[@]}" -- "$memapp" info
	eq "$rc" 126 "gpc=0:0-1 mem=1:1G: status ($out)"
	has "$out" "t/gpc=0:0-1: the container's memory limit NVTASKSET_MEM=$uuid1=$((1 << 30)) is on a GPU this device does not give it"
	hasnt "$out" "info rc="
	# Forged: GPU 0's UUID beside GPU 1's device, or GPU 1's without the device.
	container --env NVTASKSET_MEM="$uuid0=$((1 << 30))" tpcs=4 mem=1:1G
	run_rc out rc "${CONTAINER[@]}" -- "$memapp" info
	eq "$rc" 126 "-e NVTASKSET_MEM=GPU 0's beside mem=1:1G: status ($out)"
	hasnt "$out" "info rc="
	container --env NVTASKSET_MEM="$uuid1=$((1 << 30))" tpcs=4
	run_rc out rc "${CONTAINER[@]}" -- "$memapp" info
	eq "$rc" 126 "-e NVTASKSET_MEM=GPU 1's: status ($out)"
	has "$out" "but it was given no device t/mem=1:1G: a container does not choose its memory limit"
	hasnt "$out" "info rc="
	# Two memory devices, of each GPU and of one: one limit a container.
	container mem=1G mem=1:1G
	run_rc out rc "${CONTAINER[@]}" -- "$memapp" info
	eq "$rc" 126 "mem=1G mem=1:1G: status ($out)"
	has "$out" "the container was given another memory limit too"
	# A process that starts from the environment (podman exec's, no segment): the shim holds
	# GPU 1 to the limit its UUID names, GPU 0 not.
	part=$("$NVT" --no-mps -c 0-3 sh -c 'echo "$NVTASKSET_PARTITION"')
	has "$part" "$uuid1 "
	out=$(env NVTASKSET_PARTITION="$part" NVTASKSET_MEM="$uuid1=$((1 << 30))" LD_PRELOAD="$SHIM" \
		CUDA_VISIBLE_DEVICES=1 "$memapp" alloc:768M alloc:512M info 2>&1)
	eq "$(grep ' rc=' <<<"$out")" "alloc rc=0
alloc rc=2
info rc=0 free=$((256 * mib)) total=$((1024 * mib))" "from the environment, GPU 1"
	out=$(env NVTASKSET_PARTITION="$part" NVTASKSET_MEM="$uuid1=$((1 << 30))" LD_PRELOAD="$SHIM" \
		"$memapp" alloc:768M alloc:512M 2>&1)
	eq "$(grep ' rc=' <<<"$out")" "alloc rc=0
alloc rc=0" "from the environment, GPU 0"
}
