# GPU memory per task, its frees (src/shim/shimmem.c, docs/usage.md "GPU
# memory"): each path's free, the per-thread default stream's forms, a
# context's destruction and the primary context's reset (what each frees, as
# the driver does: docs/bench/mem-driver-2026-11-25), memory another process
# exported (IPC and shareable handles: the exporter's), and a process's death
# or exec. Sourced by tests/run-tests.sh beside tests/e2e/mem.sh, whose
# MEMAPP, MIB, MEM_PATHS and mem_path_steps these use; each t_NAME function is
# one test, run in a subshell under set -e with the helpers defined there.
# shellcheck shell=bash

t_mem_frees_give_back() {
	local path first second refused
	for path in $MEM_PATHS; do
		read -r first second refused <<<"$(mem_path_steps "$path")"
		run_rc out rc "$NVT" --no-mps --mem 64M -c 0-3 "$MEMAPP" "$first" free:0 "$first" info
		eq "$out" "${first%%:*} rc=0
free rc=0
${first%%:*} rc=0
info rc=0 free=$((16 * MIB)) total=$((64 * MIB))" "$path"
	done
	# A free the driver refuses (a pointer it never gave) gives nothing back.
	run_rc out rc "$NVT" --no-mps --mem 64M -c 0-3 "$MEMAPP" alloc:48M free:5 alloc:32M
	eq "$out" "alloc rc=0
free rc=-1
alloc rc=2"
}

# The per-thread default stream's forms (cuGetProcAddress with
# CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM, or their exports): cuMemFreeAsync_ptsz gives back
# what either form took.
t_mem_ptsz_frees_give_back() {
	local via path
	for via in proc dlsym; do
		for path in async asyncptsz pool poolptsz; do
			run_rc out rc env MEMAPP_VIA=$via "$NVT" --no-mps --mem 64M -c 0-3 "$MEMAPP" \
				"$path:48M" freeptsz:0 "$path:48M" info
			eq "$out" "$path rc=0
freeptsz rc=0
$path rc=0
info rc=0 free=$((16 * MIB)) total=$((64 * MIB))" "$path ($via)"
		done
	done
}

# The primary context's reset frees what was allocated in it, not cuMemCreate's memory or a
# pool's allocations, which live in no context (on an H100 each outlived the reset:
# docs/bench/mem-driver-2026-11-25): their 8M stays counted.
t_mem_context_reset_frees() {
	local kind
	for kind in create async pool; do
		run_rc out rc "$NVT" --no-mps --mem 64M -c 0-3 "$MEMAPP" alloc:48M "$kind:8M" reset \
			alloc:48M alloc:16M info
		eq "$out" "alloc rc=0
$kind rc=0
reset rc=0
alloc rc=0
alloc rc=2
info rc=0 free=$((8 * MIB)) total=$((64 * MIB))" "$kind"
	done
}

# A cuMemCreate handle retained (cuMemRetainAllocationHandle, through its mapping) more often than
# 16 bits count stays counted until its last release: 65536 retains and as many releases leave
# the handle cuMemCreate gave, and its 48M; its own release (with the mapping gone) gives them back.
t_mem_handle_retained_many_times() {
	run_rc out rc "$NVT" --no-mps --mem 64M -c 0-3 "$MEMAPP" create:48M vmap vretain:65536 \
		vrelease:65536 info vrelease:1 vunmap info
	eq "$out" "create rc=0
vmap rc=0
vretain rc=0 done=65536
vrelease rc=0 done=65536
info rc=0 free=$((16 * MIB)) total=$((64 * MIB))
vrelease rc=0 done=1
vunmap rc=0
info rc=0 free=$((64 * MIB)) total=$((64 * MIB))"
}

# A cuMemCreate handle released while mapped keeps its memory until cuMemUnmap (cuda.h's
# cuMemRelease; on an H200: docs/bench/gpuchecks-2026-11-29), and stays counted so: a second
# 48M is refused while the first is mapped, taken once it is unmapped. An unmap that cuts the
# mapping is refused and ends nothing; a retain through the mapping gives the handle again, which
# keeps the memory after the unmap until its release; cuMemAddressFree ends no mapping.
t_mem_handle_mapped_after_release() {
	run_rc out rc "$NVT" --no-mps --mem 64M -c 0-3 "$MEMAPP" create:48M vmap free:0 create:48M info \
		vunmap create:48M info
	eq "$out" "create rc=0
vmap rc=0
free rc=0
create rc=2
info rc=0 free=$((16 * MIB)) total=$((64 * MIB))
vunmap rc=0
create rc=0
info rc=0 free=$((16 * MIB)) total=$((64 * MIB))" "released, then unmapped"
	run_rc out rc "$NVT" --no-mps --mem 64M -c 0-3 "$MEMAPP" create:48M vmap free:0 vunmap:2M info \
		vretain:1 vunmap info vrelease:1 info
	eq "$out" "create rc=0
vmap rc=0
free rc=0
vunmap rc=1
info rc=0 free=$((16 * MIB)) total=$((64 * MIB))
vretain rc=0 done=1
vunmap rc=0
info rc=0 free=$((16 * MIB)) total=$((64 * MIB))
vrelease rc=0 done=1
info rc=0 free=$((64 * MIB)) total=$((64 * MIB))" "a cut refused, retained again"
	run_rc out rc "$NVT" --no-mps --mem 64M -c 0-3 "$MEMAPP" create:48M vmap free:0 vfree create:48M
	eq "$out" "create rc=0
vmap rc=0
free rc=0
vfree rc=1
create rc=2" "the reservation's free refused while mapped, the mapping kept"
}

# One cuMemUnmap ends every mapping of its range (as NVIDIA's vectorAddMMAP unmaps the stripes it
# mapped): two handles of 24M mapped end to end and released stay counted (24M more is refused),
# and one unmap gives back both (48M fits).
t_mem_one_unmap_ends_two_mappings() {
	run_rc out rc "$NVT" --no-mps --mem 64M -c 0-3 "$MEMAPP" create:24M create:24M vmapall free:0 \
		free:1 create:24M vunmap create:48M info
	eq "$out" "create rc=0
create rc=0
vmapall rc=0
free rc=0
free rc=0
create rc=2
vunmap rc=0
create rc=0
info rc=0 free=$((16 * MIB)) total=$((64 * MIB))"
}

# The primary context's last release destroys it as its reset does (cuda.h; on an H100:
# tests/gpu/memdriver.sh): what was allocated in it is freed, not cuMemCreate's memory; the same
# by the call's old name. A release that is not the last (retained twice) frees nothing.
t_mem_context_last_release_frees() {
	local via word
	for via in proc dlsym; do
		for word in release release1; do
			run_rc out rc env MEMAPP_VIA=$via "$NVT" --no-mps --mem 64M -c 0-3 "$MEMAPP" alloc:48M \
				create:8M $word retain alloc:48M alloc:16M info
			eq "$out" "alloc rc=0
create rc=0
$word rc=0
retain rc=0
alloc rc=0
alloc rc=2
info rc=0 free=$((8 * MIB)) total=$((64 * MIB))" "the last $word ($via)"
		done
		run_rc out rc env MEMAPP_VIA=$via "$NVT" --no-mps --mem 64M -c 0-3 "$MEMAPP" retain alloc:48M release \
			alloc:32M info
		eq "$out" "retain rc=0
alloc rc=0
release rc=0
alloc rc=2
info rc=0 free=$((16 * MIB)) total=$((64 * MIB))" "a release not the last ($via)"
	done
}

# cuCtxDestroy frees what was allocated in the context it destroys (cuda.h: cuMemAlloc's,
# cuMemAllocPitch's, arrays and mipmapped arrays: 28M here), and only that: the primary context's
# 16M stays counted. Each form of cuCtxCreate, reached either way; cuCtxDestroy by either name.
t_mem_context_destroy_frees_its_own() {
	local via form destroy
	for via in proc dlsym; do
		for form in 2 3 4; do
			destroy=ctxdestroy
			[ "$form" != 2 ] || destroy=ctxdestroy1
			run_rc out rc env MEMAPP_VIA=$via "$NVT" --no-mps --mem 64M -c 0-3 "$MEMAPP" alloc:16M \
				"ctx:$form" alloc:8M pitch:4096:2048 array:1024:2048 mipmap:1024:1024:1 info \
				$destroy info alloc:48M alloc:1M info
			eq "$out" "alloc rc=0
ctx rc=0
alloc rc=0
pitch rc=0
array rc=0
mipmap rc=0
info rc=0 free=$((20 * MIB)) total=$((64 * MIB))
$destroy rc=0
info rc=0 free=$((48 * MIB)) total=$((64 * MIB))
alloc rc=0
alloc rc=2
info rc=0 free=0 total=$((64 * MIB))" "cuCtxCreate_v$form, $destroy ($via)"
		done
	done
}

# The primary context's reset frees what that context held, not what a context cuCtxCreate made
# holds (measured on an H100: its 1 GiB stayed); each form of cuCtxCreate is followed.
t_mem_context_reset_leaves_created() {
	local via form
	for via in proc dlsym; do
		for form in 2 3 4; do
			run_rc out rc env MEMAPP_VIA=$via "$NVT" --no-mps --mem 64M -c 0-3 "$MEMAPP" alloc:8M \
				"ctx:$form" alloc:32M reset info
			eq "$out" "alloc rc=0
ctx rc=0
alloc rc=0
reset rc=0
info rc=0 free=$((32 * MIB)) total=$((64 * MIB))" "cuCtxCreate_v$form ($via)"
		done
	done
}

# However many contexts a program made and destroyed before (150 here, past what the fake could
# make if it never took a destroyed one's place), a created context's memory outlives the primary
# context's reset: it stays counted.
t_mem_created_after_many_destroyed() {
	local steps="" i
	for ((i = 0; i < 150; i++)); do
		steps="$steps ctx ctxdestroy"
	done
	# shellcheck disable=SC2086 # (steps: one word each)
	run_rc out rc "$NVT" --no-mps --mem 64M -c 0-3 "$MEMAPP" $steps ctx alloc:48M reset \
		alloc:32M info
	eq "$(tail -4 <<<"$out")" "alloc rc=0
reset rc=0
alloc rc=2
info rc=0 free=$((16 * MIB)) total=$((64 * MIB))"
	eq "$(grep -c '^ctx rc=0$' <<<"$out")" 151 "every context made: $(grep -v 'rc=0' <<<"$out" | head -3)"
}

# Every created context that lives is remembered, however many live at once (70 here, past the
# shim's first table of 64): the primary context's reset and its last release free the primary
# context's memory (8M here) alone, never what the created ones hold (the driver frees none of it).
t_mem_many_created_outlive_primary() {
	local steps end
	steps=$(printf 'ctx %.0s' $(seq 70))
	for end in reset release; do
		# shellcheck disable=SC2086 # (steps: one word each)
		run_rc out rc "$NVT" --no-mps --mem 64M -c 0-3 "$MEMAPP" alloc:8M $steps alloc:40M $end \
			alloc:32M info
		eq "$(tail -4 <<<"$out")" "alloc rc=0
$end rc=0
alloc rc=2
info rc=0 free=$((24 * MIB)) total=$((64 * MIB))" "$end"
		eq "$(grep -c '^ctx rc=0$' <<<"$out")" 70 "every context made: $(grep -v 'rc=0' <<<"$out" | head -3)"
	done
}

t_mem_ipc_is_the_exporters() {
	local pid
	# The exporter holds 1 GiB (no limit) until told to end.
	"$NVT" --no-mps -c 4-7 "$MEMAPP" alloc:1G "export:$WORK/handle" "wait:$WORK/go" >"$WORK/exp.out" 2>&1 &
	pid=$!
	wait_file "$WORK/go.ready" ready
	# Opened beside a 64 MiB limit: the memory is the exporter's, not counted here.
	run_rc out rc "$NVT" --no-mps --mem 64M -c 0-3 "$MEMAPP" "import:$WORK/handle" alloc:48M info
	touch "$WORK/go"
	wait "$pid"
	eq "$out" "import rc=0
alloc rc=0
info rc=0 free=$((16 * MIB)) total=$((64 * MIB))"
}

# cuMemImportFromShareableHandle gives a handle to memory another process allocated: it stays
# the exporter's (cuda.h; on an H100 the importer's free memory did not move), so the importer
# under a limit is not charged for it, and releasing it gives back nothing. The exporter's count
# holds its 48M while the import lives.
t_mem_shareable_import_is_the_exporters() {
	local pid
	"$NVT" --no-mps --mem 64M -c 4-7 "$MEMAPP" create:48M "shexport:$WORK/handle" \
		"wait:$WORK/go" info >"$WORK/exp.out" 2>&1 &
	pid=$!
	wait_file "$WORK/go.ready" ready
	run_rc out rc "$NVT" --no-mps --mem 64M -c 0-3 "$MEMAPP" "shimport:$WORK/handle" alloc:48M \
		info free:0 info alloc:16M info
	touch "$WORK/go"
	wait "$pid"
	eq "$out" "shimport rc=0
alloc rc=0
info rc=0 free=$((16 * MIB)) total=$((64 * MIB))
free rc=0
info rc=0 free=$((16 * MIB)) total=$((64 * MIB))
alloc rc=0
info rc=0 free=0 total=$((64 * MIB))"
	eq "$(cat "$WORK/exp.out")" "create rc=0
shexport rc=0
wait rc=0
info rc=0 free=$((16 * MIB)) total=$((64 * MIB))"
}

# A process killed outright takes its count with it: what it held is no task's (the viewers
# and claims pass over its segment, -l removes it), and the next program starts at zero.
t_mem_death_frees() {
	local holder child seg out rc
	# An exec ends a program's hold on the GPU as its death does (the driver frees its
	# context): the program it becomes, in the same process and segment, counts from 0.
	run_rc out rc "$NVT" --no-mps --mem 64G -c 0-3 "$MEMAPP" alloc:48G exec alloc:48G info
	eq "$out" "alloc rc=0
alloc rc=0
info rc=0 free=$((16 * 1024 * MIB)) total=$((64 * 1024 * MIB))"
	# A forked child holds none of its parent's memory (CUDA does not follow a fork).
	"$NVT" --no-mps --mem 64G -c 0-3 "$MEMAPP" alloc:48G fork:"$WORK/child" \
		wait:"$WORK/never" >"$WORK/holder.out" 2>&1 &
	holder=$! # (nvtaskset execs its COMMAND)
	wait_file "$WORK/never.ready" ready
	wait_file "$WORK/child.ready" ready
	child=$(sed -n 's/^fork rc=0 pid=//p' "$WORK/holder.out")
	[ -n "$holder" ] && [ -n "$child" ] || die "no holder ($holder) or child ($child)"
	seg=$(seg_file "$holder")
	[ -e "$seg" ] || die "no segment for the holder $holder"
	run_rc out rc "$NVT" --metrics
	eq "$(sample nvtaskset_task_memory_bytes "$holder" <<<"$out")" $((48 * 1024 * MIB)) "holder"
	eq "$(sample nvtaskset_task_memory_bytes "$child" <<<"$out")" 0 "child"
	# The holder's 64G limit and the child's: no room for 20G more.
	run_rc out rc "$NVT" --no-mps -n 4 --exclude-running --mem 20G --mem-exclusive "$MEMAPP" total
	eq "$rc" 1 "$out"
	# Killed, the holder's count goes with it: -l, --metrics and claims read it no more,
	# and -l tidies its segment away.
	kill -KILL "$holder"
	wait "$holder" && rc=0 || rc=$?
	eq "$rc" 137 "the holder's end"
	[ -e "$seg" ] || die "the killed holder's segment went before any reader tidied it"
	run_rc out rc "$NVT" -l
	hasnt "$out" " $holder "
	[ ! -e "$seg" ] || die "-l left the killed holder's segment"
	run_rc out rc "$NVT" --metrics
	hasnt "$out" "pid=\"$holder\""
	eq "$(sample nvtaskset_task_memory_bytes "$child" <<<"$out")" 0 "child after"
	touch "$WORK/child"
	wait_for 10 is_gone "$child"
	run_rc out rc "$NVT" --no-mps -n 4 --exclude-running --mem 20G --mem-exclusive "$MEMAPP" total
	eq "$rc" 0 "$out"
	has "$out" "total rc=0 bytes=$((20 * 1024 * MIB))"
}

# mem_two_gpus: the fake node of two H100s (GPU 1 of another floorsweeping), calibrated once
# per test; memapp's "current:D" makes device D's primary context current.
mem_two_gpus() {
	export FAKECUDA_CHIPS=h100,h100-alt NVTASKSET_CACHE_DIR=$WORK/cache-mem2
	[ -e "$NVTASKSET_CACHE_DIR" ] || "$NVT" --calibrate >/dev/null 2>&1 || die "calibrating two GPUs failed"
}

# A pool of GPU 1 (made there, or GPU 1's default or current pool, by the device's calls or
# CUDA 13.0's by location) allocated from while GPU 0's
# context is current: its memory is GPU 1's (cuda.h: the pool may be of a device other than the
# stream's), so GPU 1's limit holds it and cuMemGetInfo on GPU 1 says so; its free gives back
# there, and GPU 0's count never saw it.
t_mem_pool_of_another_gpu() {
	local get
	mem_two_gpus
	for get in mkpool:1 defpool:1 devpool:1 locdefpool:1 locpool:1; do
		run_rc out rc "$NVT" --no-mps --mem 1=64M -c 0-3 "$MEMAPP" "$get" pool:48M \
			poolptsz:32M current:1 info current:0 free:0 pool:48M current:1 info
		eq "$out" "${get%%:*} rc=0
pool rc=0
poolptsz rc=2
current rc=0
info rc=0 free=$((16 * MIB)) total=$((64 * MIB))
current rc=0
free rc=0
pool rc=0
current rc=0
info rc=0 free=$((16 * MIB)) total=$((64 * MIB))" "$get"
	done
	# The same limit on both GPUs: GPU 0 holds none of it, GPU 1 no more than its own.
	run_rc out rc "$NVT" --no-mps --mem 64M -c 0-3 "$MEMAPP" mkpool:1 pool:48M pool:32M \
		alloc:48M info current:1 info
	eq "$out" "mkpool rc=0
pool rc=0
pool rc=2
alloc rc=0
info rc=0 free=$((16 * MIB)) total=$((64 * MIB))
current rc=0
info rc=0 free=$((16 * MIB)) total=$((64 * MIB))"
	# A destroyed pool's allocations live on until freed, and their free gives back on GPU 1.
	run_rc out rc "$NVT" --no-mps --mem 1=64M -c 0-3 "$MEMAPP" mkpool:1 pool:48M pooldestroy \
		current:1 info free:0 info
	eq "$out" "mkpool rc=0
pool rc=0
pooldestroy rc=0
current rc=0
info rc=0 free=$((16 * MIB)) total=$((64 * MIB))
free rc=0
info rc=0 free=$((64 * MIB)) total=$((64 * MIB))"
}

# cuMemAllocAsync on a stream of GPU 1's context, GPU 0's current: from the current pool of the
# stream's device (cuda.h), so GPU 1's limit holds it; its free gives back there.
t_mem_async_on_another_gpus_stream() {
	local form
	mem_two_gpus
	for form in async asyncptsz; do
		run_rc out rc "$NVT" --no-mps --mem 64M -c 0-3 "$MEMAPP" current:1 stream current:0 \
			"$form:48M" "$form:32M" alloc:48M info current:1 info free:0 info
		eq "$out" "current rc=0
stream rc=0
current rc=0
$form rc=0
$form rc=2
alloc rc=0
info rc=0 free=$((16 * MIB)) total=$((64 * MIB))
current rc=0
info rc=0 free=$((16 * MIB)) total=$((64 * MIB))
free rc=0
info rc=0 free=$((64 * MIB)) total=$((64 * MIB))" "$form"
	done
}
