# libsmctrl's interface (include/libsmctrl.h, docs/libsmctrl.md)
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
	# A cluster launch of 2 on a mask of TPCs 0-3 (one in each of GPCs 0-3):
	# each TPC holds a cluster, so exactly there.
	grep -qx "cluster tpcs=0-3" <<<"$out" || die "cluster launch: $out"
	hasnt "$out" "thread-block clusters"
}

t_smctrl_cluster_launches() {
	local out
	# The fake H100's GPC 0 holds TPCs 0,8,16,24 and GPC 1 TPCs 1,9,17,25,...;
	# 62-65 are GPCs of their own (tests/fake/README.md). A mask whose TPCs
	# hold the clusters runs them there, global and stream masks alike.
	out=$("$NVT" --no-mps -c all "$SMCTRLAPP" cluster 0,8 4 2>&1)
	has "$out" "cluster tpcs=0,8"
	has "$out" "cluster-stream tpcs=0,8"
	hasnt "$out" warning
	# Clusters of 4 on TPCs 0-1 (2 SMs in each of GPCs 0 and 1): the whole
	# GPCs the mask touches, never a hang, said once.
	out=$("$NVT" --no-mps -c all "$SMCTRLAPP" cluster 0-1 4 2>&1)
	has "$out" "cluster tpcs=0-1,8-9,16-17,24-25,32,39,46,53"
	has "$out" "cluster-stream tpcs=0-1,8-9,16-17,24-25,32,39,46,53"
	hasnt "$out" HANG
	eq "$(grep -c 'thread-block clusters' <<<"$out")" 1 "warnings"
	has "$out" "a kernel launched thread-block clusters of 4 blocks, which must share one GPC, but its libsmctrl mask enables at most 2 SMs in any GPC; such launches run on the whole GPCs the mask touches instead of waiting forever"
	# A lone TPC's GPC cannot hold 4 even whole: the partition's rule (here
	# every TPC; the lone GPCs hold no cluster of 4).
	out=$("$NVT" --no-mps -c all "$SMCTRLAPP" cluster 62 4 2>&1)
	has "$out" "cluster tpcs=0-61"
	has "$out" "run on the task's partition instead of waiting forever"
	hasnt "$out" HANG
	# Inside a partition: its TPCs and the mask's, and the same rules.
	out=$("$NVT" --no-mps -c 0-15 "$SMCTRLAPP" cluster 0-8 4 2>&1)
	has "$out" "cluster tpcs=0,8"
	out=$("$NVT" --no-mps -c 0-15 "$SMCTRLAPP" cluster 0-1,62 4 2>&1)
	has "$out" "cluster tpcs=0-1,8-9,16-17,24-25,32,39,46,53"
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
	# The fake H100's GPCs (tests/fake/README.md): 8 of 8 TPCs, 4 lone ones
	# (TPCs 62-65); the 64-bit form cannot name TPCs 64 and 65.
	has "$out" "gpc_info_ext rc=0 gpcs=12 0,1010101 "
	has "$out" " 1,0 2,0"
	# The 64-bit form cannot name TPCs 64 and 65 (libsmctrl's own says ERANGE too).
	has "$out" "gpc_info rc=34 gpcs=0"
	# Bad inputs: NULL out pointers, devices CUDA does not have.
	has "$out" "bad tpc_info_cuda(NULL) rc=22"
	has "$out" "bad tpc_info_cuda(dev 7) rc=22"
	has "$out" "bad gpc_info(NULL) rc=22"
	has "$out" "bad gpc_info_ext(dev -1) rc=22"
}

t_smctrl_plain_start_from_cache() {
	local out
	# Started as its users start it, no nvtaskset in front: the GPU's map
	# comes from the calibration cache (no probe runs: no module is loaded).
	export NVTASKSET_CACHE_DIR=$WORK/plain-cache
	"$NVT" --topology >/dev/null
	run_rc out rc env FAKECUDA_LOG="$WORK/plain.log" "$SMCTRLAPP" all
	eq "$rc" 0 "exit status ($out)"
	local want
	for want in "global64-0-3 tpcs=0-3" "next-5 tpcs=5" "stream-62-65 tpcs=62-65" \
		"null-stream tpcs=9" "cluster tpcs=0-3" "global-cleared tpcs=0-65" \
		"tpc_info_cuda rc=0 tpcs=66" "gpc_info rc=34 gpcs=0"; do
		has "$out" "$want"
	done
	has "$out" "gpc_info_ext rc=0 gpcs=12 0,1010101 "
	hasnt "$out" calibrat
	hasnt "$(cat "$WORK/plain.log")" module
	# The queries alone, before any mask or launch; on a GPU of 64 TPCs the
	# 64-bit form answers.
	out=$("$SMCTRLAPP" gpcs 2>&1)
	has "$out" "gpc_info_ext rc=0 gpcs=12 0,1010101 "
	NVTASKSET_CACHE_DIR=$WORK/id-cache FAKECUDA_CHIP=identity FAKECUDA_SMS=128 "$NVT" --topology >/dev/null
	out=$(NVTASKSET_CACHE_DIR=$WORK/id-cache FAKECUDA_CHIP=identity FAKECUDA_SMS=128 "$SMCTRLAPP" gpcs 2>&1)
	has "$out" "gpc_info rc=0 gpcs=8 101010101010101 202020202020202 "
	# A record another user could have written is not read: the program
	# calibrates (and saves) its own.
	local rec
	rec=$(ls "$NVTASKSET_CACHE_DIR"/GPU-*.topo)
	chmod 666 "$rec"
	out=$(FAKECUDA_LOG="$WORK/plain2.log" "$SMCTRLAPP" global 0-3 2>&1)
	has "$out" "global tpcs=0-3"
	has "$out" "nvtaskset: calibrating GPU 0"
	has "$(cat "$WORK/plain2.log")" module
	[ "$(stat -c %a "$rec")" == 644 ] || die "the record was not made anew"
}

t_smctrl_plain_start_calibrates_once() {
	local out
	# No record: the command calibrates the GPU once and saves it, outside
	# MPS; later starts read it.
	export NVTASKSET_CACHE_DIR=$WORK/empty-cache
	run_rc out rc env FAKECUDA_LOG="$WORK/cal.log" "$SMCTRLAPP" global 0-3
	eq "$rc" 0 "exit status ($out)"
	has "$out" "global tpcs=0-3"
	has "$out" "nvtaskset: calibrating GPU 0"
	ls "$NVTASKSET_CACHE_DIR"/GPU-*.topo >/dev/null || die "nothing saved"
	grep -q "mps=/nonexistent/nvtaskset-no-mps" <(grep -A1 "^cuInit" "$WORK/cal.log" | grep -B1 "^module" | head -1) ||
		die "calibration was not isolated from MPS: $(cat "$WORK/cal.log")"
	out=$("$SMCTRLAPP" global 4-7 2>&1)
	eq "$out" "global tpcs=4-7"
	# Under MPS (a daemon listening where the program looks): the same.
	own_mps_dirs smctrl_plain
	export NVTASKSET_CACHE_DIR=$WORK/empty-cache2
	env PATH="$FAKEBIN:$PATH" "$NVT" --mps start >/dev/null
	run_rc out rc env FAKECUDA_LOG="$WORK/cal2.log" "$SMCTRLAPP" global 0-3
	env PATH="$FAKEBIN:$PATH" "$NVT" --mps stop >/dev/null
	has "$out" "global tpcs=0-3"
	grep -q "mps=$CUDA_MPS_PIPE_DIRECTORY" "$WORK/cal2.log" || die "the program was no MPS client"
	grep -q "mps=/nonexistent/nvtaskset-no-mps" <(grep -A1 "^cuInit" "$WORK/cal2.log" | grep -B1 "^module" | head -1) ||
		die "calibration was not isolated from MPS: $(cat "$WORK/cal2.log")"
}

t_smctrl_plain_start_without_map() {
	local out
	# No record, and none can be saved: the program is told why, once; its
	# masks do nothing and the GPC queries say ENOENT; the TPC count still
	# comes from CUDA.
	export NVTASKSET_CACHE_DIR=$WORK/not-a-dir
	: >"$NVTASKSET_CACHE_DIR"
	out=$("$SMCTRLAPP" all 2>&1)
	has "$out" "global64-0-3 tpcs=0-65"
	has "$out" "tpc_info_cuda rc=0 tpcs=66"
	has "$out" "gpc_info_ext rc=2 gpcs=0"
	has "$out" "gpc_info rc=2 gpcs=0"
	has "$out" "libsmctrl masks need the TPC map of GPU GPU-"
	has "$out" "it was calibrated, but its map could not be saved in $NVTASKSET_CACHE_DIR"
	eq "$(grep -c 'libsmctrl masks need' <<<"$out")" 1 "warnings"
	hasnt "$out" HANG
	# A partition whose topology is not calibrated (no verified TMD layout):
	# the shim writes no mask, the program's included; said once each.
	local topo
	topo="nvtaskset-topology 2 tpcs=66 gpcs=0 flags=0 tmd=none cc=0.0 map=$(seq -s, 0 65)"
	out=$(NVTASKSET_PARTITION="$(partition_env 0-3 "$topo")" LD_PRELOAD="$SHIM" "$SMCTRLAPP" global 0-3 2>&1)
	has "$out" "global tpcs=0-65"
	has "$out" "libsmctrl masks need the GPU's calibrated TPC map"
	hasnt "$out" HANG
}

t_smctrl_plain_start_ctypes() {
	# A Python program that loads libsmctrl.so with ctypes after CUDA is up
	# (as SGLang's servers do) sets a global and a stream mask; its
	# launches obey them.
	"$NVT" --topology >/dev/null
	local out
	out=$(python3 - "$B/lib/nvtaskset/libsmctrl.so" 2>&1 <<-'PY'
		import ctypes, sys
		cuda = ctypes.CDLL("libcuda.so.1")
		ctx, stream = ctypes.c_void_p(), ctypes.c_void_p()
		assert cuda.cuInit(0) == 0 and cuda.cuDevicePrimaryCtxRetain(ctypes.byref(ctx), 0) == 0
		assert cuda.cuCtxSetCurrent(ctx) == 0 and cuda.cuStreamCreate(ctypes.byref(stream), 0) == 0
		kernel = ctypes.create_string_buffer(8)
		class Launch(ctypes.Structure):
		    _fields_ = [("v", ctypes.c_uint8), ("en", ctypes.c_int), ("d", ctypes.c_uint32 * 4),
		                ("hung", ctypes.c_int), ("ran", ctypes.c_uint64 * 4), ("cb", ctypes.c_int),
		                ("dhi", ctypes.c_uint32 * 4), ("stray", ctypes.c_int), ("coop", ctypes.c_uint64)]
		def launch(s):
		    rec = Launch()
		    assert cuda.cuLaunchKernel(kernel, 264, 1, 1, 128, 1, 1, 0, s, None, None) == 0
		    assert cuda.fakecuda_last_launch(ctypes.byref(rec)) == 0
		    tpcs = [t for t in range(128) if rec.ran[t // 64] >> (t % 64) & 1]
		    return "%d-%d" % (tpcs[0], tpcs[-1]) if tpcs == list(range(tpcs[0], tpcs[-1] + 1)) else str(tpcs)
		smctrl = ctypes.CDLL(sys.argv[1])
		smctrl.libsmctrl_set_global_mask(ctypes.c_uint64(~0xf & (2**64 - 1)))
		print("global", launch(None))
		smctrl.libsmctrl_set_stream_mask(stream, ctypes.c_uint64(~0xff00 & (2**64 - 1)))
		print("stream", launch(stream))
		print("other", launch(None))
	PY
	)
	has "$out" "global 0-3"
	has "$out" "stream 8-15"
	has "$out" "other 0-3"
	hasnt "$out" warning
}

t_smctrl_library_links_alone() {
	local needed
	# Programs written for libsmctrl link -lsmctrl and find the shim beside it.
	needed=$(readelf -d "$B/lib/nvtaskset/libsmctrl.so")
	has "$needed" "Library soname: [libsmctrl.so]"
	has "$needed" "Shared library: [libnvtaskset.so]"
	# Beside the shim, and through the link in PREFIX/lib (which is $ORIGIN then).
	has "$needed" 'Library runpath: [$ORIGIN:$ORIGIN/nvtaskset]'
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

t_smctrl_plain_start_partitioned() {
	# A libsmctrl program started plainly is a task like any other once it
	# has its GPU's map: -l lists it (with all TPCs), -p partitions it, and
	# its masks go on applying within.
	"$NVT" --topology >/dev/null
	rm -f "$WORK/sp.stop" "$WORK/sp.state"
	"$SMCTRLAPP" loop "$WORK/sp.stop" "$WORK/sp.state" >"$WORK/sp.out" 2>&1 &
	local pid=$! out
	wait_file "$WORK/sp.state" 0-15
	out=$("$NVT" -p "$pid" 2>&1)
	has "$out" "pid $pid's current TPC mask"
	has "$("$NVT" -l 2>&1)" "$pid"
	"$NVT" -p -c 8-40 "$pid" >/dev/null
	wait_file "$WORK/sp.state" 8-15
	touch "$WORK/sp.stop"
	wait "$pid" || die "the program exited $?: $(cat "$WORK/sp.out")"
	hasnt "$(cat "$WORK/sp.out")" warning
}

t_smctrl_plain_start_two_gpus_before_cuda() {
	# Two GPUs with different maps, listed by the kernel module: a program
	# that sets its global mask before it starts CUDA gets both GPUs' maps
	# without a CUDA call of the shim's (the program may fork first), and
	# its launches on each GPU run on the TPCs it named.
	two_gpus
	fake_proc 2
	"$NVT" --topology >/dev/null
	local out
	out=$(FAKECUDA_LOG="$WORK/two.log" python3 - "$B/lib/nvtaskset/libsmctrl.so" 2>&1 <<-'PY'
		import ctypes, sys
		smctrl = ctypes.CDLL(sys.argv[1])
		smctrl.libsmctrl_set_global_mask(ctypes.c_uint64(~0xf & (2**64 - 1)))
		print("set")
		sys.stdout.flush()
		cuda = ctypes.CDLL("libcuda.so.1")
		assert cuda.cuInit(0) == 0
		kernel = ctypes.create_string_buffer(8)
		class Launch(ctypes.Structure):
		    _fields_ = [("v", ctypes.c_uint8), ("en", ctypes.c_int), ("d", ctypes.c_uint32 * 4),
		                ("hung", ctypes.c_int), ("ran", ctypes.c_uint64 * 4), ("cb", ctypes.c_int),
		                ("dhi", ctypes.c_uint32 * 4), ("stray", ctypes.c_int), ("coop", ctypes.c_uint64)]
		for dev in (0, 1):
		    ctx, rec = ctypes.c_void_p(), Launch()
		    assert cuda.cuDevicePrimaryCtxRetain(ctypes.byref(ctx), dev) == 0
		    assert cuda.cuCtxSetCurrent(ctx) == 0
		    assert cuda.cuLaunchKernel(kernel, 264, 1, 1, 128, 1, 1, 0, None, None, None) == 0
		    assert cuda.fakecuda_last_launch(ctypes.byref(rec)) == 0
		    print("dev%d" % dev, [t for t in range(128) if rec.ran[t // 64] >> (t % 64) & 1])
	PY
	)
	has "$out" "dev0 [0, 1, 2, 3]"
	has "$out" "dev1 [0, 1, 2, 3]"
	hasnt "$out" warning
	# The shim called no cuInit before the program did.
	eq "$(sed -n '/^cuInit/=' "$WORK/two.log" | wc -l)" 1 "cuInit calls: $(cat "$WORK/two.log")"
}

t_smctrl_destroyed_stream_forgotten() {
	# A destroyed stream's mask goes with it: a new stream at its handle (the driver gives
	# a destroyed stream's handle again) starts without one, and streams made, masked and
	# destroyed one after another at 2000 addresses never fill the table of masked streams
	# (1024; before, its entries were never freed: a new stream inherited a dead one's mask,
	# and after 1024 no stream mask applied, with a "table full" warning).
	local out
	run_rc out rc "$NVT" --no-mps -c all "$SMCTRLAPP" destroyed 1
	eq "$rc" 0 "exit status ($out)"
	has "$out" "unmasked tpcs=0-65"
	has "$out" "masked tpcs=4-7"
	run_rc out rc env FAKECUDA_STREAMS_FRESH=1 "$NVT" --no-mps -c all "$SMCTRLAPP" destroyed 2000
	eq "$rc" 0 "exit status ($out)"
	has "$out" "unmasked tpcs=0-65"
	has "$out" "masked tpcs=4-7"
	hasnt "$out" "more than 1024"
}
