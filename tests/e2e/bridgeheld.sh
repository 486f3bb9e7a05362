# Held steps (core/bridge.h, "Held steps" and "Held steps chained"; src/shim/shimbridge.c): a held
# bridge, the learner that chooses it, and the held bridges chained behind a held step's
# launches. Uses bridge.sh's helpers (steps_app, bridges): the suites are sourced into one shell.
# Sourced by tests/run-tests.sh: each t_NAME function is one test, run in a subshell under set -e.
# shellcheck shell=bash

# Held steps (core/bridge.h): a held bridge is not released by its own thread's launches, so the
# step queues behind it; the step's wait releases it. With NVTASKSET_BRIDGE_HOLD=1 every bridge
# is held.
t_bridge_held_steps() {
	local bad
	NVTASKSET_BRIDGE_DEBUG=1 NVTASKSET_BRIDGE_HOLD=1 steps_app held --priority high
	[ "$(bridges)" -gt 50 ] || die "only $(bridges) bridges"
	# Every launch after the first bridge leaves it unreleased (released is the seq before)...
	bad=$(awk '$1 == "bridge" { b = 1 } b && $1 == "app" { split($3, a, "="); split($4, r, "=")
		if (r[2] != a[2] - 1) print }' "$WORK/bridge.log")
	eq "$bad" "" "launches that released a held bridge"
	# ... and each wait releases it before the next bridge is queued.
	bad=$(awk '$1 == "bridge" { for (i = 2; i <= NF; i++) { split($i, kv, "="); v[kv[1]] = kv[2] }
		if (n && v["released"] != last) print; last = v["seq"]; n++ }' "$WORK/bridge.log")
	eq "$bad" "" "bridges queued before the last was released"
	# Each of those launches starts the held bridge's linger again (the word the kernel
	# watches moves by one at each), up to 1 ms after the wait returned (none chained: not
	# asked for).
	bad=$(awk '$1 == "bridge" { b = 1; for (i = 2; i <= NF; i++) if ($i !~ /^hspan_ns=/) continue
			else if ($i != "hspan_ns=1000000") print }
		b && $1 == "app" { split($8, c, "="); if (n && c[2] != last + 1) print; last = c[2]; n++ }
		END { if (n < 100) print n + 0 " launches" }' "$WORK/bridge.log")
	eq "$bad" "" "held launches that did not restart the linger"
	hasnt "$(grep -v '^nvtaskset: bridge:' "$WORK/held.err")" "nvtaskset:"
}

# chained: the bridges queued behind a launch (their wait had returned: returned = seq).
chained() { awk '$1 == "bridge" { for (i = 2; i <= NF; i++) { split($i, kv, "="); v[kv[1]] = kv[2] }
	if (v["returned"] == v["seq"]) n++ } END { print n + 0 }' "$WORK/bridge.log"; }

# Held steps chained (core/bridge.h; NVTASKSET_BRIDGE_REARM=1: from the start): a held step whose
# host is slower than its kernels (8 launches 100 us apart) gets a new held bridge behind a
# launch at least 100 us after the last, the last released as it is queued, each within the 1 ms
# held span of the step; the program's launches still leave the current one held. 0: none.
t_bridge_held_steps_chained() {
	local n bad
	NVTASKSET_BRIDGE_REARM=1 NVTASKSET_BRIDGE_DEBUG=1 NVTASKSET_BRIDGE_HOLD=1 PRIOAPP_GAP_US=100 STEPS_EVERY=8 \
		steps_app chained --priority high
	n=$(chained)
	[ "$n" -ge 10 ] || die "only $n bridges chained behind a launch: $(grep -c '^bridge' "$WORK/bridge.log") in all"
	bad=$(awk '$1 == "bridge" { for (i = 2; i <= NF; i++) { split($i, kv, "="); v[kv[1]] = kv[2] }
		if (n && v["released"] != last) print "queued before the last was released: " $0
		if (v["returned"] == v["seq"] && (v["hspan_ns"] > 1000000 || v["hspan_ns"] < 100000)) print "span: " $0
		if (v["returned"] != v["seq"] && (v["returned"] != v["seq"] - 1 || v["hspan_ns"] != 1000000)) print "wait: " $0
		last = v["seq"]; n++ }' "$WORK/bridge.log")
	eq "$bad" "" "bridge lines"
	bad=$(awk '$1 == "bridge" { b = 1 } b && $1 == "app" { split($3, a, "="); split($4, r, "=")
		if (r[2] != a[2] - 1) print }' "$WORK/bridge.log")
	eq "$bad" "" "launches that released a held bridge"
	# (a step whose first launch came 1 ms or more after its wait, on a busy machine, starts a
	# chain as a request's first does: the whole span)
	eq "$(sed -n "s/.*chained behind a launch: \([0-9]*\) in a step, \([0-9]*\) at.*/\1 \2/p" "$WORK/chained.err" |
		awk '{ print $1 + $2 }')" "$n" "chained bridges the report counts"
	has "$(cat "$WORK/chained.err")" "launch calls followed from the start"
	rm -f "$WORK/bridge.log"
	NVTASKSET_BRIDGE_REARM=0 NVTASKSET_BRIDGE_DEBUG=1 NVTASKSET_BRIDGE_HOLD=1 PRIOAPP_GAP_US=100 STEPS_EVERY=8 \
		steps_app unchained --priority high
	eq "$(chained)" 0 "bridges chained with NVTASKSET_BRIDGE_REARM=0"
	[ "$(bridges)" -gt 10 ] || die "only $(bridges) bridges unchained"
	has "$(cat "$WORK/unchained.err")" "launch calls not followed"
	hasnt "$(cat "$WORK/unchained.err")" "held steps seen"
	hasnt "$(grep -v '^nvtaskset: bridge:' "$WORK/unchained.err")" "nvtaskset:"
}

# enables: the lines of the fake's log (FAKECUDA_LOG, the bridge's log) that enabled
# cuLaunchKernel's callback (id 307), "BRIDGES_BEFORE PID TID" each.
enables() { awk '$1 == "bridge" { n++ } $1 == "enable" && $2 == "cbid=307" { split($3, p, "="); split($4, t, "=")
	print n + 0, p[2], t[2] }' "$WORK/bridge.log"; }

# The thread that enables the launch calls may still be inside the driver's enabling call when
# the program ends: its exit waits for it before the driver is torn down (the fake driver dies
# where its teardown meets a thread enabling: its first enable from a thread of the shim's here
# takes 800 ms, and the program is stopped as it begins).
t_bridge_follow_thread_ends_before_exit() {
	local pid
	rm -f "$WORK/fx.stop" "$WORK/bridge.log"
	FAKECUDA_LOG=$WORK/bridge.log FAKECUDA_ENABLE_DELAY_US=800000 FAKECUDA_KERNEL_US=200 \
		NVTASKSET_BRIDGE_HOLD=1 PRIOAPP_GAP_US=100 "$NVT" --no-mps --priority high "$PRIOAPP" batch \
		"$WORK/fx.stop" "$WORK/fx.log" 8 2>"$WORK/fx.err" &
	pid=$!
	wait_for 20 eval '[ -n "$(enables)" ]'
	touch "$WORK/fx.stop"
	wait "$pid" || die "the program exited $?: $(cat "$WORK/fx.err")"
	hasnt "$(cat "$WORK/fx.err")" "fakecuda"
	read -r _ pid tid <<<"$(enables)"
	[ "$tid" != "$pid" ] || die "enabled by the program's thread"
}

# By default the launch calls are followed (the driver asked to report cuLaunchKernel), and held
# steps chained, only once the held steps are steps a chain would shorten (4 launches or more
# behind the held bridge, 100 us or more of the host): 28 of a window of 32. Where every step is
# such, the 33rd wait ends the first window (the first wait ends no step): the calls are enabled
# once, by a thread that is not the program's, after 33 bridges, and the first chained bridge
# comes after that wait's. Another word says so and does the same; two waits at a step's end
# (the second no step) the same. With 0 they are never enabled; with 1 at the start, by the
# program's thread. Held steps of 2 launches are never such; nor are steps whose held bridge a
# graph replay releases after their first launch (their later launches are not behind it).
t_bridge_held_chained_once_seen() {
	local word first e
	for word in unset yes twice; do
		rm -f "$WORK/bridge.log"
		case $word in
		unset) FAKECUDA_LOG=$WORK/bridge.log NVTASKSET_BRIDGE_DEBUG=1 \
			NVTASKSET_BRIDGE_HOLD=1 PRIOAPP_GAP_US=100 STEPS_EVERY=8 STEPS_LAUNCHES=480 steps_app "$word" \
			--priority high ;;
		yes) FAKECUDA_LOG=$WORK/bridge.log NVTASKSET_BRIDGE_REARM=$word NVTASKSET_BRIDGE_DEBUG=1 \
			NVTASKSET_BRIDGE_HOLD=1 PRIOAPP_GAP_US=100 STEPS_EVERY=8 STEPS_LAUNCHES=480 steps_app "$word" \
			--priority high ;;
		twice) FAKECUDA_LOG=$WORK/bridge.log PRIOAPP_SYNC_TWICE=1 NVTASKSET_BRIDGE_DEBUG=1 \
			NVTASKSET_BRIDGE_HOLD=1 PRIOAPP_GAP_US=100 STEPS_EVERY=8 STEPS_LAUNCHES=480 steps_app "$word" \
			--priority high ;;
		esac
		[ "$(chained)" -ge 10 ] || die "$word: only $(chained) bridges chained of $(bridges)"
		first=$(awk '$1 == "bridge" { for (i = 2; i <= NF; i++) { split($i, kv, "="); v[kv[1]] = kv[2] }
			if (v["returned"] == v["seq"]) { print v["seq"]; exit } }' "$WORK/bridge.log")
		[ "$first" -ge 34 ] || die "$word: a bridge chained as bridge $first, before a window of held steps"
		[ "$(sed -n 's/.*launch calls followed from wait \([0-9]*\) on.*/\1/p' "$WORK/$word.err")" -ge 33 ] ||
			die "$word: the report: $(grep 'launch calls' "$WORK/$word.err")"
		e=$(enables)
		[ "$(wc -l <<<"$e")" = 1 ] || die "$word: cuLaunchKernel enabled: '$e'"
		read -r before pid tid <<<"$e"
		[ "$tid" != "$pid" ] || die "$word: enabled by the program's thread"
		if [ $word = unset ]; then
			[ "$before" -ge 33 ] || die "enabled after $before bridges"
		fi
	done
	hasnt "$(grep -v '^nvtaskset: bridge:' "$WORK/unset.err")" "nvtaskset:"
	has "$(cat "$WORK/yes.err")" "NVTASKSET_BRIDGE_REARM is neither 0 nor 1: held steps are chained once seen"
	for word in 0 1; do
		rm -f "$WORK/bridge.log"
		FAKECUDA_LOG=$WORK/bridge.log NVTASKSET_BRIDGE_REARM=$word \
			NVTASKSET_BRIDGE_HOLD=1 PRIOAPP_GAP_US=100 STEPS_EVERY=8 steps_app "w$word" --priority high
		e=$(enables)
		if [ $word = 0 ]; then
			eq "$e" "" "cuLaunchKernel enabled with NVTASKSET_BRIDGE_REARM=0"
		else
			read -r before pid tid <<<"$e"
			[ "$before" = 0 ] && [ "$tid" = "$pid" ] || die "REARM=1: cuLaunchKernel enabled: '$e'"
		fi
	done
	for word in two graph; do
		rm -f "$WORK/bridge.log"
		if [ $word = two ]; then
			FAKECUDA_LOG=$WORK/bridge.log NVTASKSET_BRIDGE_DEBUG=1 NVTASKSET_BRIDGE_HOLD=1 PRIOAPP_GAP_US=100 \
				STEPS_LAUNCHES=480 steps_app "$word" --priority high
		else
			FAKECUDA_LOG=$WORK/bridge.log PRIOAPP_GRAPH=1 NVTASKSET_BRIDGE_DEBUG=1 NVTASKSET_BRIDGE_HOLD=1 \
				PRIOAPP_GAP_US=100 STEPS_EVERY=8 STEPS_LAUNCHES=480 steps_app "$word" --priority high
		fi
		eq "$(chained)" 0 "$word: bridges chained"
		[ "$(bridges)" -gt 40 ] || die "$word: only $(bridges) bridges"
		eq "$(enables)" "" "$word: cuLaunchKernel enabled"
		has "$(cat "$WORK/$word.err")" "launch calls not followed"
		grep -q "GPU slot 0: [0-9]* held steps seen; a chain would have shortened at most 0 of a window of 32" \
			"$WORK/$word.err" || die "$word: the report: $(grep 'held steps seen' "$WORK/$word.err")"
	done
}

# A bridge chained behind a launch that the driver refuses (FAKECUDA_BRIDGE_FAIL_CHAINED): the
# bridge is turned off for the process, said once; the program goes on unbridged to its end (no
# bridge after the refused one, its launches and waits made).
t_bridge_chained_launch_refused() {
	FAKECUDA_BRIDGE_FAIL_CHAINED=3 NVTASKSET_BRIDGE_REARM=1 NVTASKSET_BRIDGE_HOLD=1 PRIOAPP_GAP_US=100 \
		STEPS_EVERY=8 steps_app refused --priority high
	eq "$(grep -c 'launching the bridge failed (error 701)' "$WORK/refused.err")" 1 "warnings of the refused bridge"
	eq "$(chained)" 2 "bridges chained before the refused one"
	[ "$(grep -c '^launch' "$WORK/refused.log")" -gt 200 ] || die "the program stopped early"
	# (its launches still log the words after the last bridge: 50 launches are over 6 steps)
	[ "$(awk '$1 == "bridge" { n = 0 } $1 == "app" { n++ } END { print n + 0 }' "$WORK/bridge.log")" -gt 50 ] ||
		die "bridges went on after the refused one: $(tail -3 "$WORK/bridge.log")"
}

# A request's first step (requests of 4 steps, its first launch 2 ms after the wait before it
# returned, the chain over) starts a chain of its own behind that launch: the whole held span;
# its later launches chain within it, the first 250 us on or later.
t_bridge_held_request_starts_chain() {
	local fresh
	NVTASKSET_BRIDGE_REARM=1 NVTASKSET_BRIDGE_DEBUG=1 NVTASKSET_BRIDGE_HOLD=1 PRIOAPP_GAP_US=100 \
		PRIOAPP_IDLE_US=2000 STEPS_EVERY=8 STEPS_LAUNCHES=400 steps_app requests --priority high
	fresh=$(awk '$1 == "bridge" { for (i = 2; i <= NF; i++) { split($i, kv, "="); v[kv[1]] = kv[2] }
		if (v["returned"] == v["seq"] && v["hspan_ns"] == 1000000) n++ } END { print n + 0 }' "$WORK/bridge.log")
	[ "$fresh" -ge 8 ] || die "only $fresh requests' first steps chained: $(grep -c '^bridge' "$WORK/bridge.log") bridges"
	has "$(cat "$WORK/requests.err")" "at a request's start"
	grep -q "chained behind a launch: [0-9]* in a step, $fresh at a request's start" "$WORK/requests.err" ||
		die "the report: $(grep 'chained behind' "$WORK/requests.err")"
	[ "$(chained)" -gt "$fresh" ] || die "no bridge chained inside a request's steps"
	# Chained again no sooner than 250 us after it began (its context's switch-in, then 100 us):
	# what is left of the span then is 750 us at most.
	bad=$(awk '$1 == "bridge" { for (i = 2; i <= NF; i++) { split($i, kv, "="); v[kv[1]] = kv[2] }
		if (v["returned"] != v["seq"]) { fresh = 0; next }
		if (fresh && v["hspan_ns"] > 750000) print; fresh = v["hspan_ns"] == 1000000 }' "$WORK/bridge.log")
	eq "$bad" "" "bridges chained within 250 us of a request's chain"
}

# Another thread's launches release a held bridge (its kernels must not wait for this
# thread's next step): a side thread launching every 3 ms beside steps of ~0.4 ms. (Its launch
# may release the next bridge too, published by a wait before its kernels are queued.)
t_bridge_held_released_by_other_threads() {
	local owner bad
	NVTASKSET_BRIDGE_HOLD=1 PRIOAPP_SIDE_US=3000 steps_app side --priority high
	# The steps' thread: the one whose launches left a bridge held.
	owner=$(awk '$1 == "bridge" { b = 1 } b && $1 == "app" { split($3, a, "="); split($4, r, "=")
		split($6, t, "="); if (r[2] == a[2] - 1) print t[2] }' "$WORK/bridge.log" | sort -u)
	[ "$(wc -w <<<"$owner")" = 1 ] || die "threads whose launches left a bridge held: '$owner'"
	bad=$(awk -v owner="$owner" '$1 == "bridge" { b = 1 } b && $1 == "app" { split($3, a, "=")
		split($4, r, "="); split($6, t, "="); if (t[2] != owner) { n++; if (r[2] < a[2]) print } }
		END { if (n < 10) print n + 0 " launches of the side thread" }' "$WORK/bridge.log")
	eq "$bad" "" "the side thread's launches that left a held bridge unreleased"
	# Only the owner's launches restart the held bridge's linger: no more restarts than its
	# launches (fewer where a wait of a slow machine was not bridged), and the side thread's
	# launches find the word no further than one past where the owner's last left it (an
	# owner's launch between its store and its log line; behind it where the side thread read
	# the word before the owner's last stores and wrote its line after them, on a busy machine).
	bad=$(awk -v owner="$owner" '$1 == "bridge" { b = 1 } b && $1 == "app" { split($6, t, "=")
		split($8, c, "="); if (t[2] == owner) { n++; last = c[2] }
		else if (c[2] > last + 1) print "side: " $0
		if (c[2] > max) max = c[2] }
		END { if (max > n || max < n / 2) print max + 0 " restarts for " n + 0 " launches of the owner" }' "$WORK/bridge.log")
	eq "$bad" "" "restarts of the held bridge's linger"
	hasnt "$(cat "$WORK/side.err")" "nvtaskset:"
}

# By default whether a bridge is held is learnt from the steps: where released steps pay (the
# fake's FAKECUDA_DRY_US: a step whose first launch finds its bridge released waits 10 ms more,
# as a step whose context runs dry beside a batch) most bridges end up held; where held steps
# pay (FAKECUDA_HELD_US), only three of the first and the tries (ever further apart) are; the
# debug report counts both. (10 ms: far above a busy machine's scheduling delays.)
t_bridge_hold_learnt() {
	local n held rep
	FAKECUDA_DRY_US=10000 NVTASKSET_BRIDGE_DEBUG=1 steps_app dry --priority high
	n=$(bridges)
	held=$(awk '$1 == "bridge" { b = 1 } b && $1 == "app" { split($3, a, "="); split($4, r, "=")
		if (r[2] != a[2]) h[a[2]] = 1 } END { print length(h) }' "$WORK/bridge.log")
	rep=$(grep "bridges held" "$WORK/dry.err") || die "no report of held bridges: $(cat "$WORK/dry.err")"
	[ "$held" -gt $((n / 2)) ] || die "$held of $n bridges held where released steps paid 10 ms: $rep"
	# (the last bridge held has no launch after it)
	[[ $rep == *" $held bridges held"* || $rep == *" $((held + 1)) bridges held"* ]] ||
		die "the report's held bridges, $held launched behind: $rep"
	rm -f "$WORK/bridge.log"
	FAKECUDA_HELD_US=10000 NVTASKSET_BRIDGE_DEBUG=1 steps_app even --priority high
	n=$(bridges)
	held=$(awk '$1 == "bridge" { b = 1 } b && $1 == "app" { split($3, a, "="); split($4, r, "=")
		if (r[2] != a[2]) h[a[2]] = 1 } END { print length(h) }' "$WORK/bridge.log")
	rep=$(grep "bridges held" "$WORK/even.err") || die "no report of held bridges: $(cat "$WORK/even.err")"
	# (after the first 8, three held, alternating, then the tries)
	[ "$held" -ge 3 ] && [ "$held" -le $((n / 16 + 4)) ] || die "$held of $n bridges held where held steps paid 10 ms: $rep"
	# An unknown word is said, and learnt.
	rm -f "$WORK/bridge.log"
	NVTASKSET_BRIDGE_HOLD=yes steps_app word --priority high
	has "$(cat "$WORK/word.err")" "NVTASKSET_BRIDGE_HOLD is neither 0 nor 1"
}

# One step on two GPUs (a launch on GPU 0, one on GPU 1, a wait on each in turn): each GPU's waits
# are bridged on that GPU, in a context of its own (one module each), its bridge released by
# that GPU's next launch and not by the other GPU's wait (a step on GPU 0 finds its bridge still
# on when GPU 1's wait has come between). A held bridge (the default's learner holds GPU 1's)
# ends when its thread waits on the other GPU: its step there is queued and runs meanwhile. The
# fake refuses a bridge kernel launched in another GPU's context.
t_bridge_two_gpus_one_step() {
	local pid bad d how
	export FAKECUDA_LOG=$WORK/cuda.log FAKECUDA_STALE_ABORT=1 FAKECUDA_DEVICES=2
	for how in released default; do
		rm -f "$WORK/cuda.log" "$WORK/bridge.log"
		if [ $how = released ]; then
			NVTASKSET_BRIDGE_HOLD=0 PRIOAPP_SPMD=1 STEPS_LAUNCHES=300 steps_app $how --priority high
		else
			PRIOAPP_SPMD=1 STEPS_LAUNCHES=300 steps_app $how --priority high
		fi
		pid=$(sed -n 's/^bridge pid=\([0-9]*\) .*/\1/p' "$WORK/bridge.log" | sort -u)
		eq "$(grep -c "^module pid=$pid\$" "$WORK/cuda.log")" 2 "bridge modules loaded ($how)"
		for d in 0 1; do
			[ "$(grep -c "^bridge .* dev=$d\$" "$WORK/bridge.log")" -gt 100 ] ||
				die "$how, GPU $d: $(grep -c "^bridge .* dev=$d\$" "$WORK/bridge.log") bridges"
		done
		# Waits on GPU 0: GPU 1's last bridge released.
		bad=$(awk '$1 == "wait" && $3 == "dev=0" && match($4, /1:[0-9]+\/[0-9]+\//) {
			split(substr($4, RSTART + 2, RLENGTH - 3), sr, "/"); if (sr[2] + 0 < sr[1] + 0) print }' \
			"$WORK/bridge.log")
		eq "$bad" "" "$how: waits on GPU 0 while GPU 1's bridge holds its step"
		[ "$(grep -c '^wait .* dev=0 bridges=.*1:' "$WORK/bridge.log")" -gt 100 ] || die "$how: too few waits"
		hasnt "$(cat "$WORK/$how.err")" "nvtaskset: warning"
		hasnt "$(cat "$WORK/$how.err")" "fakecuda:"
		[ $how = released ] || continue
		for d in 0 1; do
			bad=$(awk -v d="$d" '$1 == "bridge" && $NF == "dev=" d {
				for (i = 2; i <= NF; i++) { split($i, kv, "="); v[kv[1]] = kv[2] }
				if (n && (v["seq"] != last + 1 || v["returned"] != last || v["released"] != last)) print "words: " $0
				last = v["seq"]; n++ }
				$1 == "app" && $(NF - 1) == "dev=" d {
				for (i = 2; i <= NF; i++) { split($i, kv, "="); v[kv[1]] = kv[2] }
				if (v["released"] != v["seq"]) print "unreleased: " $0
				if (v["seq"] && !(v["seq"] in first)) { first[v["seq"]] = 1
					if (v["was"] == v["seq"]) print "released before its GPU'"'"'s launch: " $0 } }' \
				"$WORK/bridge.log")
			eq "$bad" "" "GPU $d's bridges"
		done
	done
}
