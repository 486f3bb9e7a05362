# Starting tasks. Sourced by tests/run-tests.sh: each t_NAME function is one test,
# run in a subshell under set -e with the helpers defined there.
# shellcheck shell=bash

t_run_static_cudart_style() {
	run_rc out rc "$NVT" --no-mps -c 0-3 "$APP" launch 5
	eq "$rc" 0 "exit status"
	has "$out" "tpcs=0-3 hung=0 version=0x40 masked=1 callbacks=1"
}
t_run_linked() {
	run_rc out rc "$NVT" --no-mps -c 8-9,40 "$LINKED" launch 3
	eq "$rc" 0
	has "$out" "tpcs=8-9,40 hung=0"
}
t_run_bind_now() {
	run_rc out rc env LD_BIND_NOW=1 "$NVT" --no-mps -c 1 "$APP" launch 2
	eq "$rc" 0
	has "$out" "tpcs=1 hung=0"
	run_rc out rc env LD_BIND_NOW=1 "$NVT" --no-mps -c 1 "$LINKED" launch 2
	has "$out" "tpcs=1 hung=0"
}
t_run_hex_mask() {
	run_rc out rc "$NVT" --no-mps f0 "$APP" launch 1
	has "$out" "tpcs=4-7 hung=0"
	run_rc out rc "$NVT" --no-mps 0x3,00000000,00000000 "$APP" launch 1
	has "$out" "tpcs=64-65 hung=0"
	run_rc out rc "$NVT" --no-mps -c 0-15:4,40 "$APP" launch 1
	has "$out" "tpcs=0,4,8,12,40 hung=0"
}
t_quiet() {
	"$NVT" --calibrate >/dev/null 2>&1
	run_rc out rc env NVTASKSET_QUIET=1 FAKECUDA_TMD_VERSION=0x50 "$NVT" --no-mps -c 0 "$APP" launch 2
	eq "$rc" 0
	hasnt "$out" "warning"
}
t_no_callback_table() {
	"$NVT" --calibrate >/dev/null 2>&1
	run_rc out rc env FAKECUDA_NO_TABLE=1 "$NVT" --no-mps -c 0-3 "$APP" launch 2
	eq "$rc" 0 "the program still runs"
	has "$out" "tpcs=0-65 hung=0"
	has "$out" "nvtaskset: warning: the CUDA driver offers no launch callback table"
}
t_odd_callback_params() {
	"$NVT" --calibrate >/dev/null 2>&1
	run_rc out rc env FAKECUDA_PARAMS_SIZE=16 "$NVT" --no-mps -c 0-3 "$APP" launch 4
	eq "$rc" 0
	has "$out" "tpcs=0-65 hung=0"
	has "$out" "unexpected launch callback parameters (size 16)"
	eq "$(grep -c 'unexpected launch' <<<"$out")" 1 "warnings"
}
t_shim_without_driver() {
	# The shim in a process with no libcuda: one warning, the program runs.
	! system_driver || skip "this machine has a CUDA driver of its own"
	run_rc out rc env LD_LIBRARY_PATH=/nonexistent LD_PRELOAD="$SHIM" /bin/echo hello
	eq "$rc" 0
	has "$out" "hello"
	has "$out" "nvtaskset: warning: cannot load the CUDA driver"
	run_rc out rc env LD_LIBRARY_PATH=/nonexistent NVTASKSET_QUIET=1 LD_PRELOAD="$SHIM" /bin/echo hi
	eq "$out" "hi"
}
t_shim_bad_environment() {
	local topo
	export FAKECUDA_CHIP=identity
	topo=$(topo_text)
	local uuid bad
	uuid=$(fake_uuid)
	# Each malformed record is refused whole: the task runs unpartitioned and
	# says why (the launch on a GPU without a slot warns too).
	for bad in "$uuid zz $topo" "$uuid 0-3 garbage" "$uuid 0-3" "GPU-zz 0-3 $topo" \
		"$uuid 70-80 $topo" "$uuid 0-3 $topo;$uuid 4-5 $topo" ";" "$uuid 0-3 $topo;"; do
		run_rc out rc env NVTASKSET_PARTITION="$bad" LD_PRELOAD="$SHIM" "$APP" launch 1
		eq "$rc" 0 "exit status with NVTASKSET_PARTITION='$bad'"
		has "$out" "ignoring malformed NVTASKSET_PARTITION"
		has "$out" "tpcs=0-65 hung=0"
	done
	run_rc out rc env NVTASKSET_PARTITION="$uuid 0-3 $topo" LD_PRELOAD="$SHIM" "$APP" launch 1
	has "$out" "tpcs=0-3 hung=0"
	hasnt "$out" "warning"
	# A record for another GPU only: this GPU's launches run unpartitioned, with one warning.
	run_rc out rc env NVTASKSET_PARTITION="${uuid%?}0 0-3 $topo" LD_PRELOAD="$SHIM" "$APP" launch 3
	has "$out" "tpcs=0-65 hung=0"
	eq "$(grep -c "no partition for GPU $uuid (CUDA device 0)" <<<"$out")" 1 "warnings"
}
t_launch_path_no_syscalls() {
	# Partitioned launches make no system call: 20000 of them cost no more
	# system calls than 10 (the fake driver itself makes none per launch).
	syscalls_per_launch 10 20000 "$(partition_env 0-3 "$(topo_text)")"
	has "$(cat "$WORK/many.out")" "tpcs=0,8,16,24 hung=0"
}
# The identity chip's topology, as calibration would hand it over.
topo_text() { echo "nvtaskset-topology 2 tpcs=66 gpcs=0 flags=1 tmd=V04_00 cc=9.0 map=$(seq -s, 0 65)"; }
t_rundir_unusable() {
	run_rc out rc env NVTASKSET_RUNDIR=/proc "$NVT" --no-mps -c 0-1 "$APP" launch 1
	eq "$rc" 0
	has "$out" "cannot create a control segment in /proc"
	has "$out" "tpcs=0-1 hung=0"
}
t_environment_appended() {
	run_rc out rc env LD_PRELOAD=/lib/nothing.so "$NVT" --no-mps -c 0 /usr/bin/env
	has "$out" "LD_PRELOAD=/lib/nothing.so:$SHIM"
	hasnt "$out" "CUDA_DEVICE_MAX_CONNECTIONS" # CUDA's own count
	has "$out" "CUDA_MPS_PIPE_DIRECTORY=/dev/null"
	has "$out" "NVTASKSET_PARTITION=$(fake_uuid) 0 nvtaskset-topology 2 tpcs=66"
	run_rc out rc env LD_PRELOAD="$SHIM" CUDA_DEVICE_MAX_CONNECTIONS=4 "$NVT" --no-mps -c 0 /usr/bin/env
	has "$out" "CUDA_DEVICE_MAX_CONNECTIONS=4"
	eq "$(grep -c "^LD_PRELOAD=$SHIM\$" <<<"$out")" 1 "LD_PRELOAD holds the shim once"
}
# --channels: a count sets CUDA_DEVICE_MAX_CONNECTIONS, "default"
# leaves CUDA's own, and neither overrides the user's value.
t_channels_option() {
	run_rc out rc "$NVT" --no-mps --channels 8 -c 0 /usr/bin/env
	eq "$rc" 0
	has "$out" "CUDA_DEVICE_MAX_CONNECTIONS=8"
	run_rc out rc "$NVT" --no-mps --channels 32 -c 0 /usr/bin/env
	has "$out" "CUDA_DEVICE_MAX_CONNECTIONS=32"
	run_rc out rc "$NVT" --no-mps --channels default -c 0 /usr/bin/env
	eq "$rc" 0
	hasnt "$out" "CUDA_DEVICE_MAX_CONNECTIONS"
	run_rc out rc env CUDA_DEVICE_MAX_CONNECTIONS=4 "$NVT" --no-mps --channels default -c 0 /usr/bin/env
	has "$out" "CUDA_DEVICE_MAX_CONNECTIONS=4"
	run_rc out rc env CUDA_DEVICE_MAX_CONNECTIONS=4 "$NVT" --no-mps --channels 4 -c 0 /usr/bin/env
	eq "$rc" 0 "the user's value, given again"
	has "$out" "CUDA_DEVICE_MAX_CONNECTIONS=4"
	run_rc out rc env CUDA_DEVICE_MAX_CONNECTIONS=4 "$NVT" --no-mps --channels 8 -c 0 /usr/bin/env
	eq "$rc" 1
	eq "$out" "nvtaskset: --channels sets CUDA_DEVICE_MAX_CONNECTIONS, which is set already (4)"
	for bad in 0 33 -1 8x "" 2.5 all; do
		run_rc out rc "$NVT" --no-mps --channels "$bad" -c 0 /usr/bin/env
		eq "$rc" 1 "--channels '$bad'"
		has "$out" "nvtaskset: --channels takes a count of channels from 1 to 32, or default"
	done
	run_rc out rc "$NVT" --channels 8 -l
	eq "$rc" 1
	has "$out" "nvtaskset: --channels goes with starting a command"
	has "$("$NVT" --help-all)" "--channels N|default"
}
# A COMMAND that cannot run is refused before anything is started for it: no MPS daemon (its
# starts counted in the fake daemon's log), no priority agent, no segment, no calibration; 127
# where there is no such program and 126 where it cannot be run, as taskset's.
t_exec_missing_starts_nothing() {
	local starts uid_dir=$NVTASKSET_RUNDIR/nvtaskset-$ME_UID
	own_mps_dirs missing
	export PATH="$FAKEBIN:$PATH"
	# The count sees a start: a command that runs starts the daemon once.
	run_rc out rc "$NVT" -c 0-3 true
	eq "$rc" 0 "a start: $out"
	has "$out" "started the MPS control daemon"
	eq "$(grep -c 'args=-d' "$CUDA_MPS_PIPE_DIRECTORY/fake.log")" 1 "daemon starts"
	"$NVT" --mps stop >/dev/null
	starts=$(grep -c 'args=-d' "$CUDA_MPS_PIPE_DIRECTORY/fake.log")
	rm -rf "$NVTASKSET_CACHE_DIR"
	run_rc out rc "$NVT" -c 0-3 nvtaskset-no-such-program
	eq "$rc" 127
	eq "$out" "nvtaskset: failed to execute nvtaskset-no-such-program: No such file or directory"
	run_rc out rc "$NVT" --priority low --yield guard -g 1 nvtaskset-no-such-program
	eq "$rc" 127
	eq "$out" "nvtaskset: failed to execute nvtaskset-no-such-program: No such file or directory"
	printf 'not a program\n' >"$WORK/plain"
	chmod 644 "$WORK/plain"
	run_rc out rc "$NVT" -n 4 --exclude-running "$WORK/plain"
	eq "$rc" 126
	eq "$out" "nvtaskset: failed to execute $WORK/plain: Permission denied"
	# A directory of PATH that cannot be searched is passed over, as a shell does.
	mkdir -m 0 "$WORK/closed"
	run_rc out rc env PATH="$WORK/closed:$PATH" "$NVT" --no-mps -c 0-3 nvtaskset-no-such-program
	eq "$rc" 127 "$out"
	eq "$(grep -c 'args=-d' "$CUDA_MPS_PIPE_DIRECTORY/fake.log")" "$starts" "daemon starts"
	[ ! -e "$uid_dir/agent.pid" ] || die "an agent was started: $(cat "$uid_dir/agent.pid")"
	eq "$(pgrep_here -- '--agent' | wc -l)" 0 "agents running"
	eq "$(find "$NVTASKSET_RUNDIR" -name 'nvtaskset.*' | wc -l)" 0 "segments"
	[ ! -e "$NVTASKSET_CACHE_DIR" ] || die "calibrated for a command that cannot run: $(ls "$NVTASKSET_CACHE_DIR")"
}
t_reserve_beside_whole_gpu_priority() {
	# A --priority task without a partition is time-sliced on every TPC: a claim beside it finds
	# none free and says which task holds them and how to make room; given a partition, room.
	local low
	start_loop wl "$NVT" --no-mps --priority low "$APP"
	low=$PID
	wait_file "$WORK/wl.state" "0-65"
	local hint="(pid $low holds every TPC with a priority, as --priority without a partition does: give it fewer first, e.g. nvtaskset -p -g GPCS $low)"
	run_rc out rc "$NVT" --no-mps -n 8 --exclude-running "$APP" launch 1
	eq "$rc" 1 "$out"
	eq "$out" "nvtaskset: cannot pick 8 TPCs: only 0 are free of other tasks $hint$(held_by "$low" 66)"
	run_rc out rc "$NVT" --no-mps -n 8 --exclude-running --dry-run
	eq "$rc" 1 "$out"
	eq "$out" "nvtaskset: cannot pick 8 TPCs: only 0 are free of other tasks $hint"
	"$NVT" -p -g 2-7 "$low" >/dev/null
	run_rc out rc "$NVT" --no-mps -n 8 --exclude-running "$APP" launch 1
	eq "$rc" 0 "$out"
	stop_loop wl "$low"
	# A task without a priority on every TPC is no such holder: the plain message.
	start_loop wa "$NVT" --no-mps -c all "$APP"
	wait_file "$WORK/wa.state" "0-65"
	run_rc out rc "$NVT" --no-mps -n 8 --exclude-running --dry-run
	eq "$out" "nvtaskset: cannot pick 8 TPCs: only 0 are free of other tasks"
	stop_loop wa "$PID"
}
