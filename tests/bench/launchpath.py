#!/usr/bin/env python3
"""The launch path's instructions, counted: what the shim executes per kernel launch in each form
a task can take, on the fake driver under valgrind's callgrind (no GPU; deterministic: the same
build runs the same instructions for the same launches).

Each form runs fakeapp's "batches BATCH R" (R batches of BATCH launches, each batch followed by
cuCtxSynchronize as tests/bench/launch.cu waits for its batches: a request of a managed task a
batch) and "batches BATCH 2R", under `valgrind --tool=callgrind --toggle-collect=shim_on_launch`:
only the instructions of the shim's driver callback and what it calls are counted (its launch
callback, and the API callbacks of the calls it follows: the synchronisations, and a yielding
task's launch calls). The difference of the two runs over the BATCH*R launches between them is
the cost of a launch, set-up and exit left out. With --cache, callgrind's cache simulation gives
the misses per launch too (I1, D1 and the last level, reads and writes).

Forms (nvtaskset --no-mps, as tests/bench/launchcost.py runs them on the GPU):
  unset         the shim loaded through the wrapper, no partition (the callback finds no slot)
  partitioned   nvtaskset -n 33
  high          nvtaskset --priority high -n 33 (its shim publishes its requests)
  low           nvtaskset --priority low -n 33, no higher task (default yield: client)
  low-yield     nvtaskset --priority low --yield protect -n 33, no higher task (it follows its
                launch calls: gate, bound, ahead)
  slice         nvtaskset --priority low --yield slice -n 33, with the fake driver's RM
                (FAKECUDA_RM=1, fakerm.so): its channel groups time-sliced, its thread running
  mem           nvtaskset --mem SIZE -n 33 (LAUNCHPATH_MEM, default 1G), where nvtaskset has
                --mem; otherwise said and left out
  plain         no shim: only with --whole (its callback count is 0)
  FORM-ex       FORM launching through cuLaunchKernelEx (fakeapp's batches-ex, launch.cu's
                batches-ex): the driver calls the API callbacks of a call the shim follows
                (every task follows it, to find cooperative launches) around each launch
--ex adds the -ex forms of unset, partitioned, high and low-yield.
--whole also counts the whole process per launch (the fake driver's own work included: the
fake checks every byte of every TMD, which a real driver does not; a scale, not a figure).

Usage: launchpath.py [--root ROOT] [--work DIR] [--out DIR] [--cache] [--whole] [--ex] [--annotate]
                     [--check BASELINE] [--write-baseline FILE] [FORM...]
  ROOT: the tree whose build/ to count (default: this script's); its build/test holds the
  fake driver and fakeapp-linked (make check builds them). BASELINE: a file of "FORM IR" lines
  (tests/bench/launchpath.baseline); --check exits 1 if a form's Ir per launch grew more
  than LAUNCHPATH_TOLERANCE (default 0.10) over its line, and 3 where valgrind is missing.
  LAUNCHPATH_BATCH (1000), LAUNCHPATH_REPS (1).
"""
import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
FORMS = ["unset", "partitioned", "high", "low", "low-yield", "slice", "mem"]
EX_FORMS = ["unset-ex", "partitioned-ex", "high-ex", "low-yield-ex"]
BATCH = int(os.environ.get("LAUNCHPATH_BATCH", "1000"))
REPS = int(os.environ.get("LAUNCHPATH_REPS", "1"))
TOLERANCE = float(os.environ.get("LAUNCHPATH_TOLERANCE", "0.10"))


class Build:
    def __init__(self, root):
        b = os.path.join(root, "build")
        self.nvt = os.path.join(b, "bin/nvtaskset")
        self.shim = os.path.join(b, "lib/nvtaskset/libnvtaskset.so")
        self.wrapper = os.path.join(b, "lib/nvtaskset/wrapper")
        self.fake = os.path.join(b, "test/fake")
        self.fakerm = os.path.join(b, "test/fake/fakerm.so")
        self.app = os.path.join(b, "test/fakeapp-linked")
        self.flags = os.path.join(b, "flags")
        for path in (self.nvt, self.shim, self.app, os.path.join(self.fake, "libcuda.so.1")):
            if not os.path.exists(path):
                sys.exit("launchpath: %s is missing: build it (make all, and make check's test "
                         "programs: make build/test/fakeapp-linked build/test/fake/fakerm.so)" % path)

    def has_mem(self):
        p = subprocess.run([self.nvt, "--help"], capture_output=True, text=True, timeout=60)
        # (--memory-half is another option: getopt would take --mem for it.)
        return re.search(r"--mem(?![\w-])", p.stdout) is not None


def base_env(build, work):
    env = dict(os.environ)
    for k in list(env):
        if k.startswith(("NVTASKSET_", "FAKECUDA_", "FAKEAPP_", "CUDA_")) or k in ("LD_PRELOAD",):
            del env[k]
    env.update(NVTASKSET_RUNDIR=os.path.join(work, "run"), NVTASKSET_CACHE_DIR=os.path.join(work, "cache"),
               NVTASKSET_PROC_NVIDIA=os.path.join(work, "no-proc-nvidia"), NVTASKSET_DRIVER_TIMEOUT="20",
               CUDA_MPS_PIPE_DIRECTORY=os.path.join(work, "mps-pipe"),
               CUDA_MPS_LOG_DIRECTORY=os.path.join(work, "mps-log"),
               LD_LIBRARY_PATH=build.fake, NVTASKSET_QUIET="1")
    return env


def form_command(build, work, env, form):
    """The command prefix and environment of a form; None where the build lacks it."""
    nvt = [build.nvt, "--no-mps"]
    if form in ("plain",):
        return [], env
    if form == "unset":
        return [], dict(env, LD_LIBRARY_PATH=build.wrapper + ":" + build.fake)
    if form == "partitioned":
        return nvt + ["-n", "33"], env
    if form == "high":
        return nvt + ["--priority", "high", "-n", "33"], env
    if form == "low":
        return nvt + ["--priority", "low", "-n", "33"], env
    if form == "low-yield":
        return nvt + ["--priority", "low", "--yield", "protect", "-n", "33"], env
    if form == "slice":
        return nvt + ["--priority", "low", "--yield", "slice", "-n", "33"], dict(
            env, FAKECUDA_RM="1", LD_PRELOAD=build.shim + ":" + build.fakerm,
            FAKERM_LOG=os.path.join(work, "rm.log"))
    if form == "mem":
        if not build.has_mem():
            return None
        return nvt + ["--mem", os.environ.get("LAUNCHPATH_MEM", "1G"), "-n", "33"], env
    raise ValueError(form)


def callgrind(build, work, prefix, env, reps, toggle, cache, name):
    """Runs form name for reps batches under callgrind. Returns {event: count}, the out file."""
    out = os.path.join(work, "%s.%d.%s.cg" % (name, reps, "cb" if toggle else "all"))
    args = prefix + ["valgrind", "--tool=callgrind", "--callgrind-out-file=" + out]
    if toggle:
        args.append("--toggle-collect=shim_on_launch")
    if cache:
        args.append("--cache-sim=yes")
    args += [build.app, "batches-ex" if name.endswith("-ex") else "batches", str(BATCH), str(reps)]
    p = subprocess.run(args, env=env, capture_output=True, text=True, timeout=600)
    if p.returncode:
        raise RuntimeError("%s exited %d: %s" % (" ".join(args), p.returncode, p.stderr[-600:]))
    events, totals = None, None
    with open(out) as f:
        for line in f:
            if line.startswith("events:"):
                events = line.split()[1:]
            elif line.startswith(("totals:", "summary:")) and totals is None:
                totals = [int(x) for x in line.split()[1:]]
    if not events or totals is None:
        raise RuntimeError("%s: no events or totals" % out)
    return dict(zip(events, totals + [0] * (len(events) - len(totals)))), out


def per_launch(build, work, prefix, env, toggle, cache, name):
    """Counts per launch: (counts for 2*REPS batches - for REPS) / (BATCH*REPS)."""
    few, _ = callgrind(build, work, prefix, env, REPS, toggle, cache, name)
    many, out = callgrind(build, work, prefix, env, 2 * REPS, toggle, cache, name)
    return {k: (many[k] - few.get(k, 0)) / float(BATCH * REPS) for k in many}, out


def annotate(out, dest):
    p = subprocess.run(["callgrind_annotate", "--inclusive=yes", out], capture_output=True, text=True)
    lines = [l for l in p.stdout.splitlines() if l.strip()]
    with open(dest, "w") as f:
        f.write("\n".join(lines[:60]) + "\n")


def read_baseline(path):
    base = {}
    with open(path) as f:
        for line in f:
            words = line.split("#", 1)[0].split()
            if len(words) == 2:
                base[words[0]] = float(words[1])
    return base


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--root", default=os.path.dirname(os.path.dirname(HERE)))
    ap.add_argument("--work")
    ap.add_argument("--out")
    ap.add_argument("--cache", action="store_true")
    ap.add_argument("--whole", action="store_true")
    ap.add_argument("--annotate", action="store_true")
    ap.add_argument("--ex", action="store_true")
    ap.add_argument("--check")
    ap.add_argument("--write-baseline")
    ap.add_argument("forms", nargs="*")
    a = ap.parse_args()
    forms = a.forms or (["plain"] if a.whole else []) + FORMS + (EX_FORMS if a.ex else [])
    unknown = [f for f in forms if f not in FORMS + ["plain"] + [x + "-ex" for x in FORMS + ["plain"]]]
    if unknown:
        sys.exit("launchpath: unknown form %s (forms: %s)" % (",".join(unknown), " ".join(FORMS)))
    if not shutil.which("valgrind"):
        print("launchpath: valgrind is missing (Debian: apt-get install valgrind)")
        return 3
    build = Build(os.path.abspath(a.root))
    work = a.work or tempfile.mkdtemp(prefix="nvtaskset-launchpath.")
    os.makedirs(os.path.join(work, "run"), exist_ok=True)
    os.chmod(os.path.join(work, "run"), 0o1777)
    env = base_env(build, work)
    subprocess.run([build.nvt, "--calibrate"], env=env, capture_output=True, timeout=120, check=True)
    flags = open(build.flags).read().strip() if os.path.exists(build.flags) else "?"
    cc = subprocess.run(["sh", "-c", "${CC:-cc} --version | head -1"], capture_output=True,
                        text=True).stdout.strip()
    rows, lines, left_out = [], [], []
    lines.append("Instructions per launch in the shim's driver callback (callgrind, fake driver, "
                 "batches of %d launches, %d vs %d batches); build: %s; %s" % (BATCH, REPS, 2 * REPS, flags, cc))
    for form in forms:
        cmd = form_command(build, work, env, form[:-3] if form.endswith("-ex") else form)
        if cmd is None:
            left_out.append("  %-15s not counted: this nvtaskset has no --mem" % form)
            continue
        prefix, fenv = cmd
        row = {"form": form}
        if form != "plain":
            counts, out = per_launch(build, work, prefix, fenv, True, a.cache, form)
            row.update(("cb_" + k, v) for k, v in counts.items())
            if a.annotate and a.out:
                annotate(out, os.path.join(a.out, form + ".annotate.txt"))
        if a.whole:
            counts, _ = per_launch(build, work, prefix, fenv, False, False, form)
            row["whole_Ir"] = counts["Ir"]
        rows.append(row)
    def of(name):
        return next((r.get("cb_Ir") for r in rows if r["form"] == name), None)

    for r in rows:
        ex = "-ex" if r["form"].endswith("-ex") else ""
        unset, part = of("unset" + ex), of("partitioned" + ex)
        text = "  %-15s" % r["form"]
        if "cb_Ir" in r:
            text += " Ir %8.1f" % r["cb_Ir"]
            if unset:
                text += "  (unset + %6.1f)" % (r["cb_Ir"] - unset)
            if part:
                text += "  (x %.3f of partitioned)" % (r["cb_Ir"] / part)
            misses = [k for k in ("I1mr", "D1mr", "D1mw", "ILmr", "DLmr", "DLmw") if "cb_" + k in r]
            if misses:
                text += "  misses:" + "".join(" %s %.3f" % (k, r["cb_" + k]) for k in misses)
        if "whole_Ir" in r:
            text += "  whole process Ir %.1f" % r["whole_Ir"]
        lines.append(text)
    text = "\n".join(lines + left_out)
    print(text, flush=True)
    if a.out:
        os.makedirs(a.out, exist_ok=True)
        with open(os.path.join(a.out, "launchpath.txt"), "w") as f:
            f.write(text + "\n")
        keys = sorted({k for r in rows for k in r if k != "form"})
        with open(os.path.join(a.out, "launchpath.csv"), "w") as f:
            f.write(",".join(["form"] + keys) + "\n")
            for r in rows:
                f.write(",".join([r["form"]] + ["%.3f" % r[k] if k in r else "" for k in keys]) + "\n")
    if a.write_baseline:
        with open(a.write_baseline, "w") as f:
            f.write("# Instructions per launch in the shim's driver callback, counted by\n"
                    "# tests/bench/launchpath.py --write-baseline (build: %s; %s).\n"
                    "# make check fails when a form counts more than %d %% over its line\n"
                    "# (tests/e2e/launchpath.sh).\n" % (flags, cc, round(TOLERANCE * 100)))
            for r in rows:
                if "cb_Ir" in r:
                    f.write("%s %.1f\n" % (r["form"], r["cb_Ir"]))
    if a.check:
        base, bad = read_baseline(a.check), 0
        for r in rows:
            if "cb_Ir" not in r or r["form"] not in base:
                continue
            limit = base[r["form"]] * (1 + TOLERANCE)
            if r["cb_Ir"] > limit:
                print("launchpath: %s: %.1f instructions a launch, over %.1f (its baseline %.1f + %d %%)"
                      % (r["form"], r["cb_Ir"], limit, base[r["form"]], round(TOLERANCE * 100)))
                bad = 1
            else:
                print("launchpath: %s: %.1f instructions a launch, within %.1f (baseline %.1f)"
                      % (r["form"], r["cb_Ir"], limit, base[r["form"]]))
        missing = [f for f in base if f not in [r["form"] for r in rows] and f in forms]
        if missing:
            print("launchpath: not counted: %s" % " ".join(missing))
        if not a.work:
            shutil.rmtree(work, ignore_errors=True)
        return bad
    if not a.work:
        shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
