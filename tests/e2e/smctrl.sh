# libsmctrl's interface (issue 25; include/libsmctrl.h, docs/libsmctrl.md)
# through nvtaskset's libsmctrl.so and the fake driver: tests/fake/smctrlapp.c.
# The fake H100's TPCs sit in permuted mask slots, so a mask written as
# libsmctrl writes it (bit t = slot t) would land elsewhere. Sourced by
# tests/run-tests.sh.
# shellcheck shell=bash

SMCTRLAPP=$T/smctrlapp

t_smctrl_masks_in_logical_tpcs() {
	local out
	run_rc out rc "$NVT" --no-mps -c all "$SMCTRLAPP" all
	eq "$rc" 0 "exit status ($out)"
	local want
	for want in "baseline tpcs=0-65" "global64-0-3 tpcs=0-3" "global-60-65 tpcs=60-65" \
		"next-5 tpcs=5" "after-next tpcs=60-65" "next64-40 tpcs=40" "next-0 tpcs=60-65" \
		"stream-62-65 tpcs=62-65" "stream64-4-7 tpcs=4-7" "other-stream tpcs=60-65" \
		"stream-ex tpcs=4-7" "next-over-stream tpcs=7" "null-stream tpcs=9" \
		"legacy-stream tpcs=9" "per-thread-null tpcs=60-65" "per-thread-stream tpcs=11" \
		"stream-cleared tpcs=60-65" "global-cleared tpcs=0-65"; do
		grep -qx "$want" <<<"$out" || die "expected '$want' in: $out"
	done
}

t_smctrl_bad_masks_never_hang() {
	local out
	run_rc out rc "$NVT" --no-mps -c all "$SMCTRLAPP" all
	eq "$rc" 0 "exit status ($out)"
	hasnt "$out" HANG
	# Masks that enable no TPC (every bit, every 64-bit bit, only TPCs the GPU
	# lacks): the launch runs on the partition, with one warning.
	grep -qx "global-none tpcs=0-65" <<<"$out" || die "no fallback: $out"
	grep -qx "global64-none tpcs=0-65" <<<"$out" || die "no fallback (64-bit): $out"
	grep -qx "global-absent-tpcs tpcs=0-65" <<<"$out" || die "no fallback (absent TPCs): $out"
	eq "$(grep -c 'enables no TPC of this task' <<<"$out")" 1 "warnings of an empty mask"
	# A cluster launch ignores the program's mask (it could wait for a GPC).
	grep -qx "cluster tpcs=0-65" <<<"$out" || die "cluster launch: $out"
	has "$out" "not applied to launches of thread-block clusters"
}

t_smctrl_within_partition() {
	local out
	out=$("$NVT" --no-mps -c 0-31 "$SMCTRLAPP" global 16-47 2>&1)
	eq "$out" "global tpcs=16-31"
	# Disjoint from the partition: the partition, one warning.
	out=$("$NVT" --no-mps -c 0-31 "$SMCTRLAPP" global 40-47 2>&1)
	has "$out" "global tpcs=0-31"
	has "$out" "enables no TPC of this task's partition"
}

t_smctrl_moved_partition() {
	rm -f "$WORK/sm.stop" "$WORK/sm.state"
	"$NVT" --no-mps -c 0-31 "$SMCTRLAPP" loop "$WORK/sm.stop" "$WORK/sm.state" >"$WORK/sm.out" 2>&1 &
	local pid=$!
	wait_file "$WORK/sm.state" 0-15
	"$NVT" -p -c 8-40 "$pid" >/dev/null
	wait_file "$WORK/sm.state" 8-15
	"$NVT" -p -c 20-30 "$pid" >/dev/null
	wait_file "$WORK/sm.state" 20-30
	"$NVT" -p -c all "$pid" >/dev/null
	wait_file "$WORK/sm.state" 0-15
	touch "$WORK/sm.stop"
	wait "$pid" || die "the program exited $?: $(cat "$WORK/sm.out")"
}

t_smctrl_fork() {
	local out
	# Forked children keep the masks, and can set new ones even when the
	# fork came while another thread held the setters' lock or was inside a mask's
	# sequence lock (50 forks; under load 1 run in 60 kept no global mask without the
	# lock held across fork).
	run_rc out rc "$NVT" --no-mps -c all "$SMCTRLAPP" fork
	eq "$rc" 0 "exit status ($out)"
	has "$out" "child global tpcs=0-3"
	has "$out" "child stream tpcs=8-9"
}

t_smctrl_queries() {
	local out
	out=$("$NVT" --no-mps -c all "$SMCTRLAPP" all 2>/dev/null)
	has "$out" "tpc_info_cuda rc=0 tpcs=66"
	has "$out" "tpc_info rc=0 tpcs=66"
	# The fake H100's GPCs (tests/fake/fakecuda.h): 8 of 8 TPCs, 4 lone ones
	# (TPCs 62-65); the 64-bit form cannot name TPCs 64 and 65.
	has "$out" "gpc_info_ext rc=0 gpcs=12 0,1010101 "
	has "$out" " 1,0 2,0"
	has "$out" "gpc_info rc=34"
	# Bad inputs: NULL out pointers, devices CUDA does not have.
	has "$out" "bad tpc_info_cuda(NULL) rc=22"
	has "$out" "bad tpc_info_cuda(dev 7) rc=22"
	has "$out" "bad gpc_info(NULL) rc=22"
	has "$out" "bad gpc_info_ext(dev -1) rc=22"
}

t_smctrl_without_calibration() {
	local out
	# Not under nvtaskset: no calibration of the GPU in the task. The TPC
	# count still comes from CUDA; GPCs do not; masks do nothing, once said.
	out=$("$SMCTRLAPP" all 2>&1)
	has "$out" "tpc_info_cuda rc=0 tpcs=66"
	has "$out" "gpc_info_ext rc=2 gpcs=0"
	has "$out" "global64-0-3 tpcs=0-65"
	eq "$(grep -c "need nvtaskset's calibration" <<<"$out")" 1 "warnings"
	# A partition whose topology is not calibrated (no verified TMD layout):
	# the shim writes no mask, the program's included; said once each.
	local topo="nvtaskset-topology 2 tpcs=66 gpcs=0 flags=0 tmd=none cc=0.0 map=$(seq -s, 0 65)"
	out=$(NVTASKSET_PARTITION="$(partition_env 0-3 "$topo")" LD_PRELOAD="$SHIM" "$SMCTRLAPP" global 0-3 2>&1)
	has "$out" "global tpcs=0-65"
	has "$out" "need nvtaskset's calibration"
	hasnt "$out" HANG
}

t_smctrl_library_links_alone() {
	local needed
	# Programs written for libsmctrl link -lsmctrl and find the shim beside it.
	needed=$(readelf -d "$B/lib/nvtaskset/libsmctrl.so")
	has "$needed" "Library soname: [libsmctrl.so]"
	has "$needed" "Shared library: [libnvtaskset.so]"
	has "$needed" 'Library runpath: [$ORIGIN]'
	# Only the libsmctrl names, no nvtaskset internals.
	eq "$(nm -D --defined-only "$B/lib/nvtaskset/libsmctrl.so" | awk '{print $3}' | grep -v '^libsmctrl_' | grep -cv '^_')" 0 \
		"symbols other than libsmctrl_*"
	eq "$(nm -D --defined-only "$B/lib/nvtaskset/libsmctrl.so" | grep -c ' T libsmctrl_')" 10 "libsmctrl functions"
	# The shim exports them under its own prefix only: a preloaded shim
	# never takes the place of another libsmctrl.
	eq "$(nm -D --defined-only "$SHIM" | grep -c ' libsmctrl_')" 0 "libsmctrl_ names in the shim"
}

t_smctrl_launch_path_no_syscalls() {
	# With global, stream and next masks in use, launches make no system
	# call: 1000 launches make no more than 10.
	command -v strace >/dev/null || skip "needs strace"
	local few many
	"$NVT" --no-mps -c all strace -f -c -o "$WORK/few.st" "$SMCTRLAPP" launches 10 >"$WORK/few.out" 2>&1
	"$NVT" --no-mps -c all strace -f -c -o "$WORK/many.st" "$SMCTRLAPP" launches 1000 >"$WORK/many.out" 2>&1
	has "$(cat "$WORK/many.out")" "launches tpcs=4-7"
	few=$(tail -1 "$WORK/few.st" | awk '{print $4}')
	many=$(tail -1 "$WORK/many.st" | awk '{print $4}')
	echo "system calls: 10 launches $few, 1000 launches $many"
	[ -n "$few" ] && [ "$many" -le "$few" ] || die "launches make system calls: $few for 10, $many for 1000"
}
