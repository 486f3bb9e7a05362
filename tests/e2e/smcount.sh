# The SM count a partitioned program is told, and cooperative grids sized by
# it (src/shim/shimsmcount.c, docs/usage.md "The SM count a program sees").
# Sourced by tests/run-tests.sh: each t_NAME function is one test, run in a
# subshell under set -e with the helpers defined there.
#
# "fakeapp sms" prints, per device, the count cuDeviceGetAttribute answers
# (sms=, called as the build finds it: dlsym on the driver's handle, or
# linked) and the count of the entry point cuGetProcAddress_v2 hands out
# (proc=, as cudart fetches every driver call).
# shellcheck shell=bash

# on_start TAG CMD...: starts CMD (an "-on GO" mode) in the background with its output in
# $WORK/TAG.out; waits until it printed its first line. Sets PID. $WORK/TAG.go lets it go on.
# The file of a run before is removed first: its lines would be read before the new run empties it.
on_start() {
	local tag=$1
	shift
	rm -f "$WORK/$tag.go" "$WORK/$tag.out"
	"$@" >"$WORK/$tag.out" 2>&1 &
	PID=$!
	wait_for 10 grep -q . "$WORK/$tag.out"
}
# on_finish TAG: lets it go on, waits for it, and sets out to what it printed.
on_finish() {
	touch "$WORK/$1.go"
	wait "$PID" || die "$1 exited $?: $(cat "$WORK/$1.out")"
	out=$(cat "$WORK/$1.out")
}

t_sm_count_partition() {
	local app
	# 4 TPCs of two SMs: 8, however the program reaches the call.
	for app in "$APP" "$LINKED"; do
		run_rc out rc "$NVT" --no-mps -c 0-3 "$app" sms
		eq "$out" "dev=0 sms=8 proc=8"
	done
	# Whole GPCs: GPC 1 holds 8 TPCs, GPC 0 4, GPCs 6 and 7 9 each.
	run_rc out rc "$NVT" --no-mps -g 1 "$APP" sms
	eq "$out" "dev=0 sms=16 proc=16"
	run_rc out rc "$NVT" --no-mps -g 0 "$LINKED" sms
	eq "$out" "dev=0 sms=8 proc=8"
	run_rc out rc "$NVT" --no-mps -g 6,7 "$APP" sms
	eq "$out" "dev=0 sms=36 proc=36"
	run_rc out rc "$NVT" --no-mps -n 10 "$APP" sms
	has "$out" "TPCs 6,14,22,30,37,44,51,58,60,62"
	has "$out" "
dev=0 sms=20 proc=20"
	# Every TPC: the GPU's own count.
	run_rc out rc "$NVT" --no-mps -c 0-65 "$APP" sms
	eq "$out" "dev=0 sms=132 proc=132"
	# Asked at once after cuInit, before any launch.
	run_rc out rc "$NVT" --no-mps -c 0-3 "$APP" info
	eq "$out" "sms=8"
	# Launches are unchanged.
	run_rc out rc "$NVT" --no-mps -c 0-3 "$APP" launch 2
	has "$out" "tpcs=0-3 hung=0"
}

t_sm_count_off() {
	local app
	# Turned off: the GPU's count, as without nvtaskset; partitions still apply.
	for app in "$APP" "$LINKED"; do
		run_rc out rc env NVTASKSET_SM_COUNT=gpu "$NVT" --no-mps -c 0-3 "$app" sms
		eq "$out" "dev=0 sms=132 proc=132"
	done
	run_rc out rc env NVTASKSET_SM_COUNT=gpu "$NVT" --no-mps -c 0-3 "$APP" launch 1
	has "$out" "tpcs=0-3 hung=0"
	# A value the shim does not know: said once, and the default applies.
	run_rc out rc env NVTASKSET_SM_COUNT=108 "$NVT" --no-mps -c 0-3 "$APP" sms
	has "$out" "nvtaskset: warning: ignoring malformed NVTASKSET_SM_COUNT=\"108\" (partition, follow, gpu or fit)"
	has "$out" "dev=0 sms=8 proc=8"
	eq "$(grep -c warning <<<"$out")" 1
	run_rc out rc env NVTASKSET_SM_COUNT=fits "$NVT" --no-mps -g 6,7 "$APP" sms
	has "$out" "nvtaskset: warning: ignoring malformed NVTASKSET_SM_COUNT=\"fits\""
	has "$out" "dev=0 sms=36 proc=36"
	run_rc out rc env NVTASKSET_SM_COUNT=partition "$NVT" --no-mps -c 0-7 "$APP" sms
	eq "$out" "dev=0 sms=16 proc=16"
}

t_sm_count_option() {
	# --sm-count sets NVTASKSET_SM_COUNT for COMMAND, over one set already.
	run_rc out rc "$NVT" --no-mps --sm-count gpu -c 0-3 "$APP" sms
	eq "$out" "dev=0 sms=132 proc=132"
	run_rc out rc env NVTASKSET_SM_COUNT=gpu "$NVT" --no-mps --sm-count partition -c 0-3 "$LINKED" sms
	eq "$out" "dev=0 sms=8 proc=8"
	on_start opt "$NVT" --no-mps --sm-count follow -c 0-3 "$APP" sms-on "$WORK/opt.go"
	run_rc out rc "$NVT" -p -c 0-7 "$PID"
	on_finish opt
	eq "$out" "sms=8 proc=8
sms=16 proc=16"
	# Words it does not know, and where it has no meaning.
	run_rc out rc "$NVT" --no-mps --sm-count 108 -c 0-3 "$APP" sms
	eq "$rc" 1
	has "$out" "--sm-count takes partition, follow, gpu or fit"
	run_rc out rc "$NVT" --no-mps --sm-count FIT -c 0-3 "$APP" sms
	eq "$rc" 1
	has "$out" "--sm-count takes partition, follow, gpu or fit"
	run_rc out rc "$NVT" --no-mps --sm-count= -c 0-3 "$APP" sms
	eq "$rc" 1
	run_rc out rc "$NVT" --sm-count gpu -p 1
	eq "$rc" 1
	has "$out" "--sm-count goes with starting a command"
}

# fit_of PICK...: "SMS FIT" for the TPCs nvtaskset picks with PICK on GPU 0, worked out
# here from --topology --json: FIT is the largest count up to SMS whose grid of c / k
# clusters of k SMs (k = 2, 4, 8, 16; a cluster inside one GPC) its GPCs hold at once;
# a pick of every TPC keeps the GPU's own count.
fit_of() {
	local topo='' pick=''
	topo=$("$NVT" --topology --json) && pick=$("$NVT" --no-mps --dry-run --json "$@") ||
		die "fit_of $*: $topo $pick"
	python3 - "$topo" "$pick" <<'PY'
import json, re, sys
gpu = json.loads(sys.argv[1])["gpus"][0]
pick = json.loads(sys.argv[2])
picked = set((pick.get("picked") or pick["partition"])[0]["tpc_ids"])
def tpcs(text):
    return {t for a, b in re.findall(r"(\d+)(?:-(\d+))?", text) for t in range(int(a), int(b or a) + 1)}
sms_in = [2 * len(picked & tpcs(g["tpcs"])) for g in gpu["gpcs"]]
sms = 2 * len(picked)
fit = sms if len(picked) == gpu["tpcs"] else max(
    c for c in range(sms + 1)
    if all(c // k <= sum(s // k for s in sms_in) or sum(s // k for s in sms_in) == 0
           for k in (2, 4, 8, 16)))
print(sms, fit)
PY
}

# clusters_of BLOCK SMEM PICK...: the line "fakeapp clusters BLOCK SMEM" should print under
# nvtaskset PICK on GPU 0, worked out here from --topology --json: clusters of K CTAs, B to
# an SM (the fake driver's occupancy: 2048 threads, 32 blocks, 228 KiB), fit floor(s B / K)
# times in a GPC of s SMs of the pick, at most what the whole GPU's GPCs hold (the driver's
# answer); a pick of every TPC gets the driver's answer.
clusters_of() {
	local block=$1 smem=$2 topo='' pick=''
	shift 2
	topo=$("$NVT" --topology --json) && pick=$("$NVT" --no-mps --dry-run --json "$@") ||
		die "clusters_of $*: $topo $pick"
	python3 - "$block" "$smem" "$topo" "$pick" <<'PY'
import json, re, sys
block, smem = int(sys.argv[1]), int(sys.argv[2])
gpu = json.loads(sys.argv[3])["gpus"][0]
pick = json.loads(sys.argv[4])
picked = set((pick.get("picked") or pick["partition"])[0]["tpc_ids"])
def tpcs(text):
    return {t for a, b in re.findall(r"(\d+)(?:-(\d+))?", text) for t in range(int(a), int(b or a) + 1)}
gpcs = [tpcs(g["tpcs"]) for g in gpu["gpcs"]]
b = min(2048 // block, 32, 233472 // smem if smem else 32)
out = []
for k in (1, 2, 4, 8, 16):
    whole = sum(2 * len(g) * b // k for g in gpcs)
    part = sum(2 * len(g & picked) * b // k for g in gpcs)
    out.append("c%d=%d" % (k, whole if len(picked) == gpu["tpcs"] else min(part, whole)))
print(" ".join(out))
PY
}

t_sm_count_clusters() {
	local app pick want
	# The driver answers for the whole GPU; told what the partition's GPCs hold.
	run_rc out rc "$APP" clusters 128 232448
	eq "$out" "c1=132 c2=66 c4=30 c8=15 c16=7"
	# -n 42's default pick, GPCs of 16, 16, 16, 18 and 18 SMs: 20 clusters of 4 CTAs of
	# one SM each (an MPS share of 84 SMs: 21; the whole GPU: 30).
	eq "$(clusters_of 128 232448 -n 42)" "c1=84 c2=42 c4=20 c8=10 c16=5"
	for pick in "-n 42" "-n 10" "-c 1,2,3,4" "-g 6,7" "-c 0-3,60"; do
		for app in "$APP" "$LINKED"; do
			# shellcheck disable=SC2086 # PICK is words
			want=$(clusters_of 128 232448 $pick)
			# shellcheck disable=SC2086
			run_rc out rc "$NVT" --no-mps $pick "$app" clusters 128 232448
			eq "$(tail -n 1 <<<"$out")" "$want"
			# Several CTAs to an SM (8 of 256 threads): the partition's SMs hold 8 times as many.
			# shellcheck disable=SC2086
			want=$(clusters_of 256 0 $pick)
			# shellcheck disable=SC2086
			run_rc out rc "$NVT" --no-mps $pick "$app" clusters 256 0
			eq "$(tail -n 1 <<<"$out")" "$want"
		done
	done
	# No GPC of 4 TPCs in 4 GPCs holds a cluster of 4 SMs: none, as MPS's share of 8 SMs holds
	# none of 16 (cuDNN then takes a smaller cluster).
	run_rc out rc "$NVT" --no-mps -c 1,2,3,4 "$APP" clusters 128 232448
	eq "$out" "c1=8 c2=4 c4=0 c8=0 c16=0"
	# Every TPC, or the count turned off: the driver's answer.
	run_rc out rc "$NVT" --no-mps -c 0-65 "$APP" clusters 128 232448
	eq "$out" "c1=132 c2=66 c4=30 c8=15 c16=7"
	run_rc out rc "$NVT" --no-mps --sm-count gpu -n 42 "$LINKED" clusters 128 232448
	has "$out" "
c1=132 c2=66 c4=30 c8=15 c16=7"
}

t_sm_count_fit() {
	local app pick sms fit
	# -n 42's packed pick, GPCs of 16, 16, 16, 18 and 18 SMs, holds 20 clusters of 4 SMs
	# where 84 SMs would ask for 21: told 83. Other picks leave clusters over as well.
	eq "$(fit_of -n 42)" "84 83"
	for pick in "-n 42" "-n 46" "-n 10" "-n 50" "-c 1,9,17,2,10,18" "-g 6,7"; do
		# shellcheck disable=SC2086 # PICK is words
		read -r sms fit <<<"$(fit_of $pick)"
		[ "$fit" -lt "$sms" ] || die "$pick: no cluster over ($sms $fit)"
		for app in "$APP" "$LINKED"; do
			# shellcheck disable=SC2086
			run_rc out rc env NVTASKSET_SM_COUNT=fit "$NVT" --no-mps $pick "$app" sms
			has "$out" "dev=0 sms=$fit proc=$fit"
		done
	done
	run_rc out rc "$NVT" --no-mps --sm-count fit -n 42 "$LINKED" sms
	has "$out" "
dev=0 sms=83 proc=83"
	# Whole GPCs of 16 SMs leave none over: their full count; so does every TPC (the GPU's own).
	run_rc out rc env NVTASKSET_SM_COUNT=fit "$NVT" --no-mps -g 1-5 "$APP" sms
	eq "$out" "dev=0 sms=80 proc=80"
	run_rc out rc "$NVT" --no-mps --sm-count fit -g 1 "$LINKED" sms
	eq "$out" "dev=0 sms=16 proc=16"
	run_rc out rc env NVTASKSET_SM_COUNT=fit "$NVT" --no-mps -c 0-65 "$APP" sms
	eq "$out" "dev=0 sms=132 proc=132"
	# The count told first stays after a live change, as with partition.
	on_start fit env NVTASKSET_SM_COUNT=fit "$NVT" --no-mps -g 1,2,3,6,7 "$APP" sms-on "$WORK/fit.go"
	run_rc out rc "$NVT" -p -g 1 "$PID"
	eq "$rc" 0
	on_finish fit
	eq "$out" "sms=83 proc=83
sms=83 proc=83"
	# Each GPU: its own partition's fitted count; none on GPU 0: its own count.
	two_gpus
	run_rc out rc "$NVT" --no-mps --sm-count fit -g --gpu 0=6,7 --gpu 1=1 "$APP" sms
	eq "$out" "dev=0 sms=35 proc=35
dev=1 sms=16 proc=16"
	run_rc out rc "$NVT" --no-mps --sm-count fit --gpu 1 -g 6,7 "$LINKED" sms
	eq "$out" "dev=0 sms=132 proc=132
dev=1 sms=35 proc=35"
}

t_sm_count_per_gpu() {
	# Two GPUs: each device is told its own partition's count.
	two_gpus
	run_rc out rc "$NVT" --no-mps -c --gpu 0=0-3 --gpu 1=40-47 "$APP" sms
	eq "$out" "dev=0 sms=8 proc=8
dev=1 sms=16 proc=16"
	run_rc out rc "$NVT" --no-mps -g --gpu 0=1 --gpu 1=0 "$LINKED" sms
	eq "$out" "dev=0 sms=16 proc=16
dev=1 sms=8 proc=8"
	# A GPU without a partition: its own count.
	run_rc out rc "$NVT" --no-mps --gpu 1 -c 5 "$APP" sms
	eq "$out" "dev=0 sms=132 proc=132
dev=1 sms=2 proc=2"
	# CUDA numbers the GPUs it shows: device 0 is then the second GPU.
	run_rc out rc env CUDA_VISIBLE_DEVICES=1 "$NVT" --no-mps -c 0-7 "$APP" sms
	eq "$out" "dev=0 sms=16 proc=16"
}

t_sm_count_after_change() {
	# By default the count told first stays after a live change, grown or shrunk.
	on_start grow "$NVT" --no-mps -c 0-3 "$APP" sms-on "$WORK/grow.go"
	run_rc out rc "$NVT" -p -c 0-15 "$PID"
	eq "$rc" 0
	on_finish grow
	eq "$out" "sms=8 proc=8
sms=8 proc=8"
	on_start shrink "$NVT" --no-mps -c 0-15 "$LINKED" sms-on "$WORK/shrink.go"
	run_rc out rc "$NVT" -p -g 0 "$PID"
	eq "$rc" 0 "-p -g 0 ($out)"
	run_rc out rc "$NVT" -pc "$PID"
	has "$out" "current TPC list: $("$NVT" --no-mps --dry-run -g 0 | sed -n 's/.*: TPCs //p')"
	on_finish shrink
	eq "$out" "sms=32 proc=32
sms=32 proc=32"
	# NVTASKSET_SM_COUNT=follow: each query tells the partition of the moment.
	on_start follow env NVTASKSET_SM_COUNT=follow "$NVT" --no-mps -c 0-3 "$APP" sms-on "$WORK/follow.go"
	run_rc out rc "$NVT" -p -c 0-15 "$PID"
	on_finish follow
	eq "$out" "sms=8 proc=8
sms=32 proc=32"
	# A task started with the wrapper, unpartitioned at its first query: the GPU's count stays.
	on_start wrap env LD_LIBRARY_PATH="$WRAPDIR:$FAKEDIR" "$APP" sms-on "$WORK/wrap.go"
	run_rc out rc "$NVT" -p -c 0-3 "$PID"
	eq "$rc" 0
	on_finish wrap
	eq "$out" "sms=132 proc=132
sms=132 proc=132"
	on_start wrapf env NVTASKSET_SM_COUNT=follow LD_LIBRARY_PATH="$WRAPDIR:$FAKEDIR" "$LINKED" sms-on \
		"$WORK/wrapf.go"
	run_rc out rc "$NVT" -p -c 0-3 "$PID"
	on_finish wrapf
	eq "$out" "sms=132 proc=132
sms=8 proc=8"
}

t_sm_count_wrapper_and_preload() {
	local app record
	record=$(partition_env 0-3 "$(topo_verified)")
	# The drop-in wrapper alone, with a partition from the environment.
	for app in "$APP" "$LINKED"; do
		run_rc out rc env LD_LIBRARY_PATH="$WRAPDIR:$FAKEDIR" NVTASKSET_PARTITION="$record" "$app" sms
		eq "$out" "dev=0 sms=8 proc=8"
	done
	# A driver that does not report the query (no callback): the wrapper's
	# exports still answer, whichever way the program looks the call up...
	for app in "$APP" "$LINKED"; do
		run_rc out rc env FAKECUDA_ATTRIBUTE_CALLBACKS=0 LD_LIBRARY_PATH="$WRAPDIR:$FAKEDIR" \
			NVTASKSET_PARTITION="$record" "$app" sms
		eq "$out" "dev=0 sms=8 proc=8"
		# ...and beside the preloaded shim, the wrapper's exports ask the preloaded one.
		run_rc out rc env FAKECUDA_ATTRIBUTE_CALLBACKS=0 LD_LIBRARY_PATH="$WRAPDIR:$FAKEDIR" \
			"$NVT" --no-mps -c 0-3 "$app" sms
		eq "$out" "dev=0 sms=8 proc=8"
	done
	# Preloaded, a linked program reaches the shim's exports; one that looks
	# the driver up through its own handle (as cudart does) has only the callback.
	run_rc out rc env FAKECUDA_ATTRIBUTE_CALLBACKS=0 "$NVT" --no-mps -c 0-3 "$LINKED" sms
	eq "$out" "dev=0 sms=8 proc=8"
	run_rc out rc env FAKECUDA_ATTRIBUTE_CALLBACKS=0 "$NVT" --no-mps -c 0-3 "$APP" sms
	eq "$out" "dev=0 sms=132 proc=132"
	# The wrapper without nvtaskset and without a partition: the GPU's count, no warning.
	run_rc out rc env LD_LIBRARY_PATH="$WRAPDIR:$FAKEDIR" "$APP" sms
	eq "$out" "dev=0 sms=132 proc=132"
}

t_coop_launch_fits_partition() {
	local how
	for how in "" ex; do
		# Sized by the count told (8 SMs, 8 blocks of 256 threads an SM): 64 blocks, on the partition.
		run_rc out rc "$NVT" --no-mps -c 0-3 "$APP" coop 256 $how
		eq "$rc" 0
		eq "$out" "grid=64 rc=0 tpcs=0-3 hung=0"
		# Sized by the whole GPU's 132 SMs: 1056 blocks could never run at once on 8 SMs.
		# They run on every TPC instead of waiting forever, with a warning.
		run_rc out rc env NVTASKSET_SM_COUNT=gpu "$NVT" --no-mps -c 0-3 "$LINKED" coop 256 $how
		eq "$rc" 0
		has "$out" "grid=1056 rc=0 tpcs=0-65 hung=0"
		has "$out" "nvtaskset: warning: pid "
		has "$out" "a cooperative kernel launched 1056 blocks that must all run at once (8 fit on an SM), more than the 8 SMs of this task's partition hold"
		hasnt "$out" HANG
		# Two GPCs of 9 TPCs, 2 blocks of 1024 threads an SM: 72 blocks, on those GPCs.
		run_rc out rc "$NVT" --no-mps -g 6,7 "$APP" coop 1024 $how
		eq "$out" "grid=72 rc=0 tpcs=6-7,14-15,22-23,30-31,37-38,44-45,51-52,58-61 hung=0"
	done
	# The drop-in wrapper alone does the same.
	run_rc out rc env LD_LIBRARY_PATH="$WRAPDIR:$FAKEDIR" NVTASKSET_SM_COUNT=gpu \
		NVTASKSET_PARTITION="$(partition_env 0-3 "$(topo_verified)")" "$APP" coop 256 ex
	has "$out" "grid=1056 rc=0 tpcs=0-65 hung=0"
	has "$out" "more than the 8 SMs of this task's partition hold"
}

t_coop_launch_after_shrink() {
	local how
	for how in "" ex; do
		# Sized on 16 TPCs (32 SMs: 256 blocks), launched after -p left 4.
		on_start coop "$NVT" --no-mps -c 0-15 "$APP" coop-on "$WORK/coop.go" 256 $how
		eq "$(cat "$WORK/coop.out")" "sized=256"
		run_rc out rc "$NVT" -p -c 0-3 "$PID"
		on_finish coop
		has "$out" "grid=256 rc=0 tpcs=0-65 hung=0"
		has "$out" "more than the 8 SMs of this task's partition hold"
		# Grown instead: it fits, and runs on the new partition.
		on_start coop "$NVT" --no-mps -c 0-15 "$LINKED" coop-on "$WORK/coop.go" 256 $how
		run_rc out rc "$NVT" -p -c 0-31 "$PID"
		on_finish coop
		eq "$out" "sized=256
grid=256 rc=0 tpcs=0-31 hung=0"
	done
}

t_start_debug_says_parts() {
	local part
	# NVTASKSET_START_DEBUG: one line at the end of the shim's set-up, every part named,
	# even when warnings are silenced (the start-up benchmark reads it).
	run_rc out rc env NVTASKSET_START_DEBUG=1 NVTASKSET_QUIET=1 "$NVT" --no-mps -c 0-3 "$APP" info
	eq "$rc" 0
	grep -Eq "^nvtaskset: start-up of pid [0-9]+: [0-9.]+ ms in all \(environment [0-9.]+, segment [0-9.]+, inherit [0-9.]+, sweep [0-9.]+, masks [0-9.]+, driver [0-9.]+, callback [0-9.]+, graphs [0-9.]+, smctrl [0-9.]+, sms [0-9.]+, yield [0-9.]+ ms\)$" <<<"$out" ||
		die "no start-up line: $out"
	has "$out" "sms=8"
	eq "$(grep -c 'start-up of' <<<"$out")" 1
	for part in "" 0; do
		run_rc out rc env NVTASKSET_START_DEBUG=$part "$NVT" --no-mps -c 0-3 "$APP" info
		eq "$out" "sms=8"
	done
}

t_sm_count_unexpected_api_block() {
	# A driver whose API callback data is not laid out as measured: said once; the
	# shim's exports still answer a linked program; launches stay partitioned.
	run_rc out rc env FAKECUDA_API_PARAMS_SIZE=16 "$NVT" --no-mps -c 0-3 "$APP" sms
	has "$out" "nvtaskset: warning: unexpected driver-API callback data (call 9): programs that ask the driver through its own handle are told the GPU's SM count"
	has "$out" "dev=0 sms=132 proc=132"
	eq "$(grep -c warning <<<"$out")" 1
	hasnt "$out" libsmctrl
	run_rc out rc env FAKECUDA_API_PARAMS_SIZE=16 "$NVT" --no-mps -c 0-3 "$LINKED" sms
	has "$out" "dev=0 sms=8 proc=8"
	run_rc out rc env FAKECUDA_API_PARAMS_SIZE=16 "$NVT" --no-mps -c 0-3 "$APP" launch 1
	has "$out" "tpcs=0-3 hung=0"
}
