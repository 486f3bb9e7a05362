# The bridge's trace (NVTASKSET_BRIDGE_TRACE; src/shim/shimbridge.c): each bridge's host times
# and the record its kernel wrote as it ended, with the fake driver. steps_app, copy_app, bridges
# and copies are bridge.sh's.
# Sourced by tests/run-tests.sh: each t_NAME function is one test, run in a subshell under set -e.
# shellcheck shell=bash

# NVTASKSET_BRIDGE_TRACE=PATH: at exit the shim writes PATH.PID, a new file: each bridge with the
# host's times in order and the record its kernel wrote as it ended (the fake driver writes it at
# the first launch after the release), and each copy by its kernel with its start; the report
# says how they ended. A trace it cannot write is said, and the task runs on.
t_bridge_trace() {
	local f n bad line
	NVTASKSET_BRIDGE_TRACE=$WORK/tr steps_app trace --priority high
	f=$(find "$WORK" -maxdepth 1 -name 'tr.*')
	[ "$(wc -l <<<"$f")" = 1 ] && [ -s "$f" ] || die "trace files: $f"
	n=$(grep -c '^bridge ' "$f")
	eq "$n" "$(bridges)" "bridges traced"
	# Each bridge: queued, returned, released in that order, and (but the last) ended released
	# by its kernel's record, which saw the release (a held one, released by the next wait's
	# start, at once: the next bridge is queued behind it), or, where a busy machine's host came
	# back later than the linger, at its linger, having seen the return and no release.
	bad=$(awk '$1 == "bridge" {
		for (i = 2; i <= NF; i++) { split($i, kv, "="); v[kv[1]] = kv[2] }
		if (!(v["wait"] > 0 && v["ret"] >= v["wait"])) print "host: " $0
		if (v["rel"] < v["ret"]) { if (v["rel"] || unreleased++) print "release: " $0 }
		if (v["seq"] != last + 1) print "seq: " $0
		if (v["end"] == "released" && !(v["saw_rel"] > 0 && v["stop"] > v["saw_rel"] && v["start"] > 0)) print "gpu: " $0
		if (v["end"] == "next" && !(v["saw_rel"] > 0 && v["stop"] == v["saw_rel"] && v["start"] > 0)) print "gpu (next): " $0
		if (v["end"] == "linger" && !(v["saw_ret"] > 0 && v["saw_rel"] == 0 && v["stop"] > v["saw_ret"])) print "gpu (linger): " $0
		if (v["end"] != "released" && v["end"] != "next" && v["end"] != "linger") unended++
		last = v["seq"] }
		END { if (unended > 1) print unended " not ended" }' "$f")
	eq "$bad" "" "trace lines"
	line=$(grep 'bridge trace: ' "$WORK/trace.err") || die "no report: $(cat "$WORK/trace.err")"
	has "$line" "bridge trace: of $n bridges, $(grep -c 'end=released' "$f") ended released, $(grep -c 'end=next' "$f") released behind the next, $(grep -c 'end=linger' "$f") at the linger, 0 at the cap"
	has "$line" "in $f"
	# Two waits in a row: the second's start releases the first's bridge and queues its own
	# behind it, which ends it at once (end=next: stopped as it saw the release).
	NVTASKSET_BRIDGE_TRACE=$WORK/trt PRIOAPP_SYNC_TWICE=1 steps_app trtwice --priority high
	f=$(find "$WORK" -maxdepth 1 -name 'trt.*')
	bad=$(awk '$1 == "bridge" {
		for (i = 2; i <= NF; i++) { split($i, kv, "="); v[kv[1]] = kv[2] }
		if (v["end"] == "next" && !(v["saw_rel"] > 0 && v["stop"] == v["saw_rel"])) print "gpu (next): " $0
		n[v["end"]]++ }
		END { if (n["next"] < 20) print n["next"] + 0 " next, " n["released"] + 0 " released" }' "$f")
	eq "$bad" "" "bridges ended behind the next"
	has "$(cat "$WORK/trtwice.err")" "$(grep -c 'end=next' "$f") released behind the next"
	# Steps that replay a graph: the host's first call after a replay is traced, after the
	# release (the replay's own) and at most as late as the next wait.
	NVTASKSET_BRIDGE_TRACE=$WORK/trg PRIOAPP_GRAPH=1 steps_app trgraph --priority high
	f=$(find "$WORK" -maxdepth 1 -name 'trg.*')
	bad=$(awk '$1 == "bridge" {
		for (i = 2; i <= NF; i++) { split($i, kv, "="); v[kv[1]] = kv[2] }
		s = v["seq"]; call[s] = v["call"]; rel[s] = v["rel"]; wait[s] = v["wait"]; if (s > n) n = s }
		END { for (s = 1; s <= n; s++) if (call[s] > 0) {
			called++
			if (call[s] < rel[s] || (s < n && call[s] > wait[s + 1])) print "call: seq " s " " call[s] " rel " rel[s] " next wait " wait[s + 1] }
		if (called < 20) print called + 0 " calls traced" }' "$f")
	eq "$bad" "" "calls after a replay in the trace"
	# Copies by the kernel: each queued and started, as many as the fake driver ran.
	NVTASKSET_BRIDGE_TRACE=$WORK/trc copy_app trcopy 8 pinned --priority high
	f=$(find "$WORK" -maxdepth 1 -name 'trc.*')
	eq "$(grep -c '^copy ' "$f")" "$(copies trcopy copy)" "copies traced"
	[ "$(copies trcopy copy)" -gt 10 ] || die "$(copies trcopy copy) copies"
	bad=$(awk '$1 == "copy" { split($3, q, "="); split($4, s, "="); if (!(q[2] > 0 && s[2] >= q[2])) print }' "$f")
	eq "$bad" "" "copy lines"
	# Processes that made no bridge (one that asked the GPU's SM count and waited for nothing,
	# a shell using no CUDA) write no trace.
	mkdir "$WORK/sh"
	NVTASKSET_BRIDGE_TRACE=$WORK/sh/tr "$NVT" --no-mps --priority high sh -c '"$1" info && exit 0' sh "$APP" \
		>"$WORK/sh.out" 2>"$WORK/sh.err" || die "the task failed: $(cat "$WORK/sh.err")"
	eq "$(find "$WORK/sh" -type f | wc -l)" 0 "traces of processes that made no bridge"
	NVTASKSET_BRIDGE_TRACE=$WORK/none/tr steps_app notrace --priority high
	has "$(cat "$WORK/notrace.err")" "cannot write the bridge's trace to $WORK/none/tr."
	# A path longer than the shim keeps: said at start, no trace, the task runs on.
	NVTASKSET_BRIDGE_TRACE=$WORK/$(printf 'x%.0s' $(seq 4100)) steps_app longtrace --priority high
	has "$(cat "$WORK/longtrace.err")" "NVTASKSET_BRIDGE_TRACE is too long: no trace"
	hasnt "$(cat "$WORK/longtrace.err")" "bridge trace: "
}

# ns(a, b): GPU time b less GPU time a, in ns (GPU times are over 10^18: awk's doubles hold their
# differences only digit group by group).
GPU_NS_AWK='function ns(a, b, la, lb) { la = length(a); lb = length(b); if (la < 13 || lb != la) return b - a
	return (substr(b, 1, lb - 12) - substr(a, 1, la - 12)) * 1e12 + (substr(b, lb - 11) - substr(a, la - 11)) }'

# A bridge whose next launch comes after its linger ends there on the GPU, unreleased: its kernel
# counts the linger from when it saw the shim say that its wait returned (w[0], as the wait
# returns). Requests of four steps, the host idle 2 ms after each request (PRIOAPP_IDLE_US), its
# steps back to back: the waits teach the whole linger (3 of 4 followed at once), and each
# request's last bridge, released by the host 2 ms after its wait returned, ended at its linger:
# the trace says "linger", with the return seen, no release, and its end the linger after the
# return (the fake's GPU ends it exactly there); bridges released soon after their return (most)
# ended released. The report counts them.
t_bridge_trace_linger() {
	local f bad line
	NVTASKSET_BRIDGE_HOLD=0 NVTASKSET_BRIDGE_TRACE=$WORK/tl PRIOAPP_IDLE_US=2000 STEPS_LAUNCHES=160 \
		steps_app linger --priority high
	f=$(find "$WORK" -maxdepth 1 -name 'tl.*')
	[ "$(wc -l <<<"$f")" = 1 ] && [ -s "$f" ] || die "trace files: $f"
	bad=$(awk "$GPU_NS_AWK"'
		FNR == NR { if ($1 == "bridge") { split($3, q, "="); split($5, l, "="); linger[q[2]] = l[2] } next }
		$1 == "bridge" { for (i = 2; i <= NF; i++) { split($i, kv, "="); v[kv[1]] = kv[2] }
			s = v["seq"]; n++
			if (v["end"] == "linger") {
				lingered++
				if (!(v["saw_ret"] > 0) || v["saw_rel"] != 0 || ns(v["saw_ret"], v["stop"]) != linger[s] + 0)
					print "linger: " $0 " (linger_ns " linger[s] ")"
			} else if (v["end"] == "released" || v["end"] == "next") {
				released++
			}
			# (host times: a release 1.5 ms or more after the return, by the idle host: ended before)
			if (v["ret"] > 0 && v["rel"] - v["ret"] >= 1500000) { idle++; if (v["end"] != "linger") print "idle: " $0 } }
		END { if (idle < 8) print idle + 0 " bridges released 1.5 ms or more after their return"
			if (released * 2 < n) print released + 0 " of " n " bridges ended released" }' "$WORK/bridge.log" "$f")
	eq "$bad" "" "bridges that ended at their linger"
	line=$(grep 'bridge trace: ' "$WORK/linger.err") || die "no report: $(cat "$WORK/linger.err")"
	has "$line" " $(grep -c 'end=linger' "$f") at the linger, 0 at the cap"
}

# A held bridge's linger starts again at each launch of its thread, up to 1 ms after its wait
# returned (core/bridge.h, "Held steps": w[6] moves, the held span): held steps of 16 launches 100
# us apart (1.5 ms of the host, none chained) keep their bridge on past the linger, and it ends
# at the held span, 1 ms after the return; a busy machine's launch later than the linger after the
# one before ends it earlier, never before the linger after the return nor after the span. (A
# shim whose launches did not move the word: every one ended the linger after the return.)
t_bridge_held_linger_restarts() {
	local f out
	NVTASKSET_BRIDGE_HOLD=1 NVTASKSET_BRIDGE_REARM=0 NVTASKSET_BRIDGE_TRACE=$WORK/th PRIOAPP_GAP_US=100 \
		STEPS_EVERY=16 STEPS_LAUNCHES=320 steps_app hl --priority high
	f=$(find "$WORK" -maxdepth 1 -name 'th.*')
	[ "$(wc -l <<<"$f")" = 1 ] && [ -s "$f" ] || die "trace files: $f"
	out=$(awk "$GPU_NS_AWK"'
		FNR == NR { if ($1 == "bridge") { split($3, q, "="); split($5, l, "="); linger[q[2]] = l[2] } next }
		$1 == "bridge" && $NF == "way=held" { for (i = 2; i <= NF; i++) { split($i, kv, "="); v[kv[1]] = kv[2] }
			n++
			if (v["end"] != "linger") next
			d = ns(v["saw_ret"], v["stop"])
			if (!(v["saw_ret"] > 0) || v["saw_rel"] != 0 || d < linger[v["seq"]] || d > 1000000) print "linger: " $0
			else if (d == 1000000) span++ }
		END { print "span " span + 0 " of " n + 0 }' "$WORK/bridge.log" "$f")
	eq "$(grep -v '^span ' <<<"$out")" "" "held bridges that ended at their linger"
	out=${out##*span }
	[ "${out#* of }" -ge 10 ] && [ "${out% of *}" -ge 3 ] || die "$out held bridges ended at the held span"
}
