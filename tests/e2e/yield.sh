# How a lower task yields to a higher one in its own shim (docs/priorities.md, "Yielding"):
# its launches wait while a higher task runs a request, its work in flight stays bounded, and
# nothing waits for a task that is gone. The fake driver gives launches time on their streams
# (FAKECUDA_KERNEL_US, tests/fake/fakestream.c); prioapp is a service and a batch job.
# Sourced by tests/run-tests.sh: each t_NAME function is one test, run in a subshell under set -e.
# shellcheck shell=bash

PRIOAPP=$T/prioapp

# requests FILE: the requests a service's log (prioapp serve) shows so far.
requests() { if [ -e "$1" ]; then awk '$1 == "req" {n++} END {print n + 0}' "$1"; else echo 0; fi; }
# requests_over FILE N: its log shows more than N requests.
requests_over() { [ "$(requests "$1")" -gt "$2" ]; }
# serve_and_batch TAG HIGH_ARGS -- LOW_ARGS: starts a service (a request of 4 launches every
# $PERIOD_US, default 20 ms) and a batch job beside it, lets them run for as many requests
# after the batch's first launch as an idle machine runs in 1 s (50 at 20 ms, at least 20), stops
# both; their logs in $WORK/TAG.serve and $WORK/TAG.batch. HELD: -l --json while they ran,
# HELD_AFTER: CLOCK_MONOTONIC ns after it returned.
serve_and_batch() {
	local tag=$1 hi lo high=() low=() first want
	shift
	while [ "$1" != "--" ]; do high+=("$1"); shift; done
	shift
	low=("$@")
	rm -f "$WORK/$tag.stop"
	FAKECUDA_KERNEL_US=1000 ${HI_PFX:-} "$NVT" --no-mps "${high[@]}" "$PRIOAPP" serve "$WORK/$tag.stop" \
		"$WORK/$tag.serve" "${PERIOD_US:-20000}" 4 2>"$WORK/$tag.serve.err" &
	hi=$!
	wait_for 10 test -e "$WORK/$tag.serve.ready"
	FAKECUDA_KERNEL_US=500 "$NVT" --no-mps "${low[@]}" "$PRIOAPP" batch "$WORK/$tag.stop" \
		"$WORK/$tag.batch" 2>"$WORK/$tag.batch.err" &
	lo=$!
	wait_for 10 test -e "$WORK/$tag.batch.ready"
	first=$(requests "$WORK/$tag.serve")
	want=$((1000000 / ${PERIOD_US:-20000}))
	wait_for 10 requests_over "$WORK/$tag.serve" $((first + (want > 20 ? want : 20)))
	HELD=$(timeout "$HANG" "$NVT" -l --json)
	HELD_AFTER=$(python3 -c 'import time; print(time.monotonic_ns())')
	touch "$WORK/$tag.stop"
	wait "$hi" || die "the service failed: $(cat "$WORK/$tag.serve.err")"
	wait "$lo" || die "the batch job failed: $(cat "$WORK/$tag.batch.err")"
}
# let_through TAG: batch launches that entered after a request began and returned before its
# work on the GPU was done (the gate let them through), and requests seen; "N of M".
let_through() {
	python3 - "$WORK/$1.serve" "$WORK/$1.batch" <<'PY'
import sys
reqs = [tuple(map(int, l.split()[1:3])) for l in open(sys.argv[1]) if l.startswith("req ")]
launches = [tuple(map(int, l.split()[1:3])) for l in open(sys.argv[2]) if l.startswith("launch ")]
t0 = launches[0][0]
reqs = [r for r in reqs if r[0] > t0]
inside = [(e - b, r - e, f - b) for e, r in launches for b, f in reqs if e > b and r < f]
for x in inside:
    print("let through: entered %d us into a request of %d us, returned %d us later" % (x[0] / 1000, x[2] / 1000, x[1] / 1000), file=sys.stderr)
print("%d of %d" % (len(inside), len(reqs)))
PY
}
# launches_over FILE N: a batch job's log (prioapp batch) shows more than N launches.
launches_over() { [ "$(grep -c '^launch' "$1")" -gt "$2" ]; }
# in_request PID: -l --json says task PID's requests are busy (a request launched, not yet done).
in_request() {
	timeout "$HANG" "$NVT" -l --json | python3 -c 'import json, sys
t = [t for t in json.load(sys.stdin)["tasks"] if t["pid"] == int(sys.argv[1])]
sys.exit(not (t and t[0]["gpus"][0].get("requests", {}).get("busy")))' "$1"
}
# most_in_flight TAG: the largest count of the batch job's launches in flight after a launch.
most_in_flight() { awk '$1 == "launch" && $4 > m {m = $4} END {print m + 0}' "$WORK/$1.batch"; }

# requests_of PID: "LAUNCHES COUNT BUSY" of task PID's first GPU, as -l --json says;
# requests_of_gpu PID I: of its GPU I (in -l's order).
requests_of() { requests_of_gpu "$1" 0; }
requests_of_gpu() {
	timeout "$HANG" "$NVT" -l --json | python3 -c 'import json, sys
t = [t for t in json.load(sys.stdin)["tasks"] if t["pid"] == int(sys.argv[1])]
g = t[0]["gpus"][int(sys.argv[2])] if t and len(t[0]["gpus"]) > int(sys.argv[2]) else {}
r = g.get("requests", {})
print(g.get("launches"), r.get("count"), r.get("busy"))' "$1" "$2"
}

# A tracked task's request ends at a synchronisation, and only there: the return of another
# call its shim follows (cuLaunchKernelEx, which every task follows to find cooperative grids)
# ends none. Five launches without a synchronisation are one request, still busy, whichever
# call launched them.
t_yield_request_ends_only_at_sync() {
	local ex pid got
	for ex in 0 1; do
		rm -f "$WORK/stop"
		FAKEAPP_EX=$ex "$NVT" --no-mps --priority high -c 0-32 "$APP" launch-wait 5 "$WORK/stop" \
			>"$WORK/out.$ex" 2>&1 &
		pid=$!
		wait_for 10 eval '[ "$(requests_of '"$pid"' | cut -d" " -f1)" == 5 ]'
		got=$(requests_of "$pid")
		touch "$WORK/stop"
		wait "$pid" || die "task exited $?: $(cat "$WORK/out.$ex")"
		eq "$got" "5 1 True" "launches, requests and busy (FAKEAPP_EX=$ex)"
	done
}

# serve_some TAG VAR=VALUE...: a high service (prioapp serve: 2 launches every 5 ms, kernels of
# 500 us) with the variables given, run until its log shows more than 20 requests, then stopped;
# sets N (its requests), GOT (-l's "LAUNCHES COUNT BUSY" of its first GPU, read while it ran) and
# GOT2 (the same of its GPU 1, with FAKECUDA_DEVICES=2). Fails the test where the service failed.
serve_some() {
	local tag=$1 pid
	shift
	rm -f "$WORK/$tag.stop" "$WORK/$tag.serve.ready"
	env "$@" FAKECUDA_KERNEL_US=500 "$NVT" --no-mps --priority high \
		"$PRIOAPP" serve "$WORK/$tag.stop" "$WORK/$tag.serve" 5000 2 2>"$WORK/$tag.err" &
	pid=$!
	wait_for 10 test -e "$WORK/$tag.serve.ready"
	wait_for 20 requests_over "$WORK/$tag.serve" 20
	N=$(requests "$WORK/$tag.serve")
	GOT=$(requests_of "$pid")
	GOT2=$(requests_of_gpu "$pid" 1)
	touch "$WORK/$tag.stop"
	wait "$pid" || die "the service failed ($*): $(cat "$WORK/$tag.err")"
}

# A task that waits for its requests by host functions (as JAX does: cuLaunchHostFunc[_ptsz] or
# cuStreamAddCallback, then no driver call) ends a request when its host function runs, and its
# own function still runs; not where it launched again before the function ran (ahead: its work
# goes on), nor where the stream may be being captured into a graph (capture: the call is left
# alone, a graph's host node would run the shim's record again at every replay; the fake answers
# the legacy stream's query as the driver does while another stream captures), nor where a
# callback gets an error status (callbackerr: the work failed).
t_yield_request_ends_at_host_function() {
	local form n got capturing status
	trap 'touch "$WORK/hf.stop"' EXIT
	for form in 1 ptsz callback ahead capture callbackerr; do
		capturing=0 status=0
		[ $form != capture ] || capturing=1
		[ $form != callbackerr ] || status=999
		serve_some hf PRIOAPP_HOSTFN="${form/capture/1}" FAKECUDA_CAPTURING=$capturing FAKECUDA_CALLBACK_STATUS=$status
		n=$N got=$GOT
		if [ $form = capture ] || [ $form = callbackerr ]; then
			# (-l counts requests begun: one, never ended)
			[ "$(cut -d' ' -f2 <<<"$got")" -le 1 ] ||
				die "$form: requests ended by host functions: -l says '$got' after $n"
		elif [ $form = ahead ]; then
			# (a host function may run before the launch behind it is made, on a busy machine)
			[ "$(($(cut -d' ' -f2 <<<"$got") * 2))" -lt "$n" ] ||
				die "$form: requests ended by host functions: -l says '$got' after $n"
		else
			# A request begins only once the one before ended: as many as the service finished.
			[ "$(cut -d' ' -f2 <<<"$got")" -ge "$n" ] ||
				die "$form: -l says '$got' (launches, requests, busy) after $n requests"
		fi
	done
	trap - EXIT
}

# A task that waits for its requests by polling an event (cuEventRecord[_ptsz|WithFlags] after its
# launches, then cuEventQuery until it answers success) ends a request when a query finds the
# event done; not where the event was recorded before its last launch (early: the query says
# nothing of that launch's work), so the shim's note of each record is what ends it; also where
# the event is recorded again before each query (rerecord), polled by another thread than the
# one that recorded it (thread; handoff: the recording thread's two looks began a wait, the
# other thread sees the success), or polled in turn with an event of a second GPU (twogpu: each
# GPU's requests end), whatever bridges the polling queued. The shim's
# own events (a bounded task's, recorded after each of its launches and queried) end none: a
# batch job that synchronises every 8 launches has at most one request per 8 launches.
t_yield_request_ends_at_event_query() {
	local form pid hi n got got2 devices
	trap 'touch "$WORK/eq.stop"' EXIT
	for form in 1 ptsz flags early rerecord thread handoff twogpu; do
		devices=1
		[ $form != twogpu ] || devices=2
		serve_some eq PRIOAPP_POLL=$form FAKECUDA_DEVICES=$devices
		n=$N got=$GOT got2=$GOT2
		if [ "$form" = early ]; then
			# (-l counts requests begun: one, never ended)
			[ "$(cut -d' ' -f2 <<<"$got")" -le 1 ] ||
				die "$form: requests ended by queries of an event older than a launch: -l says '$got' after $n"
		else
			# A request begins only once the one before ended: as many as the service finished.
			[ "$(cut -d' ' -f2 <<<"$got")" -ge "$n" ] ||
				die "$form: -l says '$got' (launches, requests, busy) after $n requests"
			[ $form != twogpu ] || [ "$(cut -d' ' -f2 <<<"$got2")" -ge "$n" ] ||
				die "$form: -l says '$got2' of GPU 1 after $n requests"
		fi
	done
	rm -f "$WORK/eq.stop"
	FAKECUDA_KERNEL_US=1000 "$NVT" --no-mps --priority high "$PRIOAPP" serve "$WORK/eq.stop" \
		"$WORK/eq.high" 20000 4 2>"$WORK/eq.err" &
	hi=$!
	wait_for 10 test -e "$WORK/eq.high.ready"
	FAKECUDA_KERNEL_US=500 "$NVT" --no-mps --priority low --yield gate,any,bound=1000 "$PRIOAPP" batch \
		"$WORK/eq.stop" "$WORK/eq.batch" 8 2>"$WORK/eq.batch.err" &
	pid=$!
	wait_for 10 test -e "$WORK/eq.batch.ready"
	wait_for 20 eval '[ "$(requests_of '"$pid"' | cut -d" " -f1)" -gt 64 ]'
	got=$(requests_of "$pid")
	touch "$WORK/eq.stop"
	wait "$pid" || die "the batch job failed: $(cat "$WORK/eq.batch.err")"
	wait "$hi" || die "the service failed: $(cat "$WORK/eq.err")"
	[ "$(cut -d' ' -f2 <<<"$got")" -le $(($(cut -d' ' -f1 <<<"$got") / 8 + 1)) ] ||
		die "the shim's own events ended requests: -l says '$got' (launches, requests, busy)"
	trap - EXIT
}

t_yield_gate_holds_launches() {
	local got
	# Without priorities, the batch job launches all through the service's requests.
	serve_and_batch plain -c 0-8 -- -c 9-65
	got=$(let_through plain)
	[ "${got%% of *}" -gt 10 ] || die "without priorities, only $got launches ran inside requests"
	# With them, none that entered during a request returns before it ends.
	serve_and_batch prio --priority high -c 0-8 -- --priority low --yield gate,any,duty=100 -c 9-65
	got=$(let_through prio)
	[ "${got##* of }" -ge 20 ] || die "too few requests: $got"
	eq "${got%% of *}" 0 "launches let through during requests ($got)"
	# -l and JSON say how the low task waits, and for how many higher tasks.
	python3 - "$HELD" "$WORK/prio.serve" "$HELD_AFTER" <<'PY' || die "bad JSON: $HELD"
import json, sys
d = json.loads(sys.argv[1])
low = [t["gpus"][0] for t in d["tasks"] if t["gpus"][0].get("priority") == "low"][0]
high = [t["gpus"][0] for t in d["tasks"] if t["gpus"][0].get("priority") == "high"][0]
y = low["yield"]
assert y["ways"] == "gate,any,duty=100", y
assert y["watching"] == 1 and y["holds"] > 0 and y["held_ms"] > 0, y
assert y["state"] in ("running", "gated"), y
assert high["requests"]["tracked"] and high["requests"]["count"] >= 20, high
# The period the shim learnt lies among the gaps between the requests it saw (each begin
# between the service's ENTER and BEGIN stamps): about 20 ms on an idle machine, wider on a
# loaded one, whose requests come late and then at once.
reqs = [tuple(map(int, l.split()[1:])) for l in open(sys.argv[2]) if l.startswith("req ")]
reqs = [(r[3], r[0]) for r in reqs if r[3] < int(sys.argv[3])]
low_gap = min(b[0] - a[1] for a, b in zip(reqs, reqs[1:])) / 1e6
high_gap = max(b[1] - a[0] for a, b in zip(reqs, reqs[1:])) / 1e6
assert low_gap - 0.01 <= high["requests"]["period_ms"] <= high_gap + 0.01, (low_gap, high_gap, high)
print("period %.3f ms, gaps %.3f-%.3f ms" % (high["requests"]["period_ms"], low_gap, high_gap))
PY
}

t_yield_bound_in_flight() {
	local most
	# Without a bound the batch job queues launches (8 between synchronisations).
	serve_and_batch nob --priority high -c 0-8 -- --priority low --yield gate,any,duty=100 -c 9-65
	most=$(most_in_flight nob)
	[ "$most" -ge 6 ] || die "without a bound, at most $most launches were in flight"
	# bound=1000 with launches of 500 us: at most 2 in flight.
	serve_and_batch bnd --priority high -c 0-8 -- --priority low --yield gate,any,bound=1000,duty=100 -c 9-65
	most=$(most_in_flight bnd)
	[ "$most" -le 2 ] || die "with bound=1000, $most launches were in flight"
	eq "$(let_through bnd | cut -d' ' -f1)" 0 "launches let through during requests"
}

# most_in_flight_after TAG N: as most_in_flight, over the launches after the Nth.
most_in_flight_after() { awk -v n="$2" '$1 == "launch" && ++i > n && $4 > m {m = $4} END {print m + 0}' "$WORK/$1.batch"; }

# A lower task's bound holds in the context it goes on in after its first one went: a primary
# context reset, or released the last time (made again at its address, with a new id), or a
# context of its own destroyed (by either name) and the primary one's used after; where the
# driver gives no context ids, the release itself tells that they may have gone; events made in a
# context of its own stay through the primary context's release. Its events of
# the context that went are never used again (the fake dies of such an event, as a program on the
# real driver may: FAKECUDA_STALE_ABORT), and those of the next bound its launches: at most 2 in
# flight after the change, as before it.
t_yield_bound_after_context_goes() {
	local how kv most i=0
	for how in PRIOAPP_RESET_AT=20 PRIOAPP_RELEASE_AT=20 "PRIOAPP_RELEASE_AT=20 PRIOAPP_RELEASE_V1=1" \
		"PRIOAPP_RELEASE_AT=20 FAKECUDA_NO_CTX_ID=1" PRIOAPP_CTX_UNTIL=20 \
		"PRIOAPP_CTX_UNTIL=20 PRIOAPP_DESTROY_V1=1" "PRIOAPP_CTX_UNTIL=40 PRIOAPP_RELEASE_AT=20"; do
		i=$((i + 1))
		(
			for kv in $how FAKECUDA_STALE_ABORT=1; do export "${kv:?}"; done
			serve_and_batch gone$i --priority high -c 0-8 -- --priority low \
				--yield gate,any,bound=1000,duty=100 -c 9-65
		)
		[ "$(grep -c '^launch' "$WORK/gone$i.batch")" -gt 40 ] || die "with $how, too few launches"
		most=$(most_in_flight_after "gone$i" 20)
		[ "$most" -le 2 ] || die "with $how, $most launches were in flight after the change"
	done
}

# Events made in a context of its own that is still there stay there when the GPU's primary
# context goes and the task launches in the primary one (made again) after: one ring of events
# in all, none left behind (and, as a second context on its GPU, the primary one's launches are
# not bounded: the events stay the first context's).
t_yield_events_kept_in_own_context() {
	(
		export PRIOAPP_CTX_UNTIL=40 PRIOAPP_RELEASE_AT=40 PRIOAPP_CTX_KEEP=1 FAKECUDA_STALE_ABORT=1
		export FAKECUDA_EVENT_LOG=$WORK/events.log
		serve_and_batch keep --priority high -c 0-8 -- --priority low \
			--yield gate,any,bound=1000,duty=100 -c 9-65
	)
	[ "$(grep -c '^launch' "$WORK/keep.batch")" -gt 80 ] || die "too few launches"
	# (only the lower task makes events: one ring of 64)
	eq "$(sort -u "$WORK/events.log" | wc -l)" 1 "programs that made events"
	eq "$(grep -c '^event ' "$WORK/events.log")" 64 "events made"
}

t_yield_only_higher_and_own_user() {
	local got
	# Equal priorities never hold each other back.
	serve_and_batch eq --priority low -c 0-8 -- --priority low --yield gate,any,duty=100 -c 9-65
	got=$(let_through eq)
	[ "${got%% of *}" -gt 10 ] || die "a low task held back for another low one: $got"
	# No user's high task holds back another user's task.
	[ "$(id -u)" == 0 ] || skip "needs root for a second user"
	chmod 1777 "$WORK"
	HI_PFX="setpriv --reuid=65534 --regid=65534 --clear-groups" \
		serve_and_batch usr --priority high -c 0-8 -- --priority low --yield gate,any,duty=100 -c 9-65
	chmod 755 "$WORK"
	got=$(let_through usr)
	[ "${got%% of *}" -gt 10 ] || die "another user's high task held back root's low one: $got"
}

t_yield_service_gone() {
	local lo
	# A high task killed in the middle of a request (its activity says busy for good): the
	# low task is held at most NVT_YIELD_STALE_MS, then runs on.
	rm -f "$WORK/gone.stop"
	FAKECUDA_KERNEL_US=400000 "$NVT" --no-mps --priority high -c 0-8 "$PRIOAPP" serve \
		"$WORK/gone.stop" "$WORK/gone.serve" 100000 1 2>/dev/null &
	local hi=$!
	wait_for 10 in_request "$hi" # inside a request's synchronisation (each takes 400 ms)
	kill -KILL "$hi"
	wait "$hi" 2>/dev/null || true
	FAKECUDA_KERNEL_US=500 "$NVT" --no-mps --priority low --yield gate,any,duty=100 -c 9-65 "$PRIOAPP" batch \
		"$WORK/gone.stop" "$WORK/gone.batch" 2>"$WORK/gone.err" &
	lo=$!
	wait_for 10 test -e "$WORK/gone.batch.ready"
	# It runs on: more than 50 launches (its log is written 64 KiB at a time, ~1200 lines).
	poll_until 10 launches_over "$WORK/gone.batch" 50 ||
		die "the batch job hardly ran: $(wc -l <"$WORK/gone.batch")"
	touch "$WORK/gone.stop"
	wait "$lo" || die "the batch job failed: $(cat "$WORK/gone.err")"
}

t_yield_client_priority_and_usage() {
	local out rc
	# A low task under MPS is started below normal; the user's own choice stays.
	run_rc out rc "$NVT" --no-mps --priority low -c 0-3 sh -c 'echo "cp=${CUDA_MPS_CLIENT_PRIORITY-unset}"'
	has "$out" "cp=1"
	run_rc out rc env CUDA_MPS_CLIENT_PRIORITY=0 "$NVT" --no-mps --priority low -c 0-3 sh -c 'echo "cp=$CUDA_MPS_CLIENT_PRIORITY"'
	has "$out" "cp=0"
	run_rc out rc "$NVT" --no-mps --priority low --yield gate -c 0-3 sh -c 'echo "cp=${CUDA_MPS_CLIENT_PRIORITY-unset}"'
	has "$out" "cp=unset"
	run_rc out rc "$NVT" --no-mps --priority high -c 0-3 sh -c 'echo "cp=${CUDA_MPS_CLIENT_PRIORITY-unset} $NVTASKSET_PRIORITY"'
	has "$out" "cp=unset high"
	# --priority without a mask: the whole GPU (what README shows).
	run_rc out rc "$NVT" --no-mps --priority low "$APP" launch 1
	eq "$rc" 0 "$out"
	has "$out" "tpcs=0-65"
	run_rc out rc "$NVT" --no-mps --priority low 0xff "$APP" launch 1
	eq "$rc" 0 "$out"
	has "$out" "tpcs=0-7"
	run_rc out rc "$NVT" --no-mps --priority low 3 "$APP" launch 1
	eq "$rc" 0 "$out"
	has "$out" "tpcs=0-1"
	# A first word that merely reads as hex is COMMAND (cc, dd, add, face...), with its words.
	run_rc out rc "$NVT" --no-mps --priority low --dry-run cc -o x x.c
	eq "$rc" 0 "$out"
	eq "$out" "GPU 0 ($(fake_uuid)): TPCs 0-65"
	mkdir "$WORK/bin"
	printf '#!/bin/sh\necho "add ran: $*"\n' >"$WORK/bin/add"
	chmod +x "$WORK/bin/add"
	run_rc out rc env PATH="$WORK/bin:$PATH" "$NVT" --no-mps --priority low add -o x
	eq "$rc" 0 "$out"
	has "$out" "add ran: -o x"
	# A hex mask without 0x there is a command that is not found: the message says how to write it.
	run_rc out rc "$NVT" --no-mps --priority low ff "$APP" launch 1
	eq "$rc" 127 "$out"
	has "$out" "failed to execute ff: No such file or directory (with --priority and no -c or -g, a MASK is written with 0x: 0xff)"
	# The same with --mem, which names --mem (the option given).
	run_rc out rc "$NVT" --no-mps --mem 4G ff "$APP" launch 1
	eq "$rc" 127 "$out"
	eq "$out" "nvtaskset: failed to execute ff: No such file or directory (with --mem and no -c or -g, a MASK is written with 0x: 0xff)"
	# Written with 0x, a mask that does not parse is reported as a MASK.
	run_rc out rc "$NVT" --no-mps --priority low 0xzz "$APP" launch 1
	eq "$rc" 1 "$out"
	has "$out" "failed to parse TPC mask '0xzz'"
	# Bad words say what is wrong.
	run_rc out rc "$NVT" --priority low --yield gate,fast -c 0-3 "$APP" launch 1
	eq "$rc" 1
	has "$out" "--yield 'gate,fast': unknown word 'fast': the words are gate"
	run_rc out rc "$NVT" --yield gate -c 0-3 "$APP" launch 1
	eq "$rc" 1
	has "$out" "--yield goes with --priority"
	run_rc out rc "$NVT" --priority none -c 0-3 "$APP" launch 1
	eq "$rc" 1
	has "$out" "--priority none goes with -p"
}

t_yield_borrow_while_idle() {
	local got periodic borrowed
	# A periodic service (4 ms of work every 50 ms): the batch job launches on its TPCs too while
	# it is idle and its next request is not due, and never during a request (any: it waits
	# for the requests from the first on, not once they are seen to come periodically).
	PERIOD_US=50000 serve_and_batch bor --priority high -c 0-8 -- --priority low --yield protect,any,borrow -c 9-65
	# Regular enough to foresee (its begins within 3 ms of every 50 ms on average): then
	# some launch must have borrowed; a loaded machine may make it irregular.
	periodic=$(python3 - "$WORK/bor.serve" <<'PY'
import sys
b = [int(l.split()[1]) for l in open(sys.argv[1]) if l.startswith("req ")]
gaps = [(y - x) / 1e6 for x, y in zip(b, b[1:])]
print(int(len(gaps) > 8 and sum(abs(g - 50) for g in gaps) / len(gaps) < 3))
PY
)
	borrowed=$(awk '$1 == "launch" && $5 == 66' "$WORK/bor.batch" | wc -l)
	got=$(let_through bor)
	eq "${got%% of *}" 0 "launches let through during requests ($got)"
	[ "$periodic" == 0 ] || [ "$borrowed" -gt 0 ] || die "the service was periodic, yet no launch borrowed its TPCs"
	# Every launch ran on its own 57 TPCs or on all 66, nothing else.
	eq "$(awk '$1 == "launch" && $5 != 57 && $5 != 66' "$WORK/bor.batch" | wc -l)" 0 "other partitions"
	# A service started --no-lend lends nothing.
	PERIOD_US=50000 serve_and_batch nol --priority high --no-lend -c 0-8 -- --priority low -c 9-65
	eq "$(awk '$1 == "launch" && $5 != 57' "$WORK/nol.batch" | wc -l)" 0 "launches on a --no-lend task's TPCs"
	# Without borrow in its words, the batch job keeps to its own.
	PERIOD_US=50000 serve_and_batch nob2 --priority high -c 0-8 -- --priority low --yield gate,any,bound,ahead -c 9-65
	eq "$(awk '$1 == "launch" && $5 != 57' "$WORK/nob2.batch" | wc -l)" 0 "launches beyond its partition"
}

# task_json PID EXPR: -l --json's first GPU of task PID as g; exits 0 if the Python EXPR holds.
task_json() {
	timeout "$HANG" "$NVT" -l --json | python3 -c 'import json, sys
t = [t["gpus"][0] for t in json.load(sys.stdin)["tasks"] if t["pid"] == int(sys.argv[1])]
sys.exit(not (t and eval(sys.argv[2], {"g": t[0]})))' "$1" "$2"
}

t_yield_demo_service_and_one_that_never_syncs() {
	local hi lo
	# make try's demo --serve synchronises each request: its low neighbour follows it.
	"$NVT" --no-mps --priority high -c 0-7 "$T/demo" --serve >"$WORK/serve.out" 2>&1 &
	hi=$!
	"$NVT" --no-mps --priority low --yield protect -c 8-65 "$T/demo" >"$WORK/low.out" 2>&1 &
	lo=$!
	wait_for 20 task_json "$hi" 'g["requests"]["tracked"] and g["requests"]["count"] >= 8'
	wait_for 20 task_json "$lo" 'g["yield"]["watching"] == 1'
	kill -TERM "$hi" "$lo"
	wait "$hi" "$lo" 2>/dev/null || true
	# A plain demo never synchronises: its request stays open, and after NVT_YIELD_OPEN_MS its
	# low neighbour launches beside it (MODE beside), with any too, instead of being held back
	# for good.
	"$NVT" --no-mps --priority high -c 0-7 "$T/demo" >"$WORK/hi2.out" 2>&1 &
	hi=$!
	"$NVT" --no-mps --priority low --yield protect,any -c 8-65 "$T/demo" >"$WORK/low2.out" 2>&1 &
	lo=$!
	wait_for 20 task_json "$lo" 'g["yield"]["watching"] == 1'
	poll_until 30 task_json "$lo" 'g["yield"]["state"] == "beside"' ||
		die "the low task is not beside a high task that never synchronises: $("$NVT" -l)"
	kill -TERM "$hi" "$lo"
	wait "$hi" "$lo" 2>/dev/null || true
}

# A start and -p agree on which --yield words go together: a task started with slice,gate takes
# the same words again from -p (at another level too); -p refuses a word only by how its task
# was started (one started with slice alone: its shim follows no launch call), saying so.
t_yield_start_and_pid_agree() {
	local sg sl
	start_loop sg "$NVT" --no-mps --priority low --yield slice,gate "$APP"
	sg=$PID
	start_loop sl "$NVT" --no-mps --priority low "$APP"
	sl=$PID
	wait_file "$WORK/sg.state" "0-65"
	wait_file "$WORK/sl.state" "0-65"
	run_rc out rc "$NVT" -p --priority low --yield slice,gate "$sg"
	eq "$rc" 0 "$out"
	has "$out" "pid $sg's new yield: gate,slice"
	hasnt "$out" "warning"
	run_rc out rc "$NVT" -p --priority normal --yield gate,slice "$sg"
	eq "$rc" 0 "$out"
	has "$out" "pid $sg's new priority: normal"
	run_rc out rc "$NVT" -p --priority low --yield slice,gate "$sl"
	eq "$rc" 1 "$out"
	has "$out" "pid $sl was started with --yield slice, so its shim does not follow its launch calls: --yield gate would not take effect (nothing changed)"
	has "$out" "nvtaskset --priority LEVEL --yield WORDS COMMAND"
	python3 -c 'import json,sys; g={t["pid"]: t["gpus"][0] for t in json.loads(sys.argv[1])["tasks"]}[int(sys.argv[2])]; assert g["yield"]["ways"]=="slice", g' \
		"$(timeout "$HANG" "$NVT" -l --json)" "$sl" || die "-p changed pid $sl's words"
	stop_loop sg "$sg"
	stop_loop sl "$sl"
}

# -p --yield without slice on a time-sliced task (a priority and no partition) takes slice away,
# as its words say, and warns on standard error that its groups leave their level's timeslice;
# words that keep slice, or a task no longer time-sliced, get no such warning.
t_yield_pid_taking_slice_warns() {
	local err
	start_loop ts "$NVT" --no-mps --priority low "$APP"
	wait_file "$WORK/ts.state" "0-65"
	out=$("$NVT" -p --priority high --yield client,slice "$PID" 2>"$WORK/ts.err1")
	hasnt "$(cat "$WORK/ts.err1")" "warning"
	# A -p that fails (TPCs the GPU has not) warns of nothing: it took nothing away.
	run_rc out rc "$NVT" -p --priority high --yield client -c 900 "$PID"
	eq "$rc" 1 "$out"
	has "$out" "900"
	hasnt "$out" "warning"
	out=$("$NVT" -p --priority high --yield client "$PID" 2>"$WORK/ts.err2") ||
		die "-p --yield client: $out $(cat "$WORK/ts.err2")"
	err=$(cat "$WORK/ts.err2")
	has "$out" "pid $PID's new yield: client"
	hasnt "$out" "warning"
	eq "$err" "nvtaskset: warning: pid $PID is time-sliced (--yield slice): --yield client takes that away: its channel groups run at libcuda's own timeslice again, beside other levels' tasks instead of time-sliced against them (--yield client,slice keeps it)"
	run_rc out rc "$NVT" -p --priority high --yield client "$PID"
	eq "$rc" 0 "$out"
	hasnt "$out" "warning"
	stop_loop ts "$PID"
}
