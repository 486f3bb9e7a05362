# Calibration, topology, GPCs, -n; the calibration cache, also shared by users (need_users,
# as_user: security.sh). Sourced by tests/run-tests.sh: each t_NAME function is one test, run in
# a subshell under set -e with the helpers defined there.
# shellcheck shell=bash

H100_MAP="0,9,18,27,36,45,54,63,1,10,19,28,37,46,55,64,2,11,20,29,38,47,56,65,3,12,21,30,39,48,57,66,13,22,31,40,49,58,67,14,23,32,41,50,59,68,15,24,33,42,51,60,69,16,25,34,43,52,61,70,62,71,75,78,81,83"

t_calibrate_h100() {
	export NVTASKSET_CACHE_DIR=$WORK/own-cache
	run_rc out rc env FAKECUDA_LOG="$WORK/cal.log" "$NVT" --calibrate
	eq "$rc" 0
	has "$out" "nvtaskset: calibrating GPU 0 (Fake GPU 0 (H100 map))..."
	has "$out" "66 TPCs, 12 GPCs, calibrated in"
	has "$out" ", TMD layout V04_00 verified; saved in"
	has "$out" "saved in $NVTASKSET_CACHE_DIR/GPU-"
	local file
	file=$(ls "$NVTASKSET_CACHE_DIR"/GPU-*.topo)
	[ "$(stat -c %a "$file")" == 644 ] || die "cache file is not 0644"
	grep -q "^nvtaskset-topology 2 tpcs=66 gpcs=12 flags=1 tmd=V04_00 cc=9.0 map=$H100_MAP gpc=" "$file" ||
		die "wrong map cached: $(cat "$file")"
	grep -q "^nvtaskset-cache 2 uuid=GPU-" "$file" || die "wrong record version: $(head -1 "$file")"
	# The probe ran in a process that could not reach MPS.
	grep -q "mps=/nonexistent/nvtaskset-no-mps" <(grep -A1 "^cuInit" "$WORK/cal.log" | grep -B1 "^module" | head -1) ||
		die "calibration was not isolated from MPS: $(cat "$WORK/cal.log")"
	run_rc out rc "$NVT" --topology
	has "$out" "calibration read from the cache"
	has "$out" "TMD layout V04_00, verified by calibration (compute capability 9.0)"
	has "$out" "$(printf '  %-4s %-27s %-22s %s' 0 0,8,16,24 0-3 0-1,16-17,32-33,48-49)"
	has "$out" "$(printf '  %-4s %-27s %-22s %s' 6 6,14,22,30,37,44,51,58,60 54-62 '')"
	has "$out" "$(printf '  %-4s %-27s %-22s %s' 11 65 83 130-131)  (shares no cluster with another TPC)"
	out=$(timeout "$HANG" "$NVT" --topology --json)
	python3 - "$out" <<'PY' || die "bad JSON: $out"
import json, sys
g = json.loads(sys.argv[1])["gpus"][0]
assert g["tpcs"] == 66 and g["sms"] == 132 and g["gpcs_known"]
assert g["tmd_layout"] == "V04_00" and g["compute_capability"] == "9.0"
gpcs = g["gpcs"]
assert len(gpcs) == 12 and gpcs[0]["tpcs"] == "0,8,16,24" and gpcs[0]["mask_bits"] == "0-3"
assert [x["own_cluster_domain"] for x in gpcs] == [False] * 8 + [True] * 4
assert gpcs[8]["tpcs"] == "62" and gpcs[8]["mask_bits"] == "75"
PY
}
t_translation_every_tpc() {
	# Each logical TPC alone: the launch runs on exactly that TPC (the fake
	# chip has the H100's permuted map and floorswept slots) and never hangs.
	local t
	for ((t = 0; t < 66; t++)); do
		run_rc out rc "$NVT" --no-mps -c $t "$APP" launch 1
		has "$out" "tpcs=$t hung=0 version=0x40 masked=1"
	done
	run_rc out rc "$NVT" --no-mps -c 62-65 "$APP" launch 1
	has "$out" "tpcs=62-65 hung=0"
	has "$out" "disable=ffffffff,fff5b7ff,ffffffff,ffffffff"
}
t_gpc_lists() {
	run_rc out rc "$NVT" --no-mps -g 0 "$APP" launch 1
	has "$out" "tpcs=0,8,16,24 hung=0"
	run_rc out rc "$NVT" --no-mps -g 6 "$LINKED" launch 1
	has "$out" "tpcs=6,14,22,30,37,44,51,58,60 hung=0"
	run_rc out rc "$NVT" --no-mps -g 8-11 "$APP" launch 1
	has "$out" "tpcs=62-65 hung=0"
	start_loop gl "$NVT" --no-mps -g 1 "$APP"
	wait_file "$WORK/gl.state" "1,9,17,25,32,39,46,53"
	run_rc out rc "$NVT" -p -g 0,8 "$PID"
	eq "$rc" 0
	wait_file "$WORK/gl.state" "0,8,16,24,62"
	stop_loop gl "$PID"
}
t_pick_count() {
	run_rc out rc "$NVT" --no-mps -n 8 "$APP" launch 1
	has "$out" "tpcs=1,9,17,25,32,39,46,53 hung=0"
	run_rc out rc "$NVT" --no-mps -n 9 --strategy packed "$APP" launch 1
	has "$out" "tpcs=6,14,22,30,37,44,51,58,60 hung=0"
	run_rc out rc "$NVT" --no-mps -n 12 --strategy spread "$APP" launch 1
	has "$out" "tpcs=0-7,62-65 hung=0"
	# --exclude-running keeps clear of other tasks' TPCs.
	start_loop ex1 "$NVT" --no-mps -n 8 "$APP"
	local first=$PID
	wait_file "$WORK/ex1.state" "1,9,17,25,32,39,46,53"
	start_loop ex2 "$NVT" --no-mps -n 8 --exclude-running "$APP"
	wait_file "$WORK/ex2.state" "2,10,18,26,33,40,47,54"
	run_rc out rc "$NVT" --no-mps -n 60 --exclude-running "$APP" launch 1
	eq "$rc" 1
	eq "$out" "nvtaskset: cannot pick 60 TPCs: only 50 are free of other tasks$(held_by "$first" 8 "$PID" 8)"
	# -p -n moves a task, leaving its own TPCs in the pool.
	run_rc out rc "$NVT" -p -n 4 --exclude-running -c "$first"
	eq "$rc" 1 "$out"
	has "$out" "-c, -g and -n exclude each other"
	run_rc out rc "$NVT" -p -n 4 --exclude-running "$first"
	eq "$rc" 0
	wait_file "$WORK/ex1.state" "0,8,16,24"
	stop_loop ex2 "$PID"
	stop_loop ex1 "$first"
}
t_cache_rebuilt() {
	local file
	export NVTASKSET_CACHE_DIR=$WORK/own-cache
	"$NVT" --calibrate >/dev/null 2>&1
	file=$(ls "$NVTASKSET_CACHE_DIR"/GPU-*.topo)
	run_rc out rc "$NVT" --no-mps -c 1 "$APP" launch 1
	hasnt "$out" "calibrating"
	# Corrupt: any changed byte is detected, and the record is measured anew.
	sed -i 's/map=0,9,18/map=0,9,19/' "$file"
	run_rc out rc "$NVT" --no-mps -c 1 "$APP" launch 1
	has "$out" "nvtaskset: calibrating GPU 0"
	has "$out" "tpcs=1 hung=0"
	grep -q "map=0,9,18," "$file" || die "cache not rebuilt"
	# Foreign: a record for another GPU under this GPU's name.
	sed -i 's/uuid=GPU-0/uuid=GPU-f/' "$file"
	run_rc out rc "$NVT" --no-mps -c 1 "$APP" launch 1
	has "$out" "nvtaskset: calibrating GPU 0"
	# Stale: another driver version.
	run_rc out rc env FAKECUDA_DRIVER_VERSION=13010 "$NVT" --no-mps -c 1 "$APP" launch 1
	has "$out" "nvtaskset: calibrating GPU 0"
	grep -q "driver=13010" "$file" || die "stale record not replaced"
	# Writable by others: never trusted.
	chmod 666 "$file"
	run_rc out rc env FAKECUDA_DRIVER_VERSION=13010 "$NVT" --no-mps -c 1 "$APP" launch 1
	has "$out" "nvtaskset: calibrating GPU 0"
	[ "$(stat -c %a "$file")" == 644 ] || die "rewritten cache is not 0644"
	# A cache directory that cannot be written: calibrate, warn, go on.
	run_rc out rc env NVTASKSET_CACHE_DIR=/proc/nvt "$NVT" --no-mps -c 1 "$APP" launch 1
	eq "$rc" 0
	has "$out" "nvtaskset: cannot save the calibration in /proc/nvt"
	has "$out" "tpcs=1 hung=0"
}
t_fast_identification() {
	# With one GPU in /proc and a record measured under this kernel module,
	# nvtaskset starts a task without initialising CUDA itself.
	export NVTASKSET_CACHE_DIR=$WORK/own-cache NVTASKSET_PROC_NVIDIA=$WORK/procnv
	local gpu=$WORK/procnv/gpus/0000:01:00.0 file cuinits
	mkdir -p "$gpu"
	printf 'Model: \t\t Fake H100\nGPU UUID: \t GPU-00010203-0405-0607-0809-0a0b0c0d0e84\n' >"$gpu/information"
	printf 'NVRM version: NVIDIA UNIX x86_64 Kernel Module  580.159.04  Thu Nov 20 2026\n' >"$WORK/procnv/version"
	"$NVT" --calibrate >/dev/null 2>&1
	file=$(ls "$NVTASKSET_CACHE_DIR"/GPU-*.topo)
	grep -q "nvrm=580.159.04" "$file" || die "module version not recorded: $(head -1 "$file")"
	cuinits() { awk '/^cuInit/ {n++} END {print n + 0}' "$WORK/fl"; }
	rm -f "$WORK/fl"
	run_rc out rc env FAKECUDA_LOG="$WORK/fl" "$NVT" --no-mps -c 1 "$APP" launch 1
	has "$out" "tpcs=1 hung=0"
	eq "$(cuinits)" 1 "cuInit calls (the task's only)"
	run_rc out rc "$NVT" --topology
	has "$out" "GPU 0: Fake H100 (GPU-00010203-0405-0607-0809-0a0b0c0d0e84)"
	# A GPU /proc does not describe: list the GPUs through the driver.
	mkdir -p "$WORK/procnv/gpus/0000:02:00.0"
	rm -f "$WORK/fl"
	run_rc out rc env FAKECUDA_LOG="$WORK/fl" "$NVT" --no-mps -c 1 "$APP" launch 1
	has "$out" "tpcs=1 hung=0"
	eq "$(cuinits)" 2 "cuInit calls with an undescribed GPU"
	rmdir "$WORK/procnv/gpus/0000:02:00.0"
	# A new kernel module: measured again.
	printf 'NVRM version: NVIDIA UNIX x86_64 Kernel Module  580.160.01  Fri\n' >"$WORK/procnv/version"
	run_rc out rc "$NVT" --no-mps -c 1 "$APP" launch 1
	has "$out" "nvtaskset: calibrating GPU 0"
	grep -q "nvrm=580.160.01" "$file" || die "record not rebuilt for the new module"
	# A record from before the module was known gets its version on next use.
	export NVTASKSET_PROC_NVIDIA=$WORK/no-procnv
	"$NVT" --calibrate >/dev/null 2>&1
	grep -q "nvrm=-" "$file" || die "expected a record without module version"
	export NVTASKSET_PROC_NVIDIA=$WORK/procnv
	"$NVT" --no-mps -c 1 "$APP" launch 1 >/dev/null 2>&1
	grep -q "nvrm=580.160.01" "$file" || die "module version not added"
	rm -f "$WORK/fl"
	run_rc out rc env FAKECUDA_LOG="$WORK/fl" "$NVT" --no-mps -c 1 "$APP" launch 1
	eq "$(cuinits)" 1 "cuInit calls after the upgrade"
}
t_calibration_failures() {
	run_rc out rc env NVTASKSET_CACHE_DIR="$WORK/c1" FAKECUDA_CTX_ERROR=46 "$NVT" --no-mps -c 1 "$APP" launch 1
	eq "$rc" 1
	has "$out" "nvtaskset: cannot calibrate GPU 0: cuDevicePrimaryCtxRetain (is the GPU exclusive to MPS?) failed: CUDA error 46"
	# A Hopper whose TMDs are not V04_00: the layout comes from the compute
	# capability, so the version byte is checked, not guessed from.
	run_rc out rc env NVTASKSET_CACHE_DIR="$WORK/c2" FAKECUDA_TMD_VERSION=0x50 "$NVT" --calibrate
	eq "$rc" 1
	has "$(tail -1 <<<"$out")" "nvtaskset: cannot calibrate GPU 0: the TMDs of this GPU (compute capability 9.0) carry the version byte of no layout known for it: V04_00 (byte 72 reads 0x50). nvtaskset will not partition this GPU. Please report"
	[ ! -e "$WORK/c2" ] || [ -z "$(ls "$WORK/c2")" ] || die "a failed calibration left a record"
	run_rc out rc env NVTASKSET_CACHE_DIR="$WORK/c3" FAKECUDA_NO_TABLE=1 "$NVT" --calibrate
	eq "$(tail -1 <<<"$out")" "nvtaskset: cannot calibrate GPU 0: the CUDA driver offers no launch callback table"
	run_rc out rc env NVTASKSET_CACHE_DIR="$WORK/c4" FAKECUDA_PARAMS_SIZE=16 "$NVT" --calibrate
	eq "$(tail -1 <<<"$out")" "nvtaskset: cannot calibrate GPU 0: the driver's launch callback never fired"
	run_rc out rc "$NVT" --topology --gpu 3
	eq "$rc" 1
	eq "$out" "nvtaskset: there is no GPU '3': this machine has one GPU, 0 ($(fake_uuid))"
}
t_pre_hopper() {
	export FAKECUDA_CHIP=a100
	run_rc out rc "$NVT" --topology
	has "$out" "54 TPCs, 108 SMs, 0 GPCs (unknown: needs thread-block clusters)"
	run_rc out rc "$NVT" --no-mps -g 0 "$APP" launch 1
	eq "$out" "nvtaskset: the GPC layout of this GPU is unknown (it is measured with thread-block clusters, which need compute capability 9.0); give TPCs with -c or a mask instead"
	run_rc out rc "$NVT" --no-mps -n 4 "$APP" launch 1
	has "$out" "tpcs=0-3 hung=0 version=0x30"
	run_rc out rc "$NVT" --no-mps -n 3 --strategy spread "$APP" launch 1
	has "$out" "tpcs=0,18,36 hung=0"
	run_rc out rc "$NVT" --no-mps -c 54 "$APP" launch 1
	eq "$out" "nvtaskset: TPC 54 does not exist: this GPU has 54 TPCs (0-53)"
}
t_pick_reported_and_dry_run() {
	# -n says what it picked, on stderr (JSON with --json); --dry-run starts nothing.
	local u
	u=$(fake_uuid)
	run_rc out rc "$NVT" --no-mps -n 4 "$APP" launch 1
	has "$out" "nvtaskset: GPU 0 ($u): TPCs 0,8,16,24"
	has "$out" "tpcs=0,8,16,24 hung=0"
	out=$(timeout "$HANG" "$NVT" --no-mps --json -n 4 "$APP" launch 1 2>&1 >/dev/null)
	python3 - "$out" "$u" <<'PY' || die "bad JSON: $out"
import json, sys
d = json.loads(sys.argv[1])
assert d["version"] == 2
p = d["picked"]
assert len(p) == 1 and p[0]["gpu"] == 0 and p[0]["uuid"] == sys.argv[2]
# JSON version 2: the partition object's fields, as -p and -l name them.
assert p[0] == {"gpu": 0, "uuid": sys.argv[2], "partitioned": True, "tpcs": "0,8,16,24",
                "tpc_mask": "1010101", "tpc_count": 4, "tpc_ids": [0, 8, 16, 24],
                "memory_limit_bytes": None}, p
PY
	# A MASK is no pick: nothing said.
	run_rc out rc "$NVT" --no-mps -c 3 "$APP" launch 1
	hasnt "$out" "nvtaskset:"
	rm -f "$WORK/dry.flag"
	run_rc out rc "$NVT" --no-mps --dry-run -n 9 touch "$WORK/dry.flag"
	eq "$rc" 0
	eq "$out" "GPU 0 ($u): TPCs 6,14,22,30,37,44,51,58,60"
	[ ! -e "$WORK/dry.flag" ] || die "--dry-run started the command"
	run_rc out rc "$NVT" --dry-run -c 5-6
	eq "$out" "GPU 0 ($u): TPCs 5-6"
	run_rc out rc "$NVT" --dry-run --json -n 2 --strategy spread
	python3 -c 'import json,sys; d=json.loads(sys.argv[1]); assert d["version"]==2 and d["picked"][0]["tpc_ids"]==[0,1] and d["picked"][0]["tpcs"]=="0-1"' "$out" ||
		die "bad JSON: $out"
	# A GPU left unpartitioned (--gpu names another): nulls, as in -p and -l.
	out=$(FAKECUDA_CHIPS=h100,h100 NVTASKSET_CACHE_DIR="$WORK/cache.dry2" timeout "$HANG" \
		"$NVT" --dry-run --json --gpu 1 -c 3 2>/dev/null)
	python3 -c 'import json,sys; p=json.loads(sys.argv[1])["partition"]; assert p[0]["partitioned"] is False and all(p[0][k] is None for k in ("tpcs","tpc_mask","tpc_count","tpc_ids")) and p[1]["tpc_ids"]==[3] and p[1]["tpc_mask"]=="8"' "$out" ||
		die "bad JSON: $out"
	# --dry-run prints its document on stdout: its errors too.
	out=$(timeout "$HANG" "$NVT" --dry-run --json -c 70 2>"$WORK/dry.err") && rc=0 || rc=$?
	eq "$rc" 1
	eq "$out" '{"version":2,"error":"TPC 70 does not exist: this GPU has 66 TPCs (0-65)"}'
	eq "$(cat "$WORK/dry.err")" "nvtaskset: TPC 70 does not exist: this GPU has 66 TPCs (0-65)"
	run_rc out rc "$NVT" --dry-run -p -c 1 1
	has "$out" "--dry-run goes with starting a command"
}

t_cache_fifo_never_blocks() {
	# A FIFO where a calibration record should be is no record: the command
	# and a libsmctrl program's shim open it without blocking, and measure
	# again.
	export NVTASKSET_CACHE_DIR=$WORK/fifo-cache
	"$NVT" --topology >/dev/null
	local rec out
	rec=$(ls "$NVTASKSET_CACHE_DIR"/GPU-*.topo)
	rm "$rec"
	mkfifo -m 644 "$rec"
	run_rc out rc "$NVT" --topology # (a hang: run_rc's status 124)
	eq "$rc" 0 "exit status ($out)"
	[ -f "$rec" ] || die "the FIFO was not replaced by a record"
	rm "$rec"
	mkfifo -m 644 "$rec"
	run_rc out rc "$T/smctrlapp" gpcs
	eq "$rc" 0 "exit status ($out)"
	has "$out" "gpc_info_ext rc=0 gpcs=12"
}

t_hostile_fifo_in_shared_cache() {
	# A calibration cache shared by users (a 1777 directory): another user's FIFO named like
	# its records neither hangs nor is read; the command calibrates as if none were there.
	need_users
	local uuid
	export NVTASKSET_CACHE_DIR=$WORK/shared-cache
	mkdir -m 1777 "$NVTASKSET_CACHE_DIR"
	uuid=$(fake_uuid)
	$(as_user 65533) mkfifo "$NVTASKSET_CACHE_DIR/$uuid.topo" "$NVTASKSET_CACHE_DIR/$uuid.mem"
	run_rc out rc $(as_user 65532) env HOME="$WORK/u" "$NVT" --topology
	eq "$rc" 0 "--topology beside a FIFO (124: it hung): $out"
	has "$out" "66 TPCs"
	run_rc out rc "$NVT" --no-mps -c 0-3 "$APP" launch 1
	eq "$rc" 0 "a start beside a FIFO (124: it hung): $out"
	has "$out" "tpcs=0-3 hung=0"
}

t_hostile_shared_cache_every_user() {
	# A calibration cache shared by users (NVTASKSET_CACHE_DIR, mode 1777): user 65533 calibrated
	# first (an honest record of hers), and squats the GPU's record name (an empty file) and the
	# names of 65532's own records (a FIFO, a directory). 65532 calibrates once, and then reads
	# her own record (a name made afresh), and her libsmctrl program started without nvtaskset
	# runs on the TPCs its mask asks for (before, another user's record was not trusted and
	# could not be replaced: every start of hers calibrated again, and her program's masks were
	# ignored: asked for 0-3, it ran on 0-65).
	need_users
	local uuid out
	export NVTASKSET_CACHE_DIR=$WORK/shared-cache
	mkdir -m 1777 "$NVTASKSET_CACHE_DIR"
	uuid=$(fake_uuid)
	run_rc out rc $(as_user 65533) "$NVT" --topology
	eq "$rc" 0 "her --topology: $out"
	$(as_user 65533) touch "$NVTASKSET_CACHE_DIR/$uuid.topo"
	$(as_user 65533) mkfifo "$NVTASKSET_CACHE_DIR/$uuid.u65532.topo"
	$(as_user 65533) mkdir "$NVTASKSET_CACHE_DIR/$uuid.u65532.mem"
	run_rc out rc $(as_user 65532) "$NVT" --topology
	eq "$rc" 0 "the other user's first --topology: $out"
	has "$out" "calibrating GPU 0"
	run_rc out rc $(as_user 65532) "$NVT" --topology
	eq "$rc" 0 "the other user's second --topology: $out"
	hasnt "$out" "calibrating"
	# (Its libsmctrl.so from the build the tests run, which is a copy in a private clone: the
	# program's rpath names the clone's.)
	run_rc out rc $(as_user 65532) env LD_LIBRARY_PATH="$RUN/build/lib/nvtaskset:$FAKEDIR" "$SMCTRLAPP" global 0-3
	eq "$rc" 0 "her libsmctrl program: $out"
	eq "$out" "global tpcs=0-3" "her libsmctrl program's output"
}
