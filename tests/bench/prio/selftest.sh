#!/usr/bin/env bash
# The priorities benchmark without a GPU (PRIO_FAKE=1): prio.py's orchestration and
# prio_report.py end to end with fake.py's stand-ins (and service.cu's host code on
# cudart_stub.c where nvcc is here), the full set's configurations, both L and the torch and
# hog H, one made to fail; then the users preset (token by token, the llama H's, the whole-GPU
# configurations and their baselines) and its planned length; the round5 preset (six kinds,
# arrivals per kind, every ratio against the whole GPU, busy fractions, the batch's share,
# a partitioned L that measures alone first, the overview table) and its planned length; a run
# cut by its budget, with the hand-drawn SVG; one cut by its time limit; bad knobs; then
# service.py and train.py on faketorch/ (their Python, not PyTorch's). Checks the files and
# rows and that no stand-in is left running. About 5 minutes (with nvcc; more on a loaded
# machine); PART round5: the round5 preset, bad knobs and the programs on faketorch/ only (~1
# minute).
#   tests/bench/prio/selftest.sh [KEEPDIR [round5]]
set -u
PART=${2:-all}
[ "$PART" = all ] || [ "$PART" = round5 ] || { echo "usage: selftest.sh [KEEPDIR [round5]]" >&2; exit 2; }
HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=$(cd "$HERE/../../.." && pwd)
OUT=${1:-$(mktemp -d /tmp/prio-selftest.XXXX)}
BIN=$OUT/bin
mkdir -p "$BIN"
fail=0
check() { if eval "$2"; then echo "ok   $1"; else echo "FAIL $1"; fail=1; fi; }
if [ "$PART" = all ] && command -v nvcc >/dev/null; then
	nvcc -O1 -arch=sm_90 -cudart none -o "$BIN/service" "$HERE/service.cu" "$HERE/cudart_stub.c" ||
		{ echo "FAIL service.cu with cudart_stub.c"; fail=1; }
fi
# Every script compiles (in memory: the tree may be read-only to this user)
python3 -c 'import sys; [compile(open(f).read(), f, "exec") for f in sys.argv[1:]]' "$HERE"/*.py "$HERE"/faketorch/*.py ||
	{ echo "FAIL the scripts compile"; fail=1; }

export PRIO_FAKE=1 PRIO_BIN=$BIN PRIO_PHASE_S=0.15 PRIO_GAP_S=0.03 PRIO_HALONE_S=0.3
if [ "$PART" = all ]; then
# 1. The full set's configurations, one round; yield-borrow's L fails.
PRIO_H=torch,hog PRIO_L=torch,cuda PRIO_DUTIES=5,30,100 PRIO_ROUNDS=1 PRIO_FAKE_FAIL=yield-borrow \
	PRIO_BUDGET_S=600 "$HERE/run.sh" "$OUT/all" >"$OUT/all.log" 2>&1
check "run 1 exit status" "[ $? = 0 ]"
csv=$OUT/all/prio.csv
# rows: L-alone and L-alone-whole once and 13 configurations per H: 28 L runs x 2 L, less
# yield-borrow's 2 L torch (it failed), x 2 kinds x 5 phases, and H-alone and H-alone-whole
# per H at the start and the end.
rows=$(($(wc -l <"$csv") - 1))
check "prio.csv rows ($rows)" "[ $rows = $(((28 * 2 - 2) * 2 * 5 + 8)) ]"
check "prio.csv header" "head -1 '$csv' | grep -q '^config,h,l,kind,arrival,duty,round,requests,dropped,p50_us,p99_us.*,status,scope,l_busy,share_met\$'"
check "L-alone's ratios are 1" "awk -F, '(\$1==\"L-alone\" || \$1==\"L-alone-whole\") && \$14!=\"1.000\"' '$csv' | grep -c . | grep -qx 0"
check "H ratios filled" "awk -F, '\$1==\"static\" && \$17==\"\"' '$csv' | grep -c . | grep -qx 0"
check "cuda L is service.cu on the stub" "[ ! -x '$BIN/service' ] || tar -xJOf '$OUT/all/raw.tar.xz' raw/static.torch.r1/meta.json | grep -q '\"$BIN/service\"'"
check "summary: failure with its log" "grep -q 'FAILED yield-borrow (H torch' '$OUT/all/summary.txt' && grep -q 'failing as asked' '$OUT/all/summary.txt'"
tables=$(grep -c '^== L [a-z]*, ' "$OUT/all/summary.txt")
check "summary: a table per L, H, kind ($tables)" "[ '$tables' = 8 ]"
check "summary: targets" "grep -q 'not worse than static: met' '$OUT/all/summary.txt' && grep -q 'H >= 0.95 of static.s: met' '$OUT/all/summary.txt'"
check "plot" "[ -s '$OUT/all/prio.png' ] || grep -q '</svg>' '$OUT/all/prio.svg'"
check "raw.tar.xz, raw/ removed" "[ -s '$OUT/all/raw.tar.xz' ] && [ ! -d '$OUT/all/raw' ]"
check "agent log and -l snapshots" "tar -tJf '$OUT/all/raw.tar.xz' | grep -q 'prio.torch.r1/list.jsonl' && tar -xJOf '$OUT/all/raw.tar.xz' raw/prio.torch.r1/agent.log | grep -q 'fake agent'"
check "no -l snapshots without an agent" "! tar -tJf '$OUT/all/raw.tar.xz' | grep -q 'static.torch.r1/list.jsonl'"

# 1b. The users preset, short: three kinds (tbt), both L, the llama H's (one reading its loss
# every 20 steps), the whole-GPU configurations. Its planned length first: one 10-minute
# command with a margin for the build and the report.
planned=$(env -u PRIO_PHASE_S -u PRIO_GAP_S -u PRIO_HALONE_S PRIO_DRY=1 PRIO_SET=users PRIO_FAKE=0 \
	"$HERE/run.sh" "$OUT/dry" 2>&1 | sed -n 's/.*: ~\([0-9]*\) s (.*planned.*/\1/p')
check "users plan fits the budget with 60 s to spare (~$planned s)" "[ -n '$planned' ] && [ '$planned' -le 480 ]"
PRIO_SET=users PRIO_L=torch,cuda PRIO_H=llama,llama-sync20 PRIO_PHASE_S=0.4 PRIO_MIN_REQUESTS=10 \
	PRIO_BUDGET_S=600 "$HERE/run.sh" "$OUT/users" >"$OUT/users.log" 2>&1
check "users run exit status" "[ $? = 0 ]"
csv=$OUT/users/prio.csv
# 2 L-only runs and 4 with H per H: 10 L runs x 2 L x 3 kinds x 2 phases; H-alone and
# H-alone-whole per H, twice.
rows=$(($(wc -l <"$csv") - 1))
check "users: prio.csv rows ($rows)" "[ $rows = $((10 * 2 * 3 * 2 + 8)) ]"
check "users: tbt rows of both L" "[ \$(grep -c ',torch,tbt,\\|,cuda,tbt,' '$csv') = $((10 * 2 * 2)) ]"
check "users: scopes" "awk -F, '(\$1==\"mps-cp\" || \$1 ~ /-whole\$/) && \$19!=\"whole\" || \$1==\"static\" && \$19!=\"partition\"' '$csv' | grep -c . | grep -qx 0"
# Ratios against the baselines of their scope (one round: the baseline's row is the pool).
check "users: ratios against their scope's baselines" "python3 - '$csv' <<'EOF'
import csv, sys
rows = list(csv.DictReader(open(sys.argv[1])))
base = {'partition': ('L-alone', 'H-alone'), 'whole': ('L-alone-whole', 'H-alone-whole')}
lp = {(r['config'], r['l'], r['kind'], r['arrival']): float(r['p99_us']) for r in rows if r['l']}
hs = {}
for r in rows:
    if not r['l']:
        hs.setdefault((r['config'], r['h']), []).append(float(r['h_steps_s']))
bad = 0
for r in rows:
    if not r['l'] or r['config'].startswith('L-alone'):
        continue
    bl, bh = base[r['scope']]
    p, pb = float(r['p99_us']), lp[(bl, r['l'], r['kind'], r['arrival'])]
    px = p / pb
    hb = hs[(bh, r['h'])]
    h, hm = float(r['h_steps_s']), sum(hb) / len(hb)
    hx = h / hm
    # (the CSV's times are rounded to 0.1 us, steps/s to 0.01, ratios to 0.001: what that
    # rounding allows, a ratio of 65 not as one of 1)
    ptol = px * (0.05 / pb + 0.05 / p) + 0.0006
    htol = hx * (0.005 / hm + 0.005 / h) + 0.0006
    if abs(px - float(r['p99_x'])) > ptol or abs(hx - float(r['h_x'])) > htol:
        print(r, px, hx)
        bad += 1
sys.exit(bad)
EOF"
# llama-sync20 records every 20th step: its H ratios are there; priolib interpolates
# between the records (an exact case: 20 steps a second, a window inside a record's span).
check "users: llama-sync20's H ratios filled" "awk -F, '\$2==\"llama-sync20\" && \$1!~/^H-alone/ && !(\$17 > 0)' '$csv' | grep -c . | grep -qx 0"
check "priolib: steps between records interpolated" "python3 -c \"
import sys; sys.path.insert(0, '$HERE'); import priolib
open('$OUT/sync.steps', 'w').write('# h\\n1000000000 0\\n2000000000 20\\n3000000000 20\\n3500000000 5\\n')
pts = priolib.read_steps('$OUT/sync.steps')
assert pts == [(1e9, 0), (2e9, 20), (3e9, 40), (3.5e9, 45)], pts
r = lambda a, b: round(priolib.steps_in(pts, int(a * 1e9), int(b * 1e9)), 6)
assert (r(1.2, 1.7), r(1.5, 2.5), r(3.0, 3.5), r(3.25, 4.25), r(0.5, 1.5)) == (20, 20, 10, 2.5, 10), (
    r(1.2, 1.7), r(1.5, 2.5), r(3.0, 3.5), r(3.25, 4.25), r(0.5, 1.5))
open('$OUT/one.steps', 'w').write('100\\n200\\n300\\n')
assert round(priolib.steps_in(priolib.read_steps('$OUT/one.steps'), 100, 300), 3) == 1e7\""
sum=$OUT/users/summary.txt
check "users: a table per L, H, kind" "[ \$(grep -c '^== L [a-z]*, ' '$sum') = 12 ] && grep -q '^== L cuda, tbt, beside H llama-sync20' '$sum'"
check "users: whole-GPU section and baselines" "grep -q '^-- whole GPU' '$sum' && grep -q 'H llama alone on the whole GPU' '$sum'"
# prio-whole's H is 3x slower than mps-cp's in fake mode: every cell of it worse (W); W
# only on the defaults.
cells=$(grep '^prio-whole ' "$sum" | grep -o '[0-9]\.[0-9][0-9]/[0-9.]*[-+!W]*')
check "users: W on every prio-whole cell" "[ -n '$cells' ] && ! echo '$cells' | grep -qv 'W\$' && grep -q 'prio-whole: per 10 MISS' '$sum'"
check "users: W only on defaults" "! sed -n '/^== L [a-z]*, /,\$p' '$sum' | grep -v '^prio \\|^prio-whole ' | grep -q '[0-9]\.[0-9][0-9]/[0-9.]*[-+!]*W'"

fi

# 1c. The round5 preset, short (phases of 0.2 s, 5 requests): its planned lengths first (one
# device command of 9 minutes with the build: prio.py's plan within 480 s).
for set in round5 round5-llama round5-gpt; do
	planned=$(env -u PRIO_PHASE_S -u PRIO_GAP_S -u PRIO_HALONE_S PRIO_DRY=1 PRIO_SET=$set PRIO_FAKE=0 \
		"$HERE/run.sh" "$OUT/dry" 2>&1 | sed -n 's/.*: ~\([0-9]*\) s (.*planned.*/\1/p')
	check "$set plan fits one 9-minute command (~$planned s)" "[ -n '$planned' ] && [ '$planned' -le 480 ]"
done
check "round5 plan: tbt7b 80 requests, generate 12" "env -u PRIO_PHASE_S -u PRIO_GAP_S -u PRIO_HALONE_S PRIO_DRY=1 \
	PRIO_SET=round5 PRIO_FAKE=0 '$HERE/run.sh' '$OUT/dry' 2>&1 | grep -q 'tbt7b-poisson-10 .* 80 requests' &&
	env -u PRIO_PHASE_S -u PRIO_GAP_S -u PRIO_HALONE_S PRIO_DRY=1 PRIO_SET=round5 PRIO_FAKE=0 '$HERE/run.sh' '$OUT/dry' 2>&1 |
	grep -q 'generate-poisson-10 .* 12 requests'"
PRIO_SET=round5 PRIO_MIN_REQUESTS=5 "$HERE/run.sh" "$OUT/r5" >"$OUT/r5.log" 2>&1
check "round5 run exit status" "[ $? = 0 ]"
csv=$OUT/r5/prio.csv
# 6 L runs (L-alone-whole, L-alone-slice, static, mps-cp, slice-mps, prio-nopart) x 7 phases
# (decode periodic and Poisson, the others Poisson), H-alone-whole twice.
rows=$(($(wc -l <"$csv") - 1))
check "round5: prio.csv rows ($rows)" "[ $rows = $((6 * 7 + 2)) ]"
check "round5: each kind's phases" "[ \"\$(cut -d, -f4,5 '$csv' | grep -v '^,' | sort -u | tr '\n' ' ')\" = \
	'async,poisson decode,periodic decode,poisson generate,poisson kind,arrival prefill,poisson tbt,poisson tbt7b,poisson ' ]"
check "round5: every scope whole, every L row's busy fraction" "awk -F, 'NR > 1 && (\$19 != \"whole\" || \$4 != \"\" && !(\$20 > 0.02 && \$20 < 0.6))' '$csv' | grep -c . | grep -qx 0"
# The busy fraction again from the raw files: served x the service time L measured alone (static's
# own L on its partition before H started, L-alone-whole's for the whole-GPU configurations) / the
# phase's window; the share target H >= 1 - busy - 0.05 against the CSV's H ratio.
mkdir -p "$OUT/r5x" && tar -C "$OUT/r5x" -xJf "$OUT/r5/raw.tar.xz"
check "round5: busy fractions and share marks from the raw files" "python3 - '$csv' '$OUT/r5x/raw' <<'EOF'
import csv, json, sys
rows, raw = list(csv.DictReader(open(sys.argv[1]))), sys.argv[2]
svc = lambda d: json.load(open('%s/%s/meta.json' % (raw, d)))['l']['torch']['service_us']
own, base = svc('static.torch.r1'), svc('L-alone-whole.none.r1')
assert all(own[k] > 2 * base[k] for k in base), (own, base)  # fake: L 1.7x slower on its partition, 0.7x whole
windows = {}
for d in ('static.torch.r1', 'mps-cp.torch.r1', 'prio-nopart.torch.r1', 'L-alone-slice.none.r1'):
    for line in open('%s/%s/l-torch.csv' % (raw, d)):
        if line.startswith('# phase '):
            _, _, lab, b, e, served, _ = line.split()
            windows[(d.split('.')[0], lab)] = (int(served), int(e) - int(b))
bad = 0
for r in rows:
    key = (r['config'], '%s-%s-%s' % (r['kind'], r['arrival'], r['duty']))
    if key not in windows:
        continue
    served, ns = windows[key]
    busy = served * (own if r['config'] == 'static' else base)[r['kind']] * 1e3 / ns
    share = '' if not r['h'] else str(int(float(r['h_x']) >= 1 - busy - 0.05))
    if abs(busy - float(r['l_busy'])) > 0.0015 or share != r['share_met'] or int(r['requests']) != served:
        print(r, busy, share)
        bad += 1
sys.exit(bad)
EOF"
check "round5: the share target missed by prio-nopart (H ~0.53 of alone, busy ~0.1), marked beside H" "awk -F, '
	NR > 1 && (\$1 == \"prio-nopart\" && \$21 != 0 || \$2 != \"\" && \$4 != \"\" && \$21 !~ /^[01]\$/)' '$csv' | grep -c . | grep -qx 0"
check "round5: static's L measured alone before H started" "python3 -c \"
import json; m = json.load(open('$OUT/r5x/raw/static.torch.r1/meta.json'))
assert m['l']['torch']['measure'] and m['l_alone_ns'] < m['h_ready_ns'], m\" &&
	! grep -q l_alone_ns '$OUT/r5x/raw/mps-cp.torch.r1/meta.json'"
cmd_of() { python3 -c "import json, sys; m = json.load(open(sys.argv[1])); print(' '.join(m['l']['torch']['cmd']), '|', ' '.join(m.get('h_cmd', [])))" "$OUT/r5x/raw/$1/meta.json"; }
check "round5: slice-mps in the level servers (no --no-mps), prio-nopart a bare priority" "
	cmd_of slice-mps.torch.r1 | grep -q 'nvtaskset --priority high --yield slice .*| .*nvtaskset --priority low --yield slice ' &&
	! cmd_of slice-mps.torch.r1 | grep -q -- '--no-mps' &&
	cmd_of prio-nopart.torch.r1 | grep -q 'nvtaskset --priority high [^-][^|]*| .*nvtaskset --priority low [^-]' &&
	! cmd_of prio-nopart.torch.r1 | grep -q -- '--yield\| -g ' && cmd_of L-alone-slice.none.r1 | grep -q 'nvtaskset --priority high --yield slice '"
check "round5: -l snapshots beside priorities without an agent" "tar -tJf '$OUT/r5/raw.tar.xz' | grep -q 'slice-mps.torch.r1/list.jsonl'"
sum=$OUT/r5/summary.txt
check "round5: overview columns in order" "grep -q '^ *L-alone-whole  *L-alone-slice  *slice-mps  *static  *mps-cp  *prio-nopart *\$' '$sum'"
check "round5: overview rows" "[ \$(sed -n '/^== L torch beside H torch/,/^\$/p' '$sum' | grep -c '^[a-z0-9]* [a-z]* 10 n=[1-9][0-9]*  *[0-9]') = 7 ]"
# prio-nopart's H is ~0.53 of alone (fake): W (worse than static and mps-cp) and - (share) in
# every cell; no other column has W.
cells=$(sed -n '/^== L torch beside H torch/,/^\$/p' "$sum" | grep '^[a-z0-9]* [a-z]* 10 ' | awk '{print $NF}')
check "round5: prio-nopart -W in every overview cell" "[ \$(echo '$cells' | awk -F/ '\$2 < 0.8 && \$3 ~ /^0\.[0-9]*-W\$/' | wc -l) = 7 ]"
check "round5: W only on the default" "[ \$(sed -n '/^== L torch beside H torch/,/^\$/p' '$sum' | grep -o 'W' | wc -l) = 7 ]"
check "round5: summary names the busy fraction's service times" "grep -q \"measured alone by static's L torch (its partition, before H started)\" '$sum' &&
	grep -q 'service time of L torch alone on the whole GPU' '$sum' && grep -q 'prio-nopart: not worse than static or mps-cp' '$sum'"
# What each request costs the batch beyond L's busy share: a line per configuration with an H
# in every kind's table, a number of us per phase.
check "round5: the batch's time lost per request" "[ \$(grep -c '^     prio-nopart: per 10 [-0-9][0-9]*, poi 10 [-0-9][0-9]*\$' '$sum') = 1 ] &&
	[ \$(grep -c \"^   the batch's time lost per request\" '$sum') = 6 ]"

if [ "$PART" = all ]; then
# 2. Three rounds of ~18 s planned each, cut by a budget of 40 s (round 1 fits while start-up
# takes less than ~20 s; the three take ~44 s without any: their phases); the SVG.
PRIO_SET=quick PRIO_CASES=static PRIO_ROUNDS=3 PRIO_PHASE_S=1 PRIO_BUDGET_S=40 PRIO_NO_MPL=1 \
	"$HERE/run.sh" "$OUT/budget" >"$OUT/budget.log" 2>&1
check "run 2 exit status" "[ $? = 0 ]"
check "budget skipped some" "grep -q 'not run (budget)' '$OUT/budget/summary.txt'"
check "svg" "grep -q '</svg>' '$OUT/budget/prio.svg'"

# 3. The hard time limit ends prio.py in a configuration: it cleans up, the report covers
# what ran and says what was cut.
PRIO_SET=quick PRIO_PHASE_S=1 PRIO_TIMEOUT_S=25 "$HERE/run.sh" "$OUT/cut" >"$OUT/cut.log" 2>&1
check "cut run: exit status 1" "[ $? = 1 ]"
check "cut run: summary says interrupted" "grep -q 'interrupted: the run' '$OUT/cut/summary.txt'"
check "cut run: nothing left" "[ ! -e '$OUT/cut/.cleanup' ] && ! ps -eo args | grep -v grep | grep -q '$HERE/fake.py'"

fi

# 4. Bad knobs fail before anything runs.
PRIO_CASES=nosuch "$HERE/run.sh" "$OUT/bad" >"$OUT/bad.log" 2>&1
check "bad PRIO_CASES refused" "[ $? != 0 ] && grep -q 'PRIO_CASES: nosuch' '$OUT/bad.log'"
PRIO_H=llama,bert "$HERE/run.sh" "$OUT/bad" >"$OUT/bad.log" 2>&1
check "bad PRIO_H refused" "[ $? != 0 ] && grep -q 'PRIO_H: bert' '$OUT/bad.log'"
PRIO_KINDS=decode,tbt7b:poisson+burst "$HERE/run.sh" "$OUT/bad" >"$OUT/bad.log" 2>&1
check "bad arrival of a kind refused" "[ $? != 0 ] && grep -q 'PRIO_ARRIVALS of a kind: burst' '$OUT/bad.log'"
PRIO_L=torch,cuda PRIO_KINDS=decode,async "$HERE/run.sh" "$OUT/bad" >"$OUT/bad.log" 2>&1
check "a kind service.cu lacks refused" "[ $? != 0 ] && grep -q 'PRIO_KINDS: async: service.cu' '$OUT/bad.log'"
PRIO_MIN_REQUESTS=10,generat=5 "$HERE/run.sh" "$OUT/bad" >"$OUT/bad.log" 2>&1
check "requests of an unknown kind refused" "[ $? != 0 ] && grep -q 'PRIO_MIN_REQUESTS N' '$OUT/bad.log'"
check "requests of a known kind not run: no matter" "PRIO_SET=round5 PRIO_KINDS=decode PRIO_DRY=1 '$HERE/run.sh' '$OUT/dry' 2>&1 |
	grep -q 'at least decode 100 requests'"
PRIO_BASE=gpu "$HERE/run.sh" "$OUT/bad" >"$OUT/bad.log" 2>&1
check "bad PRIO_BASE refused" "[ $? != 0 ] && grep -q 'PRIO_BASE: gpu' '$OUT/bad.log'"
# 5. service.py and train.py on faketorch/ (shapes only): their own Python, not PyTorch's.
d=$OUT/torch; mkdir -p "$d"
PYTHONPATH=$HERE/faketorch python3 "$HERE/service.py" decode,prefill,tbt,tbtsync,tbtpoll,tbtsleep,tbt7b,async,generate "$d/ready" "$d/go" \
	"$d/l.csv" measure >"$d/l.log" 2>&1 &
pid=$!
for _ in $(seq 300); do [ -e "$d/ready" ] && break; sleep 0.1; done
python3 -c "import sys; sys.path.insert(0, '$HERE'); import priolib as p
p.write_plan('$d/go', p.make_plan(['decode', 'prefill', 'tbt', 'tbtsync', 'tbtpoll', 'tbtsleep', 'tbt7b', 'async', 'generate'],
                                  ['poisson'], [10, 100], {'decode': 600, 'prefill': 2300, 'tbt': 20000, 'tbtsync': 20000,
                                   'tbtpoll': 5000, 'tbtsleep': 5000,
                                   'tbt7b': 20000, 'async': 5000,
                                   'generate': 20000}, 0.1, min_requests=3), 0.05)"
wait $pid
# faketorch's .item() sleeps 2 ms: a tbt or tbt7b request (8 steps) takes >= 16 ms; its
# generate() 2 ms a new token.
check "service.py: measured, ran its plan" "[ \$(grep -c '^[a-z0-9]* [0-9.]*\$' '$d/ready') = 9 ] && grep -q '^# phase generate-closed-100 ' '$d/l.csv' && [ \$(grep -c '^phase ' '$d/l.log') = 18 ]"
check "service.py: tbt, tbtsync, tbt7b: 8 synchronised steps; generate: 8 tokens" "awk '\$1 ~ /^(tbt|tbtsync|tbt7b|generate)\$/ && \$2 >= 16000 {n++} END {exit n != 4}' '$d/ready'"
# async and asyncside alone, their calls traced: each request queues two steps, then per step
# waits for the token of the step before the last queued (an event) and queues the next; no
# .item(), no synchronise of the stream. asyncside copies each token on a stream of its own:
# the copier waits for the step's event, and the event the host waits on is recorded there.
for kind in async asyncside; do
	rm -f "$d/go" "$d/ready"
	PYTHONPATH=$HERE/faketorch FAKETORCH_TRACE=$d/$kind.trace python3 "$HERE/service.py" $kind "$d/ready" \
		"$d/go" "$d/$kind.csv" >"$d/$kind.log" 2>&1 &
	pid=$!
	for _ in $(seq 300); do [ -e "$d/ready" ] && break; sleep 0.1; done
	python3 -c "import sys; sys.path.insert(0, '$HERE'); import priolib as p
p.write_plan('$d/go', p.make_plan(['$kind'], ['poisson'], [10], {'$kind': 5000}, 0.1, min_requests=3), 0.05)"
	wait $pid
	check "service.py: $kind queues step k+1 before it reads step k's token" "python3 -c \"
t = open('$d/$kind.trace').read().split('\\n')[:-1]
step = ['replay'] + (['wait event', 'record on a side stream'] if '$kind' == 'asyncside' else [])
one = step * 2 + (['event sync'] + step) * 6 + ['event sync', 'event sync']
assert len(t) >= 3 * len(one) and t == one * (len(t) // len(one)), t[:40]\""
done
# tbt, tbtsync, tbtpoll and tbtsleep, their calls traced: each step a replay, then (tbtsync) the
# context's synchronisation, then the token read by .item(); or (tbtpoll, tbtsleep) its event
# polled until done (faketorch's answers "not ready" once), no .item().
for kind in tbt tbtsync tbtpoll tbtsleep; do
	rm -f "$d/go" "$d/ready"
	PYTHONPATH=$HERE/faketorch FAKETORCH_TRACE=$d/$kind.trace python3 "$HERE/service.py" $kind "$d/ready" \
		"$d/go" "$d/$kind.csv" >"$d/$kind.log" 2>&1 &
	pid=$!
	for _ in $(seq 300); do [ -e "$d/ready" ] && break; sleep 0.1; done
	python3 -c "import sys; sys.path.insert(0, '$HERE'); import priolib as p
p.write_plan('$d/go', p.make_plan(['$kind'], ['poisson'], [10], {'$kind': 20000}, 0.1, min_requests=3), 0.05)"
	wait $pid
	check "service.py: $kind's steps" "python3 -c \"
t = open('$d/$kind.trace').read().split('\\n')[:-1]
step = ['replay'] + (['context sync'] if '$kind' == 'tbtsync' else []) + (['event query'] * 2 if '$kind' in ('tbtpoll', 'tbtsleep') else ['item'])
assert len(t) >= 3 * 8 * len(step) and t == step * (len(t) // len(step)), t[:40]\""
done
rm -f "$d/stop"
PYTHONPATH=$HERE/faketorch timeout 60 python3 "$HERE/train.py" "$d/stop" "$d/hready" "$d/h" >"$d/h.log" 2>&1 &
pid=$!
for _ in $(seq 300); do [ -e "$d/hready" ] && break; sleep 0.1; done
sleep 0.3; touch "$d/stop"; wait $pid
check "train.py: ready, steps" "[ -e '$d/hready' ] && [ \$(grep -vc '^#' '$d/h.steps') -ge 5 ]"
for ms in llama:1 llama:20 gpt:1; do
	m=${ms%:*} sync=${ms#*:}
	rm -f "$d/stop" "$d/hready"
	PYTHONPATH=$HERE/faketorch timeout 60 python3 "$HERE/train.py" --model "$m" --sync "$sync" "$d/stop" "$d/hready" \
		"$d/$m$sync" >"$d/$m$sync.log" 2>&1 &
	pid=$!
	for _ in $(seq 300); do [ -e "$d/hready" ] && break; sleep 0.1; done
	sleep 0.3; touch "$d/stop"; wait $pid
	check "train.py $m --sync $sync: ready, a start mark, steps" "[ -e '$d/hready' ] && grep -q '^# h impl=$m ' '$d/$m$sync.steps' && python3 -c \"
import sys; sys.path.insert(0, '$HERE'); import priolib
lines = [l.split() for l in open('$d/$m$sync.steps') if not l.startswith('#')]
pts = priolib.read_steps('$d/$m$sync.steps')
assert lines[0][1] == '0' and all(int(l[1]) == $sync for l in lines[1:-1]) and 1 <= int(lines[-1][1]) <= $sync, lines
assert pts[-1][1] >= 20 and pts[-1][1] == sum(int(l[1]) for l in lines), pts[-1]\""
done
check "no stand-in left" "! ps -eo args | grep -v grep | grep -q '$HERE/fake.py\\|$BIN/service'"
[ $fail = 0 ] && echo "selftest passed ($OUT)" || echo "selftest FAILED ($OUT)"
exit $fail
