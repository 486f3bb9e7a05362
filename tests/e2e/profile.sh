# nvtaskset --profile and --plan with the fake driver: a program whose time
# falls with its TPC count until 33 TPCs (tests/e2e/helpers/knee), failures,
# time-outs, the bandwidth hog, plots and plans. Sourced by tests/run-tests.sh.
# shellcheck shell=bash

KNEE=$HELPERS/knee

# The profile of the knee program as JSON, made once per test run.
knee_json() {
	[ -s "$WORK/knee.json" ] && return 0
	"$NVT" --profile --no-mps --rounds 2 --json --metric 'value: ([0-9.]+)' \
		"$KNEE" "$APP" >"$WORK/knee.json" 2>"$WORK/knee.err" || die "profile failed: $(cat "$WORK/knee.err")"
}

t_profile_finds_the_knee() {
	local out rc
	run_rc out rc "$NVT" --profile --no-mps --rounds 2 --metric 'value: ([0-9.]+)' "$KNEE" "$APP"
	eq "$rc" 0
	# Eight sizes up to the whole GPU; 1000/n falls to its floor of 30 at 33.3 TPCs.
	has "$out" "GPU 0 (66 TPCs), 2 rounds, the program's metric"
	has "$out" "smallest partition within 5% of the best: 33 TPCs (1.010x"
	has "$out" "     9       111.1"
	has "$out" "round 2 of 2 done"
	run_rc out rc "$NVT" --profile --no-mps --rounds 1 --slowdown 0 --metric 'value: ([0-9.]+)' "$KNEE" "$APP"
	has "$out" "smallest partition within 0% of the best: 42 TPCs (1.000x"
	# --sizes: the user's counts, in a list's syntax.
	run_rc out rc "$NVT" --profile --no-mps --rounds 1 --sizes 20-40:10 --metric 'value: ([0-9.]+)' "$KNEE" "$APP"
	eq "$(grep -cE '^ +(20|30|40) ' <<<"$out")" 3 "rows for --sizes 20-40:10"
	has "$out" "smallest partition within 5% of the best: 40 TPCs"
}

t_profile_json_and_plot() {
	knee_json
	python3 - "$WORK/knee.json" <<'PY' || die "bad JSON: $(cat "$WORK/knee.json")"
import json, sys
d = json.load(open(sys.argv[1]))
assert d["version"] >= 2 and d["gpu_tpcs"] == 66 and d["pick"] == 33, d
s = {x["tpcs"]: x for x in d["sizes"]}
assert sorted(s) == [9, 17, 25, 33, 42, 50, 58, 66], sorted(s)
assert len(s[9]["values"]) == 2 and abs(s[9]["median"] - 111.111) < 0.01, s[9]
assert s[66]["ratio"] == 1 and s[33]["failed"] == 0
PY
	# Every key of the document is in docs/json.md's paragraph on it.
	python3 - "$WORK/knee.json" "$ROOT/docs/json.md" <<'PY' || die "keys of --profile --json missing in docs/json.md"
import json, re, sys
d = json.load(open(sys.argv[1]))
doc = open(sys.argv[2]).read()
para = re.search(r"^`--profile --json`:.*?(?=\n\n)", doc, re.S | re.M).group(0)
keys = set(d) | {k for s in d["sizes"] for k in s}
missing = sorted(k for k in keys if "`%s`" % k not in para)
print("keys:", sorted(keys))
assert not missing, missing
PY
	local out rc
	# Three sizes keep it short (each run is a start of its own).
	run_rc out rc "$NVT" --profile --no-mps --rounds 1 --sizes 9,33,66 --plot "$WORK/knee.svg" \
		--metric 'value: ([0-9.]+)' "$KNEE" "$APP"
	eq "$rc" 0
	# An SVG any XML reader takes: the axes' labels as text, the curve through every size.
	python3 - "$WORK/knee.svg" <<'PY' || die "bad SVG: $(head -c 2000 "$WORK/knee.svg")"
import sys, xml.etree.ElementTree as ET
ns = "{http://www.w3.org/2000/svg}"
root = ET.parse(sys.argv[1]).getroot()
assert root.tag == ns + "svg" and root.get("width") == "720", root.attrib
texts = [t.text for t in root.iter(ns + "text")]
for label in ["TPCs", "value", "9", "33", "66", "the pick"]:
    assert label in texts, (label, texts)
alone = [g for g in root.iter(ns + "g") if g.get("class") == "alone"]
assert len(alone) == 1, alone
points = alone[0].find(ns + "polyline").get("points").split()
assert len(points) == 3, points
assert len(alone[0].findall(ns + "circle")) == 3
# Left to right, and 9 TPCs' median (111.1) above 66's (30): y grows downwards.
xs = [float(p.split(",")[0]) for p in points]
ys = [float(p.split(",")[1]) for p in points]
assert xs == sorted(xs) and ys[0] < ys[-1], points
PY
	run_rc out rc "$NVT" --profile --no-mps --rounds 1 --sizes 9,33 --plot /nonexistent/dir/p.svg "$KNEE" "$APP"
	eq "$rc" 1
	has "$out" "cannot write the plot to /nonexistent/dir/p.svg"
}

t_profile_failures_and_timeouts() {
	local out rc
	run_rc out rc "$NVT" --profile --no-mps --rounds 1 --sizes 9,66 sh -c 'echo broken; exit 3'
	eq "$rc" 1
	has "$out" "a run on 9 TPCs failed: exit status 3: broken"
	has "$out" "no size met the bound"
	# A run past --timeout is killed with everything it started (a --profile that waited
	# for the sleeps would outlast run_rc's limit: status 124).
	run_rc out rc "$NVT" --profile --no-mps --rounds 1 --sizes 66 --timeout 0.3 \
		sh -c "python3 -c 'import time; time.sleep(3600)' $WORK-bg & python3 -c 'import time; time.sleep(3600)' $WORK-fg"
	eq "$rc" 1
	has "$out" "timed out after 0.3 s"
	poll_until 5 sh -c '! pgrep -f "$1-[bf]g" >/dev/null' _ "$WORK" ||
		die "a timed-out run's processes were left behind: $(pgrep -af "$WORK-[bf]g")"
	# A metric the output never matches.
	run_rc out rc "$NVT" --profile --no-mps --rounds 1 --sizes 66 --metric 'nothing ([0-9]+)' "$APP" launch 1
	eq "$rc" 1
	has "$out" "its output has no match of --metric"
	return 0
}

t_profile_bad_options() {
	local out rc
	run_rc out rc "$NVT" --profile --rounds 0 true
	eq "$rc" 1
	has "$out" "--rounds takes a number from 1 to 64, not '0'"
	run_rc out rc "$NVT" --profile --metric '(' true
	has "$out" "--metric is not a valid extended regular expression"
	run_rc out rc "$NVT" --profile --higher-is-better true
	has "$out" "--higher-is-better goes with --metric"
	run_rc out rc "$NVT" --profile --no-mps --sizes 0-4 true
	has "$out" "--sizes takes a list of TPC counts from 1 up"
	run_rc out rc "$NVT" --profile --no-mps --sizes 67 true
	has "$out" "--sizes names more TPCs than the GPU has (66)"
	# More sizes than it keeps: said, not 64 of them profiled in silence.
	run_rc out rc "$NVT" --profile --no-mps --sizes 1-66 true
	eq "$rc" 1
	has "$out" "--sizes names 66 sizes; it takes at most 64"
	run_rc out rc "$NVT" --profile
	has "$out" "--profile: no command given"
	run_rc out rc "$NVT" --profile --help
	eq "$rc" 0
	has "$out" "nvtaskset --profile [options] COMMAND"
}

t_profile_beside_hog() {
	local out rc
	run_rc out rc env FAKECUDA_HOG_STATE="$WORK/hog" "$NVT" --profile --no-mps --rounds 1 \
		--sizes 33 --beside-hog --metric 'value: ([0-9.]+)' "$KNEE" "$APP"
	eq "$rc" 0
	has "$out" "beside a memory-bandwidth hog on every other TPC"
	# The hog ran on exactly the TPCs the profiled partition left.
	python3 - "$WORK/hog" "$out" <<'PY' || die "hog TPCs: $(cat "$WORK/hog")"
import re, sys
hog = {int(x) for x in open(sys.argv[1]).read().split(",")}
lst = re.search(r"-c ([0-9,-]+)\)", sys.argv[2]).group(1)
part = set()
for item in lst.split(","):
    a, _, b = item.partition("-")
    part |= set(range(int(a), int(b or a) + 1))
assert len(part) == 33 and hog == set(range(66)) - part, (sorted(part), sorted(hog))
PY
	[ -z "$(pgrep_here nvtaskset-hog)" ] || die "the hog outlived --profile"
	return 0
}

t_profile_says_it_started_mps() {
	# --profile starts the MPS control daemon its runs join as a start does: once, saying so
	# and how to stop it; one round is "1 round".
	local fake=$FAKEBIN
	own_mps_dirs profile
	run_rc out rc env PATH="$fake:$PATH" "$NVT" --profile --rounds 1 --sizes 33,66 "$APP" launch 1
	eq "$rc" 0 "$out"
	has "$out" "nvtaskset: started the MPS control daemon (pipe directory $CUDA_MPS_PIPE_DIRECTORY); stop it with 'nvtaskset --mps stop'"
	eq "$(grep -c 'started the MPS' <<<"$out")" 1 "lines saying the daemon started"
	has "$out" "GPU 0 (66 TPCs), 1 round, wall-clock ms"
	eq "$(grep -c 'args=-d' "$CUDA_MPS_PIPE_DIRECTORY/fake.log")" 1 "daemon starts"
	run_rc out rc env PATH="$fake:$PATH" "$NVT" --mps stop
	eq "$rc" 0 "$out"
}

t_profile_without_mps_beside_squatted_directory() {
	# Another user made the victim's per-user MPS pipe directory first: her --profile says so
	# once, and its runs go without MPS (the report says so), as a start's task does.
	need_users
	make_in_tmp profsquat
	unset CUDA_MPS_PIPE_DIRECTORY CUDA_MPS_LOG_DIRECTORY XDG_RUNTIME_DIR
	export PATH="$FAKEBIN:$PATH" FAKECUDA_LOG=$WORK/u/cuda.log
	$IN_TMP $(as_user 65533) mkdir -m 755 /tmp/nvidia-mps-65534
	run_rc out rc $IN_TMP $(as_user 65534) "$NVT" --profile --rounds 1 --sizes 33,66 "$APP" launch 1
	eq "$rc" 0 "$out"
	eq "$(grep -c 'running without MPS' <<<"$out")" 1 "warnings of the squatted directory: $out"
	has "$out" "nvtaskset: warning: refusing the MPS pipe directory /tmp/nvidia-mps-65534: it belongs to uid 65533"
	has "$out" "GPU 0 (66 TPCs), 1 round, wall-clock ms (lower is better), without MPS"
	grep -q '^cuInit .* mps=/dev/null$' "$WORK/u/cuda.log" || die "no run logged"
	# (Calibration's probe names a pipe directory that is none: it never connects.)
	eq "$(grep '^cuInit ' "$WORK/u/cuda.log" | grep -Evc ' mps=(/dev/null|/nonexistent/nvtaskset-no-mps)$')" 0 \
		"runs with MPS: $(grep '^cuInit ' "$WORK/u/cuda.log")"
}

t_plan_footnote_only_when_starred() {
	# The footnote of '*' (sized beside the hog) comes with a starred task only.
	local out rc
	knee_json
	printf 'a %s slowdown=5%%\n' "$WORK/knee.json" >"$WORK/plan"
	run_rc out rc "$NVT" --plan "$WORK/plan"
	eq "$rc" 0 "$out"
	hasnt "$out" "*"
	FAKECUDA_HOG_STATE="$WORK/hog" "$NVT" --profile --no-mps --rounds 1 --sizes 33,66 --beside-hog \
		--json --metric 'value: ([0-9.]+)' "$KNEE" "$APP" >"$WORK/hog.json" 2>"$WORK/hog.err" ||
		die "profile beside the hog failed: $(cat "$WORK/hog.err")"
	printf 'a %s slowdown=5%%\n' "$WORK/hog.json" >"$WORK/plan"
	run_rc out rc "$NVT" --plan "$WORK/plan"
	eq "$rc" 0 "$out"
	has "$out" "*"
	has "$out" "* sized by its curve beside a bandwidth hog"
}

t_plan_fits_or_says_why() {
	local out rc i
	knee_json
	# 33 TPCs within 5%; 25 TPCs meet a deadline of 40 (1000/25).
	printf 'planner %s deadline=40\ndetector %s slowdown=5%% high\n# a comment\n\n' \
		"$WORK/knee.json" "$WORK/knee.json" >"$WORK/plan"
	run_rc out rc "$NVT" --plan "$WORK/plan"
	eq "$rc" 0
	has "$out" "the tasks fit, 8 TPCs spare"
	has "$out" "TASK             PRIO      NEEDS  PARTITION (-c)
detector         high         33"
	has "$out" "planner          normal       25"
	# Two tasks of 42 TPCs: the second has no room.
	printf 'a %s slowdown=0%%\nb %s slowdown=0%% low\n' "$WORK/knee.json" "$WORK/knee.json" >"$WORK/plan"
	run_rc out rc "$NVT" --plan "$WORK/plan"
	eq "$rc" 1
	has "$out" "the tasks do NOT fit"
	has "$out" "(no room)"
	run_rc out rc "$NVT" --plan --json "$WORK/plan"
	python3 -c 'import json,sys; d=json.loads(sys.argv[1]); assert d["fits"] is False and d["tasks"][1]["tpcs"] is None' "$out" ||
		die "plan JSON: $out"
	printf 'a %s fast\n' "$WORK/knee.json" >"$WORK/plan"
	run_rc out rc "$NVT" --plan "$WORK/plan"
	has "$out" "line 1: bound 'fast' is not slowdown=PCT% or deadline=VALUE"
	printf 'a %s deadline=1ms\n' "$WORK/knee.json" >"$WORK/plan"
	run_rc out rc "$NVT" --plan "$WORK/plan"
	has "$out" "task a: no size of $WORK/knee.json meets deadline=1ms"
	printf 'a /etc/passwd slowdown=5%%\n' >"$WORK/plan"
	run_rc out rc "$NVT" --plan "$WORK/plan"
	has "$out" "/etc/passwd is not the JSON of nvtaskset --profile --json"
	# 64 tasks and a comment after them are 64 tasks (they do not fit: 9 TPCs each at least);
	# a 65th is one too many. Line numbers count blank lines.
	for ((i = 0; i < 64; i++)); do echo "t$i $WORK/knee.json slowdown=5%"; done >"$WORK/plan"
	printf '# the end\n\n' >>"$WORK/plan"
	run_rc out rc "$NVT" --plan "$WORK/plan"
	eq "$rc" 1 "64 tasks: $out"
	has "$out" "the tasks do NOT fit"
	echo "t64 $WORK/knee.json slowdown=5%" >>"$WORK/plan"
	run_rc out rc "$NVT" --plan "$WORK/plan"
	has "$out" "has more than 64 tasks"
	printf '# tasks\n\na %s fast\n' "$WORK/knee.json" >"$WORK/plan"
	run_rc out rc "$NVT" --plan "$WORK/plan"
	has "$out" "line 3: bound 'fast' is not"
}

# --profile --mem: every step runs under the limit (memapp reads it back as the GPU's memory);
# a SIZE the GPU cannot give is refused before any run; the JSON carries the limit, --plan
# takes it as the task's.
t_profile_under_mem() {
	local out rc
	run_rc out rc "$NVT" --profile --no-mps --rounds 1 --sizes 9,33 --mem 64M \
		--metric 'total=([0-9]+)' "$T/memapp" info
	eq "$rc" 0 "$out"
	has "$out" "GPU 0 (66 TPCs), 1 round, the program's metric (lower is better), without MPS, GPU memory at most 64M"
	# Both sizes told 64 MiB, every run under the limit.
	"$NVT" --profile --no-mps --rounds 2 --sizes 9,33 --mem 64M --json --metric 'total=([0-9]+)' \
		"$T/memapp" info >"$WORK/told.json" 2>"$WORK/told.err" || die "profile: $(cat "$WORK/told.err")"
	python3 -c 'import json,sys
d = json.load(open(sys.argv[1]))
# (values keep 6 digits: 64 MiB reads 6.71089e+07)
assert [[round(v / 2**20) for v in s["values"]] for s in d["sizes"]] == [[64] * 2] * 2, d["sizes"]' \
		"$WORK/told.json" ||
		die "runs not told 64M: $(cat "$WORK/told.json")"
	# A step that needs more than the limit fails, and no size is picked.
	run_rc out rc "$NVT" --profile --no-mps --rounds 1 --sizes 9 --mem 64M --timeout 60 \
		sh -c '"$1" alloc:80M | grep -q "alloc rc=0"' - "$T/memapp"
	eq "$rc" 1 "$out"
	has "$out" "a run on 9 TPCs failed: exit status 1"
	run_rc out rc "$NVT" --profile --no-mps --rounds 1 --sizes 9 --mem 100G "$T/memapp" info
	eq "$rc" 1 "$out"
	has "$out" "nvtaskset: --profile: --mem on GPU 0 ($(fake_uuid)): '100G' is more memory than the GPU has (the GPU has 80G"
	hasnt "$out" "round 1"
	"$NVT" --profile --no-mps --rounds 1 --sizes 9,33 --mem 25% --json --metric 'total=([0-9]+)' \
		"$T/memapp" info >"$WORK/mem.json" 2>"$WORK/mem.err" || die "profile: $(cat "$WORK/mem.err")"
	python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); assert d["memory_limit_bytes"] == 20 << 30, d' \
		"$WORK/mem.json" || die "--profile --json: $(cat "$WORK/mem.json")"
	knee_json
	python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); assert d["memory_limit_bytes"] is None, d' \
		"$WORK/knee.json" || die "--profile --json without --mem: $(cat "$WORK/knee.json")"
	# --plan: the profile's 20G, and mem=SIZE over it.
	printf 'a %s slowdown=5%%\nb %s slowdown=5%% low mem=50G\n' "$WORK/mem.json" "$WORK/knee.json" >"$WORK/plan"
	run_rc out rc "$NVT" --plan "$WORK/plan"
	eq "$rc" 0 "$out"
	has "$out" "the tasks fit, 24 TPCs spare, 10G of its 80G memory spare"
	has "$out" "TASK             PRIO      NEEDS  MEM     PARTITION (-c)"
	has "$out" "a                normal        9  20G     "
	has "$out" "b                low          33  50G     "
}

# --plan with memory limits that add up to more than the GPU's: the later task (lower priority)
# gets "(no memory)", exit 1, as --mem-exclusive would refuse its start; shares and bad sizes.
t_plan_memory_sums() {
	local out rc
	knee_json
	printf 'serve %s slowdown=5%% high mem=50G\ntrain %s deadline=40 mem=40G\n' \
		"$WORK/knee.json" "$WORK/knee.json" >"$WORK/plan"
	run_rc out rc "$NVT" --plan "$WORK/plan"
	eq "$rc" 1 "$out"
	has "$out" "the tasks do NOT fit"
	has "$out" "serve            high         33  50G     "
	has "$out" "train            normal       25  40G     (no memory)"
	run_rc out rc "$NVT" --plan --json "$WORK/plan"
	eq "$rc" 1 "$out"
	python3 -c 'import json,sys
d = json.loads(sys.argv[1])
assert d["fits"] is False and d["gpu_memory_bytes"] == 80 << 30 and d["memory_given_bytes"] == 50 << 30, d
t = {x["name"]: x for x in d["tasks"]}
assert t["serve"]["memory_limit_bytes"] == 50 << 30 and t["serve"]["tpcs"], t
assert t["train"]["memory_limit_bytes"] == 40 << 30 and t["train"]["tpcs"] is None, t' "$out" ||
		die "plan JSON: $out"
	# A share of the GPU: 50% (40G) and 40G fill its 80G.
	printf 'serve %s slowdown=5%% high mem=50%%\ntrain %s deadline=40 mem=40G\n' \
		"$WORK/knee.json" "$WORK/knee.json" >"$WORK/plan"
	run_rc out rc "$NVT" --plan "$WORK/plan"
	eq "$rc" 0 "$out"
	has "$out" "0 of its 80G memory spare"
	# Without limits the plan says nothing of memory.
	printf 'serve %s slowdown=5%% high\n' "$WORK/knee.json" >"$WORK/plan"
	run_rc out rc "$NVT" --plan "$WORK/plan"
	eq "$rc" 0 "$out"
	hasnt "$out" "MEM"
	hasnt "$out" "memory"
	printf 'serve %s slowdown=5%% mem=100G\n' "$WORK/knee.json" >"$WORK/plan"
	run_rc out rc "$NVT" --plan "$WORK/plan"
	eq "$rc" 1 "$out"
	has "$out" "--plan: task serve: mem=100G: '100G' is more memory than the GPU has (the GPU has 80G"
	printf 'serve %s slowdown=5%% mem=\n' "$WORK/knee.json" >"$WORK/plan"
	run_rc out rc "$NVT" --plan "$WORK/plan"
	has "$out" "line 1: 'mem=' is no memory size"
	printf 'serve %s slowdown=5%% mem=1G high\n' "$WORK/knee.json" >"$WORK/plan"
	run_rc out rc "$NVT" --plan "$WORK/plan"
	has "$out" "line 1: a task is 'NAME PROFILE.json BOUND [PRIORITY] [mem=SIZE]'"
}
