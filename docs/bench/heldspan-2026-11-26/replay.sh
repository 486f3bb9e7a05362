#!/bin/bash
# replay.sh STEPS_DIR... - each learner version (e121416: tries 1 in 16-32; 7cd4146: tries ever
# further apart; 17138c9: and a margin both ways; 3b676bb: a moved median never puts a try later)
# replayed on the never-held and always-held runs' later steps of each STEPS_DIR (runs H6 and
# H7: PRIO_STEP_TRACE's files); from the repository root.
set -eu
D=$(dirname "$0")
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
for v in e121416 7cd4146 17138c9 3b676bb; do
	mkdir -p "$T/$v/core"
	git show "$v:src/core/bridge.c" >"$T/$v/core/bridge.c"
	git show "$v:src/core/yield.h" >"$T/$v/core/yield.h"
	gcc -O2 -I"$T/$v" -Isrc -o "$T/replay-$v" "$D/replay.c" "$T/$v/core/bridge.c"
done
for s in "$@"; do
	for w in hold0 hold1; do
		awk '$1 == "eager" { for (i = 3; i <= NF; i++) print int($i / 1000) }' \
			"$s/steps-prio-$w.torch.r1.txt" >"$T/$w.txt"
	done
	echo "== $s: never held, always held, the learners"
	for w in hold0 hold1; do printf '  %-8s ' "$w"; "$T/replay-e121416" "$T/$w.txt" "$T/$w.txt"; done
	for v in e121416 7cd4146 17138c9 3b676bb; do printf '  %-8s ' "$v"; "$T/replay-$v" "$T/hold0.txt" "$T/hold1.txt"; done
done
