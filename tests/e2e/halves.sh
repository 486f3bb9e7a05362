# Memory halves: the bandwidth probe of --calibrate against the
# fake driver's model of two halves (tests/fake/fakemembw.c), their cache
# record, --topology, and -n --memory-half. Sourced by tests/run-tests.sh:
# each t_NAME function is one test, run in a subshell under set -e with the
# helpers defined there.
# shellcheck shell=bash

# The fake GPU with two memory halves (the H100 shows none: docs/memory-halves.md).
halves_setup() {
	export NVTASKSET_CACHE_DIR=$WORK/halves-cache FAKECUDA_MEMBW=halves
	rm -rf "$NVTASKSET_CACHE_DIR"
}

# in_half0 COUNT LIST: LIST has COUNT TPCs, all in the fake H100's GPCs 0, 4, 5 and 6.
in_half0() {
	python3 - "$1" "$2" <<'PY'
import sys
def gpc(t):
    return t % 8 if t < 32 else 1 + (t - 32) % 7 if t < 60 else (6 + t - 60 if t < 62 else 8 + t - 62)
tp = []
for part in sys.argv[2].split(","):
    a, _, b = part.partition("-")
    tp += range(int(a), int(b or a) + 1)
assert len(tp) == int(sys.argv[1]) and all(gpc(t) in (0, 4, 5, 6) for t in tp), tp
PY
}

t_halves_calibrate() {
	halves_setup
	run_rc out rc "$NVT" --calibrate
	eq "$rc" 0
	has "$out" "GPU 0: memory halves 0 = GPCs 0,4-6, 1 = GPCs 1-3,7, measured in"
	has "$out" "8 of 12 GPCs placed"
	rec="$NVTASKSET_CACHE_DIR/$(fake_uuid).mem"
	[ -f "$rec" ] || die "no record $rec"
	grep -q "halves=0,1,1,1,0,0,0,1,-,-,-,-$" "$rec" || die "record: $(cat "$rec")"
	[ "$(stat -c %a "$rec")" == 644 ] || die "record mode $(stat -c %a "$rec")"
	run_rc out rc "$NVT" --topology
	has "$out" "Memory halves: 0 = GPCs 0,4-6; 1 = GPCs 1-3,7; not placed: GPCs 8-11"
	out=$("$NVT" --topology --json)
	python3 -c 'import json,sys; g=json.loads(sys.argv[1])["gpus"][0]; h=[c["memory_half"] for c in g["gpcs"]]; assert h==[0,1,1,1,0,0,0,1,None,None,None,None], h; assert g["memory_halves_measured"] is True' "$out" ||
		die "bad JSON: $out"
	# --calibrate --json carries what the probe measured.
	out=$("$NVT" --calibrate --json 2>/dev/null)
	python3 - "$out" <<'PY' || die "bad JSON: $out"
import json, sys
g = json.loads(sys.argv[1])["gpus"][0]
p = g["memory_probe"]["probes"]
assert len(p) == 2 and p[0]["reference_gpc"] == 6 and p[1]["reference_gpc"] != 6, p
costs = {b["gpc"]: b["cost"] for b in p[0]["beside"]}
# Beside GPC 6 (half 0): a neighbour in half 0 costs more than one in half 1.
assert min(costs[g] for g in (0, 4, 5)) > max(costs[g] for g in (1, 2, 3, 7)), costs
assert all(b["gbps"] < p[0]["alone_gbps"] for b in p[0]["beside"])
PY
}

t_halves_unknown() {
	halves_setup
	# Before any probe: --topology says so; --memory-half refuses with the way out.
	run_rc out rc "$NVT" --topology
	has "$out" "Memory halves: not measured ('nvtaskset --calibrate' measures them)"
	run_rc out rc "$NVT" --no-mps -n 8 --memory-half 0 --dry-run
	eq "$rc" 1
	has "$out" "the memory halves of GPU 0 are not known: 'nvtaskset --calibrate' measures them"
	# A GPU whose neighbours all cost the same (the fake's default, as the
	# H100 measured) has no halves to find.
	run_rc out rc env -u FAKECUDA_MEMBW "$NVT" --calibrate
	eq "$rc" 0
	has "$out" "GPU 0: no memory halves found"
	grep -q "halves=-,-,-,-,-,-,-,-,-,-,-,-$" "$NVTASKSET_CACHE_DIR/$(fake_uuid).mem" ||
		die "record: $(cat "$NVTASKSET_CACHE_DIR/$(fake_uuid).mem")"
	run_rc out rc "$NVT" --topology
	has "$out" "Memory halves: none found by the bandwidth probe"
	run_rc out rc "$NVT" --no-mps -n 8 --memory-half auto --dry-run
	eq "$rc" 1
	has "$out" "GPU 0 shows no memory halves"
	# Noise as large as the difference: none trusted either.
	run_rc out rc env FAKECUDA_MEMBW=noisy "$NVT" --calibrate
	eq "$rc" 0
	has "$out" "GPU 0: no memory halves found"
	# A driver that cannot run the probe: calibration still succeeds, says
	# why the halves are missing, and keeps the halves it had.
	run_rc out rc env FAKECUDA_MEMBW=noptx "$NVT" --calibrate
	eq "$rc" 0
	has "$out" "warning: GPU 0: cannot measure its memory halves: loading the bandwidth probe kernel failed: CUDA error 218"
	has "$out" "verified; saved in"
	grep -q "halves=-,-,-,-,-,-,-,-,-,-,-,-$" "$NVTASKSET_CACHE_DIR/$(fake_uuid).mem" ||
		die "record after a failed probe: $(cat "$NVTASKSET_CACHE_DIR/$(fake_uuid).mem")"
	# A GPU whose GPCs are unknown (before compute capability 9.0) is not probed.
	run_rc out rc env FAKECUDA_CHIP=a100 NVTASKSET_CACHE_DIR="$WORK/halves-a100" "$NVT" --calibrate
	eq "$rc" 0
	hasnt "$out" "memory halves"
	[ ! -e "$WORK/halves-a100/$(FAKECUDA_CHIP=a100 fake_uuid).mem" ] || die "probed an A100"
}

t_halves_record_checked() {
	halves_setup
	"$NVT" --calibrate >/dev/null 2>&1
	rec="$NVTASKSET_CACHE_DIR/$(fake_uuid).mem"
	# Tampered (the checksum no longer matches): not used.
	sed -i 's/halves=0,1/halves=1,0/' "$rec"
	run_rc out rc "$NVT" --topology
	has "$out" "Memory halves: not measured"
	# Writable by others: not trusted.
	"$NVT" --calibrate >/dev/null 2>&1
	chmod 666 "$rec"
	run_rc out rc "$NVT" --topology
	has "$out" "Memory halves: not measured"
	# Another user's (root can make one): not trusted.
	if [ "$(id -u)" == 0 ]; then
		"$NVT" --calibrate >/dev/null 2>&1
		chown 65534 "$rec"
		run_rc out rc "$NVT" --topology
		has "$out" "Memory halves: not measured"
		rm -f "$rec"
	fi
	# A link in its place: not followed.
	"$NVT" --calibrate >/dev/null 2>&1
	mv "$rec" "$WORK/real.mem"
	ln -s "$WORK/real.mem" "$rec"
	run_rc out rc "$NVT" --topology
	has "$out" "Memory halves: not measured"
	rm -f "$rec"
	# Another GPU's record under this GPU's name: not used.
	"$NVT" --calibrate >/dev/null 2>&1
	env FAKECUDA_CHIPS=h100,h100-alt NVTASKSET_CACHE_DIR="$WORK/halves-alt" "$NVT" --calibrate --gpu 1 >/dev/null 2>&1
	alt=$(FAKECUDA_CHIPS=h100,h100-alt fake_uuid 1)
	cp "$WORK/halves-alt/$alt.mem" "$rec"
	run_rc out rc "$NVT" --topology
	has "$out" "Memory halves: not measured"
}

t_halves_pick() {
	halves_setup
	"$NVT" --calibrate >/dev/null 2>&1
	# Half 1 is GPCs 1-3 and 7; packed picks whole GPCs there.
	run_rc out rc "$NVT" --no-mps -n 16 --memory-half 1 --dry-run --json
	python3 -c 'import json,sys; t=json.loads(sys.argv[1])["picked"][0]["tpcs"]; assert t=="1-2,9-10,17-18,25-26,32-33,39-40,46-47,53-54", t' "$out" ||
		die "half 1 pick: $out"
	run_rc out rc "$NVT" --no-mps -n 12 --memory-half 0 --dry-run
	eq "$rc" 0
	# Every TPC picked lies in GPCs 0, 4, 5 or 6.
	tpcs=$(sed -n 's/.*TPCs //p' <<<"$out")
	in_half0 12 "$tpcs" || die "half 0 pick: $out"
	# Half 0 has 29 TPCs: 30 do not fit, and it says so.
	run_rc out rc "$NVT" --no-mps -n 30 --memory-half 0 --dry-run
	eq "$rc" 1
	has "$out" "cannot pick 30 TPCs in memory half 0 of GPU 0 (GPCs 0,4-6): only 29 are free"
	run_rc out rc "$NVT" --no-mps -n 8 --memory-half 2 true
	eq "$rc" 1
	has "$out" "--memory-half takes 0, 1 or auto"
	run_rc out rc "$NVT" --no-mps --memory-half 0 -c 0-3 true
	eq "$rc" 1
	has "$out" "--memory-half go with -n"
}

t_halves_auto_away_from_neighbour() {
	halves_setup
	"$NVT" --calibrate >/dev/null 2>&1
	# A neighbour in half 1 (GPCs 1 and 2): auto picks in half 0, also race-free.
	start_loop hn "$NVT" --no-mps -g 1-2 "$APP"
	hn_pid=$PID
	wait_file "$WORK/hn.state" "1-2,9-10,17-18,25-26,32-33,39-40,46-47,53-54"
	for excl in "" --exclude-running; do
		run_rc out rc "$NVT" --no-mps -n 12 --memory-half auto $excl --dry-run
		eq "$rc" 0 "$out"
		tpcs=$(sed -n 's/.*TPCs //p' <<<"$out")
		in_half0 12 "$tpcs" || die "auto pick beside half 1 ($excl): $out"
	done
	# Started for real with --exclude-running: the task runs in half 0.
	start_loop ha "$NVT" --no-mps -n 8 --memory-half auto --exclude-running "$APP"
	wait_file "$WORK/ha.state" "4,12,20,28,35,42,49,56"
	stop_loop ha "$PID"
	# -p -n --exclude-running --memory-half moves a running task into a half.
	start_loop hp "$NVT" --no-mps -c 0 "$APP"
	wait_file "$WORK/hp.state" "0"
	run_rc out rc "$NVT" -p -n 8 --exclude-running --memory-half 1 "$PID"
	eq "$rc" 0 "$out"
	wait_file "$WORK/hp.state" "3,11,19,27,34,41,48,55"
	stop_loop hp "$PID"
	stop_loop hn "$hn_pid"
}

t_halves_profile() {
	halves_setup
	"$NVT" --calibrate >/dev/null 2>&1
	local knee=$HELPERS/knee
	# --profile says which half its pick lies in: 8 TPCs packed are GPC 1.
	run_rc out rc "$NVT" --profile --no-mps --rounds 1 --sizes 8 --metric 'value: ([0-9.]+)' "$knee" "$APP"
	eq "$rc" 0
	has "$out" "the pick lies in memory half 1"
	out=$("$NVT" --profile --no-mps --rounds 1 --sizes 8 --json --metric 'value: ([0-9.]+)' "$knee" "$APP" 2>/dev/null)
	python3 -c 'import json,sys; d=json.loads(sys.argv[1]); assert d["pick"]==8 and d["pick_memory_half"]==1, d' "$out" || die "JSON: $out"
	# The whole GPU has lone TPCs, whose half is not known.
	run_rc out rc "$NVT" --profile --no-mps --rounds 1 --sizes 66 --metric 'value: ([0-9.]+)' "$knee" "$APP"
	has "$out" "the pick has TPCs whose memory half is not known"
	# The fake's default, as the H100: no halves.
	env -u FAKECUDA_MEMBW "$NVT" --calibrate >/dev/null 2>&1
	run_rc out rc "$NVT" --profile --no-mps --rounds 1 --sizes 8 --metric 'value: ([0-9.]+)' "$knee" "$APP"
	has "$out" "memory halves: none found on this GPU (docs/memory-halves.md)"
	rm -f "$NVTASKSET_CACHE_DIR"/*.mem
	run_rc out rc "$NVT" --profile --no-mps --rounds 1 --sizes 8 --metric 'value: ([0-9.]+)' "$knee" "$APP"
	has "$out" "memory halves: not measured ('nvtaskset --calibrate' measures them)"
}

t_halves_two_gpus() {
	# -p --gpu 1 with --memory-half: GPU 1's halves decide GPU 1's pick; GPU 0,
	# which the change does not name (and whose halves were never measured),
	# keeps its partition.
	export FAKECUDA_CHIPS=h100,h100-alt NVTASKSET_CACHE_DIR=$WORK/halves-cache2 FAKECUDA_MEMBW=halves
	rm -rf "$NVTASKSET_CACHE_DIR"
	"$NVT" --calibrate >/dev/null 2>&1
	rm "$NVTASKSET_CACHE_DIR/$(fake_uuid 0).mem"
	start_loop h2 env FAKEAPP_ALL=1 "$NVT" --no-mps -c 0 "$APP"
	wait_file "$WORK/h2.state" "0|0"
	for excl in --exclude-running ""; do
		run_rc out rc "$NVT" -p -n 8 $excl --memory-half 1 --gpu 1 "$PID"
		eq "$rc" 0 "-p $excl: $out"
		wait_file "$WORK/h2.state" "0|1,9,17,25,32,39,46,53"
		"$NVT" -p -c --gpu 1=0 "$PID" >/dev/null
		wait_file "$WORK/h2.state" "0|0"
	done
	# GPU 0's halves are not known: naming it is refused, and says which GPU.
	run_rc out rc "$NVT" -p -n 8 --exclude-running --memory-half 1 "$PID"
	eq "$rc" 1
	has "$out" "the memory halves of GPU 0 are not known"
	stop_loop h2 "$PID"
}

t_halves_claim_full() {
	# A half asked for with a claim: the protocol says the half is full.
	halves_setup
	"$NVT" --calibrate >/dev/null 2>&1
	# Half 0 has 29 TPCs; a task holds GPC 0's 4 of them.
	start_loop hf "$NVT" --no-mps -g 0 "$APP"
	wait_file "$WORK/hf.state" "0,8,16,24"
	run_rc out rc "$NVT" --no-mps -n 26 --exclude-running --memory-half 0 true
	eq "$rc" 1
	has "$out" "only 25 are free of other tasks in the memory half asked for"
	run_rc out rc "$NVT" --no-mps -n 25 --exclude-running --memory-half 0 "$APP" launch 1
	eq "$rc" 0 "$out"
	stop_loop hf "$PID"
	# auto with no room in either half warns once, and picks from both.
	run_rc out rc "$NVT" --no-mps -n 40 --exclude-running --memory-half auto "$APP" launch 1
	eq "$rc" 0 "$out"
	eq "$(grep -c "neither memory half" <<<"$out")" 1 "warnings in: $out"
}
