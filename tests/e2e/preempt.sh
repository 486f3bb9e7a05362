# shellcheck shell=bash
# Preemption (docs/priorities.md, "Preemption"): a time-sliced task's channel groups, followed
# through the RM's ioctls, get its level's timeslice; the fake driver's RM (tests/fake/fakerm.c,
# preloaded after the shim, FAKECUDA_RM=1) makes them as libcuda 580 does and logs what each
# group holds.
FAKERM=$FAKEDIR/fakerm.so

# rm_env: the environment of a process whose RM the fake kernel side answers.
rm_env() {
	export LD_PRELOAD="$SHIM:$FAKERM" FAKECUDA_RM=1 FAKERM_LOG=$WORK/rm.log
}
# final_us PID: the final timeslices of PID's groups, one per line, in the order made.
final_us() { awk -v p="pid=$1" '$1 == p && $2 == "final" {sub("us=", "", $4); print $4}' "$WORK/rm.log"; }
# sets PID: the timeslices PID's groups were set to, in order.
sets() { awk -v p="pid=$1" '$1 == p && $2 == "set-timeslice" {sub("us=", "", $4); print $4}' "$WORK/rm.log"; }
# group_sets PID: the timeslices each group of PID was set to, in order, a group's after another's
# ("5 5|5 5|"), groups in the order made.
group_sets() {
	awk -v p="pid=$1" '$1 == p && $2 == "set-timeslice" {
		sub("us=", "", $4); if (!($3 in seen)) { seen[$3] = 1; order[n++] = $3 }
		v[$3] = v[$3] (v[$3] == "" ? "" : " ") $4
	} END { for (i = 0; i < n; i++) printf "%s|", v[order[i]] }' "$WORK/rm.log"
}
# last_us PID GROUP: the latest timeslice set on a group of PID (its handle).
last_us() {
	awk -v p="pid=$1" -v g="group=$2" '$1 == p && $2 == "set-timeslice" && $3 == g {sub("us=", "", $4); v = $4} END {print v}' "$WORK/rm.log"
}
# first_group VAR PID: sets VAR to the handle of PID's first channel group in the fake RM's log,
# or dies.
first_group() {
	local g
	g=$(awk -v p="pid=$2" '$1 == p && $2 == "alloc" && $3 == "class=0xa06c" {sub("handle=", "", $4); print $4; exit}' "$WORK/rm.log")
	[ -n "$g" ] || die "no channel group of pid $2 in the fake RM's log"
	printf -v "$1" '%s' "$g"
}
pid_of_log() { awk '{print $1}' "$WORK/rm.log" | sort -u | sed -n 's/^pid=//p' | head -1; }
# rm_run OUT PID CMD...: runs CMD with the fake RM (rm_env), which must exit 0; sets OUT to what
# it printed and PID to the process the fake RM's log names.
rm_run() {
	local rm_out rm_rc
	rm_env
	run_rc rm_out rm_rc "${@:3}"
	eq "$rm_rc" 0 "exit status: $rm_out"
	printf -v "$1" '%s' "$rm_out"
	printf -v "$2" '%s' "$(pid_of_log)"
}
# start_rm_loop TAG ARGS...: start_loop TAG nvtaskset --no-mps ARGS fakeapp with the fake RM
# (rm_env), once it launched (on every TPC); sets PID.
start_rm_loop() {
	local tag=$1
	shift
	rm_env
	start_loop "$tag" "$NVT" --no-mps "$@" "$APP"
	wait_file "$WORK/$tag.state" "0-65"
}
# last_us_is PID GROUP US: the latest timeslice set on PID's group GROUP is US.
last_us_is() { [ "$(last_us "$1" "$2")" == "$3" ]; }
# sets_to PID US: how many of PID's timeslice sets were to US microseconds.
sets_to() {
	awk -v p="pid=$1" -v us="us=$2" '$1 == p && $2 == "set-timeslice" && $4 == us {n++} END {print n + 0}' "$WORK/rm.log"
}
# sets_reach PID US N: N of PID's timeslice sets were to US microseconds.
sets_reach() { [ "$(sets_to "$1" "$2")" == "$3" ]; }
# groups_listed US [STATUS]: -l --json shows a task with 4 channel groups at a timeslice of US
# microseconds (and the driver's STATUS of its last control, where given).
groups_listed() {
	local want="\"channel_groups\":4,\"timeslice_us\":$1,"
	[ -z "${2:-}" ] || want+="\"driver_status\":$2"
	"$NVT" -l --json | grep -qF "$want"
}

t_preempt_low_groups_get_slice() {
	local out pid
	rm_run out pid "$NVT" --no-mps --priority low --yield slice "$APP" launch 3
	# Four groups (compute and three copy), each at 5 us at the end: libcuda's own 2048 us
	# for the compute group was followed by the group's own at once. Each group's sets, in
	# order: at its allocation, after its schedule, (compute) after libcuda's own.
	eq "$(final_us "$pid" | tr '\n' ' ')" "5 5 5 5 " "final timeslices"
	eq "$(group_sets "$pid")" "5 5 2048 5|5 5|5 5|5 5|" "each group's sets"
	hasnt "$out" "nvtaskset:"
}

t_preempt_high_groups_long() {
	local out pid
	rm_run out pid "$NVT" --no-mps --priority high --yield slice "$APP" launch 2
	eq "$(final_us "$pid" | sort -u)" 20000 "a high task's timeslice"
}

t_preempt_slice_value_and_late_group() {
	local out pid
	# A group made at the 3rd launch (a library's, late) gets it too.
	rm_run out pid env FAKECUDA_RM_LATE=3 "$NVT" --no-mps --priority low --yield slice=40 "$APP" launch 5
	eq "$(final_us "$pid" | tr '\n' ' ')" "40 40 40 40 40 " "final timeslices, the late group's last"
}

# Without slice, a managed task's groups are the driver's: the shim issues no control.
t_preempt_plain_priority_leaves_groups() {
	local out pid
	rm_run out pid "$NVT" --no-mps --priority low --yield client "$APP" launch 2
	eq "$(sets "$pid" | tr '\n' ' ')" "2048 " "the only set: libcuda's own"
	eq "$(final_us "$pid" | tr '\n' ' ')" "2048 1024 1024 1024 " "final timeslices"
}

# -l shows what the shim gave its groups, as the driver recorded it.
t_preempt_list_shows_slice() {
	local json text
	start_rm_loop lo --priority low --yield slice
	wait_for 10 groups_listed 5
	json=$("$NVT" -l --json)
	has "$json" '"ways":"slice"'
	has "$json" '"driver_status":0'
	text=$("$NVT" -l)
	has "$text" "slice:5us"
	stop_loop lo "$PID"
}

# The metrics and top show a time-sliced task's timeslice and state.
t_preempt_metrics_and_top() {
	local hi
	start_rm_loop hi --priority high --yield slice
	hi=$PID
	start_rm_loop lo --priority low --yield slice
	wait_for 10 eval '"$NVT" --metrics | grep -q "^nvtaskset_task_timeslice_seconds{.*priority=\"low\"} 5e-06$"'
	has "$("$NVT" --metrics)" 'nvtaskset_task_timeslice_seconds{'
	has "$("$NVT" --metrics | grep '^nvtaskset_task_channel_groups{.*priority="high"}')" " 4"
	wait_for 10 eval '"$NVT" top -b -n 1 | grep -q " sliced "'
	stop_loop lo "$PID"
	stop_loop hi "$hi"
}

# Beside a higher task that never idles, a low one takes a share (2048 us), and gives it back
# once the higher task is gone.
t_preempt_share_beside_busy_high() {
	local hi lo group
	start_rm_loop hi --priority high --yield slice
	hi=$PID
	start_rm_loop lo --priority low --yield slice
	lo=$PID
	first_group group "$lo"
	wait_for 20 last_us_is "$lo" "$group" 2048
	stop_loop hi "$hi"
	wait_for 20 last_us_is "$lo" "$group" 5
	stop_loop lo "$lo"
}

# A higher task that waits for its requests by host functions (as JAX does) idles between them:
# a low one beside it keeps 5 us (takes no share) for four of the share's windows and more.
t_preempt_no_share_beside_host_function_waits() {
	local hi lo group n before
	rm_env
	rm -f "$WORK/hf.stop"
	PRIOAPP_HOSTFN=1 FAKECUDA_KERNEL_US=1000 "$NVT" --no-mps --priority high --yield slice "$PRIOAPP" \
		serve "$WORK/hf.stop" "$WORK/hf.serve" 10000 4 2>"$WORK/hf.err" &
	hi=$!
	trap 'touch "$WORK/hf.stop" "$WORK/lo.stop"' EXIT
	wait_for 10 test -e "$WORK/hf.serve.ready"
	start_rm_loop lo --priority low --yield slice
	lo=$PID
	first_group group "$lo"
	wait_for 10 last_us_is "$lo" "$group" 5
	before=$(sets_to "$lo" 2048)
	# 2 s of requests 10 ms apart: the share is taken after two windows of 500 ms.
	n=$(requests "$WORK/hf.serve")
	wait_for 30 requests_over "$WORK/hf.serve" $((n + 200))
	eq "$(sets_to "$lo" 2048)" "$before" \
		"the low task's sets to 2048 us (a share) beside the service"
	eq "$(last_us "$lo" "$group")" 5 "the low task's timeslice"
	touch "$WORK/hf.stop"
	wait "$hi" || die "the service failed: $(cat "$WORK/hf.err")"
	stop_loop lo "$lo"
	trap - EXIT
}

# A driver that does not say a group's GPU: a task on one GPU still gives its groups its slice.
t_preempt_gpu_not_said_one_slot() {
	local out pid
	export FAKERM_REFUSE=2080014a
	rm_run out pid "$NVT" --no-mps --priority low --yield slice "$APP" launch 2
	eq "$(final_us "$pid" | tr '\n' ' ')" "5 5 5 5 " "final timeslices"
}

# -p that takes slice away gives the task's groups libcuda's own timeslice back; -p cannot make a
# task started without it time-sliced (its shim follows no groups), and says nothing false.
t_preempt_p_changes() {
	local out rc group
	start_rm_loop lo --priority low --yield slice
	first_group group "$PID"
	wait_for 10 last_us_is "$PID" "$group" 5
	run_rc out rc "$NVT" -p --priority low --yield client "$PID"
	eq "$rc" 0 "-p: $out"
	wait_for 10 last_us_is "$PID" "$group" 2048
	stop_loop lo "$PID"
	start_rm_loop pl --priority low --yield client
	# (A task started without slice cannot be time-sliced: -p says so, and changes nothing.)
	run_rc out rc "$NVT" -p --priority low --yield slice "$PID"
	eq "$rc" 1 "-p: $out"
	has "$out" "its shim follows no channel group: --yield slice would not take effect (nothing changed)"
	run_rc out rc "$NVT" -l --json
	hasnt "$out" '"timeslice_us":5'
	stop_loop pl "$PID"
	eq "$(sets "$PID" | tr '\n' ' ')" "2048 " "the second task's sets: libcuda's own only"
}

# -p --priority without --yield keeps a time-sliced task time-sliced (started so by default:
# a priority and no partition), its groups at its level's timeslice; --yield client ends it.
t_preempt_p_priority_keeps_slice() {
	local out rc group
	start_rm_loop ks --priority low
	first_group group "$PID"
	wait_for 10 last_us_is "$PID" "$group" 5
	run_rc out rc "$NVT" -p --priority normal "$PID"
	eq "$rc" 0 "-p: $out"
	run_rc out rc "$NVT" -l --json
	has "$out" '"priority":"normal"'
	has "$out" '"yield":{"ways":"slice"'
	run_rc out rc "$NVT" -p --priority low --yield client "$PID"
	eq "$rc" 0 "-p --yield client: $out"
	wait_for 10 last_us_is "$PID" "$group" 2048
	stop_loop ks "$PID"
}

# A control the driver refuses is said once, and shown in -l.
t_preempt_refused_said_once() {
	export FAKERM_REFUSE=a06c0103
	start_rm_loop lo --priority low --yield slice
	wait_for 10 eval '"$NVT" -l --json | grep -q "\"driver_status\":86"'
	wait_for 10 grep -q "refused a control on this task's channel groups" "$WORK/lo.err"
	stop_loop lo "$PID"
	eq "$(grep -c "refused a control" "$WORK/lo.err")" 1 "warnings"
}

# The shim's ioctl(2) passes every other request through, results and errors alike.
t_preempt_other_ioctls_pass() {
	local out rc
	rm_env
	run_rc out rc "$NVT" --no-mps --priority low --yield slice python3 -c '
import errno, fcntl, os, pty, struct, termios
m, s = pty.openpty()
fcntl.ioctl(s, termios.TIOCSWINSZ, struct.pack("HHHH", 24, 80, 0, 0))
print(struct.unpack("HHHH", fcntl.ioctl(s, termios.TIOCGWINSZ, b"\0" * 8)))
try:
    fcntl.ioctl(os.open("/dev/null", os.O_RDONLY), termios.TIOCGWINSZ, b"\0" * 8)
except OSError as e:
    print(errno.errorcode[e.errno])'
	eq "$rc" 0 "exit status: $out"
	eq "$out" "(24, 80, 0, 0)
ENOTTY"
}

# Under --yield slice, an RM request the kernel refuses fails as it would without the shim, the
# process whole after it: an ioctl numbered like the RM's on another file (ENOTTY, whatever its
# block), a block that is not there or only partly, or read-only (EFAULT), a size that is not
# the structure's (EINVAL), a control whose own block is not there (the driver's status). The
# hook reads no block the kernel did not answer on, nor one on another driver's node answering the
# RM's numbers without reading it (the fake kernel's /dev/full): the call gives that answer.
t_preempt_refused_ioctls_fail_as_the_kernel_says() {
	local form want out rc wrong=""
	rm_env
	# (every form tried, each in a process of its own; then what went wrong, all of it)
	while read -r form want; do
		run_rc out rc "$NVT" --no-mps --priority low --yield slice "$APP" rm-ioctl "$form"
		# (after it, the group's own timeslice, or libcuda's that a read-only block still set)
		[ "$rc" == 0 ] && [ "$(head -1 <<<"$out")" == "$form=$want" ] &&
			grep -qxE "after=ok us=(5|2048)" <<<"$out" ||
			wrong+="$form: status $rc (139: SIGSEGV), wanted $form=$want, got: $out"$'\n'
	done <<'FORMS'
null-control ENOTTY
null-control-fault ENOTTY
null-alloc-fault ENOTTY
null-free-fault ENOTTY
other-alloc-fault ok status=0
other-control-fault ok status=0
control-fault EFAULT
control-cut EFAULT
control-readonly EFAULT
control-params-fault ok status=0x1e
control-short EINVAL
alloc-short EINVAL
free-short EINVAL
alloc-fault EFAULT
free-fault EFAULT
FORMS
	eq "$wrong" "" "the refused forms"
}

# A time-sliced task under MPS joins its level's own daemon, which nvtaskset starts with the
# shim preloaded and told the level; --mps stop stops it.
t_preempt_level_mps_daemon() {
	local out rc env
	own_mps_dirs lvl
	PATH=$FAKEBIN:$PATH
	export FAKECUDA_LOG=$WORK/cuda.log
	run_rc out rc "$NVT" --priority low --yield slice "$APP" launch 1
	eq "$rc" 0 "exit status: $out"
	has "$out" "started the MPS control daemon of priority low (pipe directory $CUDA_MPS_PIPE_DIRECTORY-low)"
	has "$(cat "$WORK/cuda.log")" "mps=$CUDA_MPS_PIPE_DIRECTORY-low"
	env=$(cat "$CUDA_MPS_PIPE_DIRECTORY-low/fake.env")
	has "$env" "NVTASKSET_MPS_SERVER=low,yield=slice"
	has "$env" "LD_PRELOAD=$SHIM"
	# The shared daemon was not started for it; a task without slice joins that one.
	[ ! -e "$CUDA_MPS_PIPE_DIRECTORY/nvidia-cuda-mps-control.pid" ] || die "the shared daemon runs"
	# --mps status finds the level's daemon alone (exit 0), and its JSON names it.
	run_rc out rc "$NVT" --mps status --json
	eq "$rc" 0 "--mps status --json beside the level's daemon alone: $out"
	python3 -c 'import json, sys; d = json.loads(sys.argv[1]); l = d["levels"]
assert not d["running"] and len(l) == 1 and l[0]["priority"] == "low" and l[0]["pid"] > 0, d
assert l[0]["pipe_directory"] == sys.argv[2], d' "$out" "$CUDA_MPS_PIPE_DIRECTORY-low" || die "$out"
	run_rc out rc "$NVT" --priority low --yield client "$APP" launch 1
	eq "$rc" 0 "exit status: $out"
	eq "$(tail -1 "$WORK/cuda.log" | sed 's/.* mps=//')" "$CUDA_MPS_PIPE_DIRECTORY" "the plain task's daemon"
	run_rc out rc "$NVT" --mps status
	eq "$rc" 0 "--mps status: $out"
	has "$out" "MPS control daemon of priority low: running (pid "
	run_rc out rc "$NVT" --mps stop
	eq "$rc" 0 "--mps stop: $out"
	has "$out" "stopped MPS control daemon of priority low"
	has "$out" "stopped MPS control daemon (pid"
	run_rc out rc "$NVT" --mps status --json
	eq "$rc" 3 "--mps status with no daemon: $out"
	python3 -c 'import json, sys; d = json.loads(sys.argv[1]); assert d["levels"] == [], d' "$out" || die "$out"
}

# A priority with no partition and no --yield is time-sliced: its level's daemon, as --yield
# slice; a partition (or a guard, or --yield) keeps the shared daemon and MPS client priority.
t_preempt_default_whole_gpu_sliced() {
	local out rc
	own_mps_dirs dflt
	PATH=$FAKEBIN:$PATH
	export FAKECUDA_LOG=$WORK/cuda.log
	run_rc out rc "$NVT" --priority high "$APP" launch 1
	eq "$rc" 0 "exit status: $out"
	has "$out" "started the MPS control daemon of priority high (pipe directory $CUDA_MPS_PIPE_DIRECTORY-high)"
	eq "$(tail -1 "$WORK/cuda.log" | sed 's/.* mps=//')" "$CUDA_MPS_PIPE_DIRECTORY-high" "no partition"
	has "$(cat "$CUDA_MPS_PIPE_DIRECTORY-high/fake.env")" "NVTASKSET_MPS_SERVER=high,yield=slice"
	for form in "-g 0" "-c all" "--guard 4" "--yield client"; do
		# shellcheck disable=SC2086 # the form's words
		run_rc out rc "$NVT" --priority low $form "$APP" launch 1
		eq "$rc" 0 "$form: exit status: $out"
		eq "$(tail -1 "$WORK/cuda.log" | sed 's/.* mps=//')" "$CUDA_MPS_PIPE_DIRECTORY" "$form: the shared daemon"
	done
	[ ! -e "$CUDA_MPS_PIPE_DIRECTORY-low" ] || die "a partitioned task started the low level's daemon"
	run_rc out rc "$NVT" --mps stop
	eq "$rc" 0 "--mps stop: $out"
}

# The shim in a level's MPS server gives the server's groups (its clients' work) the level's
# timeslice and shows it in -l; in the control daemon it stays passive (no segment).
t_preempt_mps_server_shim() {
	local json
	ln -s "$APP" "$WORK/nvidia-cuda-mps-server"
	ln -s "$APP" "$WORK/nvidia-cuda-mps-control"
	rm_env
	export NVTASKSET_MPS_SERVER=low,yield=slice
	start_loop srv "$WORK/nvidia-cuda-mps-server"
	wait_file "$WORK/srv.state" "0-65"
	wait_for 10 groups_listed 5
	json=$("$NVT" -l --json)
	has "$json" "nvidia-cuda-mps-server"
	has "$json" '"priority":"low"'
	eq "$(final_us "$PID")" "" "no final state while it runs"
	stop_loop srv "$PID"
	eq "$(final_us "$(pid_of_log)" | tr '\n' ' ')" "5 5 5 5 " "the server's groups"
	: >"$WORK/rm.log"
	start_loop ctl "$WORK/nvidia-cuda-mps-control"
	wait_file "$WORK/ctl.state" "0-65"
	has_segment "$PID" && die "the control daemon made a segment"
	stop_loop ctl "$PID"
	eq "$(final_us "$(pid_of_log)" | tr '\n' ' ')" "2048 1024 1024 1024 " "the control daemon's groups"
}

# A task killed leaves nothing: no segment lists it, and the next task's groups start from the
# driver's own timeslices.
t_preempt_dead_task_leaves_nothing() {
	local out rc pid
	start_rm_loop lo --priority low --yield slice
	kill -KILL "$PID"
	wait "$PID" || true
	run_rc out rc "$NVT" -l
	hasnt "$out" " $PID "
	: >"$WORK/rm.log"
	rm_run out pid "$APP" launch 1
	eq "$(final_us "$pid" | tr '\n' ' ')" "2048 1024 1024 1024 " "the next task's groups"
}

# A context reset frees its driver objects (the fake frees the device, and with it its groups and
# channels): the shim forgets them, so that a timeslice asked later goes to the new context's
# groups only, never to a freed handle.
t_preempt_reset_forgets_freed_groups() {
	local out rc pid
	rm_env
	"$NVT" --no-mps --priority low --yield slice "$APP" reset "$WORK/rs.stop" "$WORK/rs.state" \
		>"$WORK/rs.out" 2>"$WORK/rs.err" &
	pid=$!
	wait_file "$WORK/rs.state" "0-65"
	eq "$(grep -c "^pid=$pid alloc class=0xa06c " "$WORK/rm.log")" 8 "groups made, 4 of them freed"
	has "$(cat "$WORK/rm.log")" "pid=$pid free handle="
	run_rc out rc "$NVT" -p --priority low --yield slice=40 "$pid"
	eq "$rc" 0 "-p: $out"
	wait_for 10 sets_reach "$pid" 40 4
	hasnt "$(cat "$WORK/rm.log")" "unknown object"
	wait_for 10 groups_listed 40 0
	stop_loop rs "$pid"
	eq "$(final_us "$pid" | tr '\n' ' ')" "40 40 40 40 " "final timeslices of the new context's groups"
	hasnt "$(cat "$WORK/rs.err")" "nvtaskset:"
}

# A program that closes the driver's descriptor (one it did not open) and opens another file on
# its number: the shim, asked for another timeslice, sends no control to that file (the fake
# kernel logs an RM request on another file), and forgets the groups made on the closed one.
t_preempt_closed_descriptor_gets_no_control() {
	local out rc
	rm_env
	"$NVT" --no-mps --priority low --yield slice "$APP" reopen "$WORK/ro.stop" "$WORK/ro.state" \
		>"$WORK/ro.out" 2>"$WORK/ro.err" &
	PID=$!
	wait_file "$WORK/ro.state" "0-65"
	wait_for 10 groups_listed 5 0
	run_rc out rc "$NVT" -p --priority low --yield slice=40 "$PID"
	eq "$rc" 0 "-p: $out"
	# (the shim acted on it: its groups forgotten, or a control that failed)
	wait_for 10 eval '"$NVT" -l --json | grep -qE "\"channel_groups\":0,|\"driver_status\":[1-9]"'
	out=$("$NVT" -l --json)
	stop_loop ro "$PID"
	hasnt "$(cat "$WORK/rm.log")" "pid=$PID other-file"
	has "$out" '"channel_groups":0,'
	eq "$(sets_to "$PID" 40)" 0 "sets to 40 us"
	hasnt "$(cat "$WORK/ro.err")" "nvtaskset:"
}

# slice_40_then_60: -p gives task PID's groups 40 us, then 60 us; each change read back by -l
# with no status.
slice_40_then_60() {
	local out rc us
	for us in 40 60; do
		run_rc out rc "$NVT" -p --priority low --yield slice=$us "$PID"
		eq "$rc" 0 "-p: $out"
		wait_for 10 groups_listed $us 0
	done
}

# The driver's node closed under a program and opened again on its number (FAKECUDA_RM_REOPEN:
# the fake libcuda's objects made anew under the same client, some on handles that the freed
# objects of another kind had, and the first group's handle left unused): the shim follows every
# new object, and a group the driver knows no more (its control answered
# NV_ERR_OBJECT_NOT_FOUND, as an H100 with driver 580 answers for no such object of a live
# client) is forgotten: asked once, not at the next change, never shown as refused nor warned of.
t_preempt_reopened_node_forgets_gone_groups() {
	export FAKECUDA_RM_REOPEN=2
	start_rm_loop rn --priority low --yield slice
	wait_for 10 grep -q "^pid=$PID closed fd=" "$WORK/rm.log"
	# (the new objects' last group, 0x5c00000e, given the level's timeslice)
	wait_for 10 last_us_is "$PID" 0x5c00000e 5
	eq "$(grep -c "^pid=$PID alloc class=0xa06c " "$WORK/rm.log")" 8 "groups made, 4 of them freed"
	slice_40_then_60
	stop_loop rn "$PID"
	eq "$(grep -c "^pid=$PID unknown object " "$WORK/rm.log")" 1 "controls on groups the driver knows no more"
	eq "$(final_us "$PID" | tr '\n' ' ')" "60 60 60 60 " "final timeslices of the new objects' groups"
	hasnt "$(cat "$WORK/rn.err")" "nvtaskset:"
}

# The same with the new objects under a new client (FAKECUDA_RM_REOPEN=N,new): the freed
# client's groups are forgotten all at once, at the first control the driver answers
# NV_ERR_INVALID_CLIENT, and none is asked again.
t_preempt_reopened_node_forgets_gone_client() {
	export FAKECUDA_RM_REOPEN=2,new
	start_rm_loop nc --priority low --yield slice
	wait_for 10 grep -q "^pid=$PID closed fd=" "$WORK/rm.log"
	# (each context's groups: 9 sets to 5 us, at their allocation and after each schedule and
	# libcuda's own set)
	wait_for 10 sets_reach "$PID" 5 18
	slice_40_then_60
	stop_loop nc "$PID"
	eq "$(grep "^pid=$PID unknown object " "$WORK/rm.log" | grep -c " status=0x23$")" 1 "controls on the freed client's groups"
	eq "$(grep -c "^pid=$PID unknown object " "$WORK/rm.log")" 1 "controls on objects the driver knows no more"
	eq "$(final_us "$PID" | tr '\n' ' ')" "60 60 60 60 " "final timeslices of the new client's groups"
	hasnt "$(cat "$WORK/nc.err")" "nvtaskset:"
}

# A forked child that uses CUDA has channel groups of its own, and only those: -p on it sets them,
# none of its parent's (which are not its own), and its parent's keep theirs.
t_preempt_forked_child_own_groups() {
	local out rc pid child
	rm_env
	"$NVT" --no-mps --priority low --yield slice "$APP" fork "$WORK/fk.stop" "$WORK/fk.state" \
		>"$WORK/fk.out" 2>"$WORK/fk.err" &
	pid=$!
	wait_file "$WORK/fk.state.parent" "0-65"
	wait_file "$WORK/fk.state.child" "0-65"
	child=$(cat "$WORK/fk.state.childpid")
	eq "$(grep -c "^pid=$child alloc class=0xa06c " "$WORK/rm.log")" 4 "the child's own groups"
	run_rc out rc "$NVT" -p --priority low --yield slice=40 "$child"
	eq "$rc" 0 "-p: $out"
	wait_for 10 sets_reach "$child" 40 4
	hasnt "$(cat "$WORK/rm.log")" "unknown object"
	wait_for 10 groups_listed 40 0
	stop_loop fk "$pid"
	eq "$(final_us "$child" | tr '\n' ' ')" "40 40 40 40 " "the child's groups"
	eq "$(final_us "$pid" | tr '\n' ' ')" "5 5 5 5 " "the parent's groups"
	hasnt "$(cat "$WORK/fk.err")" "nvtaskset:"
}
