#!/usr/bin/env bash
# The nvtaskset Slurm plugin with a real Slurm: starts munged, slurmctld and
# slurmd (Debian: munge, slurm-wlm) in a private directory on this machine,
# as root, with a generated single-node slurm.conf whose node has the fake
# GPU's TPCs as the count GRES `tpc`, the plugin in plugstack.conf and
# nvtaskset's cli_filter.lua; jobs run the fake CUDA program on the fake
# driver. Installs nothing; stops every daemon it started.
#
# Usage: tests/slurm/run.sh [SCENARIO...]   (`make check-slurm`; default: all)
# Prints one line per scenario with its time, and "N passed, M failed" last.
# Over 500 lines on purpose: the scenarios run against the daemons this script starts and
# stops, on the configuration and helpers it writes for them.
set -u
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
CHECKOUT=$ROOT # the jobs' working directory (srun's); ROOT may become a copy below
B=$ROOT/build
T=$B/test
NVT=$B/bin/nvtaskset
SPANK=$B/lib/nvtaskset/spank_nvtaskset.so
SHIM=$B/lib/nvtaskset/libnvtaskset.so
FAKEDIR=$T/fake
TASK=$ROOT/tests/slurm/task.sh
export APP=$T/fakeapp-dlopen
# A user other than the submitter, for the job of another user.
OTHER_UID=65534

fail_setup() {
	echo "check-slurm: $*" >&2
	exit 1
}
[ "$(id -u)" = 0 ] || fail_setup "needs root: it starts munged, slurmctld and slurmd"
for tool in munged slurmctld slurmd srun sbatch salloc squeue scancel scontrol setpriv python3 timeout mknod; do
	command -v "$tool" >/dev/null ||
		fail_setup "needs $tool (Debian: apt-get install slurm-wlm libslurm-dev munge)"
done
for f in "$SPANK" "$SHIM" "$NVT" "$APP" "$FAKEDIR/libcuda.so.1"; do
	[ -e "$f" ] || fail_setup "$f is missing: run make check-slurm"
done
id -un "$OTHER_UID" >/dev/null 2>&1 || fail_setup "needs a user with uid $OTHER_UID"

W=$(mktemp -d /tmp/nvtaskset-slurm.XXXXXX)
chmod 755 "$W"
# An empty directory outside /tmp, on which a private-/tmp slurmd holds the real one.
HOLD=$(mktemp -d /var/tmp/nvtaskset-slurm-hold.XXXXXX)
# Where another user cannot reach the checkout (a clone in a private directory, a umask of
# 077), the jobs of the other user run a copy that they can: $W/tree (build/'s programs and
# libraries, tests/, tools/slurm/), world-readable, removed with $W.
# shellcheck source=tests/share-build.sh
. "$ROOT/tests/share-build.sh"
if ! reachable_by "$OTHER_UID" "$ROOT"; then
	share_build "$ROOT" "$W/tree" || fail_setup "cannot copy the build for uid $OTHER_UID to $W/tree"
	reachable_by "$OTHER_UID" "$W/tree" || fail_setup "uid $OTHER_UID cannot reach $W/tree"
	echo "check-slurm: the checkout is not reachable by uid $OTHER_UID: the jobs run a copy, $W/tree"
	ROOT=$W/tree B=$W/tree/build
	T=$B/test NVT=$B/bin/nvtaskset SPANK=$B/lib/nvtaskset/spank_nvtaskset.so
	SHIM=$B/lib/nvtaskset/libnvtaskset.so FAKEDIR=$T/fake TASK=$ROOT/tests/slurm/task.sh
	APP=$T/fakeapp-dlopen
fi
export OUT=$W/out
mkdir -p "$W"/{etc,state,spool,log,munge,cache,mps-pipe,mps-log} "$OUT" "$W/run"
chmod 1777 "$OUT" "$W/run"
export SLURM_CONF=$W/etc/slurm.conf
# The jobs' environment, which srun passes on to the tasks.
export LD_LIBRARY_PATH=$FAKEDIR NVTASKSET_RUNDIR=$W/run
unset LD_PRELOAD NVTASKSET_PARTITION CUDA_VISIBLE_DEVICES CUDA_MPS_PIPE_DIRECTORY \
	CUDA_DEVICE_MAX_CONNECTIONS SLURM_JOB_ID SLURM_JOBID
for v in $(env | sed -n 's/^\(SLURM_SPANK_[A-Za-z0-9_]*\)=.*/\1/p'); do unset "$v"; done

# Every test task stops when its stop file appears.
stop_all_tasks() {
	local f tag
	for f in "$OUT"/*.env; do
		[ -e "$f" ] || continue
		tag=$(basename "$f")
		touch "$OUT/${tag%%.*}.stop"
	done
}

CTLD='' SLURMD='' CLUSTER=
# Stops slurmd and slurmctld (after every job), munged with all, and the MPS daemon.
stop_daemons() {
	local i pid dir all=${1:-}
	# Let every job end: the fake programs stop when their stop file appears.
	stop_all_tasks
	# A fake MPS daemon in slurmd's private /run (it keeps the namespace alive).
	[ "$CLUSTER" = private ] && [ -n "$SLURMD" ] && in_slurmd sh -c \
		'[ -e /run/nvidia-mps/nvidia-cuda-mps-control.pid ] && touch /run/nvidia-mps/quit; sleep 0.2'

	[ -n "$CTLD" ] && timeout 10 scancel --full --quiet --user=root 2>/dev/null
	[ -n "$CTLD" ] && timeout 10 scancel --full --quiet --user="$OTHER_UID" 2>/dev/null
	for ((i = 0; i < 100; i++)); do
		[ -z "$CTLD" ] || [ -z "$(timeout 5 squeue -h 2>/dev/null)" ] && break
		sleep 0.1
	done
	for pid in $SLURMD $CTLD; do
		kill "$pid" 2>/dev/null
		for ((i = 0; i < 100; i++)); do
			kill -0 "$pid" 2>/dev/null || break
			sleep 0.1
		done
		kill -KILL "$pid" 2>/dev/null
	done
	CTLD='' SLURMD=
	# A stall cluster's slurmstepd that a stalled read holds (a plugin that reads maps where
	# they stall) does not end with its job: every process of its environment's.
	[ "$CLUSTER" = stall ] && for pid in $(grep -lsF "STALLREAD_LOG=$W/log/stalls" /proc/[0-9]*/environ |
		cut -d/ -f3); do
		kill -KILL "$pid" 2>/dev/null
	done
	[ -z "$all" ] && return
	[ -s "$W/munge/pid" ] && kill "$(cat "$W/munge/pid")" 2>/dev/null
	# The MPS control daemons the plugin started, the shared one and the priority levels'
	# (the fake one quits on this file).
	for dir in "$W"/mps-pipe "$W"/mps-pipe-*; do
		[ -e "$dir/nvidia-cuda-mps-control.pid" ] && touch "$dir/quit"
	done
	sleep 0.2
}
stop_cluster() {
	stop_daemons all
	if [ -n "${KEEP:-}" ]; then
		echo "kept $W"
	else
		rm -rf "$W"
	fi
	rmdir "$HOLD" 2>/dev/null
}
trap stop_cluster EXIT
trap 'exit 1' INT TERM HUP

# Two free TCP ports for slurmctld and slurmd, below the ephemeral range where the machine has
# room there: a port of that range, free when looked at, may be any outgoing connection's (the
# suite's scontrol and sinfo make many) before the daemon binds it.
free_ports() {
	python3 -c 'import random, socket
try:
    low = int(open("/proc/sys/net/ipv4/ip_local_port_range").read().split()[0])
except (OSError, ValueError, IndexError):
    low = 0
held = []
for _ in range(1000):
    if len(held) == 2:
        break
    s = socket.socket()
    try:
        s.bind(("127.0.0.1", random.randint(10000, low - 1) if low > 11000 else 0))
    except OSError:
        s.close()
        continue
    held.append(s)
print(" ".join(str(x.getsockname()[1]) for x in held))'
}

# Whether this machine lets root make mount namespaces (containers may not).
can_unshare() { command -v nsenter >/dev/null && unshare --mount --propagation private true 2>/dev/null; }
# in_slurmd CMD...: runs CMD in slurmd's mount namespace.
in_slurmd() { nsenter -t "$SLURMD" -m -- "$@"; }

# start_cluster KIND: a node with fake GPUs (the daemons and the jobs see
# FAKECUDA_DEVICES), each an H100 of TPCS TPCs. KIND: one (one GPU), two
# (two GPUs, also a gpu GRES with device files), private (one GPU; slurmd
# and all it starts have a /run and a /tmp of their own: the system's
# default MPS directories, which a scenario may take as a user would).
start_cluster() {
	local host ports tpcs i gpus=1 gres types stall=()
	CLUSTER=$1
	[ "$1" = two ] && gpus=2
	export FAKECUDA_DEVICES=$gpus
	host=$(hostname -s)
	read -r -a ports <<<"$(free_ports)"
	[ "${#ports[@]}" = 2 ] || fail_setup "no two free TCP ports on 127.0.0.1: ${ports[*]}"
	# The fake GPUs, calibrated by root into the cache the plugin reads.
	env NVTASKSET_CACHE_DIR="$W/cache" "$NVT" --calibrate >"$W/log/calibrate" 2>&1 ||
		fail_setup "cannot calibrate the fake GPU: $(cat "$W/log/calibrate")"
	tpcs=$(env NVTASKSET_CACHE_DIR="$W/cache" "$NVT" --topology |
		sed -n 's/^ *\([0-9]*\) TPCs,.*/\1/p' | head -1)
	[ -n "$tpcs" ] || fail_setup "cannot read the fake GPU's TPC count"
	TPCS=$tpcs
	# munged as munge, on a socket and key of its own.
	if [ ! -s "$W/munge/pid" ]; then
		chown munge:munge "$W/munge"
		head -c 1024 /dev/urandom >"$W/munge/munge.key"
		chown munge:munge "$W/munge/munge.key"
		chmod 400 "$W/munge/munge.key"
		timeout 20 setpriv --reuid=munge --regid=munge --clear-groups munged \
			--socket="$W/munge/socket" --key-file="$W/munge/munge.key" \
			--log-file="$W/munge/log" --pid-file="$W/munge/pid" --seed-file="$W/munge/seed" ||
			fail_setup "munged did not start: $(cat "$W/munge/log" 2>/dev/null)"
	fi
	rm -rf "${W:?}"/state/* "${W:?}"/spool/*
	gres=tpc:$((tpcs * gpus)) types=tpc
	[ "$1" = two ] && gres=$gres,gpu:$gpus types=tpc,gpu
	cat >"$SLURM_CONF" <<EOF
ClusterName=nvtaskset
SlurmctldHost=$host(127.0.0.1)
SlurmctldPort=${ports[0]}
SlurmdPort=${ports[1]}
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket=$W/munge/socket
StateSaveLocation=$W/state
SlurmdSpoolDir=$W/spool
SlurmctldPidFile=$W/slurmctld.pid
SlurmdPidFile=$W/slurmd.pid
SlurmctldLogFile=$W/log/slurmctld.log
SlurmdLogFile=$W/log/slurmd.log
SlurmdDebug=verbose
MailProg=/bin/true
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
SlurmdParameters=config_overrides
MpiDefault=none
ReturnToService=2
SchedulerType=sched/builtin
KillWait=3
GresTypes=$types
CliFilterPlugins=cli_filter/lua
PlugStackConfig=$W/etc/plugstack.conf
NodeName=$host NodeAddr=127.0.0.1 CPUs=16 Gres=$gres State=UNKNOWN
PartitionName=main Nodes=ALL Default=YES MaxTime=INFINITE State=UP
EOF
	echo "Name=tpc Count=$((tpcs * gpus))" >"$W/etc/gres.conf"
	if [ "$1" = two ]; then
		# Device files for Slurm's gpu GRES (it reads their numbers; the fake
		# GPUs need none). Slurm's GPU i is the i-th in PCI bus order.
		mkdir -p "$W/dev"
		for ((i = 0; i < gpus; i++)); do
			[ -e "$W/dev/nvidia$i" ] || mknod "$W/dev/nvidia$i" c 195 "$i" ||
				fail_setup "cannot make a device file for the gpu GRES"
		done
		echo "Name=gpu File=$W/dev/nvidia[0-$((gpus - 1))]" >>"$W/etc/gres.conf"
	fi
	plugstack
	cp "$ROOT/tools/slurm/cli_filter.lua" "$W/etc/cli_filter.lua"
	# slurmstepd (started by slurmd) needs the fake driver (LD_LIBRARY_PATH)
	# and the calibration cache.
	env NVTASKSET_CACHE_DIR="$W/cache" NVTASKSET_DRIVER_TIMEOUT=20 \
		slurmctld -D -i >"$W/log/slurmctld.out" 2>&1 &
	CTLD=$!
	for ((i = 0; i < 100; i++)); do
		timeout 5 scontrol ping 2>/dev/null | grep -q 'is UP' && break
		sleep 0.2
	done
	timeout 5 scontrol ping | grep -q 'is UP' ||
		fail_setup "slurmctld did not start: $(tail -5 "$W/log/slurmctld.log")"
	# NVTASKSET_TEST_SLURMD marks slurmd's environment: the MPS daemon must not have it. The
	# stall cluster's slurmd and slurmstepd have stallread.so: a read of the memory map of a
	# process named stallme waits until its reader is killed (tests/fake/stallread.c).
	[ "$1" = stall ] && stall=(LD_PRELOAD="$T/fake/stallread.so" STALLREAD_COMM=stallme
		"STALLREAD_FILES=maps cmdline environ" STALLREAD_LOG="$W/log/stalls")
	if [ "$1" = private ]; then
		# shellcheck disable=SC2174 # the mode is the last directory's (its parents are there, or the umask's)
		mkdir -p -m 1777 "$W/tmp"
		"$ROOT/tests/e2e/helpers/in-private-tmp" "$W/tmp" "$HOLD" "$W" "$CHECKOUT" -- \
			sh -c 'mount -t tmpfs -o mode=755 tmpfs /run && exec "$@"' sh \
			env NVTASKSET_CACHE_DIR="$W/cache" NVTASKSET_DRIVER_TIMEOUT=20 NVTASKSET_TEST_SLURMD=1 \
			slurmd -D >"$W/log/slurmd.out" 2>&1 &
	else
		env NVTASKSET_CACHE_DIR="$W/cache" NVTASKSET_DRIVER_TIMEOUT=20 NVTASKSET_TEST_SLURMD=1 \
			"${stall[@]}" slurmd -D >"$W/log/slurmd.out" 2>&1 &
	fi
	SLURMD=$!
	for ((i = 0; i < 100; i++)); do
		[ "$(timeout 5 sinfo -h -o %T 2>/dev/null)" = idle ] && break
		sleep 0.2
	done
	[ "$(timeout 5 sinfo -h -o %T)" = idle ] ||
		fail_setup "slurmd did not start: $(tail -5 "$W/log/slurmd.log")"
}

# plugstack [ARG...]: writes plugstack.conf with the plugin's usual arguments
# and ARGs, which replace those of their names ("NAME=" drops it). slurmstepd
# reads it anew for each step and each job prolog, srun for each run.
plugstack() {
	local args=(rundir="$W/run" wait=10 mps_pipe="$W/mps-pipe" mps_log="$W/mps-log"
		mps_control="$ROOT/tests/fake/bin/nvidia-cuda-mps-control") arg kept=() a
	for arg in "$@"; do
		for a in "${args[@]}"; do
			[ "${a%%=*}" = "${arg%%=*}" ] || kept+=("$a")
		done
		args=("${kept[@]}")
		[ -n "${arg#*=}" ] && args+=("$arg")
		kept=()
	done
	echo "required $SPANK ${args[*]}" >"$W/etc/plugstack.conf"
}

# ---- Helpers (used in scenarios, which run in subshells under set -e) ----

die() {
	echo "FAILED: $*"
	exit 1
}
eq() { [ "$1" == "$2" ] || die "${3:-value}: expected '$2', got '$1'"; }
has() { [[ "$1" == *"$2"* ]] || die "expected '$2' in: $1"; }
hasnt() { [[ "$1" != *"$2"* ]] || die "did not expect '$2' in: $1"; }

# submit TAG [SRUN-OPTION...] [-- TASK-ARG]: starts a job step of task.sh TAG in the background.
submit() {
	local tag=$1 opts=() arg=
	shift
	while [ $# -gt 0 ]; do
		[ "$1" = -- ] && { arg=$2; break; }
		opts+=("$1")
		shift
	done
	# (made before srun starts: a reader of it, wait_pending, may look at once)
	: >"$OUT/$tag.srun"
	timeout 120 srun "${opts[@]}" "$TASK" "$tag" $arg >"$OUT/$tag.srun" 2>&1 &
	echo $! >"$OUT/$tag.srunpid"
}
# submit_as UID TAG [SRUN-OPTION...]: the same, as user UID.
submit_as() {
	local uid=$1 tag=$2
	shift 2
	: >"$OUT/$tag.srun"
	(cd "$OUT" && timeout 120 setpriv --reuid="$uid" --regid="$uid" --clear-groups \
		srun "$@" "$TASK" "$tag" >"$OUT/$tag.srun" 2>&1) &
	echo $! >"$OUT/$tag.srunpid"
}
# state TAG RANK [SECONDS]: waits for the TPCs task RANK's launches ran on; prints them.
state() {
	local i
	for ((i = 0; i < ${3:-30} * 10; i++)); do
		[ -s "$OUT/$1.$2.state" ] && { cat "$OUT/$1.$2.state"; return; }
		sleep 0.1
	done
	die "task $2 of $1 never launched: $(cat "$OUT/$1.srun" 2>/dev/null)"
}
# finish TAG: stops the job's tasks and waits (30 s at most) for its srun; echoes its status.
finish() {
	local pid i
	pid=$(cat "$OUT/$1.srunpid")
	touch "$OUT/$1.stop"
	for ((i = 0; i < 300; i++)); do
		kill -0 "$pid" 2>/dev/null || break
		sleep 0.1
	done
	kill -0 "$pid" 2>/dev/null && die "srun of $1 did not end: $(cat "$OUT/$1.srun")"
	wait "$pid" 2>/dev/null
}
envof() { sed -n "s/^$3=//p" "$OUT/$1.$2.env"; } # envof TAG RANK NAME
jobof() { sed -n 's/^job=\([0-9]*\) .*/\1/p' "$OUT/$1.0.env"; }
# expand LIST: one TPC a line.
expand() {
	local item
	for item in ${1//,/ }; do
		if [[ $item == *-* ]]; then seq "${item%-*}" "${item#*-}"; else echo "$item"; fi
	done
}
count() { expand "$1" | wc -l; }
common() { comm -12 <(expand "$1" | sort) <(expand "$2" | sort) | wc -l; }
pending() { [ "$(timeout 5 squeue -h -j "$1" -o %T 2>/dev/null)" = PENDING ]; }
# The job ids srun printed or the tasks recorded.
pending_job_of() { sed -n 's/^srun: job \([0-9]*\) queued.*/\1/p' "$OUT/$1.srun"; }
# wait_pending TAG: waits until TAG's job waits in the queue; prints its id.
wait_pending() {
	local i job
	for ((i = 0; i < 100; i++)); do
		job=$(pending_job_of "$1")
		[ -n "$job" ] && pending "$job" && { echo "$job"; return; }
		sleep 0.1
	done
	die "job $1 is not waiting: $(cat "$OUT/$1.srun"; timeout 5 squeue)"
}
nvt_list() { timeout 20 "$NVT" -l; }
since() { python3 -c "print('%.1f' % ($(date +%s.%N) - $1))"; } # since START: seconds
# No slurmstepd holds TPCs any more (the claims are given back).
no_claims() {
	local i
	for ((i = 0; i < 100; i++)); do
		! nvt_list | grep -q 'slurmstepd' && return
		sleep 0.1
	done
	die "a step's TPCs are still held: $(nvt_list)"
}

# ---- Scenarios -------------------------------------------------------------

s_two_jobs() {
	local a0 a1 b0 b1 ja jb list pid
	submit a -n2 --gpu-tpcs=16
	submit b -n2 --gpu-tpcs=16
	a0=$(state a 0) a1=$(state a 1) b0=$(state b 0) b1=$(state b 1)
	echo "job a: $a0 | $a1; job b: $b0 | $b1"
	eq "$a0" "$a1" "the two tasks of job a"
	eq "$b0" "$b1" "the two tasks of job b"
	eq "$(count "$a0")" 16 "TPCs of job a"
	eq "$(count "$b0")" 16 "TPCs of job b"
	eq "$(common "$a0" "$b0")" 0 "TPCs that jobs a and b share"
	ja=$(jobof a) jb=$(jobof b)
	list=$(nvt_list)
	echo "$list"
	for tag in a b; do
		for rank in 0 1; do
			pid=$(envof $tag $rank pid)
			[[ "$(awk -v p="$pid" '$1 == p' <<<"$list")" == *" $(jobof $tag).0 "* ]] ||
				die "-l does not show task $pid as job $(jobof $tag) step 0: $list"
		done
	done
	has "$list" "slurmstepd: [$ja.0]"
	has "$list" "slurmstepd: [$jb.0]"
	has "$(timeout 20 "$NVT" -l --json)" "\"slurm_step\":\"$ja.0\""
	# The tasks' MPS settings; the MPS control daemon the plugin started.
	eq "$(envof a 0 CUDA_DEVICE_MAX_CONNECTIONS)" "" "CUDA_DEVICE_MAX_CONNECTIONS (CUDA's own count)"
	eq "$(envof a 0 CUDA_MPS_PIPE_DIRECTORY)" "$W/mps-pipe" "CUDA_MPS_PIPE_DIRECTORY"
	[ -s "$W/mps-pipe/nvidia-cuda-mps-control.pid" ] || die "no MPS control daemon runs"
	has "$(envof a 0 LD_PRELOAD)" "$SHIM"
	finish a
	finish b
	no_claims
}

s_queue() {
	local x y job
	submit x -n1 --gpu-tpcs=40
	x=$(state x 0)
	submit y -n1 --gpu-tpcs=40
	job=$(wait_pending y)
	sleep 2
	pending "$job" || die "job y ($job) runs beside x: 80 TPCs of $TPCS"
	[ ! -e "$OUT/y.0.state" ] || die "job y ran while x held its TPCs"
	finish x
	y=$(state y 0 30)
	echo "job x: $x; job y, after x: $y"
	eq "$(count "$y")" 40 "TPCs of job y"
	[ "$(common "$x" "$y")" -gt 0 ] || die "job y did not get x's TPCs"
	finish y
	no_claims
}

s_cancel() {
	local c d job start
	# Its tasks ignore SIGTERM: Slurm kills them KillWait (3 s) later.
	submit c -n2 --gpu-tpcs=60 -- ignore-term
	c=$(state c 0)
	state c 1 >/dev/null
	submit d -n1 --gpu-tpcs=60
	wait_pending d >/dev/null
	start=$(date +%s.%N)
	timeout 10 scancel "$(jobof c)"
	d=$(state d 0 60)
	echo "cancelled job c ($c): job d got $d $(since "$start") s later"
	kill -0 "$(envof c 0 pid)" 2>/dev/null && die "a task of the cancelled job still runs"
	[ "$(common "$c" "$d")" -gt 0 ] || die "job d did not get c's TPCs"
	finish d
	no_claims
}

s_kill_srun() {
	local e f start
	submit e -n1 --gpu-tpcs=60
	e=$(state e 0)
	# srun itself (its parent is the timeout that submit started).
	kill -KILL "$(pgrep -P "$(cat "$OUT/e.srunpid")" srun)"
	start=$(date +%s.%N)
	submit f -n1 --gpu-tpcs=60
	f=$(state f 0 120)
	echo "srun of job e ($e) killed: job f got $f $(since "$start") s later"
	[ "$(common "$e" "$f")" -gt 0 ] || die "job f did not get e's TPCs"
	finish f
	no_claims
}

s_sbatch() {
	local g0 g1 job i
	cat >"$OUT/g.sh" <<EOF
#!/bin/sh
env | grep -E '^(NVTASKSET_PARTITION|SLURM_SPANK_)' >"$OUT/g.batch.env"
srun -n2 "$TASK" g
EOF
	job=$(timeout 30 sbatch --parsable -n2 --gpu-gpcs=2 -o "$OUT/g.batch.out" "$OUT/g.sh") ||
		die "sbatch failed: $job"
	g0=$(state g 0) g1=$(state g 1)
	echo "job $job: batch script $(cat "$OUT/g.batch.env"); its srun's tasks: $g0 | $g1"
	eq "$g0" "$g1" "the two tasks of the inner srun"
	# Two whole GPCs of the fake H100: its two largest, 6 and 7, of 9 TPCs each.
	eq "$g0" "6-7,14-15,22-23,30-31,37-38,44-45,51-52,58-61" "TPCs of --gpu-gpcs=2"
	has "$(cat "$OUT/g.batch.env")" "SLURM_SPANK__SLURM_SPANK_OPTION_nvtaskset_gpu_gpcs=2"
	has "$(cat "$OUT/g.0.env")" "SLURM_SPANK__SLURM_SPANK_OPTION_nvtaskset_gpu_gpcs=2"
	eq "$(envof g 0 job)" "$job step=0" "the inner srun's step"
	grep -q "step $job.0 runs on TPCs .* inside step $job.batch's" "$W/log/slurmd.log" ||
		die "the inner step did not run in the batch step's TPCs: $(grep nvtaskset "$W/log/slurmd.log")"
	touch "$OUT/g.stop"
	for ((i = 0; i < 300; i++)); do
		[ -z "$(timeout 5 squeue -h -j "$job" 2>/dev/null)" ] && break
		sleep 0.1
	done
	[ -z "$(timeout 5 squeue -h -j "$job" 2>/dev/null)" ] || die "batch job $job did not end"
	no_claims
}

s_other_user() {
	local r u list row
	submit r -n1 --gpu-tpcs=30
	submit_as "$OTHER_UID" u -n1 --gpu-tpcs=30
	r=$(state r 0) u=$(state u 0)
	echo "root's job: $r; uid $OTHER_UID's job: $u"
	eq "$(envof u 0 uid)" "$OTHER_UID" "the task's user"
	eq "$(count "$r")" 30 "TPCs of root's job"
	eq "$(count "$u")" 30 "TPCs of the other user's job"
	eq "$(common "$r" "$u")" 0 "TPCs that the two users' jobs share"
	list=$(nvt_list)
	echo "$list"
	row=$(awk -v p="$(envof u 0 pid)" '$1 == p' <<<"$list")
	[[ "$row" == *" $(id -un "$OTHER_UID") "*" $(jobof u).0 "* ]] ||
		die "-l does not show the other user's task: $list"
	finish r
	finish u
	no_claims
}

s_spoofed_holder() {
	# A user's process titled "slurmstepd: [JOB.0]" with a segment of its own
	# must not make JOB's step run in the TPCs it names (another job's).
	local r s next job spoof n
	submit r -n1 --gpu-tpcs=8
	r=$(state r 0)
	job=$(jobof r)
	next=$((job + 1))
	rm -f "$OUT/spoof.stop"
	(cd "$OUT" && setpriv --reuid="$OTHER_UID" --regid="$OTHER_UID" --clear-groups \
		"$NVT" --no-mps -c "$r" bash -c "exec -a 'slurmstepd: [$next.0]' \"\$APP\" loop \"$OUT/spoof.stop\" \"$OUT/spoof.state\"") \
		>"$OUT/spoof.log" 2>&1 &
	spoof=$!
	for ((n = 0; n < 100; n++)); do
		[ -s "$OUT/spoof.state" ] && break
		sleep 0.1
	done
	[ -s "$OUT/spoof.state" ] || die "the spoofing process did not start: $(cat "$OUT/spoof.log")"
	submit s -n1 --gpu-tpcs=8
	s=$(state s 0)
	eq "$(jobof s)" "$next" "the job id the spoofer guessed"
	eq "$(common "$r" "$s")" 0 "TPCs of job $next inside job $job's (named by a spoofed title)"
	touch "$OUT/spoof.stop"
	wait "$spoof" 2>/dev/null
	finish r
	finish s
	no_claims
}

# Steps whose output is parsed run with --quiet: srun's own "job N queued and
# waiting for resources" lines (a step that waits for the last one's TPCs to
# be freed) would be read as the task's.
s_requests() {
	local out rc
	out=$(timeout 30 srun --gpu-tpcs=abc true 2>&1) && rc=0 || rc=$?
	[ "$rc" != 0 ] || die "srun --gpu-tpcs=abc succeeded"
	has "$out" "--gpu-tpcs takes a count from 1 to 256, not 'abc'"
	out=$(timeout 30 srun --gpu-gpcs=0 true 2>&1) && rc=0 || rc=$?
	[ "$rc" != 0 ] || die "srun --gpu-gpcs=0 succeeded"
	has "$out" "--gpu-gpcs takes a count from 1 to 256, not '0'"
	out=$(timeout 30 srun --gpu-tpcs=4 --gpu-gpcs=1 true 2>&1) && rc=0 || rc=$?
	[ "$rc" != 0 ] || die "srun with both options succeeded"
	has "$out" "--gpu-tpcs and --gpu-gpcs exclude each other"
	out=$(timeout 30 sbatch --gpu-tpcs=x -o /dev/null --wrap true 2>&1) && rc=0 || rc=$?
	[ "$rc" != 0 ] || die "sbatch --gpu-tpcs=x succeeded"
	has "$out" "--gpu-tpcs takes a count from 1 to 256, not 'x'"
	# More than the node has: refused at submission, by Slurm.
	out=$(timeout 30 srun --gpu-tpcs=$((TPCS + 1)) true 2>&1) && rc=0 || rc=$?
	[ "$rc" != 0 ] || die "srun --gpu-tpcs=$((TPCS + 1)) succeeded"
	has "$out" "Requested node configuration is not available"
	echo "$out"
	# Granted fewer than the option asks: each task says why, and fails.
	out=$(timeout 30 srun -n2 --gres=tpc:4 --gpu-tpcs=8 true 2>&1) && rc=0 || rc=$?
	echo "$out"
	[ "$rc" != 0 ] || die "srun --gres=tpc:4 --gpu-tpcs=8 succeeded: $out"
	has "$out" "nvtaskset: --gpu-tpcs=8 asks more than the 4 TPCs Slurm granted job"
	grep -q "asks more than the 4 TPCs Slurm granted" "$W/log/slurmd.log" ||
		die "no reason logged in slurmd.log"
	# Asked as the GRES alone (no cli_filter needed): placed all the same.
	out=$(timeout 30 srun --quiet --gres=tpc:8 sh -c 'echo "$NVTASKSET_PARTITION"' 2>&1)
	[ "$(count "$(awk '{print $2}' <<<"$out")")" == 8 ] || die "--gres=tpc:8 gave: $out"
	# A job that asks for no TPCs runs as it would without the plugin.
	out=$(timeout 30 srun env 2>&1)
	[[ "$out" != *NVTASKSET_PARTITION* ]] || die "a job without TPCs got a partition"
	no_claims
}

# --gpu-gpcs=N takes N whole GPCs, or fails saying so.
s_gpcs() {
	local out rc holder
	# Four GPCs of at most the 4 TPCs granted: the fake H100's four lone
	# TPCs (GPCs 8-11), never GPC 0, which is one GPC of 4 TPCs.
	out=$(timeout 30 srun --quiet --gres=tpc:4 --gpu-gpcs=4 sh -c 'echo "$NVTASKSET_PARTITION"' 2>&1)
	echo "--gres=tpc:4 --gpu-gpcs=4: $out"
	eq "$(awk '{print $2}' <<<"$out")" "62-65" "TPCs of 4 whole GPCs of at most 4 TPCs"
	# A task outside Slurm holds a TPC of every GPC: no whole GPC is free.
	rm -f "$OUT/holder.stop"
	env NVTASKSET_CACHE_DIR="$W/cache" "$NVT" --no-mps -c 0-7,62-65 \
		"$APP" loop "$OUT/holder.stop" "$OUT/holder.state" >"$OUT/holder.log" 2>&1 &
	holder=$!
	for ((rc = 0; rc < 100; rc++)); do
		[ -s "$OUT/holder.state" ] && break
		sleep 0.1
	done
	[ -s "$OUT/holder.state" ] || die "the holding task did not start: $(cat "$OUT/holder.log")"
	plugstack wait=1
	out=$(timeout 30 srun --gpu-gpcs=1 true 2>&1) && rc=0 || rc=$?
	plugstack
	echo "$out"
	touch "$OUT/holder.stop"
	wait "$holder" 2>/dev/null || true
	[ "$rc" != 0 ] || die "srun --gpu-gpcs=1 succeeded with no whole GPC free"
	has "$out" "no GPU of this node had 1 whole GPC of at most 9 TPCs free for job"
	has "$out" "only 0 whole GPCs are free of other tasks"
	no_claims
}

# stop_mps [DIR]: stops the fake MPS control daemon of pipe directory DIR.
# shellcheck disable=SC2120 # DIR is for a caller with a daemon of its own; none passes one now
stop_mps() {
	local dir=${1:-$W/mps-pipe} i
	[ -e "$dir/nvidia-cuda-mps-control.pid" ] || return 0
	touch "$dir/quit"
	for ((i = 0; i < 100; i++)); do
		[ -e "$dir/nvidia-cuda-mps-control.pid" ] || return 0
		sleep 0.05
	done
	die "the fake MPS control daemon of $dir did not stop"
}

# The node's name comes from slurmd, not from the job's environment.
s_node_name() {
	local out
	out=$(SLURMD_NODENAME=elsewhere timeout 30 srun --quiet --gpu-tpcs=8 \
		sh -c 'echo "$NVTASKSET_PARTITION"' 2>&1) || die "srun failed: $out"
	echo "SLURMD_NODENAME=elsewhere srun --gpu-tpcs=8: $out"
	eq "$(count "$(awk '{print $2}' <<<"$out")")" 8 "TPCs of a job whose environment names another node"
	no_claims
}

# The job prolog starts the MPS control daemon, outside any step, for a job
# that holds TPCs through --gres=tpc alone; a step never starts it.
s_mps_prolog() {
	local job out rc
	stop_mps
	rm -f "$W/mps-pipe/fake.parent" "$W/mps-pipe/fake.env"
	submit p -n1 --gres=tpc:8
	state p 0 >/dev/null
	job=$(jobof p)
	echo "started by: $(cat "$W/mps-pipe/fake.parent")"
	has "$(cat "$W/mps-pipe/fake.parent")" "slurmstepd spank prolog"
	# With none of slurmd's environment.
	eq "$(grep -c -E '^(NVTASKSET_TEST_SLURMD|LD_LIBRARY_PATH|SLURM_CONF)=' "$W/mps-pipe/fake.env")" 0 \
		"slurmd's variables in the MPS daemon's environment"
	has "$(cat "$W/mps-pipe/fake.env")" "PATH=/usr/sbin:/usr/bin:/sbin:/bin"
	# The daemon stops while the job runs: its next step says so, and starts none.
	stop_mps
	rm -f "$W/mps-pipe/fake.parent"
	out=$(timeout 30 srun --jobid="$job" --overlap true 2>&1) && rc=0 || rc=$?
	echo "$out"
	[ "$rc" != 0 ] || die "a step ran without the MPS control daemon"
	has "$out" "nvtaskset: the MPS control daemon does not run on this node"
	[ ! -e "$W/mps-pipe/fake.parent" ] ||
		die "a step started the MPS control daemon: $(cat "$W/mps-pipe/fake.parent")"
	finish p
	no_claims
}

# The plugin, as root, runs only an nvidia-cuda-mps-control that only root can change.
s_mps_control() {
	local bin=$W/userbin out rc
	mkdir -p "$bin"
	printf '#!/bin/sh\ntouch "%s"\nexec "%s" "$@"\n' "$W/userbin.ran" \
		"$ROOT/tests/fake/bin/nvidia-cuda-mps-control" >"$bin/nvidia-cuda-mps-control"
	chmod 755 "$bin/nvidia-cuda-mps-control"
	chown -R "$OTHER_UID" "$bin"
	stop_mps
	plugstack mps_control="$bin/nvidia-cuda-mps-control"
	out=$(timeout 30 srun --gpu-tpcs=8 true 2>&1) && rc=0 || rc=$?
	plugstack
	echo "$out"
	[ ! -e "$W/userbin.ran" ] || die "root ran uid $OTHER_UID's nvidia-cuda-mps-control"
	[ "$rc" != 0 ] || die "a step ran without the MPS control daemon"
	has "$(grep 'job prolog' "$W/log/slurmd.log")" \
		"refusing mps_control=$bin/nvidia-cuda-mps-control: $bin belongs to uid $OTHER_UID"
	has "$out" "nvtaskset: refusing mps_control=$bin/nvidia-cuda-mps-control: $bin belongs to uid"
}

# In slurmd's own /run and /tmp: a user who takes the directories MPS uses
# by default (CUDA's /tmp/nvidia-mps) stops no step, and cannot take the
# plugin's (/run/nvidia-mps, /run/nvidia-mps-log), which only root can make.
s_mps_squat() {
	local out
	setpriv --reuid="$OTHER_UID" --regid="$OTHER_UID" --clear-groups \
		mkdir -m 777 "$W/tmp/nvidia-mps" "$W/tmp/nvidia-mps-log"
	in_slurmd setpriv --reuid="$OTHER_UID" --regid="$OTHER_UID" --clear-groups \
		mkdir /run/nvidia-mps 2>/dev/null && die "uid $OTHER_UID made /run/nvidia-mps"
	plugstack mps_pipe= mps_log=
	out=$(timeout 30 srun --quiet --gpu-tpcs=8 sh -c 'echo "$CUDA_MPS_PIPE_DIRECTORY $NVTASKSET_PARTITION"' \
		2>&1) || die "srun failed: $out"
	plugstack
	echo "/tmp/nvidia-mps taken by uid $OTHER_UID; the step: $out"
	eq "$(awk '{print $1}' <<<"$out")" /run/nvidia-mps "the tasks' MPS pipe directory"
	eq "$(count "$(awk '{print $3}' <<<"$out")")" 8 "TPCs of the step"
	in_slurmd test -s /run/nvidia-mps/nvidia-cuda-mps-control.pid || die "no MPS daemon on /run/nvidia-mps"
	eq "$(in_slurmd stat -c %U:%a /run/nvidia-mps /run/nvidia-mps-log | sort -u)" root:755 \
		"the MPS directories' owner and mode"
	no_claims
}

# plugstack.conf's channels= gives the tasks CUDA_DEVICE_MAX_CONNECTIONS as
# nvtaskset --channels does; the job's own value stays.
s_channels() {
	local out
	plugstack channels=8
	out=$(timeout 30 srun --quiet --gpu-tpcs=8 sh -c 'echo "ch=$CUDA_DEVICE_MAX_CONNECTIONS"' 2>&1) ||
		die "srun failed: $out"
	eq "$out" "ch=8" "channels=8"
	out=$(CUDA_DEVICE_MAX_CONNECTIONS=4 timeout 30 srun --quiet --gpu-tpcs=8 \
		sh -c 'echo "ch=$CUDA_DEVICE_MAX_CONNECTIONS"' 2>&1) || die "srun failed: $out"
	eq "$out" "ch=4" "the job's own value"
	plugstack channels=default
	out=$(timeout 30 srun --quiet --gpu-tpcs=8 sh -c 'echo "ch=$CUDA_DEVICE_MAX_CONNECTIONS"' 2>&1) ||
		die "srun failed: $out"
	eq "$out" "ch=" "channels=default"
	plugstack channels=33
	out=$(timeout 30 srun --quiet --gpu-tpcs=8 true 2>&1) && die "channels=33 accepted"
	plugstack
	has "$out" "channels=N|default"
	no_claims
}

# A job with a gpu GRES: its steps run on the GPUs Slurm gave it, whatever
# the job's environment says.
s_gpu_gres() {
	local uuid0 uuid1 a b
	uuid0=$("$APP" uuids | awk '$1 == 0 {print $2}')
	uuid1=$("$APP" uuids | awk '$1 == 1 {print $2}')
	submit a -n1 --gres=gpu:1,tpc:10
	a=$(state a 0)
	eq "$(envof a 0 CUDA_VISIBLE_DEVICES)" "$uuid0" "job a's GPU (Slurm's GPU 0)"
	# Job b holds Slurm's GPU 1; its step asks for TPCs alone (so Slurm
	# gives the step no GPU, and clears the variables) and its environment
	# names GPU 0: the TPCs still lie on the job's GPU 1.
	(cd "$OUT" && CUDA_VISIBLE_DEVICES=0 SLURM_STEP_GPUS=0 timeout 120 salloc --gres=gpu:1,tpc:10 \
		srun --gres=tpc:10 "$TASK" b >"$OUT/b.srun" 2>&1) &
	echo $! >"$OUT/b.srunpid"
	b=$(state b 0)
	echo "job a: $a on $(envof a 0 CUDA_VISIBLE_DEVICES); job b: $b on $(envof b 0 CUDA_VISIBLE_DEVICES)"
	eq "$(envof b 0 CUDA_VISIBLE_DEVICES)" "$uuid1" "job b's GPU (Slurm's GPU 1)"
	finish a
	finish b
	no_claims
}

# On a node with two GPUs (TPCS each): a step's TPCs lie on one GPU, the
# first with room; the tasks see that GPU only; Slurm counts the node's sum.
s_two_gpus() {
	local a b c uuid0 uuid1 job
	uuid0=$("$APP" uuids | awk '$1 == 0 {print $2}')
	uuid1=$("$APP" uuids | awk '$1 == 1 {print $2}')
	submit a -n1 --gpu-tpcs=60
	a=$(state a 0)
	submit b -n1 --gpu-tpcs=60
	b=$(state b 0)
	echo "job a: $a on $(envof a 0 CUDA_VISIBLE_DEVICES); job b: $b on $(envof b 0 CUDA_VISIBLE_DEVICES)"
	eq "$(envof a 0 CUDA_VISIBLE_DEVICES)" "$uuid0" "job a's GPU"
	eq "$(envof b 0 CUDA_VISIBLE_DEVICES)" "$uuid1" "job b's GPU (GPU 0 has 6 TPCs free)"
	eq "$(count "$a")" 60 "TPCs of job a"
	eq "$(count "$b")" 60 "TPCs of job b"
	# 12 TPCs are left on the node, 6 on each GPU: a third job waits.
	submit c -n1 --gpu-tpcs=60
	job=$(wait_pending c)
	finish a
	c=$(state c 0 30)
	echo "job c ($job), after a: $c on $(envof c 0 CUDA_VISIBLE_DEVICES)"
	eq "$(envof c 0 CUDA_VISIBLE_DEVICES)" "$uuid0" "job c's GPU"
	finish b
	finish c
	no_claims
}

s_priority() {
	# --gpu-priority: the tasks get the priority (and their partition from the environment,
	# not from slurmstepd's segment); -l shows it; a bad value is refused.
	local p json out rc
	submit p -n1 --gpu-tpcs=16 --gpu-priority=low,guard=4
	p=$(state p 0)
	eq "$(count "$p")" 16 "TPCs of job p"
	eq "$(envof p 0 NVTASKSET_PRIORITY)" "low,guard=4" "the task's NVTASKSET_PRIORITY"
	[ -n "$(envof p 0 NVTASKSET_PARTITION_FOR)" ] || die "no NVTASKSET_PARTITION_FOR"
	json=$(timeout 20 "$NVT" -l --json)
	python3 - "$json" "$(sed -n 's/^pid=//p' "$OUT/p.0.env")" "$p" <<'PY' || die "bad JSON: $json"
import json, sys
rows = {t["pid"]: t["gpus"][0] for t in json.loads(sys.argv[1])["tasks"]}
g = rows[int(sys.argv[2])]
assert g["priority"] == "low" and g["guard"] == 4 and g["own_tpcs"] == sys.argv[3], g
PY
	finish p
	out=$(timeout 60 srun -n1 --gpu-tpcs=4 --gpu-priority=urgent true 2>&1) && rc=0 || rc=$?
	[ "$rc" != 0 ] || die "srun --gpu-priority=urgent succeeded: $out"
	has "$out" "--gpu-priority takes LEVEL"
	no_claims
}

# --gpu-priority=LEVEL,yield=slice: the job prolog starts the level's own MPS control daemon,
# with the shim preloaded and told the level (NVTASKSET_MPS_SERVER) and none of slurmd's
# environment, and the step's tasks join it; a step at a level whose daemon the prolog did not
# start fails, saying so, and starts none; without slice, the shared daemon; mps=no: no MPS.
s_priority_slice() {
	local job out rc env
	for lvl in low high; do
		stop_mps "$W/mps-pipe-$lvl"
		rm -rf "$W/mps-pipe-$lvl" "$W/mps-log-$lvl"
	done
	submit s -n1 --gpu-tpcs=16 --gpu-priority=low,yield=slice
	state s 0 >/dev/null
	job=$(jobof s)
	eq "$(envof s 0 CUDA_MPS_PIPE_DIRECTORY)" "$W/mps-pipe-low" "the time-sliced step's MPS pipe directory"
	eq "$(envof s 0 NVTASKSET_PRIORITY)" "low,yield=slice" "the task's NVTASKSET_PRIORITY"
	[ -s "$W/mps-pipe-low/nvidia-cuda-mps-control.pid" ] || die "no MPS daemon of priority low runs"
	env=$(cat "$W/mps-pipe-low/fake.env")
	echo "the low level's daemon, started by: $(cat "$W/mps-pipe-low/fake.parent")"
	has "$(cat "$W/mps-pipe-low/fake.parent")" "slurmstepd spank prolog"
	has "$env" "NVTASKSET_MPS_SERVER=low,yield=slice"
	has "$env" "LD_PRELOAD=$SHIM"
	has "$env" "CUDA_MPS_PIPE_DIRECTORY=$W/mps-pipe-low"
	has "$env" "CUDA_MPS_LOG_DIRECTORY=$W/mps-log-low"
	eq "$(grep -c -E '^(NVTASKSET_TEST_SLURMD|LD_LIBRARY_PATH|SLURM_CONF)=' <<<"$env")" 0 \
		"slurmd's variables in the level daemon's environment"
	eq "$(stat -c %U:%a "$W/mps-pipe-low" "$W/mps-log-low" | sort -u)" root:755 \
		"the level's MPS directories' owner and mode"
	# Another step of the job without slice joins the shared daemon.
	out=$(timeout 30 srun --quiet --jobid="$job" --overlap --gpu-priority=low \
		sh -c 'echo "$CUDA_MPS_PIPE_DIRECTORY"' 2>&1) || die "a step without slice failed: $out"
	eq "$out" "$W/mps-pipe" "the MPS pipe directory of a step without slice"
	# A step at a level whose daemon the prolog did not start: it says so, and starts none.
	out=$(timeout 30 srun --jobid="$job" --overlap --gpu-priority=high,yield=slice true 2>&1) &&
		rc=0 || rc=$?
	echo "$out"
	[ "$rc" != 0 ] || die "a step of priority high,yield=slice ran without its level's daemon"
	has "$out" "nvtaskset: the MPS control daemon of priority high does not run on this node (pipe directory $W/mps-pipe-high)"
	has "$out" "give the job that priority"
	[ ! -e "$W/mps-pipe-high/fake.parent" ] ||
		die "a step started the MPS control daemon: $(cat "$W/mps-pipe-high/fake.parent")"
	finish s
	# The level daemons serve every user's jobs at the level's timeslice: a job's slice= sets
	# none (its prolog starts the level's daemon at its own), and its steps are refused.
	out=$(timeout 30 srun --gpu-tpcs=8 --gpu-priority=high,yield=slice=300 true 2>&1) && rc=0 || rc=$?
	echo "$out"
	[ "$rc" != 0 ] || die "a step with slice=300 ran in the node's level daemon"
	has "$out" "nvtaskset: --gpu-priority=high,yield=slice=300: slice=US is not a step's to choose in MPS"
	has "$(cat "$W/mps-pipe-high/fake.env")" "NVTASKSET_MPS_SERVER=high,yield=slice"
	hasnt "$(cat "$W/mps-pipe-high/fake.env")" "slice=300"
	out=$(timeout 30 srun --quiet --gpu-tpcs=8 --gpu-priority=high,yield=slice \
		sh -c 'echo "$CUDA_MPS_PIPE_DIRECTORY $NVTASKSET_PRIORITY"' 2>&1) || die "srun failed: $out"
	eq "$out" "$W/mps-pipe-high high,yield=slice" "the high step's pipe directory and priority"
	# mps=no: outside MPS (its own context, time-sliced by its own shim, slice= its own).
	plugstack mps=no
	out=$(timeout 30 srun --quiet --gpu-tpcs=8 --gpu-priority=low,yield=slice=300 \
		sh -c 'echo "$CUDA_MPS_PIPE_DIRECTORY $NVTASKSET_PRIORITY"' 2>&1) && rc=0 || rc=$?
	plugstack
	eq "$out" "/dev/null low,yield=slice=300" "mps=no: the pipe directory and priority"
	no_claims
}

s_memory() {
	# --gpu-mem: each task's GPU memory limit, in its environment (NVTASKSET_MEM) and in the
	# partition it starts from (slurmstepd's segment): -l shows it; a share of the GPU reads
	# the placed GPU's memory; bad values are refused before the job runs, a limit past the
	# GPU's memory and one without TPCs when the step starts.
	local m json out rc
	submit m -n1 --gpu-tpcs=8 --gpu-mem=4G
	m=$(state m 0)
	eq "$(count "$m")" 8 "TPCs of job m"
	eq "$(envof m 0 NVTASKSET_MEM)" $((4 << 30)) "the task's NVTASKSET_MEM"
	json=$(timeout 20 "$NVT" -l --json)
	python3 - "$json" "$(envof m 0 pid)" <<'PY' || die "bad JSON: $json"
import json, sys
rows = {t["pid"]: t["gpus"][0] for t in json.loads(sys.argv[1])["tasks"]}
g = rows[int(sys.argv[2])]
assert g["memory_limit_bytes"] == 4 << 30, g
PY
	finish m
	submit q -n1 --gpu-tpcs=8 --gpu-mem=25%
	state q 0 >/dev/null
	eq "$(envof q 0 NVTASKSET_MEM)" $((20 << 30)) "25% of the fake GPU's 80G"
	finish q
	out=$(timeout 60 srun -n1 --gpu-tpcs=4 --gpu-mem=lots true 2>&1) && rc=0 || rc=$?
	[ "$rc" != 0 ] || die "srun --gpu-mem=lots succeeded: $out"
	has "$out" "--gpu-mem takes SIZE"
	out=$(timeout 60 srun -n1 --gpu-tpcs=4 --gpu-mem=100G true 2>&1) && rc=0 || rc=$?
	[ "$rc" != 0 ] || die "srun --gpu-mem=100G succeeded: $out"
	has "$out" "is more memory than the GPU has (the GPU has 80G, 85899345920 bytes)"
	out=$(timeout 60 srun -n1 --gpu-mem=4G true 2>&1) && rc=0 || rc=$?
	[ "$rc" != 0 ] || die "srun --gpu-mem alone succeeded: $out"
	has "$out" "--gpu-mem goes with TPCs"
	no_claims
}

s_foreign_entries() {
	# Entries that another user makes in the shared directory of run directories, named like
	# a run directory (nvtaskset-UID: a plain file, a link, a FIFO): every step with
	# --gpu-tpcs still gets its TPCs, two jobs disjoint, and -l lists them (before, one such
	# file failed every step's placement on the node).
	local a b list
	setpriv --reuid="$OTHER_UID" --regid="$OTHER_UID" --clear-groups sh -c \
		': >"$1/nvtaskset-4242" && ln -s /tmp "$1/nvtaskset-4243" && mkfifo "$1/nvtaskset-4244"' _ "$W/run" ||
		die "uid $OTHER_UID could not make the entries"
	submit a -n1 --gpu-tpcs=16
	submit b -n1 --gpu-tpcs=16
	a=$(state a 0) b=$(state b 0)
	echo "job a: $a; job b: $b"
	eq "$(count "$a")" 16 "TPCs of job a"
	eq "$(count "$b")" 16 "TPCs of job b"
	eq "$(common "$a" "$b")" 0 "TPCs that jobs a and b share"
	list=$(timeout 20 "$NVT" -l 2>&1) || die "-l failed: $list"
	has "$list" "passed over $W/run/nvtaskset-4242"
	[[ "$(awk -v p="$(envof a 0 pid)" '$1 == p' <<<"$list")" == *" $(jobof a).0 "* ]] ||
		die "-l does not show job a's task: $list"
	finish a
	finish b
	rm -f "$W/run/nvtaskset-4242" "$W/run/nvtaskset-4243" "$W/run/nvtaskset-4244"
	no_claims
}

s_stalled_maps() {
	# Root's task named stallme that became user OTHER_UID in the same process (its segment
	# stays in root's run directory) and her rival of that file in her own: the plugin reads
	# the task's maps to tell the two apart, and her hold of its memory map's lock stalls that
	# read (stallread.so in this cluster's slurmstepd stands in for it). The read is made in a
	# child, killed when it stalls: a step starts all the same (about a second after it was
	# asked for; 20 s at most here), on TPCs the task does not hold (every file that names it
	# holds its TPCs). A plugin that read the maps itself would hold its slurmstepd for good.
	local held name s start n task
	ln -sf "$APP" "$W/stallme"
	rm -f "$OUT/sm.stop" "$OUT/sm.state" "$W/log/stalls"
	"$NVT" --no-mps -g 1 "$W/stallme" setuid "$OTHER_UID" loop "$OUT/sm.stop" "$OUT/sm.state" \
		>"$OUT/sm.log" 2>&1 &
	task=$!
	echo "pid=$task" >"$OUT/sm.0.env" # (stop_all_tasks stops it, pass or fail)
	for ((n = 0; n < 100; n++)); do
		[ -s "$OUT/sm.state" ] && break
		sleep 0.1
	done
	held=$(cat "$OUT/sm.state" 2>/dev/null)
	[ -n "$held" ] || die "the task did not start: $(cat "$OUT/sm.log")"
	name=$(cd "$W/run/nvtaskset-0" && ls -- nvtaskset.*."$task")
	[ -f "$W/run/nvtaskset-0/$name" ] || die "no segment of task $task in root's run directory"
	# (her run directory and file, made as root and given to her: a copy of root's file, the
	# header's uid hers)
	python3 - "$W/run/nvtaskset-0/$name" "$W/run/nvtaskset-$OTHER_UID/$name" "$OTHER_UID" <<'PY' ||
import os, struct, sys
data = bytearray(open(sys.argv[1], "rb").read())
uid = int(sys.argv[3])
struct.pack_into("<I", data, 20, uid)
d = os.path.dirname(sys.argv[2])
os.makedirs(d, mode=0o755, exist_ok=True)
with open(sys.argv[2], "wb") as out:
    out.write(data)
os.chmod(d, 0o755)
os.chmod(sys.argv[2], 0o644)
os.chown(d, uid, uid)
os.chown(sys.argv[2], uid, uid)
PY
		die "cannot write her rival"
	start=$(date +%s.%N)
	submit s -n1 --gpu-tpcs=$((TPCS - $(count "$held")))
	s=$(state s 0 20)
	echo "the step started after $(since "$start") s on $s; the task holds $held"
	grep -q "^stalled [0-9]* maps" "$W/log/stalls" || die "no read of its maps stalled: $(cat "$W/log/stalls" 2>&1)"
	eq "$(common "$s" "$held")" 0 "TPCs of the step that the task holds"
	finish s
	touch "$OUT/sm.stop"
	wait "$task" || die "the task failed: $(cat "$OUT/sm.log")"
	rm -f "$W/run/nvtaskset-$OTHER_UID/$name" "$W/stallme"
	no_claims
}

# ---- Driver -------------------------------------------------------------------

PASS=0 FAIL=0 SKIP=0 FAILED=""
ONE_GPU="two_jobs queue cancel kill_srun sbatch other_user spoofed_holder requests gpcs
	node_name mps_prolog mps_control priority priority_slice memory foreign_entries"
PRIVATE="mps_squat"
STALL="stalled_maps"
TWO_GPUS="two_gpus gpu_gres"
# shellcheck disable=SC2048 # test names split on purpose (no name holds a space)
for name in ${*:-$ONE_GPU $PRIVATE $STALL $TWO_GPUS}; do
	kind=one
	[[ " $TWO_GPUS " == *" $name "* ]] && kind=two
	[[ " $STALL " == *" $name "* ]] && kind=stall
	[[ " $PRIVATE " == *" $name "* ]] && kind=private
	if [ "$kind" = private ] && ! can_unshare; then
		SKIP=$((SKIP + 1))
		echo "SKIP $name (needs a mount namespace: unshare --mount)"
		continue
	fi
	if [ "$kind" != "$CLUSTER" ]; then
		[ -n "$CTLD" ] && stop_daemons
		start_cluster "$kind"
		echo "Slurm $(srun --version | awk '{print $2}') on $(hostname -s), $FAKECUDA_DEVICES fake" \
			"GPU(s), tpc GRES $((TPCS * FAKECUDA_DEVICES))$([ "$kind" = two ] && echo ", gpu GRES")" \
			"$([ "$kind" = private ] && echo "(slurmd's own /run and /tmp) ")in $W"
	fi
	start=$(date +%s.%N)
	(
		set -e
		"s_$name"
	) >"$W/log/s.$name" 2>&1 &
	scenario=$!
	# A scenario that hangs fails, and the others still run.
	(
		sleep "${SCENARIO_TIMEOUT:-240}" &
		echo $! >"$W/log/watchdog.sleep"
		wait $!
		echo "FAILED: no end after ${SCENARIO_TIMEOUT:-240} s" >>"$W/log/s.$name"
		pkill -KILL -P "$scenario"
		kill -KILL "$scenario"
	) 2>/dev/null &
	watchdog=$!
	wait "$scenario"
	rc=$?
	# The watchdog first, so that it cannot report once its sleep is gone.
	kill -KILL "$watchdog" 2>/dev/null
	wait "$watchdog" 2>/dev/null
	kill -KILL "$(cat "$W/log/watchdog.sleep" 2>/dev/null)" 2>/dev/null
	secs=$(since "$start")
	if [ $rc == 0 ]; then
		PASS=$((PASS + 1))
		echo "PASS $name (${secs} s)"
	else
		FAIL=$((FAIL + 1))
		FAILED="$FAILED $name"
		echo "FAIL $name (${secs} s)"
		cp -r "$OUT" "$W/log/out.$name"
		sed 's/^/    /' "$W/log/s.$name" | tail -30
		echo "    --- slurmd.log (nvtaskset):"
		grep -i 'nvtaskset\|error' "$W/log/slurmd.log" | tail -10 | sed 's/^/    /'
	fi
	# Each scenario ends with its jobs; one that failed may leave some.
	stop_all_tasks
	timeout 10 scancel --user=root --quiet 2>/dev/null
	timeout 10 scancel --user="$OTHER_UID" --quiet 2>/dev/null
	for ((i = 0; i < 100; i++)); do
		[ -z "$(timeout 5 squeue -h 2>/dev/null)" ] && break
		sleep 0.1
	done
	rm -f "$OUT"/*
done
[ -z "$FAILED" ] || echo "failed:$FAILED"
echo "$PASS passed, $FAIL failed, $SKIP skipped"
[ $FAIL == 0 ]
