# Steps waited for by polling (docs/priorities.md, "Preemption"; core/bridge.h's
# nvt_bridge_poll_look): a thread that polls an event recorded after its task's last launch, or
# a busy stream, waits as one that synchronises does, and its waits are bridged. The helpers
# (steps_app, bridges) are bridge.sh's.
# Sourced by tests/run-tests.sh: each t_NAME function is one test, run in a subshell under set -e.
# shellcheck shell=bash

# Steps waited for by polling an event recorded after their launches (Event.query() in a loop,
# 50 us between looks) or the stream: the thread's second "not ready" in a row of one event or
# stream, no launch between, begins the wait (its bridge; from the next step on, its first, a
# tentative one made full at the second), the query that finds the work done returns from it,
# the next launch releases it. An event recorded again before each query (rerecord) begins one
# wait a step; one recorded before a later launch (early), none.
t_bridge_polled_steps() {
	local n line pid form steps
	for form in 1 stream rerecord; do
		rm -f "$WORK/bridge.log"
		PRIOAPP_POLL=$form NVTASKSET_BRIDGE_HOLD=0 NVTASKSET_BRIDGE_DEBUG=1 steps_app "polled$form" --priority high
		n=$(bridges)
		# One wait a step (2 launches), however many queries it took: a full bridge, or a
		# tentative one, made full by a second bridge where the step outlasts its cap (a busy
		# machine's slow looks).
		steps=$(($(grep -c '^launch' "$WORK/polled$form.log") / 2))
		line=$(grep 'bridge: ' "$WORK/polled$form.err") || die "no report: $(cat "$WORK/polled$form.err")"
		[ "$(sed -n 's/.*bridge: \([0-9]*\) waits.*/\1/p' <<<"$line")" -le $((steps + 1)) ] ||
			die "more waits than steps ($steps): $line"
		[ "$(caps "$WORK/bridge.log" 50000000)" -le $((steps + 1)) ] ||
			die "more full bridge kernels than steps ($steps): $(caps "$WORK/bridge.log" 50000000)"
		[ "$n" -gt 50 ] || die "only $n bridges for $(grep -c '^launch' "$WORK/polled$form.log") launches: $(head -3 "$WORK/bridge.log")"
		eq "$(bridge_words "$WORK/bridge.log")" "" "bridge lines ($form)"
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

# bridge_words LOG: the bridge lines of LOG whose words do not follow on from the last one's (the
# wait before each returned, and was released at the launch between; a tentative bridge made
# full: the next seq, the whole cap, the tentative one neither returned nor released, its
# linger, hold and replay the same), and launches that left their bridge unreleased.
bridge_words() {
	awk '$1 == "bridge" {
		for (i = 2; i <= NF; i++) { split($i, kv, "="); v[kv[1]] = kv[2] }
		full = n && cap == 900000 && v["cap_ns"] == 50000000 && v["seq"] == last + 1 && v["released"] == last - 1
		if (full && (v["returned"] != last - 1 || v["linger_ns"] != lin ||
		    v["hspan_ns"] != hsp || v["replay"] != rep || v["margin_ns"] != mar))
			print "made full: " $0
		else if (!full && n && (v["seq"] != last + 1 || v["returned"] != last || v["released"] != last))
			print "words: " $0
		last = v["seq"]; cap = v["cap_ns"]; lin = v["linger_ns"]; hsp = v["hspan_ns"]; rep = v["replay"]
		mar = v["margin_ns"]; n++ }
	$1 == "app" { split($3, a, "="); split($4, r, "="); if (a[2] != r[2]) print "unreleased: " $0 }' "$1"
}
# caps LOG CAP_NS: the bridges of LOG with that cap.
caps() { awk -v c="cap_ns=$2" '$1 == "bridge" && $4 == c {n++} END {print n + 0}' "$1"; }

# close_polls LOOKS: "E E2" of a polling loop's looks (prioapp's PRIOAPP_LOOKS): E counts its
# polls that began with a "not ready" after a poll whose last two looks (a "not ready", then
# the "done") surely came within NVT_BRIDGE_POLL_LOOK_US (600 us) of each other, as the shim saw
# them (its clock read inside each query: from before the first to after the second), E2 those
# of them with two "not ready" or more. Each of E begins a tentative wait; each of E2 makes it
# full. A busy machine's late wake-ups make fewer polls close: the test judges these.
close_polls() {
	awk '$1 == "look" { if ($4 != 0) { if (!nr++ && fast) e++; if (nr == 2 && fast) e2++; last = $2; next }
		if (nr) fast = $3 - last <= 600000; nr = 0 }
		END { print e + 0, e2 + 0 }' "$1"
}
# close_enough TAG: the polls of steps_app TAG's run that close_polls counts; fails if under 10.
close_enough() {
	local e
	e=$(close_polls "$WORK/$1.looks")
	[ "${e% *}" -ge 10 ] || die "$1: only ${e% *} polls after close looks, of $(grep -c '^launch' "$WORK/$1.log") launches"
	echo "$e"
}

# A loop that sleeps between its looks (300 us; steps of 100 us, so that its second look finds
# the step done): once one of its waits showed looks that close, each wait begins at its first
# "not ready", tentatively (its bridge capped at 900 us: a look that no other followed would
# hold the GPU that long at most), returned from at the next look, released at the next launch.
# Steps of 800 us: the second "not ready" makes the wait a full one (its next look and a linger
# could come after the cap: a second bridge, of the whole cap, behind the first). A loop whose looks come 3 ms apart begins none (holding the GPU from
# one look to the next would cost the lower task more than the switches). The waits after
# looks that close are counted from the loop's own looks (close_polls): a busy machine's late
# wake-up unteaches it for the next wait.
t_bridge_sleeping_poll_loop() {
	local n steps full e
	rm -f "$WORK/bridge.log"
	FAKECUDA_KERNEL_US=50 PRIOAPP_POLL=1 PRIOAPP_POLL_US=300 PRIOAPP_LOOKS=$WORK/sleep.looks NVTASKSET_BRIDGE_HOLD=0 \
		steps_app sleep --priority high
	n=$(caps "$WORK/bridge.log" 900000) e=$(close_enough sleep)
	steps=$(($(grep -c '^launch' "$WORK/sleep.log") / 2))
	[ $((n * 2)) -gt "${e% *}" ] || die "$n tentative bridges for ${e% *} waits after close looks: $(head -3 "$WORK/bridge.log")"
	[ "$(bridges)" -le $((2 * steps + 1)) ] || die "$(bridges) bridges for $steps steps"
	eq "$(bridge_words "$WORK/bridge.log")" "" "bridge lines"
	rm -f "$WORK/bridge.log"
	FAKECUDA_KERNEL_US=400 PRIOAPP_POLL=1 PRIOAPP_POLL_US=300 PRIOAPP_LOOKS=$WORK/long.looks NVTASKSET_BRIDGE_HOLD=0 \
		STEPS_LAUNCHES=100 steps_app long --priority high
	n=$(caps "$WORK/bridge.log" 900000) full=$(caps "$WORK/bridge.log" 50000000) e=$(close_enough long)
	[ $((n * 2)) -gt "${e% *}" ] && [ $((full * 2)) -gt "${e#* }" ] ||
		die "$n tentative and $full full bridges for ${e% *} waits of 800 us after close looks (${e#* } looked at twice)"
	eq "$(bridge_words "$WORK/bridge.log")" "" "bridge lines (800 us)"
	# A quick loop's steps of 800 us, made full as well, are measured for the held steps'
	# learner as any other (the second kernel begins no wait): most of its waits (a step whose
	# loop a busy machine kept from its CPU past the step's end begins none).
	rm -f "$WORK/bridge.log"
	FAKECUDA_KERNEL_US=400 PRIOAPP_POLL=1 PRIOAPP_POLL_US=0 NVTASKSET_BRIDGE_DEBUG=1 STEPS_LAUNCHES=100 \
		steps_app spin --priority high
	steps=$(sed -n 's/.*bridge: \([0-9]*\) waits.*/\1/p' "$WORK/spin.err")
	[ "${steps:-0}" -ge 10 ] || die "${steps:-no} waits: $(grep 'bridge: ' "$WORK/spin.err")"
	n=$(sed -n 's/.*steps measured: \([0-9]*\) released, \([0-9]*\) held.*/\1 \2/p' "$WORK/spin.err" | awk '{print $1 + $2}')
	[ $((${n:-0} * 2)) -gt "$steps" ] || die "${n:-no} steps measured of $steps waits: $(grep 'bridge: ' "$WORK/spin.err")"
	# Held (NVTASKSET_BRIDGE_HOLD=1), a bridge made full holds the next step's launches as the
	# tentative one would have: none of them releases it.
	rm -f "$WORK/bridge.log"
	FAKECUDA_KERNEL_US=400 PRIOAPP_POLL=1 PRIOAPP_POLL_US=300 PRIOAPP_LOOKS=$WORK/held.looks NVTASKSET_BRIDGE_HOLD=1 \
		STEPS_LAUNCHES=100 steps_app held --priority high
	e=$(close_enough held)
	n=$(awk '$1 == "bridge" { split($3, q, "="); split($4, c, "="); full = c[2] == 50000000 && prev == 900000; seq = q[2]
		prev = c[2]; if (full) made++ }
		$1 == "app" && full { split($4, r, "="); if (r[2] >= seq) bad++ }
		END { print made + 0, bad + 0 }' "$WORK/bridge.log")
	[ $((${n% *} * 2)) -gt "${e#* }" ] && [ "${n#* }" = 0 ] ||
		die "made full, held: '$n' (bridges, launches that released one; ${e#* } waits after close looks looked at twice)"
	rm -f "$WORK/bridge.log"
	FAKECUDA_KERNEL_US=50 PRIOAPP_POLL=1 PRIOAPP_POLL_US=3000 NVTASKSET_BRIDGE_HOLD=0 STEPS_LAUNCHES=60 \
		steps_app slow --priority high
	eq "$(bridges)" 0 "bridges of a loop whose looks come 3 ms apart"
}

# A loop that sleeps about a step's time once, then looks often (1.5 ms, then 100 us; steps of
# 4 ms), each bridge beside the step's last kernel (FAKECUDA_BRIDGE_BESIDE=1: it starts at once):
# the tentative bridge of its first look ends at its cap, 900 us after its start and unreleased,
# before the second look's "not ready" makes the wait full (the GPU switches away from the
# context meanwhile, as an H100's does). The bridge that makes it full is queued all the same and
# runs once the first ended, until the wait returned and the next launch released it (or, where
# a busy machine's host came back later than the linger, its linger ended it); nothing hangs, and
# every bridge but the last ended.
t_bridge_tentative_capped_before_full() {
	local f steps out full
	rm -f "$WORK/bridge.log"
	FAKECUDA_BRIDGE_BESIDE=1 FAKECUDA_KERNEL_US=2000 PRIOAPP_POLL=1 PRIOAPP_POLL_FIRST_US=1500 PRIOAPP_POLL_US=100 \
		NVTASKSET_BRIDGE_HOLD=0 NVTASKSET_BRIDGE_DEBUG=1 NVTASKSET_BRIDGE_TRACE=$WORK/tc STEPS_LAUNCHES=60 \
		steps_app capped --priority high
	f=$(find "$WORK" -maxdepth 1 -name 'tc.*')
	[ "$(wc -l <<<"$f")" = 1 ] && [ -s "$f" ] || die "trace files: $f"
	steps=$(($(grep -c '^launch' "$WORK/capped.log") / 2))
	# (GPU times are over 10^18: awk's doubles hold their differences only digit group by group)
	out=$(awk 'function ns(a, b, la, lb) { la = length(a); lb = length(b); if (la < 13 || lb != la) return b - a
			return (substr(b, 1, lb - 12) - substr(a, 1, la - 12)) * 1e12 + (substr(b, lb - 11) - substr(a, la - 11)) }
		FNR == NR { if ($1 == "bridge") { split($3, q, "="); split($4, c, "="); split($10, r, "=")
			cap[q[2]] = c[2]; released[q[2]] = r[2] } next }
		$1 == "bridge" { for (i = 2; i <= NF; i++) { split($i, kv, "="); v[kv[1]] = kv[2] }
			s = v["seq"]; end[s] = v["end"]; start[s] = v["start"]; stop[s] = v["stop"]; ret[s] = v["ret"]
			wait[s] = v["wait"]; rel[s] = v["rel"]; sret[s] = v["saw_ret"]; srel[s] = v["saw_rel"]; if (s > n) n = s }
		END { for (s = 1; s <= n; s++) {
			if (s < n && end[s] == "none") print "not ended: seq " s
			# (made full: the next seq, of the whole cap, queued before its release)
			if (cap[s] != 900000 || cap[s + 1] != 50000000 || released[s + 1] != s - 1) continue
			pairs++
			f = s + 1
			if (end[s] != "cap" || ns(start[s], stop[s]) != 900000 || srel[s] != 0)
				print "tentative " s ": end=" end[s] " after " ns(start[s], stop[s]) " ns, saw_rel=" srel[s]
			else if (f < n && ns(stop[s], start[f]) < 0)
				print "made full " f ": started " ns(stop[s], start[f]) " ns after " s " ended"
			# (at its cap only where the host released it 50 ms after it was queued or later: a
			# busy machine that stalled the loop)
			else if (f < n && end[f] == "cap" && (ns(start[f], stop[f]) != 50000000 || (rel[f] && rel[f] - wait[f] < 50000000)))
				print "made full " f ": end=cap after " ns(start[f], stop[f]) " ns, released " rel[f] - wait[f] " ns after queued"
			else if (f < n && end[f] == "linger" && (!(sret[f] > 0) || srel[f] != 0))
				print "made full " f ": end=linger saw_ret=" sret[f] " saw_rel=" srel[f]
			else if (f < n && end[f] != "cap" && end[f] != "linger" &&
				 (end[f] != "released" || !(sret[f] > 0) || ns(sret[f], srel[f]) < 0))
				print "made full " f ": end=" end[f] " saw_ret=" sret[f] " saw_rel=" srel[f]
		}
		if (!(ret[n] > 0)) print "the last wait did not return: seq " n
		print "pairs " pairs + 0 }' "$WORK/bridge.log" "$f")
	eq "$(grep -v '^pairs ' <<<"$out")" "" "tentative bridges ended at their cap, then made full"
	full=${out##*pairs }
	[ $((full * 3)) -gt "$steps" ] || die "$full tentative bridges made full after their cap for $steps steps"
	has "$(cat "$WORK/capped.err")" "; $full tentative polled waits made full"
	has "$(cat "$WORK/capped.err")" " $(grep -c 'end=cap' "$f") at the cap,"
	eq "$(bridge_words "$WORK/bridge.log")" "" "bridge lines"
	# Every look after a bridge made full, up to the next launch (the look that found the step
	# done among them), found it the last bridge, unreleased.
	out=$(awk '$1 == "bridge" { split($3, q, "="); split($4, c, "="); split($10, r, "=")
			full = c[2] == 50000000 && cap == 900000 && r[2] == q[2] - 2; seq = q[2]; cap = c[2]; made += full }
		$1 == "app" { full = 0 }
		$1 == "look" && full { looks++; split(substr($4, 9), f, "[:/,]")
			if (f[2] != seq || f[3] >= seq) print "released before its wait returned: " $0 }
		END { if (looks < made) print looks + 0 " looks after " made + 0 " bridges made full" }' "$WORK/bridge.log")
	eq "$out" "" "looks while a bridge made full holds"
}

# A thread whose current context changes between its looks (device 1's at every other look, the
# event device 0's; steps of 2 ms, so that its waits are made full, or begun full at a second
# look, even where a busy machine's sleeps run long): a bridge is queued only in the context it
# was made in, and stays on.
t_bridge_polled_across_contexts() {
	rm -f "$WORK/bridge.log"
	FAKECUDA_DEVICES=2 FAKECUDA_KERNEL_US=1000 PRIOAPP_POLL=swap PRIOAPP_POLL_US=300 NVTASKSET_BRIDGE_HOLD=0 \
		STEPS_LAUNCHES=100 steps_app swap --priority high
	! grep -q "launched in GPU\|launching the bridge failed" "$WORK/swap.err" || die "$(cat "$WORK/swap.err")"
	local steps=$(($(grep -c '^launch' "$WORK/swap.log") / 2))
	# (made full at a look in the bridge's own context: the next one, where this one is not)
	[ "$(caps "$WORK/bridge.log" 900000)" -gt 10 ] && [ $(($(caps "$WORK/bridge.log" 50000000) * 3)) -gt "$steps" ] ||
		die "$(caps "$WORK/bridge.log" 900000) tentative and $(caps "$WORK/bridge.log" 50000000) full bridges for $steps steps"
}

# A thread that polls two GPUs' events in turn (a request a millisecond, kernels of 500 us; its
# looks 50 us apart, and the later event polled alone at each request's end: a quick loop, which
# teaches the tentative first look): at most one wait a GPU a request, not one a look.
t_bridge_two_gpus_polled_in_turn() {
	local pid line
	trap 'touch "$WORK/two.stop"' EXIT
	PRIOAPP_POLL=twogpu FAKECUDA_DEVICES=2 NVTASKSET_BRIDGE_DEBUG=1 FAKECUDA_KERNEL_US=500 "$NVT" --no-mps \
		--priority high "$PRIOAPP" serve "$WORK/two.stop" "$WORK/two.log" 1000 2 2>"$WORK/two.err" &
	pid=$!
	wait_for 10 test -e "$WORK/two.log.ready"
	wait_for 20 requests_over_n "$WORK/two.log" 30
	touch "$WORK/two.stop"
	wait "$pid" || die "the service failed: $(cat "$WORK/two.err")"
	trap - EXIT
	line=$(grep 'bridge: ' "$WORK/two.err") || die "no report: $(cat "$WORK/two.err")"
	[ "$(sed -n 's/.*bridge: \([0-9]*\) waits.*/\1/p' <<<"$line")" -le $((2 * $(grep -c '^req ' "$WORK/two.log") + 2)) ] ||
		die "more waits than requests: $line ($(grep -c '^req ' "$WORK/two.log") requests)"
}
