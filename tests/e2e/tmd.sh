# TMD layouts: which one is written on which GPU, and calibration as their check.
# Sourced by tests/run-tests.sh: each t_NAME function is one test, run in a
# subshell under set -e with the helpers defined there.
# shellcheck shell=bash

# The fake Blackwell's map (tests/fake/fakecuda.c): logical TPCs striped over
# 12 GPCs of 8 slots, floorswept slots skipped.
bw_map() {
	local r g slot map=""
	for ((r = 0; r < 8; r++)); do
		for ((g = 0; g < 12; g++)); do
			slot=$((g * 8 + r))
			# shellcheck disable=SC2194 # the list is the word; the slot is looked up in it
			case " 3 12 22 29 37 46 52 61 70 79 85 " in *" $slot "*) continue ;; esac
			map+="${map:+,}$slot"
		done
	done
	echo "$map"
}
# The "disable=w3,w2,w1,w0" a launch shows when only mask bit $1 is enabled.
only_bit() {
	local w words=()
	for ((w = 3; w >= 0; w--)); do
		if ((w == $1 / 32)); then
			words+=("$(printf '%08x' $((0xffffffff ^ (1 << ($1 % 32)))))")
		else
			words+=(ffffffff)
		fi
	done
	local IFS=,
	echo "disable=${words[*]}"
}

t_tmd_versions() {
	# Pre-Hopper TMDs (V01_06 .. V03_00) on a pre-Hopper chip: bit t = TPC t.
	local v
	for v in 0x16 0x17 0x22 0x30; do
		run_rc out rc env FAKECUDA_CHIP=a100 FAKECUDA_TMD_VERSION=$v "$NVT" --no-mps -c 2-5,53 "$APP" launch 2
		eq "$rc" 0 "exit status for $v"
		has "$out" "tpcs=2-5,53 hung=0 version=$v"
		has "$out" "stray=0"
		hasnt "$out" "warning"
	done
	grep -q "tmd=V01 cc=8.0 " "$NVTASKSET_CACHE_DIR"/GPU-20*.topo || die "A100 record lacks its layout"
}
t_tmd_mismatch_untouched() {
	# V04_00 is verified on this GPU; a launch whose TMD is not V04_00 runs
	# untouched, with one warning.
	local v
	"$NVT" --calibrate >/dev/null 2>&1
	for v in 0x50 0x31 0x41 0x15; do
		run_rc out rc env FAKECUDA_TMD_VERSION=$v "$NVT" --no-mps -c 0-3 "$APP" launch 5
		eq "$rc" 0 "exit status for $v"
		has "$out" "tpcs=0-65 hung=0 version=$v masked=0"
		has "$out" "disable=00000000,00000000,00000000,00000000 upper=00000000,00000000,00000000,00000000 stray=0"
		has "$out" "nvtaskset: warning: a launch's TMD has version $v at byte 72, not the V04_00 layout that calibration verified on this GPU"
		eq "$(grep -c 'warning' <<<"$out")" 1 "warnings for $v"
	done
}
t_tmd_blackwell_calibrate() {
	export NVTASKSET_CACHE_DIR=$WORK/cache-bw FAKECUDA_CHIP=blackwell
	local file
	run_rc out rc "$NVT" --calibrate
	eq "$rc" 0
	has "$out" "Fake GPU 0 (Blackwell map)"
	has "$out" "85 TPCs, 12 GPCs, calibrated in"
	has "$out" "TMD layout V05_00 verified; saved in"
	file=$(ls "$NVTASKSET_CACHE_DIR"/GPU-*.topo)
	grep -q "^nvtaskset-topology 2 tpcs=85 gpcs=12 flags=1 tmd=V05_00 cc=12.0 map=$(bw_map) gpc=" "$file" ||
		die "wrong record: $(cat "$file")"
	run_rc out rc "$NVT" --topology
	has "$out" "85 TPCs, 170 SMs, 12 GPCs; calibration read from the cache"
	has "$out" "TMD layout V05_00, verified by calibration (compute capability 12.0)"
	# GPC 11 lost no slot: 8 TPCs on mask bits 88-95.
	has "$out" "$(printf '  %-4s %-27s %-22s' 11 11,23,35,46,56,64,73,84 88-95)"
}
t_tmd_blackwell_every_tpc() {
	# Each logical TPC alone runs on exactly that TPC, with exactly its mask
	# bit enabled in a V05_00 TMD, the valid bit set, and nothing else written.
	export FAKECUDA_CHIP=blackwell
	local t map
	IFS=, read -r -a map <<<"$(bw_map)"
	eq "${#map[@]}" 85 "TPCs in the fake's map"
	for ((t = 0; t < 85; t++)); do
		run_rc out rc "$NVT" --no-mps -c $t "$APP" launch 1
		has "$out" "tpcs=$t hung=0 version=0x50 masked=1 callbacks=1 $(only_bit "${map[$t]}") upper=00000000,00000000,00000000,00000000 stray=0"
	done
	# The first slot of each GPC: bits 0, 8, ..., 88.
	run_rc out rc "$NVT" --no-mps -c 0-11 "$LINKED" launch 3
	has "$out" "tpcs=0-11 hung=0 version=0x50 masked=1 callbacks=1 disable=ffffffff,fefefefe,fefefefe,fefefefe upper=00000000,00000000,00000000,00000000 stray=0"
	run_rc out rc "$NVT" --no-mps -g 11 "$APP" launch 1
	has "$out" "tpcs=11,23,35,46,56,64,73,84 hung=0 version=0x50 masked=1 callbacks=1 disable=ffffffff,00ffffff,ffffffff,ffffffff"
	hasnt "$out" "warning"
}
t_tmd_blackwell_live_change() {
	export FAKECUDA_CHIP=blackwell
	start_loop bwl "$NVT" --no-mps -c 0 "$APP"
	wait_file "$WORK/bwl.state" "0"
	run_rc out rc "$NVT" -p -c 12-13,84 "$PID"
	eq "$rc" 0
	wait_file "$WORK/bwl.state" "12-13,84"
	stop_loop bwl "$PID"
}
t_tmd_blackwell_v04_01() {
	# The other layout Blackwell's compute classes define: chosen by its
	# version byte at 72, verified by calibration like any other.
	export NVTASKSET_CACHE_DIR=$WORK/cache-v0401 FAKECUDA_CHIP=blackwell FAKECUDA_TMD_LAYOUT=V04_01
	run_rc out rc "$NVT" --calibrate
	eq "$rc" 0
	has "$out" "85 TPCs, 12 GPCs, calibrated in"
	has "$out" "TMD layout V04_01 verified"
	run_rc out rc "$NVT" --no-mps -c 5 "$APP" launch 1
	local map
	IFS=, read -r -a map <<<"$(bw_map)"
	has "$out" "tpcs=5 hung=0 version=0x41 masked=1 callbacks=1 $(only_bit "${map[5]}") upper=00000000,00000000,00000000,00000000 stray=0"
}
t_tmd_blackwell_ambiguous() {
	# A V05 TMD whose byte 72 happens to read as V04_01: refused, not guessed.
	run_rc out rc env NVTASKSET_CACHE_DIR="$WORK/c1" FAKECUDA_CHIP=blackwell FAKECUDA_TMD_POKE=72:0x41 "$NVT" --calibrate
	eq "$rc" 1
	has "$out" "nvtaskset: cannot calibrate GPU 0: the TMDs of this GPU (compute capability 12.0) carry the version byte of more than one layout known for it: V05_00 (byte 58 reads 0x50), V04_01 (byte 72 reads 0x41). nvtaskset will not partition this GPU. Please report"
	# No V05 layout: nor is anything else written.
	run_rc out rc env NVTASKSET_CACHE_DIR="$WORK/c2" FAKECUDA_CHIP=blackwell FAKECUDA_TMD_VERSION=0x51 "$NVT" --calibrate
	eq "$rc" 1
	has "$out" "carry the version byte of no layout known for it: V05_00 (byte 58 reads 0x51), V04_01 (byte 72 reads 0x40)"
}
t_tmd_bad_chip_refused() {
	# Chips whose mask does not do what the V05_00 layout says: calibration
	# fails, tells the user how to report it, and nothing is partitioned.
	local chip want
	for chip in blackwell-misread blackwell-novalid; do
		# misread: bits 64-127 act as bits 0-63, so no bit removes TPC 8 (slot 64)
		[ $chip == blackwell-misread ] && want="no mask bit removes TPC 8 (SMs 16-17)" ||
			want="no mask bit removes TPC 0 (SMs 0-1)"
		export NVTASKSET_CACHE_DIR=$WORK/cache-$chip FAKECUDA_CHIP=$chip
		run_rc out rc "$NVT" --calibrate
		eq "$rc" 1 "exit status of --calibrate on $chip"
		eq "$(tail -1 <<<"$out")" "nvtaskset: cannot calibrate GPU 0: the TPC mask of this GPU (compute capability 12.0) does not behave as TMD layout V05_00 says: $want. nvtaskset will not partition this GPU. Please report this message with the GPU model and driver version (nvidia-smi) to the nvtaskset issue tracker"
		[ -z "$(ls "$NVTASKSET_CACHE_DIR" 2>/dev/null)" ] || die "a failed calibration left a record"
		run_rc out rc "$NVT" --no-mps -c 1 "$APP" launch 1
		eq "$rc" 1 "a task on $chip"
		has "$out" "does not behave as TMD layout V05_00 says"
		hasnt "$out" "tpcs="
	done
}
t_tmd_shim_unverified() {
	# Topologies that verify no layout (hand-made, or from nvtaskset 0.1
	# without a Hopper-only bit): the shim leaves launches alone, warning once.
	local topo
	export FAKECUDA_CHIP=h100
	for topo in "nvtaskset-topology 2 tpcs=66 gpcs=0 flags=0 tmd=none cc=0.0 map=$(seq -s, 0 65)" \
		"nvtaskset-topology 1 tpcs=40 gpcs=0 flags=1 map=$(seq -s, 0 39)"; do
		run_rc out rc env NVTASKSET_PARTITION="$(partition_env 0-3 "$topo")" LD_PRELOAD="$SHIM" "$APP" launch 3
		eq "$rc" 0
		has "$out" "tpcs=0-65 hung=0 version=0x40 masked=0"
		has "$out" "nvtaskset: warning: no TMD layout was verified by calibration on this GPU"
		eq "$(grep -c 'warning' <<<"$out")" 1 "warnings"
	done
	# A version 1 record of a Hopper (its map names bits >= 64): V04_00 verified.
	topo="nvtaskset-topology 1 tpcs=66 gpcs=0 flags=1 map=$H100_MAP"
	run_rc out rc env NVTASKSET_PARTITION="$(partition_env 62-65 "$topo")" LD_PRELOAD="$SHIM" "$APP" launch 1
	has "$out" "tpcs=62-65 hung=0 version=0x40 masked=1 callbacks=1 disable=ffffffff,fff5b7ff,ffffffff,ffffffff"
	hasnt "$out" "warning"
}
t_tmd_shim_blackwell_mismatch() {
	# Verified V05_00, but a launch's TMD is V05_01 (another layout): untouched.
	export FAKECUDA_CHIP=blackwell
	"$NVT" --calibrate >/dev/null 2>&1
	run_rc out rc env FAKECUDA_TMD_VERSION=0x51 "$NVT" --no-mps -c 0-3 "$APP" launch 4
	eq "$rc" 0
	has "$out" "tpcs=0-84 hung=0 version=0x51 masked=0"
	has "$out" "stray=0"
	has "$out" "nvtaskset: warning: a launch's TMD has version 0x51 at byte 58, not the V05_00 layout that calibration verified on this GPU"
	eq "$(grep -c 'warning' <<<"$out")" 1 "warnings"
}
t_tmd_legacy_cache() {
	# Records of nvtaskset 0.1: a Hopper's is kept (V04_00 was what its
	# calibration swept), one that proves no layout is measured again.
	export NVTASKSET_CACHE_DIR=$WORK/cache-legacy
	local file
	"$NVT" --calibrate >/dev/null 2>&1
	file=$(ls "$NVTASKSET_CACHE_DIR"/GPU-*.topo)
	as_v1() {
		python3 - "$1" <<'PY'
import re, sys
path = sys.argv[1]
head, topo, _ = open(path).read().split("\n", 2)
head = head.replace("nvtaskset-cache 2 ", "nvtaskset-cache 1 ")
topo = re.sub(r" tmd=\S+ cc=\S+", "", topo).replace("nvtaskset-topology 2 ", "nvtaskset-topology 1 ")
body = head + "\n" + topo + "\n"
h = 0xcbf29ce484222325
for c in body.encode():
    h = ((h ^ c) * 0x100000001b3) & 0xffffffffffffffff
open(path, "w").write(body + "checksum=%016x\n" % h)
PY
	}
	as_v1 "$file"
	grep -q "^nvtaskset-topology 1 tpcs=66 gpcs=12 flags=1 map=$H100_MAP gpc=" "$file" || die "bad v1 record: $(cat "$file")"
	run_rc out rc "$NVT" --no-mps -c 62-65 "$APP" launch 1
	hasnt "$out" "calibrating"
	has "$out" "tpcs=62-65 hung=0 version=0x40 masked=1"
	run_rc out rc "$NVT" --topology
	has "$out" "TMD layout V04_00, verified by calibration"$'\n'
	# The identity chip with 32 TPCs: bits 0-31 only.
	export FAKECUDA_CHIP=identity FAKECUDA_SMS=64
	"$NVT" --calibrate >/dev/null 2>&1
	file=$(ls -t "$NVTASKSET_CACHE_DIR"/GPU-*.topo | head -1)
	as_v1 "$file"
	run_rc out rc "$NVT" --no-mps -c 3 "$APP" launch 1
	has "$out" "nvtaskset: calibrating GPU 0"
	has "$out" "tpcs=3 hung=0 version=0x40 masked=1"
	grep -q "^nvtaskset-topology 2 tpcs=32 gpcs=8 flags=1 tmd=V04_00 cc=9.0 " "$file" || die "not re-measured: $(cat "$file")"
}
