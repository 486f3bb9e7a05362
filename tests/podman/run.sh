#!/usr/bin/env bash
# nvtaskset's CDI devices with real podman and runc (docs/containers.md), as root: nvtaskset
# --cdi writes the spec (to /var/run/cdi, under a vendor name of this run's own, removed at the
# end), an image is built offline from this machine's files (sh, sleep, the fake CUDA program
# and the fake libcuda.so.1, with the libraries they load) and imported into a podman storage
# of this run's own (vfs, in a temporary directory), and containers run the fake program with
# `podman run --device VENDOR/CLASS=NAME`. Checks that the kernels run on the partition (the
# fake driver reports what each launch ran on), that two containers started at once get
# disjoint TPCs, that -l lists them with their container, that -p from the host moves one
# live, that a container killed leaves nothing claimed, that a claim that cannot be met stops
# the container with its reason, that a user namespace that maps uids is refused, and that a
# process podman exec starts runs on the container's partition (as another user too, whose run
# directory there a host user made first).
#
# Where podman cannot run containers here (not root, no podman or runc, a kernel or cgroup
# set-up it refuses), it says why and skips (exit 0).
#
# Usage: tests/podman/run.sh [SCENARIO...]   (`make check-podman`; default: all)
# Prints one line per scenario with its time, and "N passed, M failed" last.
set -u
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
B=$ROOT/build
T=$B/test
NVT=$B/bin/nvtaskset
APP=$T/fakeapp-dlopen
FAKEDIR=$T/fake
# Hang guards only (a podman run takes about a second here).
LIMIT=${PODMAN_TEST_TIMEOUT:-120}

skip_all() {
	echo "SKIPPED: check-podman: $*"
	exit 0
}
[ "$(id -u)" = 0 ] || skip_all "needs root (rootful podman runs the hooks on the host)"
for tool in podman runc python3 timeout; do
	command -v "$tool" >/dev/null || skip_all "needs $tool (Debian: apt-get install podman runc)"
done
for f in "$NVT" "$APP" "$FAKEDIR/libcuda.so.1"; do
	[ -e "$f" ] || { echo "check-podman: $f is missing: run make check-podman" >&2; exit 1; }
done

W=$(mktemp -d /tmp/nvtaskset-podman.XXXXXX)
chmod 755 "$W"
VENDOR=nvtaskset-check-$$
CDI_DIR=/var/run/cdi
mkdir -p "$W"/{cache,out,storage,runroot,rootfs} "$W/run"
# Where other users cannot reach the checkout (a clone in a private directory), the CDI spec
# names a world-readable copy of the build, $W/tree, which a rootless user's podman can run.
# shellcheck source=tests/share-build.sh
. "$ROOT/tests/share-build.sh"
if ! reachable_by 65534 "$ROOT" && share_build "$ROOT" "$W/tree"; then
	echo "check-podman: the checkout is not reachable by other users: the hooks run a copy, $W/tree"
	ROOT=$W/tree B=$W/tree/build
	T=$B/test NVT=$B/bin/nvtaskset APP=$T/fakeapp-dlopen FAKEDIR=$T/fake
fi
chmod 1777 "$W/run" "$W/out"
export LD_LIBRARY_PATH=$FAKEDIR NVTASKSET_RUNDIR=$W/run NVTASKSET_CACHE_DIR=$W/cache \
	NVTASKSET_PROC_NVIDIA=$W/no-proc-nvidia
unset LD_PRELOAD NVTASKSET_PARTITION CUDA_VISIBLE_DEVICES CUDA_MPS_PIPE_DIRECTORY NVTASKSET_CDI
# podman of this run's own storage; runc (crun refuses some hybrid cgroup set-ups); no network
# (none is needed, and a machine may lack podman's network plugins); a limit on files and
# processes below the machine's (podman asks for more than some machines allow).
PODMAN=(timeout "$LIMIT" podman --root "$W/storage" --runroot "$W/runroot" --storage-driver vfs
	--runtime runc)
RUN=("${PODMAN[@]}" run --network none --ulimit nofile=4096:4096 --ulimit nproc=4096:4096
	-v "$W/out:/out")
IMAGE=localhost/nvtaskset-check:$$

cleanup() {
	"${PODMAN[@]}" rm -f -a >/dev/null 2>&1
	"${PODMAN[@]}" rmi -f -a >/dev/null 2>&1
	rm -f "$CDI_DIR/$VENDOR"-*.json "$CDI_DIR/$VENDOR.ld.so.preload" \
		"$CDI_DIR/$VENDOR-mps"-*.json "$CDI_DIR/$VENDOR-mps.ld.so.preload"
	# The MPS daemons s_slice started (the fake one quits on this file).
	for dir in "$W"/mps-pipe "$W"/mps-pipe-*; do
		[ -e "$dir/nvidia-cuda-mps-control.pid" ] && touch "$dir/quit"
	done
	# (nvtaskset --cdi mounted a tmpfs on the run directory)
	umount -l "$W/run" 2>/dev/null
	rm -rf "$W"
}
trap cleanup EXIT

# The image: sh, sleep and cat, the fake program, the fake driver where the loader looks,
# and every library they load, from this machine (tests/podman/image.sh).
# shellcheck source=tests/podman/image.sh
. "$ROOT/tests/podman/image.sh"
make_image() {
	fake_image_tar "$W/rootfs" "$W/rootfs.tar" "$FAKEDIR" "$B/lib/nvtaskset/libnvtaskset.so" \
		"$APP=fakeapp" &&
		"${PODMAN[@]}" import "$W/rootfs.tar" "$IMAGE" >"$W/import.log" 2>&1
}

echo "check-podman: $(podman --version), $(runc --version | head -1), in $W"
make_image || skip_all "cannot build the image: $(tail -3 "$W/import.log" 2>/dev/null)"
"${RUN[@]}" --rm "$IMAGE" sleep 0 >"$W/probe.log" 2>&1 ||
	skip_all "podman cannot run a container here: $(tail -3 "$W/probe.log")"
"$NVT" --cdi --cdi-dir "$CDI_DIR" --vendor "$VENDOR" >"$W/cdi.log" 2>&1 || {
	echo "check-podman: nvtaskset --cdi failed: $(cat "$W/cdi.log")" >&2
	exit 1
}

PASS=0 FAIL=0 FAILED=""
die() {
	echo "FAILED: $*"
	exit 1
}
has() { [[ "$1" == *"$2"* ]] || die "expected '$2' in: $1"; }
# dry_tpcs ARGS...: the TPCs nvtaskset --dry-run ARGS gives on the fake GPU.
dry_tpcs() { "$NVT" --no-mps --dry-run "$@" | sed -n 's/.*: TPCs //p'; }
# tpcs LIST: the TPCs of a list, one per line.
tpcs() {
	python3 -c 'import sys
for item in sys.argv[1].split(","):
    a, _, b = item.partition("-")
    print("\n".join(str(t) for t in range(int(a), int(b or a) + 1)))' "$1"
}
# wait_nonempty FILE...: until each exists with something in it (a hang guard of LIMIT s).
wait_nonempty() {
	local f deadline=$((SECONDS + LIMIT))
	for f in "$@"; do
		until [ -s "$f" ]; do
			((SECONDS < deadline)) || die "timed out waiting for $f"
			sleep 0.1
		done
	done
}
# wait_reads FILE TEXT
wait_reads() {
	local deadline=$((SECONDS + LIMIT))
	until [ "$(cat "$1" 2>/dev/null)" == "$2" ]; do
		((SECONDS < deadline)) || die "timed out waiting for $1 to read $2 (it reads $(cat "$1"))"
		sleep 0.1
	done
}
# start NAME DEVICE...: a detached container NAME running the fake program's loop (state
# /out/NAME.state, stop /out/NAME.stop); its host PID in $W/NAME.pid.
start() {
	local name=$1
	shift
	"${RUN[@]}" -d --name "$name-$$" "${@/#/--device=$VENDOR/}" "$IMAGE" \
		fakeapp loop "/out/$name.stop" "/out/$name.state" >"$W/$name.id" 2>"$W/$name.err" ||
		die "podman run $name: $(cat "$W/$name.err")"
	"${PODMAN[@]}" inspect -f '{{.State.Pid}}' "$name-$$" >"$W/$name.pid"
}
stop() {
	touch "$W/out/$1.stop"
	"${PODMAN[@]}" wait "$1-$$" >/dev/null
	"${PODMAN[@]}" rm "$1-$$" >/dev/null
}

# The kernels run on the device's GPCs.
s_gpc() {
	local out
	out=$("${RUN[@]}" --rm --device "$VENDOR/gpc=0-1" "$IMAGE" fakeapp launch 1 2>&1) ||
		die "podman run: $out"
	has "$out" "tpcs=$(dry_tpcs -g 0-1) "
}

# The container's own variables do not pick its partition: a user's -e NVTASKSET_PARTITION
# (every TPC) beside a gpc device, or beside a tpcs device, is refused with the reason, and
# nothing runs; so is a priority of its own.
s_env_override() {
	local out all dev
	all=$("$NVT" --no-mps -c all /usr/bin/env | sed -n 's/^NVTASKSET_PARTITION=//p')
	[ -n "$all" ] || die "no partition record from nvtaskset -c all"
	for dev in gpc=0-1 tpcs=4; do
		out=$("${RUN[@]}" --rm -e "NVTASKSET_PARTITION=$all" --device "$VENDOR/$dev" "$IMAGE" \
			fakeapp launch 1 2>&1) && die "$dev: it ran: $out"
		has "$out" "a container does not choose its partition"
		[[ "$out" != *" hung="* ]] || die "$dev: a kernel ran: $out"
	done
	# Nor its priority: only a priority device's (its hook is in config.json's hooks).
	out=$("${RUN[@]}" --rm -e NVTASKSET_PRIORITY=high --device "$VENDOR/tpcs=4" "$IMAGE" \
		fakeapp launch 1 2>&1) && die "-e NVTASKSET_PRIORITY: it ran: $out"
	has "$out" "a container does not choose its priority"
	out=$("${RUN[@]}" --rm --device "$VENDOR/tpcs=4" --device "$VENDOR/priority=high" "$IMAGE" \
		fakeapp launch 1 2>&1) || die "tpcs=4 priority=high: $out"
	has "$out" " hung=0"
	# Nor its run directory (podman hands the program the device's, the last; a runtime that
	# hands it the first would have it make its segment where no claim looks).
	for dev in gpc=0-1 tpcs=4; do
		out=$("${RUN[@]}" --rm -e NVTASKSET_RUNDIR=/tmp --device "$VENDOR/$dev" "$IMAGE" \
			fakeapp launch 1 2>&1) && die "$dev with -e NVTASKSET_RUNDIR: it ran: $out"
		has "$out" "a container does not choose its run directory"
	done
	# Nor does it pass for a priority level's MPS server (whose shim makes no partition).
	out=$("${RUN[@]}" --rm -e NVTASKSET_MPS_SERVER=low --device "$VENDOR/gpc=0-1" "$IMAGE" \
		fakeapp launch 1 2>&1) && die "gpc=0-1 with -e NVTASKSET_MPS_SERVER: it ran: $out"
	has "$out" "a container is no MPS server of nvtaskset's"
}

# Two containers started at once with tpcs=33 get disjoint halves; -l lists them with their
# containers; -p from the host moves one live; once it is killed its TPCs are free again and
# nothing of it is left.
s_tpcs() {
	local a b b_ns free out
	start a tpcs=33 &
	start b tpcs=33 &
	wait
	wait_nonempty "$W/out/a.state" "$W/out/b.state"
	a=$(cat "$W/out/a.state") b=$(cat "$W/out/b.state")
	[ "$(tpcs "$a" | wc -l)" == 33 ] && [ "$(tpcs "$b" | wc -l)" == 33 ] ||
		die "not 33 TPCs each: a $a, b $b"
	[ -z "$(comm -12 <(tpcs "$a" | sort) <(tpcs "$b" | sort))" ] || die "a ($a) and b ($b) overlap"
	out=$("$NVT" -l)
	grep -Eq "^ *$(cat "$W/a.pid") .* $a +$(cut -c1-12 "$W/a.id") " <<<"$out" || die "-l: $out"
	grep -Eq "^ *$(cat "$W/b.pid") .* $b +$(cut -c1-12 "$W/b.id") " <<<"$out" || die "-l: $out"
	"$NVT" -p -g 0 "$(cat "$W/a.pid")" >/dev/null || die "-p failed"
	wait_reads "$W/out/a.state" "$(dry_tpcs -g 0)"
	b_ns=$(stat -L -c %i "/proc/$(cat "$W/b.pid")/ns/pid")
	"${PODMAN[@]}" kill "b-$$" >/dev/null
	"${PODMAN[@]}" wait "b-$$" >/dev/null
	"${PODMAN[@]}" rm "b-$$" >/dev/null
	out=$("$NVT" -l)
	[[ "$out" != *"$(cut -c1-12 "$W/b.id")"* ]] || die "the killed container is listed: $out"
	! ls "$W/run/nvtaskset-0/nvtaskset.$b_ns."* 2>/dev/null || die "its segment is left"
	free=$(dry_tpcs -n 60 --exclude-running)
	[ "$(tpcs "$free" | wc -l)" == 60 ] || die "60 TPCs not free beside a on GPC 0: $free"
	stop a
}

# A claim that cannot be met: podman run fails with the hook's reason, and runs nothing.
s_full() {
	local out
	start f tpcs=60
	wait_nonempty "$W/out/f.state"
	out=$("${RUN[@]}" --rm --device "$VENDOR/tpcs=16" "$IMAGE" fakeapp launch 1 2>&1) &&
		die "a container started without its 16 TPCs: $out"
	has "$out" "$VENDOR/tpcs=16: the container does not start: cannot pick 16 TPCs: only 6 are free"
	[[ "$out" != *"hung="* ]] || die "the program ran: $out"
	stop f
}

# What a container writes into the run directory it is given (as root, podman's default: a
# setuid-root program; as much as it can) stays there: the host runs none of it (the tmpfs
# --cdi mounts is nosuid and noexec on the host too), and it fills that tmpfs (128 MiB), never
# the file system the directory lies on (the host's /run, whose services share it).
s_rundir() {
	local out used rc
	findmnt -n -M "$W/run" -o OPTIONS | grep -q 'nosuid,nodev,noexec' ||
		die "the run directory is not a file system of its own: $(findmnt -n -T "$W/run")"
	# A container's root leaves a setuid-root program in its run directory: on the host (while
	# the container runs: its directory goes with it) nobody runs it as root.
	rm -f "$W/out/copied" "$W/out/ran"
	"${RUN[@]}" -d --name rundir-$$ --device "$VENDOR/gpc=0" "$IMAGE" sh -c \
		'cat /bin/id >/run/nvtaskset/id && chmod 4755 /run/nvtaskset/id && echo 1 >/out/copied &&
		while [ ! -e /out/ran ]; do sleep 0.1; done' >/dev/null || die "the container's copy failed"
	wait_nonempty "$W/out/copied"
	set -- "$W"/run/containers/*/run/id
	[ "$(stat -c %u:%a "$1")" == 0:4755 ] || die "no setuid-root program: $(ls -lR "$W/run")"
	out=$(setpriv --reuid=65534 --regid=65534 --clear-groups "$1" -u 2>&1) && rc=0 || rc=$?
	: >"$W/out/ran"
	"${PODMAN[@]}" wait rundir-$$ >/dev/null
	"${PODMAN[@]}" rm rundir-$$ >/dev/null
	[ "$out" != 0 ] || die "another user ran the container's program as root"
	[ "$rc" == 126 ] || die "another user ran the container's program ($rc): $out"
	[ -z "$(ls -A "$W/run/containers")" ] || die "the container left its run directory: $(ls -AR "$W/run/containers")"
	used=$(df -k --output=used "$W" | tail -1)
	out=$("${RUN[@]}" --rm --device "$VENDOR/gpc=0" "$IMAGE" \
		dd if=/dev/zero of=/run/nvtaskset/fill bs=1M count=160 2>&1) && die "160 MiB fit: $out"
	[ "$(awk '/bytes .* copied/ {print $1}' <<<"$out")" -le $((128 << 20)) ] ||
		die "the fill is larger than 128 MiB: $out"
	has "$out" "No space left on device"
	[ "$(df -k --output=used "$W" | tail -1)" -lt $((used + (64 << 10))) ] ||
		die "the container filled the file system below the run directory"
	out=$("${RUN[@]}" --rm --device "$VENDOR/gpc=0-1" "$IMAGE" fakeapp launch 1 2>&1) ||
		die "a container after the fill: $out"
	has "$out" "tpcs=$(dry_tpcs -g 0-1) "
}

# A container's root sees its own run directory alone (the device's hook binds it at
# /run/nvtaskset): it cannot empty a host task's segment by the name the host's layout gives it,
# and the host still lists the task and moves it.
s_isolation() {
	local out seg host
	rm -f "$W/h.stop" "$W/h.state"
	"$NVT" --no-mps -c 0-3 "$APP" loop "$W/h.stop" "$W/h.state" >"$W/h.out" 2>&1 &
	host=$!
	wait_reads "$W/h.state" 0-3
	seg=$(find "$W/run/nvtaskset-0" -name "nvtaskset.*.$host")
	[ -s "$seg" ] || die "no segment of the host task: $(ls -lR "$W/run")"
	out=$("${RUN[@]}" --rm --device "$VENDOR/gpc=0" "$IMAGE" sh -c \
		'mkdir -p "/run/nvtaskset/${1%/*}"; : >"/run/nvtaskset/$1"' - "${seg#"$W/run/"}" 2>&1) ||
		die "the container's write: $out"
	[ -s "$seg" ] || die "a container emptied the host task's segment"
	out=$("$NVT" -l)
	[[ "$out" =~ (^|$'\n')" "*$host" " ]] || die "-l lost the host task: $out"
	"$NVT" -p -g 1 "$host" >/dev/null || die "-p on the host task"
	wait_reads "$W/h.state" "$(dry_tpcs -g 1)"
	touch "$W/h.stop"
	wait "$host" || die "the host task: $(cat "$W/h.out")"
}

# A user namespace that maps uids: refused at start, with the reason.
s_userns() {
	local out
	out=$("${RUN[@]}" --rm --uidmap 0:100000:65536 --gidmap 0:100000:65536 \
		--device "$VENDOR/gpc=0" "$IMAGE" fakeapp launch 1 2>&1) && die "it ran: $out"
	has "$out" "maps user ids (its uid 0 is uid 100000 outside)"
}

# podman exec in a tpcs container: the new process is no descendant of the first (its parent
# lies outside the container) and gets none of the devices' variables; it takes the first
# process's partition.
s_exec() {
	local out
	start e tpcs=8
	wait_nonempty "$W/out/e.state"
	out=$("${PODMAN[@]}" exec "e-$$" fakeapp launch 1 2>&1)
	has "$out" "tpcs=$(cat "$W/out/e.state") "
	stop e
}

# podman exec --user 1000 sh -c after another host user made nvtaskset-1000 in the container's
# run directory once the container started (the hook could set it aside only before): the shell
# and its program make no segment, saying why, and the program still runs on the container's
# partition (through its shell, whose parent lies outside the container).
s_exec_squat() {
	local out id
	start q tpcs=8
	wait_nonempty "$W/out/q.state"
	id=$(cat "$W/q.id")
	setpriv --reuid 65534 --regid 65534 --clear-groups mkdir "$W/run/containers/$id/run/nvtaskset-1000" ||
		die "another user cannot make an entry in the container's run directory"
	out=$("${PODMAN[@]}" exec --user 1000 "q-$$" sh -c 'fakeapp launch 1; exit $?' 2>&1)
	has "$out" "tpcs=$(cat "$W/out/q.state") "
	has "$out" "/run/nvtaskset/nvtaskset-1000 (it belongs to uid 65534, not to uid 1000)"
	stop q
}

# Rootless podman (a user of this machine's, uid 1000 or more, who can reach the build tree):
# the container's root is that user outside, and the hook refuses it with the reason.
s_rootless() {
	local user out before pid
	user=$(getent passwd | awk -F: '$3 >= 1000 && $3 < 60000 { print $1; exit }')
	[ -n "$user" ] || { echo "SKIPPED: no user with a uid from 1000 to 59999"; exit 77; }
	su "$user" -s /bin/sh -c "test -x '$NVT' && test -r '$W/rootfs.tar'" ||
		{ echo "SKIPPED: $user cannot reach $NVT"; exit 77; }
	mkdir -p "$W/rootless"
	chown "$user" "$W/rootless"
	before=$(pgrep -u "$user" -x catatonit | sort)
	out=$(cd / && timeout "$LIMIT" su "$user" -s /bin/sh -c "
		P='podman --root $W/rootless/storage --runroot $W/rootless/run --storage-driver vfs'
		\$P import '$W/rootfs.tar' localhost/nvtaskset-check:$$ >/dev/null &&
		\$P run --rm --runtime runc --network none --ulimit nofile=4096:4096 \
			--ulimit nproc=4096:4096 --device $VENDOR/gpc=0 localhost/nvtaskset-check:$$ \
			fakeapp launch 1; rc=\$?; \$P rmi -a -f >/dev/null 2>&1; exit \$rc" 2>&1) &&
		die "it ran: $out"
	# The pause process rootless podman started for the user (it would outlive us).
	for pid in $(comm -13 <(echo "$before") <(pgrep -u "$user" -x catatonit | sort)); do
		kill "$pid"
	done
	[[ "$out" == *"runc create failed"* ]] || { echo "SKIPPED: rootless podman: $out"; exit 77; }
	has "$out" "maps user ids (its uid 0 is uid $(id -u "$user") outside)"
	rm -rf "$W/rootless"
}

# make try-containers (tests/podman/try.sh, docs/containers.md): its tour runs as it says,
# and leaves nothing: no spec, no directory.
s_try() {
	local out before a b moved
	before=$(ls -d /tmp/nvtaskset-try-containers.* 2>/dev/null | wc -l)
	out=$(TRY_WAIT=$LIMIT "$ROOT/tests/podman/try.sh" 2>&1) || die "the tour failed: $out"
	echo "$out"
	ran() { sed -n 's/^demo [0-9]*: kernel [0-9]* ran on TPCs \([^ ]*\) .*/\1/p' <<<"$out" | sed -n "$1p"; }
	[ "$(ran 1)" == "$(dry_tpcs -g 1)" ] || die "the gpc=1 container ran on $(ran 1)"
	a=$(ran 2) b=$(ran 3)
	[ "$(tpcs "$a" | wc -l)" == 33 ] && [ "$(tpcs "$b" | wc -l)" == 33 ] &&
		[ -z "$(comm -12 <(tpcs "$a" | sort) <(tpcs "$b" | sort))" ] || die "the tpcs=33 pair: $a and $b"
	moved=$(sed -n "s/^pid [0-9]*'s new GPC list: //p" <<<"$out")
	[ -n "$moved" ] && moved=$(dry_tpcs -g "$moved")
	[ -n "$moved" ] && [ "$(ran 4)" == "$moved" ] || die "moved to '$moved', ran on '$(ran 4)'"
	[ "$(grep -c '^demo [0-9]*: [0-9]* kernels, done$' <<<"$out")" == 3 ] || die "not 3 demos done"
	! ls /var/run/cdi/nvtaskset-try* 2>/dev/null || die "the tour's spec is left"
	[ "$(ls -d /tmp/nvtaskset-try-containers.* 2>/dev/null | wc -l)" == "$before" ] || die "its directory is left"
}

# --with-mps and a time-sliced priority device: the container's programs reach their level's MPS
# control daemon (which --cdi --with-mps starts, its server told the level), whose pipe
# directory the device's hook binds over the container's; a container of no sliced priority
# reaches the shared daemon; with the level's daemon stopped the container does not start, and
# no daemon is started for it. (The spec under a vendor of its own, with MPS directories of
# this run's own and the tests' fake MPS control daemon.)
s_slice() {
	local vendor=$VENDOR-mps pipe=$W/mps-pipe out lvl dev
	export CUDA_MPS_PIPE_DIRECTORY=$pipe CUDA_MPS_LOG_DIRECTORY=$W/mps-log PATH=$ROOT/tests/fake/bin:$PATH
	mkdir -p "$pipe"
	"$NVT" --cdi --with-mps --cdi-dir "$CDI_DIR" --vendor "$vendor" >"$W/cdi-mps.log" 2>&1 ||
		die "nvtaskset --cdi --with-mps: $(cat "$W/cdi-mps.log")"
	for lvl in low high; do
		has "$(cat "$pipe-$lvl/fake.env")" "NVTASKSET_MPS_SERVER=$lvl,yield=slice"
	done
	# (priority=normal alone: time-sliced, its level's daemon; beside a partition device, the shared one)
	for dev in "priority=low-slice:-low" "priority=normal:-normal" "gpc=0-1 priority=high-slice:-high" "gpc=0-1 priority=high:"; do
		# shellcheck disable=SC2046 # the devices, one word each
		out=$("${RUN[@]}" --rm $(printf -- "--device=$vendor/%s " ${dev%:*}) "$IMAGE" \
			sh -c 'echo "$NVTASKSET_PRIORITY"; cat "$CUDA_MPS_PIPE_DIRECTORY/nvidia-cuda-mps-control.pid"' 2>&1) ||
			die "${dev%:*}: $out"
		[ "$(tail -1 <<<"$out")" == "$(cat "$pipe${dev##*:}/nvidia-cuda-mps-control.pid")" ] ||
			die "${dev%:*}: the container reached $(tail -1 <<<"$out"), not the daemon of $pipe${dev##*:}"
	done
	has "$("${RUN[@]}" --rm --device "$vendor/priority=low-slice" "$IMAGE" sh -c 'echo "$NVTASKSET_PRIORITY"')" \
		"low,yield=slice"
	touch "$pipe-low/quit"
	for ((lvl = 0; lvl < 100; lvl++)); do
		[ -e "$pipe-low/nvidia-cuda-mps-control.pid" ] || break
		sleep 0.1
	done
	rm -f "$pipe-low/fake.env"
	out=$("${RUN[@]}" --rm --device "$vendor/priority=low-slice" "$IMAGE" fakeapp launch 1 2>&1) &&
		die "it ran without the low level's daemon: $out"
	has "$out" "the MPS control daemon of priority low does not run (pipe directory $pipe-low): run nvtaskset --cdi --with-mps again"
	[ ! -e "$pipe-low/fake.env" ] || die "the hook started a daemon"
	"$NVT" --mps stop >"$W/mps-stop.log" 2>&1 || die "--mps stop: $(cat "$W/mps-stop.log")"
	rm -f "$CDI_DIR/$vendor"-*.json "$CDI_DIR/$vendor.ld.so.preload"
}

ALL="gpc env_override tpcs full rundir isolation userns exec exec_squat rootless slice try"
# shellcheck disable=SC2048 # scenario names split on purpose (no name holds a space)
for s in ${*:-$ALL}; do
	start_s=$SECONDS
	(s_"$s") >"$W/$s.log" 2>&1
	rc=$?
	if [ $rc = 77 ]; then
		echo "SKIP $s ($(tail -1 "$W/$s.log"))"
	elif [ $rc = 0 ]; then
		PASS=$((PASS + 1))
		echo "PASS $s ($((SECONDS - start_s)) s)"
	else
		FAIL=$((FAIL + 1))
		FAILED="$FAILED $s"
		echo "FAIL $s ($((SECONDS - start_s)) s)"
		sed 's/^/    /' "$W/$s.log" | tail -20
		"${PODMAN[@]}" rm -f -a >/dev/null 2>&1
	fi
done
[ -z "$FAILED" ] || echo "failed:$FAILED"
echo "$PASS passed, $FAIL failed"
[ $FAIL = 0 ]
