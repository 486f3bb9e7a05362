# Every GPU of a node: per-GPU maps, slots and partitions. Sourced by
# tests/run-tests.sh: each t_NAME function is one test, run in a subshell
# under set -e with the helpers defined there.
#
# The fake node has two H100s floorswept differently (FAKECUDA_CHIPS): the
# same logical TPC sits in another mask slot on each, so a task that got one
# GPU's bits on the other would run on other TPCs (or hang).
# shellcheck shell=bash

# two_gpus: the fake node of two H100s, both calibrated (once per test: each has its own $WORK).
two_gpus() {
	export FAKECUDA_CHIPS=h100,h100-alt NVTASKSET_CACHE_DIR=$WORK/cache2
	[ -e "$NVTASKSET_CACHE_DIR" ] || "$NVT" --calibrate >/dev/null 2>&1 || die "calibrating two GPUs failed"
}

# fake_proc N: a /proc/driver/nvidia that lists the fake node's first N GPUs.
fake_proc() {
	local d
	export NVTASKSET_PROC_NVIDIA=$WORK/procnv2
	rm -rf "$NVTASKSET_PROC_NVIDIA"
	for ((d = 0; d < $1; d++)); do
		mkdir -p "$NVTASKSET_PROC_NVIDIA/gpus/0000:1$d:00.0"
		printf 'Model: \t\t Fake H100\nGPU UUID: \t %s\n' "$(fake_uuid "$d")" \
			>"$NVTASKSET_PROC_NVIDIA/gpus/0000:1$d:00.0/information"
	done
	printf 'NVRM version: NVIDIA UNIX x86_64 Kernel Module  580.159.04  Thu Nov 20 2026\n' \
		>"$NVTASKSET_PROC_NVIDIA/version"
}

t_multigpu_each_gpu_own_map() {
	two_gpus
	run_rc out rc "$NVT" --topology
	has "$out" "GPU 0: Fake GPU 0 (H100 map) ($(fake_uuid 0))"
	has "$out" "GPU 1: Fake GPU 1 (H100, other floorsweeping) ($(fake_uuid 1))"
	# The same TPC list on both GPUs, each through its own map.
	run_rc out rc env FAKEAPP_ALL=1 "$NVT" --no-mps -c 0-3,40 "$APP" launch 3
	eq "$rc" 0
	eq "$out" "tpcs=0-3,40|0-3,40 hung=0"
	run_rc out rc env FAKEAPP_ALL=1 "$NVT" --no-mps -g 1 "$APP" launch 1
	has "$out" "tpcs=1,9,17,25,32,39,46,53|1,9,17,25,32,39,46,53 hung=0"
	run_rc out rc env FAKEAPP_ALL=1 "$NVT" --no-mps -n 4 "$APP" launch 1
	has "$out" "tpcs=0,8,16,24|0,8,16,24 hung=0"
	hasnt "$out" "warning"
	# A driver-API program that picks its device itself.
	run_rc out rc env FAKEAPP_DEVICE=1 "$NVT" --no-mps -c 7 "$LINKED" launch 2
	has "$out" "tpcs=7 hung=0"
}

t_multigpu_per_gpu_partitions() {
	two_gpus
	run_rc out rc env FAKEAPP_ALL=1 "$NVT" --no-mps -c --gpu 0=0-3 --gpu 1=40-47 "$APP" launch 1
	eq "$out" "tpcs=0-3|40-47 hung=0"
	# By UUID, and a GPU not named runs unpartitioned.
	run_rc out rc env FAKEAPP_ALL=1 "$NVT" --no-mps --gpu "$(fake_uuid 1)" -c 5 "$APP" launch 1
	eq "$out" "tpcs=0-65|5 hung=0"
	run_rc out rc env FAKEAPP_ALL=1 "$NVT" --no-mps --gpu "$(fake_uuid 1 | cut -c1-12)"=f "$APP" launch 1
	eq "$out" "tpcs=0-65|0-3 hung=0"
	run_rc out rc env FAKEAPP_ALL=1 "$NVT" --no-mps -g --gpu 0=0 --gpu 1=7 "$APP" launch 1
	has "$out" "tpcs=0,8,16,24|7,15,23,31,38,45,52,59,61 hung=0"
	# Each GPU's list is checked against that GPU.
	run_rc out rc "$NVT" --no-mps -c --gpu 0=1 --gpu 1=66 "$APP" launch 1
	eq "$rc" 1
	eq "$out" "nvtaskset: TPC 66 does not exist: GPU 1 has 66 TPCs (0-65)"
	run_rc out rc "$NVT" --no-mps -c --gpu 0=1 --gpu 0=2 "$APP" launch 1
	eq "$out" "nvtaskset: GPU 0 is named twice"
	run_rc out rc "$NVT" --no-mps --gpu 2 -c 1 "$APP" launch 1
	eq "$out" "nvtaskset: there is no GPU '2': this machine has GPUs 0-1 (or give a UUID)"
	run_rc out rc "$NVT" --no-mps --gpu GPU-1 -c 1 "$APP" launch 1
	has "$out" "there is no GPU 'GPU-1'"
}

t_multigpu_live_change() {
	local u0 u1
	two_gpus
	u0=$(fake_uuid 0) u1=$(fake_uuid 1)
	start_loop mg env FAKEAPP_ALL=1 "$NVT" --no-mps -c 0-3 "$APP"
	wait_file "$WORK/mg.state" "0-3|0-3"
	run_rc out rc "$NVT" -pc "$PID"
	eq "$out" "pid $PID's current TPC list on GPU 0 ($u0): 0-3
pid $PID's current TPC list on GPU 1 ($u1): 0-3"
	run_rc out rc "$NVT" -p -c 10-11 "$PID"
	eq "$rc" 0
	has "$out" "pid $PID's new TPC list on GPU 1 ($u1): 10-11"
	wait_file "$WORK/mg.state" "10-11|10-11"
	# One GPU alone; the other keeps its partition.
	run_rc out rc "$NVT" -p -c --gpu 1=20 "$PID"
	eq "$out" "pid $PID's current TPC list on GPU 1 ($u1): 10-11
pid $PID's new TPC list on GPU 1 ($u1): 20"
	wait_file "$WORK/mg.state" "10-11|20"
	run_rc out rc "$NVT" -p --gpu 0 ff "$PID"
	wait_file "$WORK/mg.state" "0-7|20"
	out=$(timeout "$HANG" "$NVT" -p --json "$PID")
	python3 - "$out" "$u0" "$u1" <<'PY' || die "bad JSON: $out"
import json, sys
d = json.loads(sys.argv[1])["gpus"]
assert [g["gpu"] for g in d] == [0, 1] and [g["uuid"] for g in d] == sys.argv[2:4]
assert d[0]["current"]["tpcs"] == "0-7" and d[1]["current"]["tpcs"] == "20"
assert d[0]["applied"] and d[1]["applied"]
PY
	run_rc out rc "$NVT" -l
	grep -Eq "$(row_re "$PID" "$ME")0:0-7 1:20 +" <<<"$out" || die "no row for $PID in: $out"
	out=$(timeout "$HANG" "$NVT" -l --json)
	python3 - "$out" "$PID" <<'PY' || die "bad JSON: $out"
import json, sys
t = [t for t in json.loads(sys.argv[1])["tasks"] if t["pid"] == int(sys.argv[2])][0]
assert [(g["gpu"], g["tpcs"]) for g in t["gpus"]] == [(0, "0-7"), (1, "20")]
PY
	stop_loop mg "$PID"
}

# -p's warning of a partition not applied names the GPU where the task has slots on several: a
# task that launches on GPU 0 alone has applied its partition there, not on GPU 1.
t_multigpu_not_applied_names_gpu() {
	local u1
	two_gpus
	u1=$(fake_uuid 1)
	start_loop na "$NVT" --no-mps -c 0-3 "$APP"
	wait_file "$WORK/na.state" "0-3"
	run_rc out rc "$NVT" -pc "$PID"
	eq "$rc" 0 "$out"
	eq "$(grep -c "has not applied" <<<"$out")" 1 "warnings in: $out"
	has "$out" "nvtaskset: pid $PID has not applied this partition on GPU 1 ($u1) yet: it has launched no kernel there since, or its program runs without the nvtaskset shim"
	stop_loop na "$PID"
}

t_multigpu_gpu_without_partition() {
	local topo u0 u1
	two_gpus
	u0=$(fake_uuid 0) u1=$(fake_uuid 1)
	topo=$("$NVT" --topology --json --gpu 0 >/dev/null && sed -n 2p "$NVTASKSET_CACHE_DIR/$u0.topo")
	has "$topo" "nvtaskset-topology 2 tpcs=66"
	# A record for GPU 0 only: GPU 1 is never given GPU 0's bits; one warning names it.
	run_rc out rc env FAKEAPP_ALL=1 NVTASKSET_PARTITION="$u0 0-3 $topo" LD_PRELOAD="$SHIM" "$APP" launch 5
	eq "$rc" 0
	has "$out" "tpcs=0-3|0-65 hung=0"
	eq "$(grep -c "no partition for GPU $u1 (CUDA device 1): its launches run unpartitioned" <<<"$out")" 1 "warnings"
	# A driver that cannot say which GPU a launch is for: nothing is masked.
	run_rc out rc env FAKECUDA_CTX_GET_DEVICE_ERROR=1 FAKEAPP_ALL=1 NVTASKSET_PARTITION="$u0 0-3 $topo" \
		LD_PRELOAD="$SHIM" "$APP" launch 2
	has "$out" "tpcs=0-65|0-65 hung=0"
	has "$out" "cannot ask the CUDA driver which GPU a launch is for"
	# -p gives the GPU a slot while the task runs; its launches follow.
	start_loop ng env FAKEAPP_ALL=1 NVTASKSET_QUIET=1 NVTASKSET_PARTITION="$u0 0-3 $topo" LD_PRELOAD="$SHIM" "$APP"
	wait_file "$WORK/ng.state" "0-3|0-65"
	run_rc out rc "$NVT" -p -c --gpu 1=9 "$PID"
	eq "$rc" 0
	has "$out" "pid $PID's new TPC list on GPU 1 ($u1): 9"
	wait_file "$WORK/ng.state" "0-3|9"
	stop_loop ng "$PID"
}

t_multigpu_visible_devices() {
	two_gpus
	fake_proc 2
	# The task sees GPU 1 only, as its CUDA device 0: it gets GPU 1's map.
	run_rc out rc env CUDA_VISIBLE_DEVICES=1 "$NVT" --no-mps -c 0-3 /usr/bin/env
	has "$out" "NVTASKSET_PARTITION=$(fake_uuid 1) 0-3 nvtaskset-topology"
	hasnt "$out" "$(fake_uuid 0)"
	run_rc out rc env CUDA_VISIBLE_DEVICES=1 "$NVT" --no-mps -c 0-3 "$APP" launch 1
	has "$out" "tpcs=0-3 hung=0"
	run_rc out rc env CUDA_VISIBLE_DEVICES="$(fake_uuid 1),0" FAKEAPP_ALL=1 "$NVT" --no-mps -c 2 /usr/bin/env
	has "$out" "NVTASKSET_PARTITION=$(fake_uuid 1) 2 "
	has "$out" ";$(fake_uuid 0) 2 "
	run_rc out rc env CUDA_VISIBLE_DEVICES=1 "$NVT" --no-mps --gpu 0 -c 1 "$APP" launch 1
	eq "$rc" 1
	eq "$out" "nvtaskset: GPU 0 ($(fake_uuid 0)) is not one the task can use (see CUDA_VISIBLE_DEVICES)"
	run_rc out rc env CUDA_VISIBLE_DEVICES=7 "$NVT" --no-mps -c 1 "$APP" launch 1
	eq "$out" "nvtaskset: the task can use no GPU (CUDA_VISIBLE_DEVICES=7)"
}
t_visible_devices_none_of_ours() {
	# One GPU, and no list of the machine's own (as in make try): CUDA_VISIBLE_DEVICES=1
	# hides it from CUDA itself, and the message names the variable.
	run_rc out rc env CUDA_VISIBLE_DEVICES=1 "$NVT" --no-mps -c 0-3 "$APP" launch 1
	eq "$rc" 1
	eq "$out" "nvtaskset: cannot list the GPUs: cuInit failed: error 100 (no CUDA-capable device); CUDA_VISIBLE_DEVICES='1' names no GPU of this machine's (unset it to see them all)"
	run_rc out rc env CUDA_VISIBLE_DEVICES= "$NVT" --no-mps -c 0-3 "$APP" launch 1
	has "$out" "CUDA_VISIBLE_DEVICES='' names no GPU of this machine's"
	run_rc out rc "$NVT" --no-mps -c 0-3 "$APP" launch 1
	has "$out" "tpcs=0-3 hung=0"
}

t_multigpu_warm_start_without_cuda() {
	local cuinits
	two_gpus
	fake_proc 2
	"$NVT" --calibrate >/dev/null 2>&1
	cuinits() { awk '/^cuInit/ {n++} END {print n + 0}' "$WORK/fl2"; }
	rm -f "$WORK/fl2"
	run_rc out rc env FAKECUDA_LOG="$WORK/fl2" FAKEAPP_ALL=1 "$NVT" --no-mps -c 0-3 "$APP" launch 1
	eq "$out" "tpcs=0-3|0-3 hung=0"
	eq "$(cuinits)" 1 "cuInit calls (the task's only)"
	for visible in 0 1 "1,0" "$(fake_uuid 1)"; do
		rm -f "$WORK/fl2"
		run_rc out rc env FAKECUDA_LOG="$WORK/fl2" CUDA_VISIBLE_DEVICES="$visible" "$NVT" --no-mps -c 5 "$APP" launch 1
		has "$out" "tpcs=5 hung=0"
		eq "$(cuinits)" 1 "cuInit calls with CUDA_VISIBLE_DEVICES=$visible"
	done
	# -p reads and changes without the driver too.
	rm -f "$WORK/fl2"
	start_loop wm env FAKECUDA_LOG="$WORK/fl2" FAKEAPP_ALL=1 "$NVT" --no-mps -c 0-3 "$APP"
	wait_file "$WORK/wm.state" "0-3|0-3"
	"$NVT" -p -c --gpu 1=6 "$PID" >/dev/null
	wait_file "$WORK/wm.state" "0-3|6"
	"$NVT" -l >/dev/null
	eq "$(cuinits)" 1 "cuInit calls with -p and -l"
	stop_loop wm "$PID"
	# GPUs of different models under CUDA's default order (fastest first):
	# index 1 may be either GPU, so the task gets both; the shim picks by UUID.
	sed -i 's/Fake H100/Fake H200/' "$NVTASKSET_PROC_NVIDIA/gpus/0000:11:00.0/information"
	run_rc out rc env CUDA_VISIBLE_DEVICES=1 "$NVT" --no-mps -c 5 /usr/bin/env
	has "$out" "$(fake_uuid 0) 5 "
	has "$out" "$(fake_uuid 1) 5 "
	run_rc out rc env CUDA_DEVICE_ORDER=PCI_BUS_ID CUDA_VISIBLE_DEVICES=1 "$NVT" --no-mps -c 5 /usr/bin/env
	hasnt "$out" "$(fake_uuid 0)"
	rm -f "$WORK/fl2"
	run_rc out rc env FAKECUDA_LOG="$WORK/fl2" CUDA_VISIBLE_DEVICES=1 "$NVT" --no-mps -c 5 "$APP" launch 1
	has "$out" "tpcs=5 hung=0"
	eq "$(cuinits)" 1 "cuInit calls with mixed models"
}

t_multigpu_launch_path_no_syscalls() {
	# Two GPUs, each launch's GPU found from its context: after the first
	# launch in each context, launches make no system call.
	local record
	two_gpus
	"$NVT" --calibrate >/dev/null 2>&1
	record="$(fake_uuid 0) 0-3 $(sed -n 2p "$NVTASKSET_CACHE_DIR/$(fake_uuid 0).topo");$(fake_uuid 1) 8-9 $(sed -n 2p "$NVTASKSET_CACHE_DIR/$(fake_uuid 1).topo")"
	syscalls_per_launch 10 10000 "$record" FAKEAPP_ALL=1
	eq "$(cat "$WORK/many.out")" "tpcs=0-3|8-9 hung=0"
}

t_multigpu_uuid_prefix() {
	# A GPU is named by any unique prefix of its UUID ("GPU-" and one character more, as CUDA
	# takes them); a prefix of several is refused with the GPUs it names.
	export FAKECUDA_CHIPS=h100,h100,h100 NVTASKSET_CACHE_DIR=$WORK/cache3
	run_rc out rc "$NVT" --gpu GPU-01 --dry-run -c 0-3
	eq "$rc" 0 "$out"
	has "$out" "GPU 1 ($(fake_uuid 1)): TPCs 0-3"
	run_rc out rc "$NVT" --gpu gpu-02 --topology
	eq "$rc" 0 "$out"
	has "$out" "GPU 2: Fake GPU 2"
	run_rc out rc "$NVT" --gpu GPU-0 --dry-run -c 0-3
	eq "$rc" 1
	eq "$out" "nvtaskset: GPU 'GPU-0' is ambiguous: it begins the UUIDs of GPUs 0 ($(fake_uuid 0)), 1 ($(fake_uuid 1)), 2 ($(fake_uuid 2)); give more of one"
	run_rc out rc "$NVT" --gpu GPU- --dry-run -c 0-3
	eq "$rc" 1
	has "$out" "there is no GPU 'GPU-'"
}

# -l names every task whose TPCs a task's overlap, GPU by GPU (it named the first alone): a line
# for each task and GPU, the TPCs it shares and the tasks, their programs as a terminal may
# show them, past four the first three and how many more; --json's "overlap_pids" each GPU's.
t_multigpu_list_names_every_overlap() {
	local a b c d e f g out pids
	two_gpus
	start_loop ova env FAKEAPP_ALL=1 "$NVT" --no-mps -c --gpu 0=0-3 --gpu 1=40-47 "$APP"
	a=$PID
	start_loop ovb "$NVT" --no-mps --gpu 0 -c 2-5 "$APP"
	b=$PID
	# A program named to rewrite the terminal: "?" where its escape was.
	start_loop ovc "$NVT" --no-mps --gpu 0 -c 3-8 bash -c 'exec -a "$1" "$2" "${@:3}"' sh \
		$'\e[2Jev\til' "$APP"
	c=$PID
	start_loop ovd env FAKEAPP_ALL=1 "$NVT" --no-mps --gpu 1 -c 44 "$APP"
	d=$PID
	wait_file "$WORK/ova.state" "0-3|40-47"
	wait_file "$WORK/ovb.state" "2-5"
	wait_file "$WORK/ovc.state" "3-8"
	wait_file "$WORK/ovd.state" "0-65|44"
	run_rc out rc "$NVT" -l
	eq "$rc" 0 "$out"
	has "$out" "Overlap: pid $a shares TPCs 2-3 of GPU 0 with pids $(names "$b" fakeapp-dlopen "$c" '?[2Jev?il')"
	has "$out" "Overlap: pid $b shares TPCs 2-5 of GPU 0 with pids $(names "$a" fakeapp-dlopen "$c" '?[2Jev?il')"
	has "$out" "Overlap: pid $c shares TPCs 3-5 of GPU 0 with pids $(names "$a" fakeapp-dlopen "$b" fakeapp-dlopen)"
	has "$out" "Overlap: pid $a shares TPC 44 of GPU 1 with pid $d (fakeapp-dlopen)"
	has "$out" "Overlap: pid $d shares TPC 44 of GPU 1 with pid $a (fakeapp-dlopen)"
	eq "$(grep -c '^Overlap:' <<<"$out")" 5 "Overlap lines: $out"
	out=$(timeout "$HANG" "$NVT" -l --json)
	python3 - "$out" "$a" "$b" "$c" "$d" <<'PY' || die "bad JSON: $out"
import json, sys
a, b, c, d = map(int, sys.argv[2:])
t = {x["pid"]: x for x in json.loads(sys.argv[1])["tasks"]}
ov = lambda p: {g["gpu"]: g["overlap_pids"] for g in t[p]["gpus"]}
assert ov(a) == {0: sorted([b, c]), 1: [d]}, ov(a)
assert ov(b)[0] == sorted([a, c]) and ov(c)[0] == sorted([a, b]) and ov(d) == {0: [], 1: [a]}, t
assert ov(b).get(1, []) == [] and ov(c).get(1, []) == [], t
assert all(t[p]["overlaps"] for p in (a, b, c, d))
assert [g["overlap_count"] for g in t[a]["gpus"]] == [2, 1], t[a]
PY
	# Three more on TPC 0: a's line names three of its five and says how many more.
	start_loop ove "$NVT" --no-mps --gpu 0 -c 0 "$APP"
	e=$PID
	start_loop ovf "$NVT" --no-mps --gpu 0 -c 0 "$APP"
	f=$PID
	start_loop ovg "$NVT" --no-mps --gpu 0 -c 0 "$APP"
	g=$PID
	wait_file "$WORK/ove.state" "0"
	wait_file "$WORK/ovf.state" "0"
	wait_file "$WORK/ovg.state" "0"
	run_rc out rc "$NVT" -l
	pids=$(printf '%s\n' "$b" "$c" "$e" "$f" "$g" | sort -n | head -3)
	grep -Eq "^Overlap: pid $a shares TPCs 0,2-3 of GPU 0 with pids $(head -1 <<<"$pids") \([^)]*\), $(sed -n 2p <<<"$pids") \([^)]*\), $(sed -n 3p <<<"$pids") \([^)]*\) and 2 more$" <<<"$out" ||
		die "a's line of five: $out"
	out=$(timeout "$HANG" "$NVT" -l --json)
	python3 -c 'import json,sys; t={x["pid"]: x for x in json.loads(sys.argv[1])["tasks"]}; p=list(map(int, sys.argv[2:])); g=t[p[0]]["gpus"][0]; assert g["overlap_pids"] == sorted(p[1:]) and g["overlap_count"] == 5, t[p[0]]' \
		"$out" "$a" "$b" "$c" "$e" "$f" "$g" || die "a's five in JSON: $out"
	for t in ova:$a ovb:$b ovc:$c ovd:$d ove:$e ovf:$f ovg:$g; do
		stop_loop "${t%%:*}" "${t#*:}"
	done
}
# names PID PROGRAM PID PROGRAM: two tasks as an Overlap line names them, the lower PID first.
names() {
	if (($1 < $3)); then
		echo "$1 ($2) and $3 ($4)"
	else
		echo "$3 ($4) and $1 ($2)"
	fi
}
