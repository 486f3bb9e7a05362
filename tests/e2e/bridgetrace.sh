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
	# start, at once: the next bridge is queued behind it).
	bad=$(awk '$1 == "bridge" {
		for (i = 2; i <= NF; i++) { split($i, kv, "="); v[kv[1]] = kv[2] }
		if (!(v["wait"] > 0 && v["ret"] >= v["wait"])) print "host: " $0
		if (v["rel"] < v["ret"]) { if (v["rel"] || unreleased++) print "release: " $0 }
		if (v["seq"] != last + 1) print "seq: " $0
		if (v["end"] == "released" && !(v["saw_rel"] > 0 && v["stop"] > v["saw_rel"] && v["start"] > 0)) print "gpu: " $0
		if (v["end"] == "next" && !(v["saw_rel"] > 0 && v["stop"] == v["saw_rel"] && v["start"] > 0)) print "gpu (next): " $0
		if (v["end"] != "released" && v["end"] != "next") unended++
		last = v["seq"] }
		END { if (unended > 1) print unended " not ended" }' "$f")
	eq "$bad" "" "trace lines"
	line=$(grep 'bridge trace: ' "$WORK/trace.err") || die "no report: $(cat "$WORK/trace.err")"
	has "$line" "bridge trace: of $n bridges, $(grep -c 'end=released' "$f") ended released, $(grep -c 'end=next' "$f") released behind the next, 0 at the linger, 0 at the cap"
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
