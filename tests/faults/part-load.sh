# 500 live tasks of 3 users (root, 65533, 65534) while -l, claims and moves
# run for LOAD_SECONDS (default 30): root lists, 65533 claims, 65534 moves her
# own tasks and root moves 65533's. Every change reported done is there;
# claims never get a TPC a live task holds; nothing hangs. Sourced by
# tests/faults/run.sh.
# shellcheck shell=bash

# One worker: runs until $WORK/load.stop, printing "rc=N MS what" and "lost: ..." lines.
load_lister() {
	local t0 t1 rc
	while [ ! -e "$WORK/load.stop" ]; do
		t0=$(date +%s%N)
		timeout 60 "$NVT" -l >"$WORK/load.list" 2>&1 && rc=0 || rc=$?
		t1=$(date +%s%N)
		echo "rc=$rc $(((t1 - t0) / 1000000)) -l ($(wc -l <"$WORK/load.list") lines)"
	done
}
load_claimer() {
	local out rc t0 t1 got
	while [ ! -e "$WORK/load.stop" ]; do
		t0=$(date +%s%N)
		out=$(timeout 60 $(as_user 65533) "$NVT" --no-mps -n 4 --exclude-running "$APP" launch 1 2>&1) &&
			rc=0 || rc=$?
		t1=$(date +%s%N)
		echo "rc=$rc $(((t1 - t0) / 1000000)) claim: $(tail -1 <<<"$out")"
		got=$(sed -n 's/.*tpcs=\([-0-9,]*\) hung=0.*/\1/p' <<<"$out")
		if [ "$rc" == 0 ] && ! python3 -c '
import sys
s = set()
for p in sys.argv[1].split(","):
    lo, _, hi = p.partition("-"); s.update(range(int(lo), int(hi or lo) + 1))
sys.exit(0 if len(s) == 4 and all(t >= 48 for t in s) else 1)' "$got"; then
			echo "lost: a claim among 500 tasks got $got (the tasks hold 0-47)"
		fi
	done
}
# load_mover USER PIDS...: USER moves each task in turn and checks it moved.
load_mover() {
	local user=$1 i=0 pid list rc t0 t1 now
	shift
	while [ ! -e "$WORK/load.stop" ]; do
		pid=${*:$((i % $# + 1)):1}
		list="$(((i % 12) * 4))-$(((i % 12) * 4 + 3))"
		i=$((i + 1))
		t0=$(date +%s%N)
		timeout 60 ${user:+$(as_user "$user")} "$NVT" -p -c "$list" "$pid" >/dev/null 2>"$WORK/load.err.$user" &&
			rc=0 || rc=$?
		t1=$(date +%s%N)
		echo "rc=$rc $(((t1 - t0) / 1000000)) move by ${user:-root}: $(cat "$WORK/load.err.$user")"
		now=$(timeout 60 "$NVT" -pc "$pid" 2>&1 | sed -n "s/^pid $pid's current TPC list: //p")
		[ "$rc" != 0 ] || [ "$now" == "$list" ] || echo "lost: ${user:-root} moved $pid to $list; it has $now"
	done
}

part_load() {
	local i u pids_root="" pids_a="" pids_b="" n w workers="" line rc ms
	local secs=${LOAD_SECONDS:-30}
	[ "$USERS_OK" == 1 ] || return 0
	part_begin "load: 500 tasks of 3 users, ${secs} s"
	for ((i = 0; i < 500; i++)); do
		u=$((i % 3))
		case $u in
		0) "$NVT" --no-mps -c "$(((i % 12) * 4))-$(((i % 12) * 4 + 3))" sleep 600 >/dev/null 2>&1 & pids_root="$pids_root $!" ;;
		1) $(as_user 65533) "$NVT" --no-mps -c "$(((i % 12) * 4))-$(((i % 12) * 4 + 3))" sleep 600 >/dev/null 2>&1 & pids_a="$pids_a $!" ;;
		2) $(as_user 65534) "$NVT" --no-mps -c "$(((i % 12) * 4))-$(((i % 12) * 4 + 3))" sleep 600 >/dev/null 2>&1 & pids_b="$pids_b $!" ;;
		esac
	done
	TASKS="$pids_root $pids_a $pids_b"
	for ((i = 0; i < 300; i++)); do
		n=$(timeout 60 "$NVT" -l 2>/dev/null | grep -c ' sleep 600')
		[ "$n" -ge 500 ] && break
		sleep 0.2
	done
	echo "  $n tasks up after $((SECONDS - P_BEGIN)) s"
	[ "$n" -ge 500 ] || bad lost "only $n of 500 tasks listed"
	rm -f "$WORK/load.stop"
	load_lister >"$WORK/load.w1" 2>&1 &
	workers="$workers $!"
	load_claimer >"$WORK/load.w2" 2>&1 &
	workers="$workers $!"
	# shellcheck disable=SC2086
	load_mover 65534 $pids_b >"$WORK/load.w3" 2>&1 &
	workers="$workers $!"
	# shellcheck disable=SC2086
	load_mover "" $pids_a >"$WORK/load.w4" 2>&1 &
	workers="$workers $!"
	sleep "$secs"
	touch "$WORK/load.stop"
	# shellcheck disable=SC2086
	wait $workers
	for w in 1 2 3 4; do
		while read -r line; do
			case $line in
			rc=*)
				rc=${line%% *} rc=${rc#rc=}
				judge "$rc" "${line#* }"
				;;
			lost:*) bad lost "${line#lost: }" ;;
			esac
		done <"$WORK/load.w$w"
	done
	for w in "-l:1" "claim:2" "move by 65534:3" "move by root:4"; do
		sed -n 's/^rc=\([0-9]*\) \([0-9]*\) .*/\1 \2/p' "$WORK/load.w${w#*:}" | sort -k2n |
			awk -v what="${w%:*}" '{n++; ms[n] = $2; if ($1 != 0) bad++}
				END {printf "  %s: %d runs, %d failed, median %d ms, max %d ms\n",
					what, n, bad, ms[int((n + 1) / 2)], ms[n]}'
	done
	# shellcheck disable=SC2086
	kill -TERM $TASKS 2>/dev/null
	wait 2>/dev/null
	TASKS=
	timeout 60 "$NVT" -l >/dev/null 2>&1 # tidies the run directories
	part_end
}
