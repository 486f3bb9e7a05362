# Thread-block clusters in partitions too small for them. Sourced by
# tests/run-tests.sh: each t_NAME function is one test, run in a subshell
# under set -e with the helpers defined there.
#
# A cluster's CTAs must run in one GPC at once. A launch whose clusters the
# partition cannot hold in any one GPC waits for SMs forever (seen on an H100:
# cuBLAS's clusters of 4 on 1 or 2 lone TPCs); the fake driver reports such a
# launch as HANG. The shim runs it on the partition's whole GPCs instead, or
# on every TPC when even those are too small, and says so once.
# shellcheck shell=bash

t_clusters_fit_partition() {
	# GPC 0 holds TPCs 0,8,16,24; 62 is a GPC of its own (fake H100's map).
	run_rc out rc "$NVT" --no-mps -c 0,8 "$APP" cluster 4
	eq "$rc" 0
	has "$out" "tpcs=0,8 hung=0"
	hasnt "$out" "warning"
	run_rc out rc "$NVT" --no-mps -c 62 "$APP" cluster 2
	has "$out" "tpcs=62 hung=0"
	run_rc out rc "$NVT" --no-mps -g 1 "$APP" cluster 16
	has "$out" "tpcs=1,9,17,25,32,39,46,53 hung=0"
	hasnt "$out" "warning"
	# Plain launches of such a partition stay inside it.
	run_rc out rc "$NVT" --no-mps -c 62 "$APP" launch 3
	has "$out" "tpcs=62 hung=0"
}

t_clusters_too_big_for_partition() {
	# TPCs 0 and 1 sit in GPCs 0 and 1: 2 SMs in each, no room for 4.
	run_rc out rc "$NVT" --no-mps -c 0-1 "$APP" cluster 4
	eq "$rc" 0 "exit status (a real GPU would hang)"
	has "$out" "tpcs=0-1,8-9,16-17,24-25,32,39,46,53 hung=0"
	has "$out" "nvtaskset: warning: pid"
	has "$out" "a kernel launched thread-block clusters of 4 blocks, which must share one GPC, but this task's partition has at most 2 SMs in any GPC; such kernels run on the whole GPCs its partition touches instead of waiting forever"
	# A lone TPC's GPC cannot hold 4 either: every TPC, of which the clusters
	# take those of the GPCs that hold 4 (not the lone TPCs 62-65).
	run_rc out rc "$NVT" --no-mps -c 62 "$APP" cluster 4
	has "$out" "tpcs=0-61 hung=0"
	has "$out" "run on every TPC of the GPU instead of waiting forever"
	# The V05_00 layout (Blackwell) keeps its cluster shape elsewhere.
	run_rc out rc env FAKECUDA_CHIP=blackwell NVTASKSET_CACHE_DIR="$WORK/bw-cl" "$NVT" --no-mps -c 0 "$APP" cluster 4
	eq "$rc" 0
	has "$out" "hung=0"
	has "$out" "the whole GPCs its partition touches"
	run_rc out rc env FAKECUDA_CHIP=blackwell NVTASKSET_CACHE_DIR="$WORK/bw-cl" "$NVT" --no-mps -c 0 "$APP" launch 1
	has "$out" "tpcs=0 hung=0"
	hasnt "$out" "warning"
}
