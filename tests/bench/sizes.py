#!/usr/bin/env python3
"""Partition-size benchmark (make bench-sizes): nvtaskset against MPS's
percentage limit at the same share, from 1 to all TPCs.

For each partition size N (packed TPCs) and round, three fresh processes run
tests/bench/sizes_worker.py side by side under one MPS daemon:
  mps        a plain MPS client, CUDA_MPS_ACTIVE_THREAD_PERCENTAGE = ceil(100 N / TPCs)
  nvtaskset  nvtaskset -n N
  sm-limit   nvtaskset --sm-limit -n N (nvtaskset plus that same MPS share;
             -n then picks with --strategy clusters)
and, where SIZES_CONFIGS names them, the same two with --strategy spread:
  spread, spread-limit
and --sm-limit with the packed pick (--strategy packed): sm-limit-packed
Rounds are interleaved (every size and configuration once, then again), so
clock and thermal drift hit all three alike. Ratios are time / MPS's time
(medians over rounds; with 2 or more rounds the summary also gives the range
of each round's ratio to that round's MPS run). SIZES_SET=block-ops times
the transformer block's parts instead (sizes_worker.py).

Usage: sizes.py ROOT OUTDIR   (SIZES="1,8,33,66" SIZES_ROUNDS=2 SIZES_BUDGET_S=480
                              SIZES_CONFIGS=mps,nvtaskset,sm-limit,spread,spread-limit
                              SIZES_REPS=10 samples, SIZES_MIN_MS=2 ms a sample,
                              SIZES_ONLY=TEXT workloads whose name holds TEXT,
                              SIZES_SET=block-ops, SIZES_PROFILE=0: no profiler)
       sizes.py --report OUTDIR TOTAL_TPCS CSV...
                              the summary and plot of earlier runs' sizes.csv
                              files together (runs of different sizes; the
                              configurations of the first file)
"""
import csv
import json
import math
import os
import statistics
import subprocess
import sys
import tempfile
import time

REPORT = sys.argv[1] == "--report"
ROOT, OUT = ("", sys.argv[2]) if REPORT else (sys.argv[1], sys.argv[2])
NVT = os.path.join(ROOT, "build/bin/nvtaskset")
WORKER = os.path.join(ROOT, "tests/bench/sizes_worker.py")
WORK = "" if REPORT else tempfile.mkdtemp(prefix="nvt-sizes.")
os.makedirs(OUT, exist_ok=True)
ENV = dict(os.environ, CUDA_MPS_PIPE_DIRECTORY=os.path.join(WORK, "mps"),
           CUDA_MPS_LOG_DIRECTORY=os.path.join(WORK, "mpslog"), CUDA_DEVICE_MAX_CONNECTIONS="8",
           PYTHONUNBUFFERED="1")
ENV.pop("CUDA_MPS_ACTIVE_THREAD_PERCENTAGE", None)
SIZES = [int(x) for x in os.environ.get("SIZES", "1,2,4,8,16,24,33,42,50,54,60,66").split(",")]
ROUNDS = int(os.environ.get("SIZES_ROUNDS", "2"))
BUDGET = float(os.environ.get("SIZES_BUDGET_S", "480"))
CONFIGS = tuple(os.environ.get("SIZES_CONFIGS", "mps,nvtaskset,sm-limit").split(","))
if REPORT:
    with open(sys.argv[4]) as f:
        CONFIGS = tuple(dict.fromkeys(r["config"] for r in csv.DictReader(f)))
KNOWN = ("mps", "nvtaskset", "sm-limit", "spread", "spread-limit", "sm-limit-packed")
if CONFIGS[0] != "mps" or any(c not in KNOWN for c in CONFIGS):
    sys.exit("SIZES_CONFIGS: mps first, then any of %s" % ", ".join(KNOWN[1:]))


def run(args, env=ENV, timeout=120, err=None):
    """The command's standard output; its standard error's nvtaskset lines
    are appended to the list err, if given."""
    p = subprocess.run(args, env=env, capture_output=True, text=True, timeout=timeout)
    if p.returncode:
        raise RuntimeError("%s failed (%d): %s" % (" ".join(args), p.returncode, p.stderr[-800:]))
    if err is not None:
        err += [l for l in p.stderr.splitlines() if l.startswith("nvtaskset")]
    return p.stdout


def worker(config, n, total, err):
    """One worker's JSON result; what nvtaskset said goes to the list err
    (a warning that a launch ran outside its partition, say)."""
    py = [sys.executable, WORKER]
    if config == "mps":
        env = dict(ENV, CUDA_MPS_ACTIVE_THREAD_PERCENTAGE=str(math.ceil(100 * n / total)))
        return json.loads(run(py, env=env, err=err).splitlines()[-1])
    args = [NVT, "-n", str(n)] + (["--sm-limit"] if "limit" in config else []) + \
        (["--strategy", "spread"] if config.startswith("spread") else []) + \
        (["--strategy", "packed"] if config == "sm-limit-packed" else []) + py
    return json.loads(run(args, err=err).splitlines()[-1])


def main():
    start = time.time()
    run([NVT, "--calibrate"], env=dict(ENV, CUDA_MPS_PIPE_DIRECTORY="/dev/null"))
    total = json.loads(run([NVT, "--topology", "--json", "--gpu", "0"]))["gpus"][0]["tpcs"]
    run([NVT, "--mps", "start"])
    rows, kernels, said, done = [], [], {}, 0
    configs = CONFIGS
    try:
        for rnd in range(ROUNDS):
            for n in SIZES:
                if time.time() - start > BUDGET:
                    print("budget of %.0f s spent: stopping after %d runs" % (BUDGET, done), flush=True)
                    raise StopIteration
                for config in configs:
                    err = []
                    r = worker(config, n, total, err)
                    if err:
                        said[(n, config)] = sorted(set(said.get((n, config), [])) | set(err))
                    done += 1
                    for name, ms in r["ms"].items():
                        rows.append((rnd, n, config, r["sms"], name, ms))
                    k = r.get("kernel", {})
                    kernels.append((rnd, n, config, r["sms"], k.get("name"), k.get("grid"), k.get("blocks"),
                                    k.get("waves")))
                print("round %d, %d TPCs: done (%.0f s)" % (rnd, n, time.time() - start), flush=True)
    except StopIteration:
        pass
    finally:
        subprocess.run([NVT, "--mps", "stop"], env=ENV, capture_output=True, timeout=60)
    with open(os.path.join(OUT, "sizes.csv"), "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["round", "tpcs", "config", "sms_reported", "workload", "median_ms"])
        w.writerows(rows)
    with open(os.path.join(OUT, "sizes_kernels.csv"), "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["round", "tpcs", "config", "sms_reported", "bf16_8192_kernel", "grid", "blocks",
                    "waves_over_reported_sms"])
        w.writerows(kernels)
    report(rows, kernels, total, said)


def report(rows, kernels, total, said=None):
    """The summary (and plot); said: (TPCs, config) -> what nvtaskset said to
    those runs (its picks, its warnings), listed at the end; ratios of runs it
    warned are marked '!'."""
    said = said or {}
    ms, by_round = {}, {}
    for rnd, n, config, sms, name, t in rows:
        ms.setdefault((n, name, config), []).append(t)
        by_round[(rnd, n, name, config)] = t
    sms_of = {(n, config): sms for _, n, config, sms, _, _ in rows}
    names = sorted({r[4] for r in rows})
    sizes = sorted({r[1] for r in rows})
    others = [c for c in CONFIGS if c != "mps"]
    lines = ["Partition sizes, %d TPCs in all; median ms over rounds; ratio = time / MPS's time at the same share "
             "(< 1: faster than MPS)" % total, ""]
    worst = {}
    for name in names:
        lines.append("%s:" % name)
        lines.append("  TPCs  SMs(%s)   mps ms   %s" % ("/".join(CONFIGS),
                                                        "   ".join("%s ms (ratio)" % c for c in others)))
        for n in sizes:
            med = {c: statistics.median(ms[(n, name, c)]) for c in CONFIGS if (n, name, c) in ms}
            if len(med) < len(CONFIGS):
                continue
            ratios = {c: med[c] / med["mps"] for c in others}
            for c in others:
                worst.setdefault((name, c), []).append((ratios[c], n))
            lines.append("  %4d  %s   %8.3f   %s" % (
                n, "/".join("%3d" % sms_of[(n, c)] for c in CONFIGS), med["mps"],
                "   ".join("%8.3f (%.3f%s)%s" % (med[c], ratios[c], spread(by_round, n, name, c),
                                                 "!" if any("warning" in t for t in said.get((n, c), [])) else " ") for c in others)))
        lines.append("")
    lines.append("Worst ratio over sizes (target <= 1.0 for packed partitions):")
    for name in names:
        lines.append("  %-36s %s" % (name, "; ".join(
            "%s %.3f at %d TPCs" % ((c,) + max(worst[(name, c)])) for c in others if (name, c) in worst)))
    lines.append("")
    if said:
        lines.append("! what nvtaskset said to these runs (TPCs config: lines):")
        for (n, c), text in sorted(said.items()):
            lines.append("  %d %s: %s" % (n, c, " | ".join(t[:200] for t in text)))
        lines.append("")
    lines.append("bf16 8192^3 GEMM kernel (longest kernel, round 0): TPCs config SMs-reported blocks waves name")
    for rnd, n, config, sms, name, grid, blocks, waves in kernels:
        if rnd == 0 and name:
            lines.append("  %3d %-12s %3d %6s %6s %s" % (n, config, sms, blocks, waves, name))
    text = "\n".join(lines) + "\n"
    with open(os.path.join(OUT, "sizes_summary.txt"), "w") as f:
        f.write(text)
    print(text, flush=True)
    try:
        plot(ms, names, sizes, total)
    except Exception as e:  # a missing matplotlib must not lose the numbers
        print("no plot: %s" % e)


def spread(by_round, n, name, config):
    """', rounds LO-HI': the lowest and highest ratio of one round's run to
    that round's MPS run (rounds ran side by side), where there were 2 or more."""
    r = [t / by_round[(rnd, n2, name2, "mps")] for (rnd, n2, name2, c), t in by_round.items()
         if (n2, name2, c) == (n, name, config) and (rnd, n2, name2, "mps") in by_round]
    return ", rounds %.2f-%.2f" % (min(r), max(r)) if len(r) > 1 else ""


def plot(ms, names, sizes, total):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    fig, axes = plt.subplots(1, len(names), figsize=(4.2 * len(names), 3.6), squeeze=False)
    for ax, name in zip(axes[0], names):
        xs = [n for n in sizes if all((n, name, c) in ms for c in CONFIGS)]
        styles = {"nvtaskset": "o-", "sm-limit": "s--", "spread": "^-", "spread-limit": "v--",
                  "sm-limit-packed": "d:"}
        for config, style in ((c, styles[c]) for c in CONFIGS if c != "mps"):
            ax.plot(xs, [statistics.median(ms[(n, name, config)]) / statistics.median(ms[(n, name, "mps")])
                         for n in xs], style, label=config, markersize=3)
        ax.axhline(1.0, color="grey", lw=0.8)
        ax.set_title(name, fontsize=8)
        ax.set_xlabel("TPCs (of %d)" % total)
        ax.set_ylabel("time / MPS's time")
        ax.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(os.path.join(OUT, "sizes.png"), dpi=110)


def report_csv(total, paths):
    """Rows of several runs' CSVs; each file's rounds follow the last one's."""
    rows = []
    for path in paths:
        first = max((r[0] for r in rows), default=-1) + 1
        with open(path) as f:
            rows += [(first + int(r["round"]), int(r["tpcs"]), r["config"], int(r["sms_reported"]), r["workload"],
                      float(r["median_ms"])) for r in csv.DictReader(f) if r["config"] in CONFIGS]
    report(rows, [], total)


if __name__ == "__main__":
    if REPORT:
        report_csv(int(sys.argv[3]), sys.argv[4:])
    else:
        main()
