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
                 publishes its requests as a high task's does)
  yield-protect  nvtaskset --priority low --yield protect -n 33, no higher task (its shim
                 follows its launch calls, and finds nobody to yield to)
  slice          nvtaskset --priority low --yield slice -n 33 (time-sliced: its channel
                 groups' timeslice set, its thread following higher tasks)
  bridged        nvtaskset --priority high, no partition (time-sliced; its waits bridged)
  bridged-chained  the same with NVTASKSET_BRIDGE_REARM=1 (its kernel launch calls followed for
                 held steps' chains)
  mem            nvtaskset --mem SIZE -n 33 (LAUNCH_MEM, default 1G), where nvtaskset has --mem
  NAME           nvtaskset -n 33 of other builds (LAUNCH_VARIANTS="NAME=ROOT,...")
  CASE@base      with LAUNCH_BASE=ROOT: each case above that loads the shim (shim-unset to
                 priority-low) again with the build in ROOT (a tree built with make, the
                 code before a change, say)
Ratios are rates: plain's time / the case's time, paired by round, with a
bootstrap 90% interval of their median. With LAUNCH_BASE, each CASE is also
compared with CASE@base, paired by round: base's time / this build's (above 1:
this build launches faster). The cases run in a different order
in each round (rotated, and reversed every other round), so that no case is
always first after a pause.

LAUNCH_TIMERS=ROOT: also runs 3 processes of nvtaskset -n 33 from ROOT, a
tree built with `make CPPFLAGS=-DNVT_SHIM_TIMERS`, and keeps the shim's
rdtsc breakdown of the launch callback (timers.txt).

LAUNCH_EX=1 launches through cudaLaunchKernelEx ("launch batches-ex"), whose
driver calls (cuLaunchKernelEx) every task follows to find cooperative ones.

LAUNCH_BATCHES=N,REPS: the probe's batches (default 1000,201).

LAUNCH_DEADLINE=S: starts no round that would end after S seconds (judged by the round before),
so that a run under `timeout` ends with what it measured (make bench-launch-forms).

Usage: launchcost.py ROOT BIN OUTDIR   (LAUNCH_ROUNDS=15 LAUNCH_CPU=3 LAUNCH_VARIANTS=NAME=ROOT,...
                                        LAUNCH_TIMERS=ROOT LAUNCH_CASES=plain,NAME,... LAUNCH_EX=1
                                        LAUNCH_BASE=ROOT LAUNCH_BATCHES=N,REPS LAUNCH_DEADLINE=S)
BIN holds the probe, `launch` (tests/bench/launch.cu built with nvcc).
"""
import csv
import os
import random
import re
import statistics
import subprocess
import sys
import time

ROOT, BIN, OUT = sys.argv[1], sys.argv[2], sys.argv[3]
ROUNDS = int(os.environ.get("LAUNCH_ROUNDS", "15"))
CPU = os.environ.get("LAUNCH_CPU", "3")
VARIANTS = [v.split("=", 1) for v in os.environ.get("LAUNCH_VARIANTS", "").split(",") if v]
os.makedirs(OUT, exist_ok=True)
ENV = dict(os.environ, CUDA_MPS_PIPE_DIRECTORY="/dev/null")
for k in ("LD_PRELOAD", "NVTASKSET_PARTITION", "NVTASKSET_GRAPHS", "NVTASKSET_SM_COUNT"):
    ENV.pop(k, None)
BATCHES = os.environ.get("LAUNCH_BATCHES", "1000,201").split(",")
PROBE = [os.path.join(BIN, "launch"), "batches-ex" if os.environ.get("LAUNCH_EX") == "1" else "batches"] + BATCHES
BASE = os.environ.get("LAUNCH_BASE")


def has_mem(nvt):
    """Whether nvt has --mem (not --memory-half, which getopt would take --mem for)."""
    # (--help-all lists every option; a build older than it, --help)
    text = "".join(subprocess.run([nvt, h], capture_output=True, text=True, timeout=60).stdout
                   for h in ("--help-all", "--help"))
    return re.search(r"--mem(?![\w-])", text) is not None


def shim_cases(root, suffix=""):
    """The cases that load the shim of the build in root."""
    nvt = os.path.join(root, "build/bin/nvtaskset")
    wrapper = os.path.join(root, "build/lib/nvtaskset/wrapper")
    mem = [("mem" + suffix, [nvt, "--no-mps", "--mem", os.environ.get("LAUNCH_MEM", "1G"), "-n", "33"] + PROBE,
            ENV)] if has_mem(nvt) else []
    return [
        ("shim-unset" + suffix, PROBE, dict(ENV, LD_LIBRARY_PATH=":".join(
            [wrapper] + ([ENV["LD_LIBRARY_PATH"]] if ENV.get("LD_LIBRARY_PATH") else [])))),
        ("nvtaskset" + suffix, [nvt, "--no-mps", "-n", "33"] + PROBE, ENV),
        ("no-graphs" + suffix, [nvt, "--no-mps", "-n", "33"] + PROBE, dict(ENV, NVTASKSET_GRAPHS="0")),
        ("no-api" + suffix, [nvt, "--no-mps", "-n", "33"] + PROBE,
         dict(ENV, NVTASKSET_GRAPHS="0", NVTASKSET_SM_COUNT="gpu")),
        ("priority-high" + suffix, [nvt, "--no-mps", "--priority", "high", "-n", "33"] + PROBE, ENV),
        ("priority-low" + suffix, [nvt, "--no-mps", "--priority", "low", "-n", "33"] + PROBE, ENV),
        ("yield-protect" + suffix, [nvt, "--no-mps", "--priority", "low", "--yield", "protect", "-n", "33"] + PROBE,
         ENV),
        ("slice" + suffix, [nvt, "--no-mps", "--priority", "low", "--yield", "slice", "-n", "33"] + PROBE, ENV),
        ("bridged" + suffix, [nvt, "--no-mps", "--priority", "high"] + PROBE, ENV),
        ("bridged-chained" + suffix, [nvt, "--no-mps", "--priority", "high"] + PROBE,
         dict(ENV, NVTASKSET_BRIDGE_REARM="1")),
    ] + mem


CASES = [("plain", PROBE, ENV), ("plain-again", PROBE, ENV)] + shim_cases(ROOT)
if BASE:
    CASES += shim_cases(BASE, "@base")
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


def against_base(rows, i, rng):
    """Each case that has a CASE@base: its rate against the base build's, paired by round."""
    names = [c[0] for c in CASES]
    out = []
    for name in names:
        if name + "@base" not in names:
            continue
        mine = {r[0]: r[i] for r in rows if r[1] == name}
        base = {r[0]: r[i] for r in rows if r[1] == name + "@base"}
        ratios = [base[k] / mine[k] for k in mine if k in base]
        if not ratios:
            continue
        lo, hi = interval(ratios, rng)
        out.append("    %-11s against %s@base: rate ratio, median of paired: %.4f (90%% interval %.4f-%.4f)"
                   % (name, name, statistics.median(ratios), lo, hi))
    return out


def main():
    rows, begin, deadline, done = [], time.monotonic(), float(os.environ.get("LAUNCH_DEADLINE", "0")), 0
    for rnd in range(ROUNDS):
        now = time.monotonic()
        if deadline and rnd and now + (now - begin) / rnd > begin + deadline:
            break
        done = rnd + 1
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
    lines = ["Enqueue time per empty-kernel launch, %d interleaved rounds, CPU %s, outside MPS%s"
             % (done, CPU, " (LAUNCH_DEADLINE: %d of %d rounds)" % (done, ROUNDS) if done < ROUNDS else "")]
    for i, what in ((2, "10th percentile"), (3, "median")):
        lines.append("%s of each process's %s batches of %s launches:" % (what, BATCHES[1], BATCHES[0]))
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
        lines.extend(against_base(rows, i, rng))
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
