#!/bin/bash
# Run L3: the held-step learner biased towards held steps (HEAD plus bias.patch: held unless
# released steps beat held ones by the margin, whatever the way taken) against HEAD's learner
# and always held. Part "beside": the eager service (periodic and Poisson) and token-by-token
# requests (tbt, Poisson) beside GEMM training: L alone, static (GPCs 0-1 / 2-11), the default
# (HEAD), the variant (its shim chosen by NVTASKSET_SHIM), always held. Part "alone": the same
# services alone in the high level (no batch): whole-GPU alone, the default, the variant,
# always held. 2 rounds, 300 requests a phase.
set -u
PART=${1:?part: beside or alone}
ROOT=$PWD
ls build/dev/head/Makefile build/dev/var/Makefile >/dev/null || { echo "no trees"; exit 1; }
J=$ROOT/build/.jsonc
FL=("JSONC_CFLAGS=-I$J/include -I$J/include/json-c" "JSONC_LIBS=$J/lib/libjson-c.a")
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
date -u
(cd build/dev/head && make -j16 "${FL[@]}" all >"$OUT/build-head.log" 2>&1) || { tail -30 "$OUT/build-head.log"; exit 1; }
(cd build/dev/var && make -j16 "${FL[@]}" all >"$OUT/build-var.log" 2>&1) || { tail -30 "$OUT/build-var.log"; exit 1; }
echo "built $(date +%T)"
VAR_SHIM=$ROOT/build/dev/var/build/lib/nvtaskset/libnvtaskset.so
ls -l "$VAR_SHIM" build/dev/head/build/lib/nvtaskset/libnvtaskset.so
cd build/dev/head || exit 1
if [ "$PART" = beside ]; then
	H='["--priority", "low"]'
	CASES=L-alone-whole,H-alone-whole,static,prio-trace,prio-bias,prio-hold1
else
	H=null
	CASES=L-alone-whole,prio-trace,prio-bias,prio-hold1
fi
cat > /tmp/l3.json <<JSON
[{"name": "prio-trace", "l": ["--priority", "high"], "h": $H, "l_env": {"NVTASKSET_BRIDGE_DEBUG": "1", "NVTASKSET_BRIDGE_TRACE": "/tmp/nvt-bridge-trace/head"}, "agent": [], "whole": true},
 {"name": "prio-bias", "l": ["--priority", "high"], "h": $H, "l_env": {"NVTASKSET_BRIDGE_DEBUG": "1", "NVTASKSET_SHIM": "$VAR_SHIM", "NVTASKSET_BRIDGE_TRACE": "/tmp/nvt-bridge-trace/var"}, "agent": [], "whole": true},
 {"name": "prio-hold1", "l": ["--priority", "high"], "h": $H, "l_env": {"NVTASKSET_BRIDGE_DEBUG": "1", "NVTASKSET_BRIDGE_HOLD": "1"}, "agent": [], "whole": true}]
JSON
mkdir -p "$OUT/r/steps" /tmp/nvt-bridge-trace
PRIO_T0=$(date +%s.%N)
export PRIO_T0
PRIO_STEP_TRACE=$OUT/r/steps PRIO_CONFIG_FILE=/tmp/l3.json PRIO_MIN_REQUESTS=300 PRIO_ROUNDS=2 \
	PRIO_L=torch PRIO_H=torch PRIO_KINDS=eager,tbt:poisson PRIO_ARRIVALS=periodic,poisson \
	PRIO_CASES=$CASES timeout 540 make "${FL[@]}" bench-prio \
	PRIO_SET=round5 PRIO_BUDGET_S=520 PRIO_TIMEOUT_S=535 BENCH_OUT=/tmp/b >"$OUT/r/bench.out" 2>&1
echo "bench rc $? $(date +%T)"
sed -n '/== L /,/^Cells/p' /tmp/b/prio/summary.txt
cp /tmp/b/prio/summary.txt /tmp/b/prio/prio.csv /tmp/b/prio/raw.tar.xz "$OUT/r/" 2>/dev/null
cp /tmp/l3.json "$OUT/r/"
tar -czf "$OUT/r/bridgetrace.tgz" -C /tmp nvt-bridge-trace 2>/dev/null
rm -rf /tmp/nvt-bridge-trace /tmp/b
build/bin/nvtaskset --mps stop 2>/dev/null
pgrep -a nvidia-cuda-mps | grep -v defunct && echo "MPS daemons still running"
date -u
tar -czf "$OUT/l3$PART.tgz" -C "$OUT" r && rm -rf "$OUT/r"
exit 0
