# CUDA graphs follow -p, through the fake driver's graph model
# (tests/fake/fakecuda.h: one TMD build per kernel node at the first upload;
# replays run that copy). Sourced by tests/run-tests.sh.
# shellcheck shell=bash

# graph_nodes_are OUT EXPECTED [SECONDS]: waits until the per-node lines of
# the graph app's OUT read EXPECTED (one "node I tpcs=LIST" per line).
graph_nodes_are() {
	poll_until "${3:-10}" graph_nodes_read "$1" "$2" ||
		die "timed out waiting for $1's nodes to read '$2' (they read '$(grep '^node' "$1" 2>/dev/null)')"
}
graph_nodes_read() { [ "$(grep '^node' "$1" 2>/dev/null)" == "$2" ]; }
# graph_replays OUT: the replays the graph app's OUT counts (0 before its first).
graph_replays() {
	local n
	n=$(sed -n 's/^replays=//p' "$1" 2>/dev/null)
	echo "${n:-0}"
}
replays_reach() { [ "$(graph_replays "$1")" -ge "$2" ]; }
# graph_replays_after OUT COUNT: waits until OUT counts COUNT replays more than now, so that
# COUNT - 1 whole replays began after what came before this call (one may have been under way).
graph_replays_after() {
	local want=$(($(graph_replays "$1") + $2))
	poll_until 10 replays_reach "$1" "$want" ||
		die "timed out waiting for $1 to count $want replays (it counts $(graph_replays "$1"))"
}
# graph_nodes_stay OUT EXPECTED: after a change that must not reach the graph, its nodes still
# read EXPECTED over 5 replays begun after it (each replay would show a change).
graph_nodes_stay() {
	graph_replays_after "$1" 6
	eq "$(grep '^node' "$1")" "$2" "the graph's nodes after $(graph_replays "$1") replays"
}
nodes_on() { # nodes_on COUNT LIST: the expected lines for COUNT nodes on LIST
	local i
	for ((i = 0; i < $1; i++)); do echo "node $i tpcs=$2"; done
}
# start_graph TAG NODES OPTIONS...: the graph app under -c 0-3; sets PID.
start_graph() {
	local tag=$1 nodes=$2
	shift 2
	rm -f "$WORK/$tag.stop" "$WORK/$tag.out"
	"$NVT" --no-mps -c 0-3 "$APP" graph "$nodes" "$WORK/$tag.stop" "$WORK/$tag.out" "$@" \
		>"$WORK/$tag.log" 2>&1 &
	PID=$!
}
stop_graph() { # stop_graph TAG PID: ends it, checks it exited 0 with no hang or bad run
	local i
	touch "$WORK/$1.stop"
	poll_until 5 is_gone "$2" || { kill -9 "$2"; die "graph app $1 did not stop"; }
	wait "$2"
	eq "$?" 0 "graph app $1's exit status ($(tail -3 "$WORK/$1.log"))"
	has "$(cat "$WORK/$1.log")" "hung=0 bad=0"
}

t_graph_follows_p() {
	# Without the shim's refresh, replays keep the TPCs of the first upload.
	local opts
	for opts in "" "child" "params" "v2" "upload"; do
		# shellcheck disable=SC2086
		start_graph gf 3 $opts
		local n=3
		[ "$opts" = child ] && n=4
		graph_nodes_are "$WORK/gf.out" "$(nodes_on $n 0-3)"
		run_rc out rc "$NVT" -p -c 40-41 "$PID"
		eq "$rc" 0 "-p exit status ($opts)"
		hasnt "$out" "cannot follow"
		graph_nodes_are "$WORK/gf.out" "$(nodes_on $n 40-41)"
		"$NVT" -p -c 8-15 "$PID" >/dev/null
		graph_nodes_are "$WORK/gf.out" "$(nodes_on $n 8-15)"
		stop_graph gf "$PID"
	done
}
t_graph_program_operations_work() {
	# The program's own set-params, exec updates, disabled nodes and
	# re-instantiation keep working across changes (the app checks each run),
	# and the graph follows each change through them: 14 replays after each,
	# every operation ran twice on the new partition.
	local list
	start_graph go 2 setparams=3 update=4 toggle=5 reinst=7
	graph_nodes_are "$WORK/go.out" "$(nodes_on 2 0-3)" 10
	for list in 40-41 20-23; do
		run_rc out rc "$NVT" -p -c "$list" "$PID"
		eq "$rc" 0 "-p exit status ($out)"
		hasnt "$out" "cannot follow"
		graph_nodes_are "$WORK/go.out" "$(nodes_on 2 "$list")"
		graph_replays_after "$WORK/go.out" 14
		graph_nodes_are "$WORK/go.out" "$(nodes_on 2 "$list")"
	done
	stop_graph go "$PID"
}
t_graph_unfollowable_counted() {
	# Conditional nodes, device launch, memory nodes: the graph keeps its
	# TPCs, the shim warns once, and -p says how many kernels.
	local opts want
	for opts in cond device alloc; do
		start_graph gu 2 "$opts"
		want=$(nodes_on 2 0-3)
		[ "$opts" = cond ] && want=$(nodes_on 3 0-3)
		graph_nodes_are "$WORK/gu.out" "$want"
		run_rc out rc "$NVT" -p -c 40-41 "$PID"
		eq "$rc" 0 "-p exit status ($opts)"
		has "$out" "CUDA graph kernel"
		has "$out" "cannot follow partition changes"
		graph_nodes_stay "$WORK/gu.out" "$want"
		run_rc out rc "$NVT" -p --json "$PID"
		has "$out" '"graph_kernels_stale":'
		hasnt "$out" '"graph_kernels_stale":0'
		stop_graph gu "$PID"
		has "$(cat "$WORK/gu.log")" "a CUDA graph cannot follow partition changes"
	done
}
t_graph_following_off() {
	# NVTASKSET_GRAPHS=0: graphs keep the TPCs of their first upload.
	NVTASKSET_GRAPHS=0 start_graph gn 2
	graph_nodes_are "$WORK/gn.out" "$(nodes_on 2 0-3)"
	"$NVT" -p -c 40-41 "$PID" >/dev/null
	graph_nodes_stay "$WORK/gn.out" "$(nodes_on 2 0-3)"
	stop_graph gn "$PID"
}
t_graph_unexpected_api_block() {
	# A driver whose API callback data is not laid out as measured: the shim
	# says so once, graphs keep their TPCs, plain launches stay partitioned.
	FAKECUDA_API_PARAMS_SIZE=16 start_graph gb 2
	graph_nodes_are "$WORK/gb.out" "$(nodes_on 2 0-3)"
	"$NVT" -p -c 40-41 "$PID" >/dev/null
	graph_nodes_stay "$WORK/gb.out" "$(nodes_on 2 0-3)"
	stop_graph gb "$PID"
	has "$(cat "$WORK/gb.log")" "unexpected driver-API callback data"
	run_rc out rc env FAKECUDA_API_PARAMS_SIZE=16 "$NVT" --no-mps -c 40-41 "$APP" launch 1
	eq "$rc" 0 "exit status of a plain launch"
	has "$out" "tpcs=40-41 hung=0"
}
