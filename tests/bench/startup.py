#!/usr/bin/env python3
"""Start-up as a user feels it: the wall time of fresh processes,
from fork to exit, of
  cuda    tests/bench/startup.cu: allocate, one kernel, copy back (on every
          GPU the process sees, one after another)
  torch   python3: import torch, one kernel on each GPU, read it back
run plain and under nvtaskset (-c all), inside MPS (a daemon of our own) and
outside it, with each channel count: CUDA's own (no CUDA_DEVICE_MAX_CONNECTIONS;
nvtaskset --channels default) and N = STARTUP_CHANNELS (TORCH_CHANNELS for torch: the variable
alone, and nvtaskset --channels N). "nvtaskset" without --channels is timed too: it
is one of those, whichever the default is. Rounds interleave every case, in
an order rotated each round and reversed every other.

Writes startup.csv (every process) and summary.md (median and range of each
case; ratio of medians of nvtaskset to plain with the same channel count, and
of the default to a plain process), startup.png if matplotlib is there.

Usage: startup.py ROOT OUTDIR
  STARTUP_ROUNDS=9 TORCH_ROUNDS=5 STARTUP_CHANNELS=2,4,8 TORCH_CHANNELS=8 STARTUP_PROGRAMS=cuda,torch
  STARTUP_MODES=mps,nomps STARTUP_DEADLINE=S (start no round after S seconds)
"""
import csv
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

ROOT, OUT = os.path.abspath(sys.argv[1]), os.path.abspath(sys.argv[2])
HERE = os.path.dirname(os.path.abspath(__file__))
NVT = os.path.join(ROOT, "build/bin/nvtaskset")
WORK = tempfile.mkdtemp(prefix="nvt-startup.")
ROUNDS = {"cuda": int(os.environ.get("STARTUP_ROUNDS", "9")),
          "torch": int(os.environ.get("TORCH_ROUNDS", "5"))}
CHANNELS = {"cuda": ["cuda"] + [c for c in os.environ.get("STARTUP_CHANNELS", "2,4,8").split(",") if c],
            "torch": ["cuda"] + [c for c in os.environ.get("TORCH_CHANNELS", "8").split(",") if c]}
PROGRAMS = os.environ.get("STARTUP_PROGRAMS", "cuda,torch").split(",")
MODES = os.environ.get("STARTUP_MODES", "mps,nomps").split(",")
DEADLINE = time.time() + float(os.environ.get("STARTUP_DEADLINE", "1e9"))
BASE = dict(os.environ, CUDA_MPS_PIPE_DIRECTORY=os.path.join(WORK, "mps"),
            CUDA_MPS_LOG_DIRECTORY=os.path.join(WORK, "mpslog"))
for k in ("CUDA_DEVICE_MAX_CONNECTIONS", "LD_PRELOAD", "NVTASKSET_PARTITION",
          "CUDA_MPS_ACTIVE_THREAD_PERCENTAGE"):
    BASE.pop(k, None)
DEFAULT = {}  # mode: the channels nvtaskset gives without --channels
TORCH = ("import torch\n"
         "for d in range(torch.cuda.device_count()):\n"
         "    assert torch.ones(4, device=d).add_(1).sum().item() == 8\n")


def run(args, env, timeout=120):
    t0 = time.perf_counter()
    p = subprocess.run(args, env=env, capture_output=True, text=True, timeout=timeout)
    ms = (time.perf_counter() - t0) * 1e3
    if p.returncode:
        raise RuntimeError("%s failed (%d): %s" % (" ".join(args), p.returncode, p.stderr[-600:]))
    return ms


def gpus():
    out = subprocess.run(["nvidia-smi", "-L"], capture_output=True, text=True).stdout
    return [l for l in out.splitlines() if l.startswith("GPU ")]


def default_channels():
    """The channels nvtaskset gives without --channels, with and without MPS ("cuda": CUDA's own)."""
    out = {}
    for mode in MODES:
        args = [NVT, "-c", "all", "/usr/bin/env"] if mode == "mps" else [NVT, "--no-mps", "-c", "all", "/usr/bin/env"]
        p = subprocess.run(args, env=BASE, capture_output=True, text=True, timeout=60)
        if p.returncode:
            raise RuntimeError("%s failed: %s" % (" ".join(args), p.stderr[-600:]))
        env = p.stdout
        vals = [l.split("=", 1)[1] for l in env.splitlines() if l.startswith("CUDA_DEVICE_MAX_CONNECTIONS=")]
        out[mode] = vals[0] if vals else "cuda"
    return out


def build_probe():
    probe = os.path.join(WORK, "startup")
    subprocess.run(["nvcc", "-O2", "-arch=native", "-o", probe, os.path.join(HERE, "startup.cu")],
                   check=True)
    return probe


def cases(program, probe):
    """(name, mode, channels, runner, argv, env) for every case of program."""
    argv = [probe, "all"] if program == "cuda" else [sys.executable, "-c", TORCH]
    out = []
    for mode in MODES:
        env = dict(BASE) if mode == "mps" else dict(BASE, CUDA_MPS_PIPE_DIRECTORY="/dev/null")
        nvt = [NVT, "-c"] if mode == "mps" else [NVT, "--no-mps", "-c"]
        for ch in CHANNELS[program]:
            penv = env if ch == "cuda" else dict(env, CUDA_DEVICE_MAX_CONNECTIONS=ch)
            opt = "default" if ch == "cuda" else ch
            out.append((mode, ch, "plain", argv, penv))
            out.append((mode, ch, "nvtaskset", nvt[:-1] + ["--channels", opt, "-c", "all"] + argv, env))
        if program == "cuda":
            out.append((mode, "(no option)", "nvtaskset", nvt + ["all"] + argv, env))
    return out


def spread(xs):
    return "%.0f [%.0f-%.0f]" % (statistics.median(xs), min(xs), max(xs))


def summarise(rows, n_gpus, device):
    by, lines_note = {}, []
    for r in rows:
        by.setdefault(tuple(r[1:5]), []).append(r[5])
    lines = ["# Start-up, %s (%d GPU%s), %s" % (device, n_gpus, "" if n_gpus == 1 else "s",
                                               time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())),
             "",
             "Wall time of fresh processes in ms: median [min-max] over the rounds. Ratio: median "
             "of nvtaskset's over plain's with the same channel count (the paired rounds' "
             "median ratio in brackets); vs CUDA: over a plain process with CUDA's own channels.",
             "",
             "| program | MPS | channels | plain | nvtaskset | ratio | vs CUDA |",
             "|---|---|---|---|---|---|---|"]
    for program in PROGRAMS:
        for mode in MODES:
            ref = by.get((program, mode, "cuda", "plain"))
            for ch in CHANNELS[program] + ["(no option)"]:
                if ch == "(no option)":
                    lines_note.append("nvtaskset's default %s MPS: %s channels" % (
                        "with" if mode == "mps" else "without", DEFAULT.get(mode, "?")))
                p = by.get((program, mode, ch if ch != "(no option)" else DEFAULT.get(mode), "plain"))
                n = by.get((program, mode, ch, "nvtaskset"))
                if not n:
                    continue
                ratio = paired = "-"
                if p:
                    ratio = "%.3f" % (statistics.median(n) / statistics.median(p))
                    k = min(len(p), len(n))
                    paired = "%.3f" % statistics.median([n[i] / p[i] for i in range(k)])
                vs = "%.3f" % (statistics.median(n) / statistics.median(ref)) if ref else "-"
                lines.append("| %s | %s | %s | %s | %s | %s (%s) | %s |" % (
                    program, "yes" if mode == "mps" else "no", ch, spread(p) if p else "-",
                    spread(n), ratio, paired, vs))
    return lines + [""] + sorted(set(lines_note))


def plot(rows, path):
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return
    fig, axes = plt.subplots(1, len(PROGRAMS), figsize=(6 * len(PROGRAMS), 4.5), squeeze=False)
    for ax, program in zip(axes[0], PROGRAMS):
        labels, data = [], []
        for mode in MODES:
            for ch in CHANNELS[program]:
                for runner in ("plain", "nvtaskset"):
                    xs = [r[5] for r in rows if r[1:5] == [program, mode, ch, runner]]
                    if xs:
                        labels.append("%s %s\n%s" % ("MPS" if mode == "mps" else "no MPS",
                                                     "CUDA" if ch == "cuda" else ch,
                                                     "nvt" if runner == "nvtaskset" else "plain"))
                        data.append(xs)
        ax.boxplot(data, whis=(0, 100))
        ax.set_xticks(range(1, len(labels) + 1))
        ax.set_xticklabels(labels, fontsize=6)
        ax.set_ylabel("ms, fork to exit")
        ax.set_title("%s: start-up by MPS and channel count" % program)
    fig.tight_layout()
    fig.savefig(path, dpi=110)


def main():
    os.makedirs(OUT, exist_ok=True)
    names = gpus()
    device = names[0].split(": ", 1)[1].split(" (")[0] if names else "?"
    probe = build_probe()
    rows = []
    mps = "mps" in MODES
    try:
        if mps:
            run([NVT, "--mps", "start"], BASE)
        # Warm the caches (files, the TPC map) and start the MPS server.
        run([NVT, "--no-mps", "-c", "all", "true"], BASE)
        DEFAULT.update(default_channels())
        for program in PROGRAMS:
            for case in cases(program, probe)[:None if program == "cuda" else 1]:
                run(case[3], case[4])
        for program in PROGRAMS:
            todo = cases(program, probe)
            for rnd in range(ROUNDS[program]):
                if time.time() > DEADLINE:
                    print("startup: deadline reached, %s stops after %d rounds" % (program, rnd))
                    break
                order = todo[rnd % len(todo):] + todo[:rnd % len(todo)]
                if rnd % 2:
                    order.reverse()
                for mode, ch, runner, argv, env in order:
                    rows.append([rnd, program, mode, ch, runner, run(argv, env)])
    finally:
        if mps:
            subprocess.run([NVT, "--mps", "stop"], env=BASE, capture_output=True, timeout=60)
        with open(os.path.join(OUT, "startup.csv"), "w", newline="") as f:
            w = csv.writer(f)
            w.writerow(["round", "program", "mps", "channels", "runner", "ms"])
            w.writerows([r[:5] + ["%.2f" % r[5]] for r in rows])
        lines = summarise(rows, len(names), device)
        with open(os.path.join(OUT, "summary.md"), "w") as f:
            f.write("\n".join(lines) + "\n")
        print("\n".join(lines))
        plot(rows, os.path.join(OUT, "startup.png"))
        shutil.rmtree(WORK, ignore_errors=True)


if __name__ == "__main__":
    main()
