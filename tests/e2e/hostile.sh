# Hostile conditions, round 3 (issue 23): what one user leaves in her own run
# directory, or makes in the shared one, must not stall, hide or stop another
# user's tasks. Sourced by tests/run-tests.sh (helpers in security.sh).
# shellcheck shell=bash

# hostile_tasks N TAG: uid 65533 starts N idle tasks (sleep) under nvtaskset -c 0-3, each with
# its segment; sets HOSTILE to their PIDs once every segment exists.
hostile_tasks() {
	local i pid
	HOSTILE=""
	for ((i = 0; i < $1; i++)); do
		$(as_user 65533) "$NVT" --no-mps -c 0-3 sleep 60 >/dev/null 2>&1 &
		HOSTILE="$HOSTILE $!"
	done
	for pid in $HOSTILE; do
		for ((i = 0; i < 250; i++)); do
			[ -e "$(seg_file "$pid")" ] && break
			sleep 0.02
		done
		[ -e "$(seg_file "$pid")" ] || die "task $pid made no segment"
	done
}

t_hostile_unsettled_segments() {
	# Issue 23, 2: a user's own segments with every slot's sequence left odd
	# cost each reader a few tries a slot, not 1000: root's -l and another
	# user's claim stay fast, the claim never waits for them, and it counts
	# their slots as held (it picks around 0-3).
	need_users
	local pid begin ms_l ms_claim
	hostile_tasks 12 us
	for pid in $HOSTILE; do
		"$T/segpoke" "$pid" allodd || die "segpoke $pid allodd"
	done
	begin=$(date +%s%N)
	run_rc out rc "$NVT" -l
	ms_l=$(ms_since "$begin")
	eq "$rc" 0 "-l: $out"
	begin=$(date +%s%N)
	run_rc out rc $(as_user 65532) "$NVT" --no-mps -n 4 --exclude-running env
	ms_claim=$(ms_since "$begin")
	echo "12 segments of unsettled slots: -l $ms_l ms, a claim $ms_claim ms"
	eq "$rc" 0 "the claim: $out"
	picked_apart "$out" 0-3
	[ "$ms_l" -lt 1500 ] || die "-l took $ms_l ms"
	[ "$ms_claim" -lt 3000 ] || die "the claim took $ms_claim ms"
	# shellcheck disable=SC2086
	kill $HOSTILE
}
