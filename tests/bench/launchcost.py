#!/usr/bin/env python3
"""Launch cost, decomposed (the launch rate): the host time to enqueue
one empty kernel (tests/bench/launch.cu "batches": 1000 launches, waited for
untimed, 201 times; the 10th percentile and the median) in fresh processes
pinned to one CPU, outside MPS, interleaved over rounds:
  plain          no shim
  plain-again    the same as plain: its ratio shows what the measurement
                 alone moves (an A/A control)
  shim-unset     the shim loaded through the wrapper, no partition (the
                 callback runs, finds no slot, returns)
  nvtaskset      nvtaskset -n 33
  no-graphs      nvtaskset -n 33 with NVTASKSET_GRAPHS=0 (no graph callbacks)
  no-api         nvtaskset -n 33 with NVTASKSET_GRAPHS=0 NVTASKSET_SM_COUNT=gpu (of the
                 driver-API callbacks, only the cooperative launch calls' remain)
  priority-high  nvtaskset --priority high -n 33 (its shim counts its requests)
  priority-low   nvtaskset --priority low -n 33 with no higher task running (its shim
                 follows its launch calls, and finds nobody to yield to)
  NAME           nvtaskset -n 33 of other builds (LAUNCH_VARIANTS="NAME=ROOT,...")
Ratios are rates: plain's time / the case's time, paired by round, with a
bootstrap 90% interval of their median. The cases run in a different order
in each round (rotated, and reversed every other round), so that no case is
always first after a pause.

LAUNCH_TIMERS=ROOT: also runs 3 processes of nvtaskset -n 33 from ROOT, a
tree built with `make CPPFLAGS=-DNVT_SHIM_TIMERS`, and keeps the shim's
rdtsc breakdown of the launch callback (timers.txt).

LAUNCH_EX=1 launches through cudaLaunchKernelEx ("launch batches-ex"), whose
driver calls (cuLaunchKernelEx) every task follows to find cooperative ones.

Usage: launchcost.py ROOT BIN OUTDIR   (LAUNCH_ROUNDS=15 LAUNCH_CPU=3 LAUNCH_VARIANTS=NAME=ROOT,...
                                        LAUNCH_TIMERS=ROOT LAUNCH_CASES=plain,NAME,... LAUNCH_EX=1)
"""
import csv
import os
import random
import statistics
import subprocess
import sys

ROOT, BIN, OUT = sys.argv[1], sys.argv[2], sys.argv[3]
ROUNDS = int(os.environ.get("LAUNCH_ROUNDS", "15"))
CPU = os.environ.get("LAUNCH_CPU", "3")
VARIANTS = [v.split("=", 1) for v in os.environ.get("LAUNCH_VARIANTS", "").split(",") if v]
os.makedirs(OUT, exist_ok=True)
ENV = dict(os.environ, CUDA_MPS_PIPE_DIRECTORY="/dev/null")
for k in ("LD_PRELOAD", "NVTASKSET_PARTITION", "NVTASKSET_GRAPHS", "NVTASKSET_SM_COUNT"):
    ENV.pop(k, None)
PROBE = [os.path.join(BIN, "launch"), "batches-ex" if os.environ.get("LAUNCH_EX") == "1" else "batches", "1000", "201"]
NVT = os.path.join(ROOT, "build/bin/nvtaskset")
CASES = [
    ("plain", PROBE, ENV),
    ("plain-again", PROBE, ENV),
    ("shim-unset", PROBE, dict(ENV, LD_LIBRARY_PATH=os.path.join(ROOT, "build/lib/nvtaskset/wrapper"))),
    ("nvtaskset", [NVT, "--no-mps", "-n", "33"] + PROBE, ENV),
    ("no-graphs", [NVT, "--no-mps", "-n", "33"] + PROBE, dict(ENV, NVTASKSET_GRAPHS="0")),
    ("no-api", [NVT, "--no-mps", "-n", "33"] + PROBE, dict(ENV, NVTASKSET_GRAPHS="0", NVTASKSET_SM_COUNT="gpu")),
    ("priority-high", [NVT, "--no-mps", "--priority", "high", "-n", "33"] + PROBE, ENV),
    ("priority-low", [NVT, "--no-mps", "--priority", "low", "-n", "33"] + PROBE, ENV),
]
for name, root in VARIANTS:
    CASES.append((name, [os.path.join(root, "build/bin/nvtaskset"), "--no-mps", "-n", "33"] + PROBE, ENV))
ONLY = [c for c in os.environ.get("LAUNCH_CASES", "").split(",") if c]
if ONLY:
    unknown = sorted(set(ONLY) - {c[0] for c in CASES})
    if unknown or "plain" not in ONLY:
        sys.exit("LAUNCH_CASES: %s (plain is needed: the ratios are against it)" % ",".join(unknown or ONLY))
    CASES = [c for c in CASES if c[0] in ONLY]


def run(args, env):
    p = subprocess.run(["taskset", "-c", CPU] + args, env=env, capture_output=True, text=True, timeout=120)
    if p.returncode:
        raise RuntimeError("%s: %s" % (" ".join(args), p.stderr[-400:]))
    return p


def measure(args, env):
    kv = dict(x.split("=", 1) for x in run(args, env).stdout.split()[-2:])
    return float(kv["p10_us"]), float(kv["median_us"])


def interval(ratios, rng):
    """Bootstrap 90% interval of the median of ratios."""
    meds = sorted(statistics.median(rng.choices(ratios, k=len(ratios))) for _ in range(2000))
    return meds[100], meds[1899]


def main():
    rows = []
    for rnd in range(ROUNDS):
        k = rnd % len(CASES)
        order = CASES[k:] + CASES[:k]
        if rnd % 2:
            order.reverse()
        for name, args, env in order:
            p10, med = measure(args, env)
            rows.append((rnd, name, p10, med))
    with open(os.path.join(OUT, "launchcost.csv"), "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["round", "case", "p10_us", "median_us"])
        w.writerows(rows)
    rng = random.Random(1)
    lines = ["Enqueue time per empty-kernel launch, %d interleaved rounds, CPU %s, outside MPS" % (ROUNDS, CPU)]
    for i, what in ((2, "10th percentile"), (3, "median")):
        lines.append("%s of each process's 201 batches of 1000 launches:" % what)
        plain = {r[0]: r[i] for r in rows if r[1] == "plain"}
        for name, _, _ in CASES:
            mine = {r[0]: r[i] for r in rows if r[1] == name}
            ratios = [plain[k] / mine[k] for k in mine]
            lo, hi = interval(ratios, rng)
            lines.append("  %-11s median %.3f us (min %.3f, max %.3f); rate ratio to plain, median of paired: %.4f "
                         "(90%% interval %.4f-%.4f); extra per launch %.0f ns"
                         % (name, statistics.median(mine.values()), min(mine.values()), max(mine.values()),
                            statistics.median(ratios), lo, hi,
                            1000 * (statistics.median(mine.values()) - statistics.median(plain.values()))))
    timers = os.environ.get("LAUNCH_TIMERS")
    if timers:
        nvt = os.path.join(timers, "build/bin/nvtaskset")
        with open(os.path.join(OUT, "timers.txt"), "w") as f:
            for _ in range(3):
                p = run([nvt, "--no-mps", "-n", "33"] + PROBE, ENV)
                f.write("".join(l + "\n" for l in p.stderr.splitlines() if "timers:" in l))
        lines.append("rdtsc breakdown of the callback (build %s): timers.txt" % timers)
    text = "\n".join(lines)
    open(os.path.join(OUT, "launchcost.txt"), "w").write(text + "\n")
    print(text, flush=True)


if __name__ == "__main__":
    main()
