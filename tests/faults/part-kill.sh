# kill -9 of the CLI at random points of -p, -a -p and claims (a start with
# -n --exclude-running, and -p -n --exclude-running): 200 trials, half at a
# random time within the command's run, half at a random one of its counted
# calls (the injector kills it there). Afterwards every task's partition is
# the old or the new one, can be changed again, and no TPC stays claimed by
# a dead process. Sourced by tests/faults/run.sh.
# shellcheck shell=bash

# op_cmd OP: the command line of one operation (a claim start's task ends at once).
op_cmd() {
	case $1 in
	move) echo "$NVT -p -c 8-9 $MOVE" ;;
	tree) echo "$NVT -a -p -c 12-13 $TREE" ;;
	claim) echo "$NVT --no-mps -n 4 --exclude-running $APP launch 1" ;;
	claimmove) echo "$NVT -p -n 4 --exclude-running $CLAIMED" ;;
	esac
}
# after_kill OP WHAT: the operation's tasks are on the old or the new partition; put back.
after_kill() {
	case $1 in
	move) check_change "$2" "$MOVE" "$WORK/u/move.state" 0-3 8-9 1 ;;
	tree) RC=1 check_tree "$2" ;;
	claim) ;;
	claimmove) RC=1 check_claim_move "$2" ;;
	esac
}

part_kill() {
	local ops=(move tree claim claimmove) op i ms at n e cmd killed=0 c t0 t1
	declare -A took points_emfile points_enospc
	part_begin "kill -9: -p, -a -p, claims (200 trials)"
	start_fixture
	# How long each takes, and how many calls it makes: the range of the points.
	for op in "${ops[@]}"; do
		read -ra cmd <<<"$(op_cmd "$op")"
		t0=$(date +%s%N)
		"${cmd[@]}" >/dev/null 2>&1
		t1=$(date +%s%N)
		took[$op]=$(((t1 - t0) / 1000000 + 1))
		after_kill "$op" "measuring $op"
		points_emfile[$op]=$(FAULT_EXE=nvtaskset calls EMFILE "${cmd[@]}")
		after_kill "$op" "counting $op"
		points_enospc[$op]=$(FAULT_EXE=nvtaskset calls ENOSPC "${cmd[@]}")
		after_kill "$op" "counting $op"
		echo "  $op: ${took[$op]} ms, ${points_emfile[$op]} descriptor calls, ${points_enospc[$op]} space calls"
	done
	for ((i = 0; i < 200; i++)); do
		op=${ops[RANDOM % 4]}
		read -ra cmd <<<"$(op_cmd "$op")"
		if ((i % 2 == 0)); then
			ms=$((RANDOM % ${took[$op]}))
			"${cmd[@]}" >/dev/null 2>&1 &
			c=$!
			sleep "$(printf '0.%03d' "$ms")"
			# A claim start that got as far as its task kills the task: a dead claimer.
			kill -KILL "$c" 2>/dev/null && { killed=$((killed + 1)) P_FAULTS=$((P_FAULTS + 1)); }
			wait "$c" 2>/dev/null
			RC=$?
			P_RUNS=$((P_RUNS + 1))
			[ "$RC" == 137 ] || [ "$RC" -lt 124 ] || bad crash "trial $i, $op killed after $ms ms: exit status $RC"
			after_kill "$op" "trial $i, $op killed after $ms ms"
		else
			e=EMFILE n=${points_emfile[$op]}
			if ((RANDOM % 3 == 0)) && [ "${points_enospc[$op]}" -gt 0 ]; then
				e=ENOSPC n=${points_enospc[$op]}
			fi
			at=$((RANDOM % n + 1))
			FAULT_KILL=1 FAULT_EXE=nvtaskset inj "$e" "$at" "${cmd[@]}"
			killed=$((killed + INJ))
			P_RUNS=$((P_RUNS + 1))
			[ "$RC" == 137 ] || [ "$RC" -lt 124 ] || bad crash "trial $i, $op killed at $e call $at: exit status $RC"
			after_kill "$op" "trial $i, $op killed at $e call $at of $n"
		fi
		((i % 25 != 24)) || no_dead_claims "after trial $i" 32-65
	done
	echo "  $killed of 200 kills landed while the command ran"
	no_dead_claims "after the kills" 32-65
	for t in "$HOLDER" "$MOVE" "$CLAIMED" "$TREE" "$TREE_CHILD"; do
		kill -0 "$t" 2>/dev/null || bad crash "task $t died during the kills"
	done
	touch "$WORK/u/holder.stop" "$WORK/u/move.stop" "$WORK/u/claimed.stop" "$WORK/u/tree.stop"
	wait
	TASKS=
	part_end
}
