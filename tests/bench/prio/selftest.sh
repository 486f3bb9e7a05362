#!/usr/bin/env bash
# The priorities benchmark without a GPU (PRIO_FAKE=1): prio.py's orchestration and
# prio_report.py end to end with fake.py's stand-ins (and service.cu's host code on
# cudart_stub.c where nvcc is here), every configuration, both L and both H, one made to
# fail; then a run cut by its budget, with the hand-drawn SVG; one cut by its time limit; bad
# knobs; then service.py and train.py on
# faketorch/ (their Python, not PyTorch's). Checks the files and rows
# and that no stand-in is left running. About 4 minutes (with nvcc; more on a loaded machine).
#   tests/bench/prio/selftest.sh [KEEPDIR]
set -u
HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=$(cd "$HERE/../../.." && pwd)
OUT=${1:-$(mktemp -d /tmp/prio-selftest.XXXX)}
BIN=$OUT/bin
mkdir -p "$BIN"
fail=0
check() { if eval "$2"; then echo "ok   $1"; else echo "FAIL $1"; fail=1; fi; }
if command -v nvcc >/dev/null; then
	nvcc -O1 -arch=sm_90 -cudart none -o "$BIN/service" "$HERE/service.cu" "$HERE/cudart_stub.c" ||
		{ echo "FAIL service.cu with cudart_stub.c"; fail=1; }
fi
for f in "$HERE"/*.py; do python3 -m py_compile "$f" || fail=1; done

# 1. Everything, one round; yield-borrow's L fails.
export PRIO_FAKE=1 PRIO_BIN=$BIN PRIO_PHASE_S=0.15 PRIO_GAP_S=0.03 PRIO_HALONE_S=0.3
PRIO_H=torch,hog PRIO_L=torch,cuda PRIO_DUTIES=5,30,100 PRIO_ROUNDS=1 PRIO_FAKE_FAIL=yield-borrow \
	PRIO_BUDGET_S=600 "$HERE/run.sh" "$OUT/all" >"$OUT/all.log" 2>&1
check "run 1 exit status" "[ $? = 0 ]"
csv=$OUT/all/prio.csv
# rows: L-alone once and 11 configurations per H: 23 L runs x 2 L, less yield-borrow's 2 L
# torch (it failed), x 2 kinds x 5 phases, and H-alone per H at the start and the end.
rows=$(($(wc -l <"$csv") - 1))
check "prio.csv rows ($rows)" "[ $rows = $(((23 * 2 - 2) * 2 * 5 + 4)) ]"
check "prio.csv header" "head -1 '$csv' | grep -q '^config,h,l,kind,arrival,duty,round,requests,dropped,p50_us,p99_us'"
check "L-alone's ratios are 1" "awk -F, '\$1==\"L-alone\" && \$14!=\"1.000\"' '$csv' | grep -c . | grep -qx 0"
check "H ratios filled" "awk -F, '\$1==\"static\" && \$17==\"\"' '$csv' | grep -c . | grep -qx 0"
check "cuda L is service.cu on the stub" "[ ! -x '$BIN/service' ] || tar -xJOf '$OUT/all/raw.tar.xz' raw/static.torch.r1/meta.json | grep -q '\"$BIN/service\"'"
check "summary: failure with its log" "grep -q 'FAILED yield-borrow (H torch' '$OUT/all/summary.txt' && grep -q 'failing as asked' '$OUT/all/summary.txt'"
tables=$(grep -c '^== L ' "$OUT/all/summary.txt")
check "summary: a table per L, H, kind ($tables)" "[ '$tables' = 8 ]"
check "summary: targets" "grep -q 'not worse than static: met' '$OUT/all/summary.txt' && grep -q 'H >= 0.95 of static.s: met' '$OUT/all/summary.txt'"
check "plot" "[ -s '$OUT/all/prio.png' ] || grep -q '</svg>' '$OUT/all/prio.svg'"
check "raw.tar.xz, raw/ removed" "[ -s '$OUT/all/raw.tar.xz' ] && [ ! -d '$OUT/all/raw' ]"
check "agent log and -l snapshots" "tar -tJf '$OUT/all/raw.tar.xz' | grep -q 'prio.torch.r1/list.jsonl' && tar -xJOf '$OUT/all/raw.tar.xz' raw/prio.torch.r1/agent.log | grep -q 'fake agent'"
check "no -l snapshots without an agent" "! tar -tJf '$OUT/all/raw.tar.xz' | grep -q 'static.torch.r1/list.jsonl'"

# 2. Three rounds of ~22 s planned each, cut by a budget of 50 s (round 1 fits while start-up
# takes less than ~25 s, and not all three even without any); the SVG.
PRIO_SET=quick PRIO_CASES=static PRIO_ROUNDS=3 PRIO_PHASE_S=1 PRIO_BUDGET_S=50 PRIO_NO_MPL=1 \
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

# 4. Bad knobs fail before anything runs.
PRIO_CASES=nosuch "$HERE/run.sh" "$OUT/bad" >"$OUT/bad.log" 2>&1
check "bad PRIO_CASES refused" "[ $? != 0 ] && grep -q 'PRIO_CASES: nosuch' '$OUT/bad.log'"
# 5. service.py and train.py on faketorch/ (shapes only): their own Python, not PyTorch's.
d=$OUT/torch; mkdir -p "$d"
PYTHONPATH=$HERE/faketorch python3 "$HERE/service.py" decode,prefill "$d/ready" "$d/go" "$d/l.csv" measure \
	>"$d/l.log" 2>&1 &
pid=$!
for _ in $(seq 300); do [ -e "$d/ready" ] && break; sleep 0.1; done
python3 -c "import sys; sys.path.insert(0, '$HERE'); import priolib as p
p.write_plan('$d/go', p.make_plan(['decode', 'prefill'], ['poisson'], [10, 100], {'decode': 600, 'prefill': 2300}, 0.2), 0.05)"
wait $pid
check "service.py: measured, ran its plan" "grep -q '^decode ' '$d/ready' && grep -q '^# phase prefill-closed-100 ' '$d/l.csv' && [ \$(grep -c '^phase ' '$d/l.log') = 4 ]"
rm -f "$d/stop"
PYTHONPATH=$HERE/faketorch timeout 60 python3 "$HERE/train.py" "$d/stop" "$d/hready" "$d/h" >"$d/h.log" 2>&1 &
pid=$!
for _ in $(seq 300); do [ -e "$d/hready" ] && break; sleep 0.1; done
sleep 0.3; touch "$d/stop"; wait $pid
check "train.py: ready, steps" "[ -e '$d/hready' ] && [ \$(grep -vc '^#' '$d/h.steps') -ge 5 ]"
check "no stand-in left" "! ps -eo args | grep -v grep | grep -q '$HERE/fake.py\\|$BIN/service'"
[ $fail = 0 ] && echo "selftest passed ($OUT)" || echo "selftest FAILED ($OUT)"
exit $fail
