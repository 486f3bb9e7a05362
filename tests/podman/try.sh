#!/usr/bin/env bash
# nvtaskset's containers without a GPU (make try-containers; docs/containers.md, "Try it
# without a GPU"), as root, with podman and runc: the CDI devices of `nvtaskset --cdi` given
# to containers of a small image built offline from this machine's files (make try's demo,
# the fake CUDA driver: tests/podman/image.sh), on the fake H100. A short tour: the spec
# written, a container on a GPC, two containers started at once on 33 TPCs each, -l listing
# them with their containers, -p moving one live, both stopped. Everything it makes lives in one temporary
# directory (the image, its podman storage, the run directory, the calibration cache) but the
# spec, which podman 4 reads only from /etc/cdi and /var/run/cdi: it writes it to
# /var/run/cdi under a vendor name of its own, nvtaskset-try, and removes it at the end.
#
# Usage: tests/podman/try.sh   (through `make try-containers`, which builds what it needs)
# TRY_WAIT=SECONDS: how long it waits for a demo's line (default 30; the tests give more).
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
B=$ROOT/build
VENDOR=nvtaskset-try
CDI_DIR=/var/run/cdi
IMAGE=localhost/nvtaskset-try

fail() {
	echo "try-containers: $*" >&2
	exit 1
}
[ "$(id -u)" == 0 ] || fail "needs root: rootful podman runs nvtaskset's hooks on the host (the" \
	"container of a rootless podman is its user's, which the hooks refuse); run it with sudo"
for tool in podman runc; do
	command -v "$tool" >/dev/null || fail "needs $tool (Debian: apt-get install podman runc)"
done
PODMAN=$(command -v podman)
for f in bin/nvtaskset lib/nvtaskset/libnvtaskset.so test/fake/libcuda.so.1 test/demo; do
	[ -e "$B/$f" ] || fail "build/$f is missing: run 'make try-containers' (it builds what it needs)"
done
! ls "$CDI_DIR/$VENDOR"* >/dev/null 2>&1 ||
	fail "$CDI_DIR holds $VENDOR's spec already: another tour runs, or one was killed (then remove $CDI_DIR/$VENDOR*)"

W=$(mktemp -d /tmp/nvtaskset-try-containers.XXXXXX)
chmod 755 "$W"
mkdir -p "$W"/{cache,storage,runroot,rootfs}
mkdir -m 1777 "$W/run"
# The fake driver and the tour's own run directory and calibration cache, for the command and
# for the hooks, which the spec records them for.
export LD_LIBRARY_PATH=$B/test/fake NVTASKSET_RUNDIR=$W/run NVTASKSET_CACHE_DIR=$W/cache \
	NVTASKSET_PROC_NVIDIA=$W/no-proc-nvidia PATH=$B/bin:$PATH
unset LD_PRELOAD NVTASKSET_PARTITION CUDA_VISIBLE_DEVICES CUDA_MPS_PIPE_DIRECTORY NVTASKSET_CDI
for v in $(env | sed -n 's/^\(FAKECUDA_[A-Z_]*\)=.*/\1/p'); do unset "$v"; done

# podman, with a storage of the tour's own (vfs: no kernel module), runc, no network (none is
# needed), and limits on files and processes below the machine's.
podman() {
	local cmd=$1
	shift
	case "$cmd" in
	run) set -- --network none --ulimit nofile=4096:4096 --ulimit nproc=4096:4096 "$@" ;;
	esac
	timeout 120 "$PODMAN" --root "$W/storage" --runroot "$W/runroot" --storage-driver vfs \
		--runtime runc "$cmd" "$@"
}
cleanup() {
	podman rm -f -a >/dev/null 2>&1 || true
	podman rmi -f -a >/dev/null 2>&1 || true
	rm -f "$CDI_DIR/$VENDOR"-*.json "$CDI_DIR/$VENDOR.ld.so.preload"
	# (nvtaskset --cdi, as root, mounts a tmpfs of its own on the run directory it gives containers.)
	umount -l "$W/run" 2>/dev/null
	rm -rf "$W"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# shellcheck source=tests/fake/tour.sh
. "$ROOT/tests/fake/tour.sh"
TRY_WAIT=${TRY_WAIT:-30}
# follow_logs CONTAINER TEXT: follow for the container's output.
follow_logs() { follow "$1" "$2" podman logs "$1"; }

echo "try-containers: $("$PODMAN" --version), $(runc --version | head -1), in $W"
# shellcheck source=tests/podman/image.sh
. "$ROOT/tests/podman/image.sh"
fake_image_tar "$W/rootfs" "$W/rootfs.tar" "$B/test/fake" "$B/lib/nvtaskset/libnvtaskset.so" \
	"$B/test/demo=demo" || fail "cannot build the image's files"
podman import "$W/rootfs.tar" "$IMAGE" >"$W/import.log" 2>&1 ||
	fail "podman cannot import the image: $(tail -3 "$W/import.log")"
podman run --rm "$IMAGE" sleep 0 >"$W/probe.log" 2>&1 ||
	fail "podman cannot run a container here: $(tail -3 "$W/probe.log")"

say "A fake H100 (66 TPCs in 12 GPCs) and an image, $IMAGE, holding make try's 'demo'" \
	"(a program that launches a kernel every 10 ms and says where its kernels ran) and the" \
	"fake CUDA driver; 'podman' below runs with a storage of the tour's own. No GPU is used." \
	"First the CDI spec: the devices podman gives containers. Podman 4 reads specs only from" \
	"/etc/cdi and /var/run/cdi (a --cdi-dir elsewhere is not seen), so the tour writes it to" \
	"/var/run/cdi under a vendor name of its own ($VENDOR; the default is nvtaskset):"
show nvtaskset --cdi --vendor "$VENDOR"
say "GPC 1's TPCs, as --topology lists them:"
nvtaskset --topology | awk 'NR <= 4 || $1 == "1"'
say "A container on GPC 1 (like nvtaskset -g 1), for 1 s:"
show podman run --rm --device "$VENDOR/gpc=1" "$IMAGE" demo 1
say "Two containers started at once, each on 33 TPCs that no other task holds (like" \
	"nvtaskset -n 33 --exclude-running), claimed when each starts:"
printf '$ %s &\n' "podman run -d --name try-a --device $VENDOR/tpcs=33 $IMAGE demo"
printf '$ %s &\n' "podman run -d --name try-b --device $VENDOR/tpcs=33 $IMAGE demo"
podman run -d --name try-a --device "$VENDOR/tpcs=33" "$IMAGE" demo >/dev/null &
podman run -d --name try-b --device "$VENDOR/tpcs=33" "$IMAGE" demo >/dev/null &
wait
echo '$ podman logs try-a'
follow_logs try-a "ran on"
echo '$ podman logs try-b'
follow_logs try-b "ran on"
say "The host's nvtaskset sees them, with their containers (-l):"
show nvtaskset -l
say "Its GPCs (-p -g, its host PID), and a move to the first of them alone while it runs;" \
	"its next kernel runs there:"
a_pid=$(podman inspect -f '{{.State.Pid}}' try-a)
a_gpcs=$(show nvtaskset -p -g "$a_pid")
echo "$a_gpcs"
a_gpc=$(sed -n "s/^pid $a_pid's current GPC list: \([0-9]*\).*/\1/p" <<<"$a_gpcs")
[ -n "$a_gpc" ] || fail "no GPC of try-a's: $a_gpcs"
show nvtaskset -p -g "$a_gpc" "$a_pid"
echo '$ podman logs try-a'
follow_logs try-a "ran on"
say "Stop both (their TPCs are free again), and remove the spec:"
show podman stop try-a try-b
echo '$ podman logs try-a'
follow_logs try-a "done"
echo '$ podman logs try-b'
follow_logs try-b "done"
show rm "$CDI_DIR/$VENDOR-gpc.json" "$CDI_DIR/$VENDOR-tpcs.json" "$CDI_DIR/$VENDOR-priority.json" \
	"$CDI_DIR/$VENDOR-mem.json" \
	"$CDI_DIR/$VENDOR.ld.so.preload"
say "For the devices on a machine of your own, as root: nvtaskset --cdi (docs/containers.md)."
