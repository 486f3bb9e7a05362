# The fake driver's CUDA graphs, tested without nvtaskset: a test subscriber
# (tests/fake/testsub.c, LD_PRELOADed) writes a fixed mask in every launch
# callback, and tests/fake/fakegraphcheck.c or fakeapp's graph modes show
# what ran where. The fake must behave as the real driver did on an H100
# (driver 580.159.04, tests/gpu/probes/graphs). Sourced by tests/run-tests.sh:
# each t_NAME function is one test, run in a subshell under set -e with the
# helpers defined there.
# shellcheck shell=bash

SUB=$T/testsub.so

# replays_at_least N FILE: fakeapp graph's FILE says N replays or more (no line before the first).
replays_at_least() { [ "$(sed -n 's/^replays=//p' "$2" 2>/dev/null)" -ge "$1" ] 2>/dev/null; }
# graph_check SCENARIO: runs it on the identity chip (mask bit t = TPC t)
# with the subscriber enabling TPCs 4-7; sets out, checks the exit status.
graph_check() {
	run_rc out rc env FAKECUDA_CHIP=identity TESTSUB_MASK=f0 LD_PRELOAD="$SUB" "$T/fakegraphcheck" "$1"
	eq "$rc" 0 "exit status of scenario $1 ($out)"
}

t_fakegraph_mask() {
	# Replays run the mask written at the first upload, one callback per
	# kernel node (2 top-level, 1 in a child graph, 1 in a conditional
	# body), none at instantiation, a second upload or later replays; a
	# write to the host TMDs afterwards changes nothing; another exec of the
	# same graph gets a device copy of its own.
	graph_check mask
	eq "$out" "instantiate callbacks=0
upload rc=0 callbacks=4 tpcs=-|-|-|- builds=1|1|1|1 args=1|2|101|201
upload-again rc=0 callbacks=4 tpcs=-|-|-|- builds=1|1|1|1 args=1|2|101|201
launch-x5 rc=0 callbacks=4 tpcs=4-7|4-7|4-7|4-7 builds=1|1|1|1 args=1|2|101|201
rewrote 4 TMDs
launch-after-rewrite rc=0 callbacks=4 tpcs=4-7|4-7|4-7|4-7 builds=1|1|1|1 args=1|2|101|201
upload-launch-after-rewrite rc=0 callbacks=4 tpcs=4-7|4-7|4-7|4-7 builds=1|1|1|1 args=1|2|101|201
second-exec rc=0 callbacks=8 tpcs=0-1|0-1|0-1|0-1 builds=1|1|1|1 args=1|2|101|201
first-exec rc=0 callbacks=8 tpcs=4-7|4-7|4-7|4-7 builds=1|1|1|1 args=1|2|101|201"
}

t_fakegraph_rebuild() {
	# The subscriber's mask changes from TPCs 4-7 to 0-1 after "start", to
	# 2-3 before "changed-and-back", to 4-5 before the rejected updates.
	# Arguments and grid (set-params, cuGraphExecNodeSetParams, an update
	# with an identical graph) keep a node's device copy; another function
	# or shared-memory size (v2 and v1 set-params, an update of a child
	# graph's kernel, even a change set back before the launch) rebuilds
	# that node alone, with one callback and the mask of then. Updates from
	# another topology or node type fail with 910 and change nothing; the
	# graph's own nodes never change.
	graph_check rebuild
	eq "$out" "start rc=0 callbacks=4 tpcs=4-7|4-7|4-7|4-7 builds=1|1|1|1 args=1|2|3|101
same-function rc=0 callbacks=4 tpcs=4-7|4-7|4-7|4-7 builds=1|1|1|1 args=11|2|3|101
node-set-params rc=0 callbacks=4 tpcs=4-7|4-7|4-7|4-7 builds=1|1|1|1 args=11|22|3|101
update-identical rc=0 callbacks=4 tpcs=4-7|4-7|4-7|4-7 builds=1|1|1|1 args=1|2|3|101
new-function rc=0 callbacks=5 tpcs=0-1|4-7|4-7|4-7 builds=2|1|1|1 args=1|2|3|101
new-smem-v1 rc=0 callbacks=6 tpcs=0-1|0-1|4-7|4-7 builds=2|2|1|1 args=1|2|3|101
changed-and-back rc=0 callbacks=7 tpcs=0-1|0-1|2-3|4-7 builds=2|2|2|1 args=1|2|3|101
update-child-function rc=0 callbacks=8 tpcs=0-1|0-1|2-3|2-3 builds=2|2|2|2 args=1|2|3|101
update-topology rc=910 result=2
update-type-v1 rc=910 result=3 error-node=set
after-failed-updates rc=0 callbacks=8 tpcs=0-1|0-1|2-3|2-3 builds=2|2|2|2 args=1|2|3|101
update-without-child rc=910 result=2
graph-node-0 function=a arg=1"
}

t_fakegraph_enable() {
	# A disabled node does not run, and stays disabled across an update;
	# only kernel nodes of the exec's own graph can be switched.
	graph_check enable
	eq "$out" "disabled rc=0 callbacks=3 tpcs=-|4-7|4-7 builds=1|1|1 args=1|2|101
after-update rc=0 callbacks=3 tpcs=-|4-7|4-7 builds=1|1|1 args=1|2|101
get-enabled rc=0 enabled=0
enabled rc=0 callbacks=3 tpcs=4-7|4-7|4-7 builds=1|1|1 args=1|2|101
child-node set-enabled rc=1
other-graph's node set-enabled rc=400"
}

t_fakegraph_instantiate() {
	# CUDA_GRAPH_INSTANTIATE_FLAG_UPLOAD (2) uploads during
	# cuGraphInstantiateWithParams, and only there; the device-launch flag
	# is accepted; the old calls fill their error node and log.
	graph_check instantiate
	eq "$out" "with-params-upload rc=0 result=0 callbacks=2
with-params rc=0 result=0 callbacks=2
launch rc=0 callbacks=4 tpcs=4-7|4-7 builds=1|1 args=1|2
v1 rc=0 error-node=(nil) log='' callbacks=4
v2 rc=0 callbacks=4
with-flags device rc=0
with-flags upload rc=1
with-flags auto-free+device rc=1
with-flags unknown rc=1
bad graph rc=400
callbacks=4"
}

t_fakegraph_api_block() {
	# Domain 6: enabled per callback id; called on entry and return with a
	# 0x68-byte block: word 5 -> the result (999 on entry), word 7 -> the
	# arguments in order, word 10 = id | site << 32; other words junk.
	# Other domains are refused.
	graph_check api
	eq "$out" "enable 6/514 rc=0
enable 1/514 rc=1
enable 6/807 rc=1
enable 11/1 rc=0
uninteresting calls=0
launch rc=0 calls=2 cbid=514 size=0x68,0x68 id=0x202,0x100000202 result=999,0 same-result=1 same-args=1 args=exec,0x5
bad launch rc=400 result=999,400
enable 6/643 rc=0
instantiate rc=0 calls=2 cbid=643 args=&exec,graph,4 out=set
disable 6/514 rc=0
launch after disable rc=0 calls=0"
	# The size word follows FAKECUDA_API_PARAMS_SIZE, for tests of readers.
	run_rc out rc env FAKECUDA_API_PARAMS_SIZE=0x40 FAKECUDA_CHIP=identity LD_PRELOAD="$SUB" "$T/fakegraphcheck" api
	has "$out" "size=0x40,0x40"
}

t_fakegraph_api_swap() {
	# cuGraphLaunch reads its exec back after the entry callback: changed
	# there, the other exec runs (as the probe found on the H100). A
	# callback may call the driver, which fires its own callbacks.
	graph_check swap
	eq "$out" "swapped rc=0 swaps=1 a.replays=0 b.replays=1 b.arg=2
not swapped rc=0 a.replays=1 b.replays=1 a.arg=1
nested rc=0 launch-callbacks=6 upload-callbacks=2"
}

t_fakegraph_clone() {
	# Clones copy nodes in order (child graphs too) and find their
	# originals; a child graph node holds a copy, and its graph is the
	# node's; cloning a graph with a mem-alloc node fails with 801.
	graph_check clone
	eq "$out" "get-nodes count rc=0 n=3
get-nodes rc=0 n=3 order=1 tail=NULL
clone rc=0
clone n=3 types=0,0,4 new-nodes=1
find-in-clone rc=0 found=1
find-in-clone child kernel rc=0
find-in-clone of a clone's node rc=1
original node 0 after the clone's changed arg=1
child kernel arg=303
destroy a node's graph rc=1
mem-alloc node rc=0 dptr=set
mem-alloc type=10
clone mem-alloc graph rc=801
child of mem-alloc graph rc=801
mem-alloc exec launch rc=0 kernels=1
destroy rc=0, again rc=400
destroyed graph's node type rc=400
exec destroy rc=0, again rc=400"
}

t_fakegraph_hang() {
	# A device copy whose mask enables no working TPC hangs, as a launch does.
	graph_check hang
	eq "$out" "fakecuda: HANG: 2 kernel nodes of a graph enable no working TPC
hang rc=702 callbacks=2 tpcs=| builds=1|1 args=1|2"
}

t_fakegraph_app_once() {
	# fakeapp's one-shot mode, every node type and way to instantiate, both builds.
	local app opts want
	want="node 0 tpcs=4-7
node 1 tpcs=4-7
node 2 tpcs=4-7
node 3 tpcs=4-7
replays=1"
	for app in "$APP" "$LINKED"; do
		for opts in "child cond alloc" "child cond device" "child cond params" \
			"child cond params device" "child cond v2" "child cond upload"; do
			# shellcheck disable=SC2086
			run_rc out rc env FAKECUDA_CHIP=identity TESTSUB_MASK=f0 LD_PRELOAD="$SUB" "$app" graph-once 2 $opts
			eq "$rc" 0 "exit status with $opts"
			eq "$out" "$want" "$app graph-once 2 $opts"
		done
	done
	# Without a subscriber, every TPC; the H100 has 66.
	run_rc out rc "$APP" graph-once 1 cond
	eq "$out" "node 0 tpcs=0-65
node 1 tpcs=0-65
replays=1"
	run_rc out rc env FAKECUDA_CHIP=identity TESTSUB_MASK=0 LD_PRELOAD="$SUB" "$APP" graph-once 1
	eq "$rc" 1 "exit status of a hang"
	has "$out" "fakecuda: HANG: 1 kernel node of a graph enables no working TPC"
	for opts in "x" "65" "1 setparams=0" "1 setparams=x" "1 childs"; do
		# shellcheck disable=SC2086
		run_rc out rc "$APP" graph-once $opts
		eq "$rc" 2 "exit status of graph-once $opts"
		eq "$out" "fakeapp: bad graph arguments"
	done
}

t_fakegraph_app_loop() {
	# fakeapp's loop: replays until STOP, writing OUT after each; its own
	# set-params (same function, new argument: the replay must run it),
	# exec updates, disable/enable and re-instantiation all pass its checks.
	# Re-instantiation takes the subscriber's mask anew: the same here.
	local pid n rc node0
	export FAKECUDA_CHIP=identity TESTSUB_MASK=f00
	rm -f "$WORK/gl.stop" "$WORK/gl.out"
	env LD_PRELOAD="$SUB" "$APP" graph 2 "$WORK/gl.stop" "$WORK/gl.out" child cond alloc \
		setparams=3 update=5 toggle=7 reinst=11 >"$WORK/gl.log" 2>&1 &
	pid=$!
	poll_until 10 replays_at_least 100 "$WORK/gl.out" ||
		die "fewer than 100 replays: $(cat "$WORK/gl.out" "$WORK/gl.log")"
	touch "$WORK/gl.stop"
	wait "$pid" && rc=0 || rc=$?
	eq "$rc" 0 "exit status: $(cat "$WORK/gl.log")"
	n=$(sed -n 's/^replays=//p' "$WORK/gl.out")
	node0=8-11
	((n % 7)) || node0=-
	eq "$(cat "$WORK/gl.out")" "node 0 tpcs=$node0
node 1 tpcs=8-11
node 2 tpcs=8-11
node 3 tpcs=8-11
replays=$n"
	eq "$(cat "$WORK/gl.log")" "replays=$n hung=0 bad=0"
}

t_fakegraph_app_loop_hang() {
	# Replays that hang are counted, shown as empty lists, and fail the loop.
	local pid rc
	rm -f "$WORK/gh.stop" "$WORK/gh.out"
	env FAKECUDA_CHIP=identity TESTSUB_MASK=0 LD_PRELOAD="$SUB" "$APP" graph 1 "$WORK/gh.stop" "$WORK/gh.out" \
		>"$WORK/gh.log" 2>"$WORK/gh.err" &
	pid=$!
	poll_until 10 test -e "$WORK/gh.out" || true
	touch "$WORK/gh.stop"
	wait "$pid" && rc=0 || rc=$?
	eq "$rc" 1 "exit status"
	has "$(cat "$WORK/gh.out")" "node 0 tpcs=
replays="
	grep -Eq '^replays=([0-9]+) hung=\1 bad=0$' "$WORK/gh.log" || die "every replay must hang: $(cat "$WORK/gh.log")"
	has "$(cat "$WORK/gh.err")" "fakecuda: HANG: 1 kernel node of a graph enables no working TPC"
}
