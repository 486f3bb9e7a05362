#!/usr/bin/env python3
"""What each part of nvtaskset adds to a program's start-up (make bench-startup-parts).

Wall time from fork to exit of fresh processes of
  cuda    tests/bench/startup.cu (allocate, one kernel, copy back)
  torch   python3: import torch, one kernel, read it back
in each case below, inside MPS (a daemon of this run's own) and outside it:
  plain      the program alone
  shim-bare  LD_PRELOAD=the shim and the partition nvtaskset would give (every
             TPC), with graph following and the SM count off
             (NVTASKSET_GRAPHS=0 NVTASKSET_SM_COUNT=gpu): the shim's set-up and
             its launch callback
  shim       the same with graph following and the SM count (the defaults): what
             their driver callbacks add
  shim-low   shim, with NVTASKSET_PRIORITY=low: the yield set-up (no agent runs)
  nvtaskset  nvtaskset -c all (--no-mps outside MPS): the command too
  channels8  nvtaskset --channels 8 -c all: 8 channels (CUDA_DEVICE_MAX_CONNECTIONS)
Rounds interleave every case of a program, in an order rotated each round and
reversed every other. Each shim case also runs STARTUP_DEBUG_RUNS (3) times more
with NVTASKSET_START_DEBUG=1, whose line gives the shim's own set-up by part.

Writes OUTDIR/startup_parts.csv (every process), setup_parts.csv (the shim's
parts), summary.md (median [min-max] of each case, its ratio to plain: of the
medians, and the median of the rounds' paired ratios; the shim's parts), and
README.md (device, date, command, the summary).

Usage: startup_parts.py ROOT OUTDIR   (STARTUP_ROUNDS=9 TORCH_ROUNDS=3
       STARTUP_PROGRAMS=cuda,torch STARTUP_MODES=mps,nomps STARTUP_DEADLINE=S:
       start no round after S seconds; STARTUP_DEBUG_RUNS=3; STARTUP_CASES=plain,nvtaskset:
       only those cases, for more rounds of PyTorch's wide spread in the same time)
"""
import csv
import os
import re
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time

if len(sys.argv) != 3:
    sys.exit(__doc__)
ROOT, OUT = os.path.abspath(sys.argv[1]), os.path.abspath(sys.argv[2])
HERE = os.path.dirname(os.path.abspath(__file__))
NVT = os.path.join(ROOT, "build/bin/nvtaskset")
SHIM = os.path.join(ROOT, "build/lib/nvtaskset/libnvtaskset.so")
WORK = tempfile.mkdtemp(prefix="nvt-startup-parts.")
ROUNDS = {"cuda": int(os.environ.get("STARTUP_ROUNDS", "9")), "torch": int(os.environ.get("TORCH_ROUNDS", "3"))}
PROGRAMS = os.environ.get("STARTUP_PROGRAMS", "cuda,torch").split(",")
MODES = os.environ.get("STARTUP_MODES", "mps,nomps").split(",")
DEADLINE = time.time() + float(os.environ.get("STARTUP_DEADLINE", "1e9"))
DEBUG_RUNS = int(os.environ.get("STARTUP_DEBUG_RUNS", "3"))
ALL_CASES = ("plain", "shim-bare", "shim", "shim-low", "nvtaskset", "channels8")
CASES = tuple(c for c in ALL_CASES if c in os.environ.get("STARTUP_CASES", ",".join(ALL_CASES)).split(","))
if "plain" not in CASES or len(CASES) < 2:
    sys.exit("startup_parts: STARTUP_CASES names plain and at least one of " + ", ".join(ALL_CASES[1:]))
BASE = dict(os.environ, CUDA_MPS_PIPE_DIRECTORY=os.path.join(WORK, "mps"),
            CUDA_MPS_LOG_DIRECTORY=os.path.join(WORK, "mpslog"))
for k in ("CUDA_DEVICE_MAX_CONNECTIONS", "LD_PRELOAD", "NVTASKSET_PARTITION", "NVTASKSET_PARTITION_FOR",
          "NVTASKSET_PRIORITY", "CUDA_MPS_ACTIVE_THREAD_PERCENTAGE", "NVTASKSET_GRAPHS", "NVTASKSET_SM_COUNT",
          "NVTASKSET_START_DEBUG"):
    BASE.pop(k, None)
TORCH = ("import torch\n"
         "assert torch.ones(4, device='cuda').add_(1).sum().item() == 8\n")
PART_RE = re.compile(r"start-up of pid \d+: ([0-9.]+) ms in all \((.*) ms\)")


def run(args, env, timeout=180):
    t0 = time.perf_counter()
    p = subprocess.run(args, env=env, capture_output=True, text=True, timeout=timeout)
    ms = (time.perf_counter() - t0) * 1e3
    if p.returncode:
        raise RuntimeError("%s failed (%d): %s" % (" ".join(args), p.returncode, p.stderr[-600:]))
    return ms, p.stderr


def partition_record(mode_env):
    """The NVTASKSET_PARTITION nvtaskset gives a task on every TPC."""
    _, _ = run([NVT, "--no-mps", "-c", "all", "true"], mode_env)
    p = subprocess.run([NVT, "--no-mps", "-c", "all", "/usr/bin/env"], env=mode_env, capture_output=True,
                       text=True, timeout=60)
    rec = [l.split("=", 1)[1] for l in p.stdout.splitlines() if l.startswith("NVTASKSET_PARTITION=")]
    if p.returncode or not rec:
        raise RuntimeError("no partition record from nvtaskset: %s" % p.stderr[-600:])
    return rec[0]


def cases(program, probe, record):
    """(mode, case, argv, env) of every case of program."""
    argv = [probe] if program == "cuda" else [sys.executable, "-c", TORCH]
    out = []
    for mode in MODES:
        env = dict(BASE) if mode == "mps" else dict(BASE, CUDA_MPS_PIPE_DIRECTORY="/dev/null")
        nvt = [NVT] if mode == "mps" else [NVT, "--no-mps"]
        shim = dict(env, LD_PRELOAD=SHIM, NVTASKSET_PARTITION=record)
        out += [(mode, "plain", argv, env),
                (mode, "shim-bare", argv, dict(shim, NVTASKSET_GRAPHS="0", NVTASKSET_SM_COUNT="gpu")),
                (mode, "shim", argv, shim),
                (mode, "shim-low", argv, dict(shim, NVTASKSET_PRIORITY="low")),
                (mode, "nvtaskset", nvt + ["-c", "all"] + argv, env),
                (mode, "channels8", nvt + ["--channels", "8", "-c", "all"] + argv, env)]
    return [c for c in out if c[1] in CASES]


def spread(xs):
    return "%.0f [%.0f-%.0f]" % (statistics.median(xs), min(xs), max(xs))


def summarise(rows, parts, device):
    by = {}
    for rnd, program, mode, case, ms in rows:
        by.setdefault((program, mode, case), {})[rnd] = ms
    lines = ["Wall time of fresh processes, fork to exit, in ms: median [min-max] over the rounds. Ratio: "
             "median over plain's median (in brackets: the median of the rounds' paired ratios).", "",
             "| program | MPS | case | ms | / plain |", "|---|---|---|---|---|"]
    for program in PROGRAMS:
        for mode in MODES:
            plain = by.get((program, mode, "plain"), {})
            for case in CASES:
                got = by.get((program, mode, case))
                if not got:
                    continue
                ratio = "-"
                if plain and case != "plain":
                    paired = [got[r] / plain[r] for r in got if r in plain]
                    ratio = "%.3f (%.3f)" % (statistics.median(got.values()) / statistics.median(plain.values()),
                                             statistics.median(paired))
                lines.append("| %s | %s | %s | %s | %s |" % (program, "yes" if mode == "mps" else "no", case,
                                                             spread(list(got.values())), ratio))
    if parts:
        names = list(parts[0][4].keys())
        lines += ["", "The shim's own set-up (NVTASKSET_START_DEBUG), ms, median over %d runs of each:" % DEBUG_RUNS, "",
                  "| program | MPS | case | all | %s |" % " | ".join(names), "|---|---|---|---|%s" % ("---|" * len(names))]
        keys = sorted({(p, m, c) for p, m, c, _, _ in parts}, key=lambda k: (PROGRAMS.index(k[0]), MODES.index(k[1]),
                                                                              CASES.index(k[2])))
        for key in keys:
            sel = [(a, d) for p, m, c, a, d in parts if (p, m, c) == key]
            lines.append("| %s | %s | %s | %.3f | %s |" % (key[0], "yes" if key[1] == "mps" else "no", key[2],
                                                           statistics.median(a for a, _ in sel),
                                                           " | ".join("%.3f" % statistics.median(d[n] for _, d in sel)
                                                                      for n in names)))
    return lines


def main():
    # A time limit's SIGTERM ends the runs, not the results: the files are written on the way out.
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    os.makedirs(OUT, exist_ok=True)
    smi = subprocess.run(["nvidia-smi", "--query-gpu=name,driver_version", "--format=csv,noheader"],
                         capture_output=True, text=True).stdout.strip()
    probe = os.path.join(WORK, "startup")
    subprocess.run(["nvcc", "-O2", "-arch=native", "-o", probe, os.path.join(HERE, "startup.cu")], check=True)
    rows, parts = [], []
    mps = "mps" in MODES
    try:
        if mps:
            run([NVT, "--mps", "start"], BASE)
        record = partition_record(dict(BASE, CUDA_MPS_PIPE_DIRECTORY="/dev/null"))
        for program in PROGRAMS:
            todo = cases(program, probe, record)
            for mode, case, argv, env in todo:  # warm the caches and the MPS server
                run(argv, env)
            for rnd in range(ROUNDS[program]):
                if time.time() > DEADLINE:
                    print("startup_parts: deadline reached, %s stops after %d rounds" % (program, rnd), flush=True)
                    break
                order = todo[rnd % len(todo):] + todo[:rnd % len(todo)]
                if rnd % 2:
                    order.reverse()
                for mode, case, argv, env in order:
                    rows.append([rnd, program, mode, case, run(argv, env)[0]])
            for mode, case, argv, env in todo:
                if not case.startswith("shim") or time.time() > DEADLINE:
                    continue
                for _ in range(DEBUG_RUNS):
                    _, err = run(argv, dict(env, NVTASKSET_START_DEBUG="1"))
                    m = PART_RE.search(err)
                    if m:
                        d = {}
                        for item in m.group(2).split(", "):
                            name, value = item.rsplit(" ", 1)
                            d[name] = float(value)
                        parts.append((program, mode, case, float(m.group(1)), d))
    finally:
        if mps:
            subprocess.run([NVT, "--mps", "stop"], env=BASE, capture_output=True, timeout=60)
        with open(os.path.join(OUT, "startup_parts.csv"), "w", newline="") as f:
            w = csv.writer(f)
            w.writerow(["round", "program", "mps", "case", "ms"])
            w.writerows([r[:4] + ["%.2f" % r[4]] for r in rows])
        with open(os.path.join(OUT, "setup_parts.csv"), "w", newline="") as f:
            w = csv.writer(f)
            names = list(parts[0][4].keys()) if parts else []
            w.writerow(["program", "mps", "case", "all_ms"] + names)
            w.writerows([[p, m, c, a] + [d.get(n) for n in names] for p, m, c, a, d in parts])
        lines = summarise(rows, parts, smi)
        with open(os.path.join(OUT, "summary.md"), "w") as f:
            f.write("\n".join(lines) + "\n")
        with open(os.path.join(OUT, "README.md"), "w") as f:
            f.write("# What each part of nvtaskset adds to start-up: %s, %s\n\n" % (
                smi or "?", time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())))
            f.write("- Command: `make bench-startup-parts` (tests/bench/startup_parts.py; STARTUP_ROUNDS=%d "
                    "TORCH_ROUNDS=%d STARTUP_CASES=%s)\n- Files: startup_parts.csv, setup_parts.csv, summary.md\n\n" % (
                        ROUNDS["cuda"], ROUNDS["torch"], ",".join(CASES)))
            f.write("\n".join(lines) + "\n")
        print("\n".join(lines))
        shutil.rmtree(WORK, ignore_errors=True)


if __name__ == "__main__":
    main()
