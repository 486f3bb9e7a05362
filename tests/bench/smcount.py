#!/usr/bin/env python3
"""The SM-count benchmark (make bench-smcount): compute-bound bf16 work whose
grid follows the SM count CUDA reports, on nvtaskset partitions of every size
against MPS's active thread percentage of the same SM count, and what a stale
count costs after a live -p.

For each partition size N (TPCs, picked by nvtaskset -n N: whole GPCs first)
and round, fresh processes of tests/bench/smcount_worker.py run one after
another under one MPS daemon:
  mps    a plain MPS client, CUDA_MPS_ACTIVE_THREAD_PERCENTAGE = ceil(100 N / TPCs)
         (the share MPS gives 2N SMs at; the SMs it reports are recorded)
  told   nvtaskset -n N: the program is told its partition's 2N SMs
  gpu    NVTASKSET_SM_COUNT=gpu nvtaskset -n N: told the whole GPU's count
         (what nvtaskset did before the count was told)
  clusters  nvtaskset --strategy clusters -n N: told, on a pick that holds as
         many thread-block clusters as MPS's share (docs/performance.md)
  base   nvtaskset -n N of another tree's build (SMCOUNT_BASE=DIR, a tree built
         with make): the same pick, that build's answers (a change side by side)
  fit    NVTASKSET_SM_COUNT=fit nvtaskset -n N: told the largest count up to
         2N for which grids of clusters of 2-16 SMs sized by it fit the
         pick's GPCs in one wave (docs/usage.md)
Rounds are interleaved (every size and configuration once, then again), each
round's configurations in an order rotated by one.
Then, with SMCOUNT_STALE=1 (the default), two tasks are moved live: started on
STALE_BIG TPCs (66) and moved to STALE_SMALL (54) with -p -n, and the other way;
each keeps the count it was told at its start (docs/usage.md), and is timed
before and after the move.

Writes OUTDIR/smcount.csv (round, tpcs, config, sms_reported, workload,
median_ms), stale.csv, summary.md (per workload and size: ms and ratio to
MPS's), smcount.png (ratio to MPS against the SM count), README.md (device,
driver, date, command, the summary, the plot).

Usage: smcount.py ROOT OUTDIR   (SMCOUNT_SIZES="4,8,...,66" or ranges "4-24",
                                SMCOUNT_CONFIGS=mps,told,gpu[,clusters][,fit][,base],
                                SMCOUNT_BASE=DIR (for base),
                                SMCOUNT_ROUNDS=1,
                                SMCOUNT_BUDGET_S=400: start no size after that
                                (less 60 s for the moved tasks),
                                SMCOUNT_STALE=1, STALE_BIG=66, STALE_SMALL=54,
                                SMCOUNT_WORK=cublas,triton,train, SMCOUNT_REPS=20)
       smcount.py --report OUTDIR TOTAL_TPCS CSV...
                                the summary, plot and README of earlier runs'
                                smcount.csv files together (runs of other sizes)
"""
import csv
import json
import math
import os
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time

REPORT = len(sys.argv) > 1 and sys.argv[1] == "--report"
if len(sys.argv) < 3:
    sys.exit(__doc__)
ROOT, OUT = ("", os.path.abspath(sys.argv[2])) if REPORT else (os.path.abspath(sys.argv[1]),
                                                                 os.path.abspath(sys.argv[2]))
HERE = os.path.dirname(os.path.abspath(__file__))
NVT = os.path.join(ROOT, "build/bin/nvtaskset")
WORKER = os.path.join(HERE, "smcount_worker.py")
WORK = "" if REPORT else tempfile.mkdtemp(prefix="nvt-smcount.")
ENV = dict(os.environ, CUDA_MPS_PIPE_DIRECTORY=os.path.join(WORK, "mps"),
           CUDA_MPS_LOG_DIRECTORY=os.path.join(WORK, "mpslog"), PYTHONUNBUFFERED="1")
for k in ("CUDA_MPS_ACTIVE_THREAD_PERCENTAGE", "NVTASKSET_SM_COUNT", "CUDA_DEVICE_MAX_CONNECTIONS", "LD_PRELOAD"):
    ENV.pop(k, None)
CONFIGS = tuple(os.environ.get("SMCOUNT_CONFIGS", "mps,told,gpu").split(","))
ROUNDS = int(os.environ.get("SMCOUNT_ROUNDS", "1"))
BUDGET = float(os.environ.get("SMCOUNT_BUDGET_S", "400"))
STALE = os.environ.get("SMCOUNT_STALE", "1") == "1"
STALE_BIG = int(os.environ.get("STALE_BIG", "66"))
STALE_SMALL = int(os.environ.get("STALE_SMALL", "54"))
STALE_S = 60  # what the two moved tasks take, kept from the sizes' budget
BASE = os.environ.get("SMCOUNT_BASE", "")
if CONFIGS[0] != "mps" or any(c not in ("mps", "told", "gpu", "clusters", "fit", "base") for c in CONFIGS):
    sys.exit("SMCOUNT_CONFIGS: mps first, then told, gpu, clusters, fit and/or base")
if "base" in CONFIGS and not (REPORT or os.access(os.path.join(BASE, "build/bin/nvtaskset"), os.X_OK)):
    sys.exit("SMCOUNT_CONFIGS=...,base: SMCOUNT_BASE=DIR, a tree built with make")


def sizes(text):
    out = []
    for part in text.split(","):
        a, _, b = part.partition("-")
        out += range(int(a), int(b or a) + 1)
    return out


SIZES = sizes(os.environ.get("SMCOUNT_SIZES", "4,8,12,16,20,24,28,33,40,46,54,60,66"))


def run(args, env=ENV, timeout=180):
    p = subprocess.run(args, env=env, capture_output=True, text=True, timeout=timeout)
    if p.returncode:
        raise RuntimeError("%s failed (%d): %s" % (" ".join(args), p.returncode, p.stderr[-800:]))
    return p.stdout, p.stderr


def worker_args(config, n, total):
    py = [sys.executable, WORKER]
    if config == "mps":
        return py, dict(ENV, CUDA_MPS_ACTIVE_THREAD_PERCENTAGE=str(math.ceil(100 * n / total)))
    env = dict(ENV, NVTASKSET_SM_COUNT=config) if config in ("gpu", "fit") else ENV
    strategy = ["--strategy", "clusters"] if config == "clusters" else []
    nvt = os.path.join(os.path.abspath(BASE), "build/bin/nvtaskset") if config == "base" else NVT
    return [nvt] + strategy + ["-n", str(n)] + py, env


def stale(kind, start_n, end_n, rows):
    """A told task started on start_n TPCs, timed, moved to end_n by -p -n, timed again."""
    ready, go = os.path.join(WORK, kind + ".ready"), os.path.join(WORK, kind + ".go")
    p = subprocess.Popen([NVT, "-n", str(start_n), sys.executable, WORKER, "stale", ready, go], env=ENV,
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        deadline = time.time() + 180
        while not os.path.exists(ready):
            if p.poll() is not None or time.time() > deadline:
                raise RuntimeError("stale %s: the worker did not get ready: %s" % (kind, p.stderr.read()[-800:]))
            time.sleep(0.05)
        run([NVT, "-p", "-n", str(end_n), str(p.pid)])
        open(go, "w").close()
        out, err = p.communicate(timeout=180)
    finally:
        if p.poll() is None:
            p.kill()
    lines = [json.loads(l) for l in out.splitlines() if l.startswith("{")]
    if p.returncode or len(lines) != 2:
        raise RuntimeError("stale %s failed (%s): %s" % (kind, p.returncode, err[-800:]))
    for phase, (tpcs, r) in enumerate(((start_n, lines[0]), (end_n, lines[1]))):
        for name, ms in r["ms"].items():
            rows.append((kind, phase, tpcs, r["sms"], name, ms))


def main():
    start = time.time()
    # A time limit's SIGTERM ends the runs, not the results: the files are written on the way out.
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    os.makedirs(OUT, exist_ok=True)
    run([NVT, "--calibrate"], env=dict(ENV, CUDA_MPS_PIPE_DIRECTORY="/dev/null"))
    total = json.loads(run([NVT, "--topology", "--json", "--gpu", "0"])[0])["gpus"][0]["tpcs"]
    machine = {"device": run(["nvidia-smi", "--query-gpu=name,driver_version", "--format=csv,noheader"])[0].strip(),
               "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
               "command": "SMCOUNT_SIZES=%s SMCOUNT_CONFIGS=%s SMCOUNT_ROUNDS=%d make bench-smcount" % (
                   ",".join(map(str, SIZES)), ",".join(CONFIGS), ROUNDS)}
    try:
        machine["commit"] = run(["git", "-C", ROOT, "log", "-1", "--format=%h"])[0].strip()
    except (RuntimeError, OSError):
        machine["commit"] = "?"
    run([NVT, "--mps", "start"])
    rows, stale_rows, picks = [], [], {}
    stopped = None
    try:
        for rnd in range(ROUNDS):
            for n in SIZES:
                if time.time() - start > BUDGET - (STALE_S if STALE else 0):
                    print("budget of %.0f s spent: round %d stops before %d TPCs" % (BUDGET, rnd, n), flush=True)
                    break
                # Each round starts with another configuration: none always runs first.
                for config in CONFIGS[rnd % len(CONFIGS):] + CONFIGS[:rnd % len(CONFIGS)]:
                    args, env = worker_args(config, n, total)
                    out, err = run(args, env=env)
                    if config != "mps":
                        picks.setdefault((n, "clusters" if config == "clusters" else "packed"),
                                         [l for l in err.splitlines() if l.startswith("nvtaskset: GPU")])
                    r = json.loads(out.splitlines()[-1])
                    for name, ms in r["ms"].items():
                        rows.append((rnd, n, config, r["sms"], name, ms))
                print("round %d, %d TPCs: done (%.0f s)" % (rnd, n, time.time() - start), flush=True)
        if STALE and time.time() - start < BUDGET:
            stale("shrink", STALE_BIG, STALE_SMALL, stale_rows)
            stale("grow", STALE_SMALL, STALE_BIG, stale_rows)
    except SystemExit as e:  # stopped from outside: report what was measured
        stopped = e
        print("stopped (%s): reporting %d rows" % (e, len(rows)), flush=True)
    finally:
        subprocess.run([NVT, "--mps", "stop"], env=ENV, capture_output=True, timeout=60)
        with open(os.path.join(OUT, "smcount.csv"), "w", newline="") as f:
            w = csv.writer(f)
            w.writerow(["round", "tpcs", "config", "sms_reported", "workload", "median_ms"])
            w.writerows(rows)
        with open(os.path.join(OUT, "stale.csv"), "w", newline="") as f:
            w = csv.writer(f)
            w.writerow(["kind", "phase", "tpcs", "sms_reported", "workload", "median_ms"])
            w.writerows(stale_rows)
        shutil.rmtree(WORK, ignore_errors=True)
    report(rows, stale_rows, total, machine, picks)
    if stopped:
        raise stopped


def summary(rows, stale_rows, total, picks):
    ms, sms, by_round = {}, {}, {}
    for rnd, n, config, s, name, t in rows:
        ms.setdefault((n, name, config), []).append(t)
        by_round[(rnd, n, name, config)] = t
        sms[(n, config)] = s
    names = sorted({r[4] for r in rows})
    sizes_run = sorted({r[1] for r in rows})
    others = [c for c in CONFIGS if c != "mps"]
    lines = ["Median ms of fresh processes (medians of %s samples each; over rounds where more than one); "
             "ratio = time / MPS's at the same SM count; where rounds are several, the range of each "
             "round's ratio follows. SMs: what each was told "
             "(%s). %d TPCs in all." % (os.environ.get("SMCOUNT_REPS", "20"), "/".join(CONFIGS), total), ""]
    worst = {}
    for name in names:
        lines += ["### %s" % name, "",
                  "| TPCs | SMs told (%s) | mps ms | %s |" % ("/".join(CONFIGS), " | ".join("%s ms (ratio)" % c for c in others)),
                  "|---|---|---|" + "---|" * len(others)]
        for n in sizes_run:
            med = {c: statistics.median(ms[(n, name, c)]) for c in CONFIGS if (n, name, c) in ms}
            if "mps" not in med:
                continue
            cells = []
            for c in others:
                if c in med:
                    ratio = med[c] / med["mps"]
                    worst.setdefault((name, c), []).append((ratio, n))
                    paired = [by_round[(r, n, name, c)] / by_round[(r, n, name, "mps")] for r in
                              sorted({k[0] for k in by_round}) if (r, n, name, c) in by_round and
                              (r, n, name, "mps") in by_round]
                    cells.append("%.3f (%.3f%s)" % (med[c], ratio, ", %.2f-%.2f" % (min(paired), max(paired))
                                                    if len(paired) > 1 else ""))
                else:
                    cells.append("-")
            lines.append("| %d | %s | %.3f | %s |" % (n, "/".join(str(sms.get((n, c), "-")) for c in CONFIGS),
                                                    med["mps"], " | ".join(cells)))
        lines.append("")
    lines.append("Worst ratio over sizes (the target: told within 1.01 of MPS's):")
    lines.append("")
    for name in names:
        lines.append("- %s: %s" % (name, "; ".join("%s %.3f at %d TPCs" % ((c,) + max(worst[(name, c)]))
                                                   for c in others if (name, c) in worst)))
    mismatch = [n for n in sizes_run if ("mps" in CONFIGS and "told" in CONFIGS and
                                         sms.get((n, "mps")) not in (None, sms.get((n, "told"))))]
    if mismatch:
        lines += ["", "MPS's percentage gave another SM count than the partition at %s TPCs (see the SMs column)."
                  % ", ".join(map(str, mismatch))]
    if stale_rows:
        fresh = {(n, name): statistics.median(ms[(n, name, "told")]) for (n, name, c) in ms if c == "told"}
        lines += ["", "### A stale count after a live -p", "",
                  "Each task keeps the count it was told at its start. Fresh: a task started on the "
                  "new partition (told, above).", "",
                  "| move | workload | before: TPCs, SMs told, ms | after: TPCs, ms | fresh ms | after / fresh |",
                  "|---|---|---|---|---|---|"]
        by = {(k, ph, name): (tp, s, t) for k, ph, tp, s, name, t in stale_rows}
        for kind in ("shrink", "grow"):
            for name in names:
                if (kind, 0, name) not in by or (kind, 1, name) not in by:
                    continue
                (t0, s0, m0), (t1, _, m1) = by[(kind, 0, name)], by[(kind, 1, name)]
                f = fresh.get((t1, name))
                lines.append("| %s %d -> %d TPCs | %s | %d, %d, %.3f | %d, %.3f | %s | %s |" % (
                    kind, t0, t1, name, t0, s0, m0, t1, m1, "%.3f" % f if f else "-",
                    "%.3f" % (m1 / f) if f else "-"))
    if any(picks.values()):
        lines += ["", "nvtaskset's picks (-n):", ""]
        lines += ["- %d TPCs, %s: %s" % (n, how, "; ".join(p)[:300]) for (n, how), p in sorted(picks.items()) if p]
    return lines, ms, names, sizes_run


def plot(ms, names, sizes_run):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    fig, axes = plt.subplots(1, len(names), figsize=(4.4 * len(names), 3.8), squeeze=False)
    styles = {"told": "o-", "gpu": "s--", "clusters": "^-", "fit": "v-"}
    labels = {"told": "nvtaskset, told the partition", "gpu": "nvtaskset, told the GPU",
              "clusters": "nvtaskset --strategy clusters, told", "fit": "nvtaskset, told the count clusters fit"}
    for ax, name in zip(axes[0], names):
        for c in CONFIGS[1:]:
            xs = [n for n in sizes_run if (n, name, c) in ms and (n, name, "mps") in ms]
            ax.plot([2 * n for n in xs], [statistics.median(ms[(n, name, c)]) / statistics.median(ms[(n, name, "mps")])
                                          for n in xs], styles.get(c, "^-"), markersize=3,
                    label=labels[c])
        ax.axhline(1.0, color="grey", lw=0.8)
        ax.axhline(1.01, color="grey", lw=0.5, ls=":")
        ax.set_title(name, fontsize=8)
        ax.set_xlabel("SMs of the partition (MPS: the same count)")
        ax.set_ylabel("time / MPS's time")
        ax.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(os.path.join(OUT, "smcount.png"), dpi=110)


def report(rows, stale_rows, total, machine, picks=None):
    lines, ms, names, sizes_run = summary(rows, stale_rows, total, picks or {})
    with open(os.path.join(OUT, "summary.md"), "w") as f:
        f.write("\n".join(lines) + "\n")
    print("\n".join(lines), flush=True)
    try:
        plot(ms, names, sizes_run)
        shown = "![time over MPS's at each SM count](smcount.png)\n"
    except Exception as e:  # a missing matplotlib must not lose the numbers
        shown = "(no plot: %s)\n" % e
    with open(os.path.join(OUT, "README.md"), "w") as f:
        f.write("# The SM count told, at every partition size: %s, %s\n\n" % (machine.get("device", "?"),
                                                                            machine.get("date", "?")))
        f.write("- Device and driver: %s\n- Code: %s\n- Command: `%s` (tests/bench/smcount.py; "
                "files: smcount.csv, stale.csv, summary.md, smcount.png)\n\n" % (
                    machine.get("device", "?"), machine.get("commit", "?"), machine.get("command", "?")))
        f.write(shown + "\n" + "\n".join(lines) + "\n")


def report_csv(total, paths):
    rows, stale_rows = [], []
    for path in paths:
        first = max((r[0] for r in rows), default=-1) + 1
        with open(path) as f:
            rows += [(first + int(r["round"]), int(r["tpcs"]), r["config"], int(r["sms_reported"]), r["workload"],
                      float(r["median_ms"])) for r in csv.DictReader(f) if r["config"] in CONFIGS]
        st = os.path.join(os.path.dirname(path), "stale.csv")
        if os.path.exists(st):
            with open(st) as f:
                stale_rows += [(r["kind"], int(r["phase"]), int(r["tpcs"]), int(r["sms_reported"]), r["workload"],
                                float(r["median_ms"])) for r in csv.DictReader(f)]
    os.makedirs(OUT, exist_ok=True)
    report(rows, stale_rows, total, {"command": "tests/bench/smcount.py --report %s %d %s" % (
        OUT, total, " ".join(paths))})


if __name__ == "__main__":
    if REPORT:
        report_csv(int(sys.argv[3]), sys.argv[4:])
    else:
        main()
