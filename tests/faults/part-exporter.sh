# The exporter at its connection limit (nvtaskset --exporter, docs/observability.md): beside
# two tasks, 300 slow connections from 20 loopback addresses (each a header line every 4 s,
# opened again when closed: past its table of 256) for 10 s while scrapes follow one another,
# each of which must answer within 10 s (Prometheus' default scrape timeout), then 40 from one
# address (at most 16 stay); with the exporter's descriptor limit as it is and a soft limit of
# 64 (which it raises). Under hard limits of 200 and 64 (its table made smaller: a table above
# the limit left scrapes unaccepted), 20 scrapes beside the 300 must each end within 10 s and
# half answer at least (scrapes_beside). Afterwards a scrape answers, the connections
# it held are closed (its descriptors back where they were, within 20 s: its head deadline and
# libmicrohttpd's 10 s timeout), and SIGTERM ends it with status 0. A scrape that fails is a
# hang. Sourced by tests/faults/run.sh.
# shellcheck shell=bash

PROBE=$ROOT/tests/e2e/helpers/httpprobe.py

# exporter_up LIMIT: starts the exporter on 127.0.0.1 under "ulimit LIMIT" ("": as it is); sets
# EXPORTER (its PID) and EPORT, or returns 1.
exporter_up() {
	local i
	rm -f "$WORK/exporter.err"
	# shellcheck disable=SC2086 # (ulimit's words)
	bash -c '[ -z "$1" ] || ulimit $1 || exit 1; exec "$2" --exporter 127.0.0.1:0' - "$1" "$NVT" \
		2>"$WORK/exporter.err" &
	EXPORTER=$!
	TASKS="${TASKS:-} $EXPORTER"
	for ((i = 0; i < 1000; i++)); do
		EPORT=$(sed -n 's|.*serving the metrics on http://[^ ]*:\([0-9]*\)/metrics$|\1|p' "$WORK/exporter.err")
		[ -n "$EPORT" ] && return 0
		kill -0 "$EXPORTER" 2>/dev/null || break
		sleep 0.02
	done
	bad hang "the exporter (ulimit ${1:--n as it is}) did not serve: $(cat "$WORK/exporter.err")"
	return 1
}
# fds_of PID: how many descriptors PID has open (the exporter's program: nvtaskset execs it).
fds_of() { ls "/proc/$1/fd" 2>/dev/null | wc -l; }
# scrape WHAT: one GET of /metrics must be a 200 with the whole document.
scrape() {
	OUT=$(timeout 30 env HANG=20 python3 "$PROBE" get "$EPORT" /metrics 2>&1) && RC=0 || RC=$?
	judge "$RC" "$1: a scrape"
	[ "$(head -1 <<<"$OUT")" == 200 ] && grep -q "# TYPE nvtaskset_task_tpcs gauge" <<<"$OUT" ||
		bad hang "$1: a scrape: $(head -3 <<<"$OUT")"
}

# scrapes_beside WHAT: 20 scrapes one after another beside 300 slow connections from 20
# addresses (a hard descriptor limit below the table: a scrape's connection may be closed for
# room before its head is read, as any other): each must end within 10 s (else a hang), and at
# least half must answer (else "lost").
scrapes_beside() {
	local flood ok=0 failed=0 i
	env HANG=30 SCRAPE_TIMEOUT=30 python3 "$PROBE" flood "$EPORT" 300 20 15 >/dev/null 2>&1 &
	flood=$!
	sleep 2
	for ((i = 0; i < 20; i++)); do
		OUT=$(timeout 10 env HANG=20 python3 "$PROBE" get "$EPORT" /metrics 2>&1) && RC=0 || RC=$?
		judge "$RC" "$1: a scrape beside 300 slow connections"
		if [ "$(head -1 <<<"$OUT")" == 200 ] && grep -q "# TYPE nvtaskset_task_tpcs gauge" <<<"$OUT"; then
			ok=$((ok + 1))
		else
			failed=$((failed + 1))
		fi
	done
	P_FAULTS=$((P_FAULTS + 300))
	wait "$flood"
	echo "  $1: $ok of 20 scrapes answered, $failed closed for room"
	[ "$ok" -ge 10 ] || bad lost "$1: $ok of 20 scrapes answered beside 300 slow connections"
}

part_exporter() {
	local limit before i what
	part_begin "exporter: at its connection limit"
	if [ ! -x "$B/lib/nvtaskset/nvtaskset-exporter" ]; then
		echo "  skipped: the exporter was not built (libmicrohttpd's header, Debian: libmicrohttpd-dev)"
		part_end
		return
	fi
	start ex1 0-7
	local t1=$PID
	start ex2 8-23
	local t2=$PID
	# As it is; a soft limit of 64 (the exporter raises it); hard limits of 200 and 64.
	for limit in "" "-S -n 64" "-n 200" "-n 64"; do
		what="ulimit ${limit:--n as it is}"
		exporter_up "$limit" || continue
		scrape "$what: before"
		before=$(fds_of "$EXPORTER")
		if [[ "$limit" == "" || "$limit" == -S* ]]; then
			OUT=$(timeout 120 env HANG=30 SCRAPE_TIMEOUT=10 python3 "$PROBE" flood "$EPORT" 300 20 10 2>&1) &&
				RC=0 || RC=$?
			judge "$RC" "$what: 300 slow connections"
			P_FAULTS=$((P_FAULTS + 300))
			[ "$RC" == 0 ] || bad hang "$what: 300 slow connections: $OUT"
			echo "  $what: ${OUT:0:60}"
			OUT=$(timeout 120 env HANG=30 SCRAPE_TIMEOUT=10 python3 "$PROBE" oneaddr "$EPORT" 40 2>&1) &&
				RC=0 || RC=$?
			judge "$RC" "$what: 40 from one address"
			P_FAULTS=$((P_FAULTS + 40))
			{ [ "$RC" == 0 ] && [ "${OUT#ok open=}" -le 16 ]; } || bad hang "$what: 40 from one address: $OUT"
		else
			scrapes_beside "$what"
		fi
		scrape "$what: after"
		for ((i = 0; i < 1000; i++)); do
			[ "$(fds_of "$EXPORTER")" -le "$before" ] && break
			sleep 0.02
		done
		[ "$(fds_of "$EXPORTER")" -le "$before" ] ||
			bad lost "$what: the exporter holds $(fds_of "$EXPORTER") descriptors 20 s after, $before before"
		kill -TERM "$EXPORTER"
		wait "$EXPORTER" && RC=0 || RC=$?
		judge "$RC" "$what: the exporter's end on SIGTERM"
		[ "$RC" == 0 ] || bad lost "$what: the exporter ended $RC on SIGTERM: $(tail -3 "$WORK/exporter.err")"
	done
	touch "$WORK/u/ex1.stop" "$WORK/u/ex2.stop"
	wait "$t1" "$t2"
	part_end
}
