# Steps waited for by polling (docs/priorities.md, "Preemption"; core/bridge.h's
# nvt_bridge_poll_look): a thread that polls an event recorded after its task's last launch, or
# a busy stream, waits as one that synchronises does, and its waits are bridged. The helpers
# (steps_app, bridges) are bridge.sh's.
# Sourced by tests/run-tests.sh: each t_NAME function is one test, run in a subshell under set -e.
# shellcheck shell=bash

# Steps waited for by polling an event recorded after their launches (Event.query() in a loop,
# 50 us between looks) or the stream: the thread's second "not ready" in a row of one event or
# stream, no launch between, begins the wait (its bridge; from the next step on, its first), the query that finds the work done returns from it, the next
# launch releases it. An event recorded again before each query (rerecord) begins one wait a
# step; one recorded before a later launch (early), none.
t_bridge_polled_steps() {
	local n bad line pid form
	for form in 1 stream rerecord; do
		rm -f "$WORK/bridge.log"
		PRIOAPP_POLL=$form NVTASKSET_BRIDGE_HOLD=0 NVTASKSET_BRIDGE_DEBUG=1 steps_app "polled$form" --priority high
		n=$(bridges)
		# One wait a step (2 launches), however many queries it took.
		line=$(grep 'bridge: ' "$WORK/polled$form.err") || die "no report: $(cat "$WORK/polled$form.err")"
		[ "$(sed -n 's/.*bridge: \([0-9]*\) waits.*/\1/p' <<<"$line")" -le $(($(grep -c '^launch' "$WORK/polled$form.log") / 2 + 1)) ] ||
			die "more waits than steps: $line"
		[ "$n" -gt 50 ] || die "only $n bridges for $(grep -c '^launch' "$WORK/polled$form.log") launches: $(head -3 "$WORK/bridge.log")"
		bad=$(awk '$1 == "bridge" {
			for (i = 2; i <= NF; i++) { split($i, kv, "="); v[kv[1]] = kv[2] }
			if (n && (v["seq"] != last + 1 || v["returned"] != last || v["released"] != last)) print "words: " $0
			last = v["seq"]; n++ }' "$WORK/bridge.log")
		eq "$bad" "" "bridge lines"
		bad=$(awk '$1 == "app" { split($3, a, "="); split($4, r, "="); if (a[2] != r[2]) print }' "$WORK/bridge.log")
		eq "$bad" "" "launches that left the bridge unreleased ($form)"
	done
	rm -f "$WORK/bridge.log"
	PRIOAPP_POLL=early NVTASKSET_BRIDGE_HOLD=0 steps_app early --priority high
	eq "$(bridges)" 0 "bridges of waits for events recorded before a launch"
	# Requests 20 ms apart, not bridged (their waits are not followed soon): still one wait each,
	# also where the thread that recorded the event looks once and another polls it (thread: a
	# single look begins no wait).
	trap 'touch "$WORK/srv1.stop" "$WORK/srvthread.stop"' EXIT
	for form in 1 thread; do
		rm -f "$WORK/srv$form.stop"
		PRIOAPP_POLL=$form NVTASKSET_BRIDGE_DEBUG=1 FAKECUDA_KERNEL_US=200 "$NVT" --no-mps --priority high \
			"$PRIOAPP" serve "$WORK/srv$form.stop" "$WORK/srv$form.log" 20000 2 2>"$WORK/srv$form.err" &
		pid=$!
		wait_for 10 test -e "$WORK/srv$form.log.ready"
		wait_for 10 requests_over_n "$WORK/srv$form.log" 8
		touch "$WORK/srv$form.stop"
		wait "$pid" || die "the service failed: $(cat "$WORK/srv$form.err")"
		line=$(grep 'bridge: ' "$WORK/srv$form.err") || die "no report: $(cat "$WORK/srv$form.err")"
		[ "$(sed -n 's/.*bridge: \([0-9]*\) waits.*/\1/p' <<<"$line")" -le $(($(grep -c '^req ' "$WORK/srv$form.log") + 1)) ] ||
			die "$form: more waits than requests: $line"
	done
	trap - EXIT
}

# A loop that sleeps between its looks (300 us; steps of 100 us, so that its second look finds
# the step done): once one of its waits showed looks that close, each wait begins at its first
# "not ready" and is bridged (one bridge a step, released at the next launch); a loop whose looks
# come 3 ms apart begins none (holding the GPU from one look to the next would cost the lower
# task more than the switches).
t_bridge_sleeping_poll_loop() {
	local n steps bad
	rm -f "$WORK/bridge.log"
	FAKECUDA_KERNEL_US=50 PRIOAPP_POLL=1 PRIOAPP_POLL_US=300 NVTASKSET_BRIDGE_HOLD=0 steps_app sleep --priority high
	n=$(bridges)
	steps=$(($(grep -c '^launch' "$WORK/sleep.log") / 2))
	# (a busy machine's late wake-up unteaches it for the next wait)
	[ $((n * 2)) -gt "$steps" ] || die "$n bridges for $steps steps: $(head -3 "$WORK/bridge.log")"
	[ "$n" -le $((steps + 1)) ] || die "$n bridges for $steps steps"
	bad=$(awk '$1 == "app" { split($3, a, "="); split($4, r, "="); if (a[2] != r[2]) print }' "$WORK/bridge.log")
	eq "$bad" "" "launches that left the bridge unreleased"
	rm -f "$WORK/bridge.log"
	FAKECUDA_KERNEL_US=50 PRIOAPP_POLL=1 PRIOAPP_POLL_US=3000 NVTASKSET_BRIDGE_HOLD=0 STEPS_LAUNCHES=60 \
		steps_app slow --priority high
	eq "$(bridges)" 0 "bridges of a loop whose looks come 3 ms apart"
}
