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

Usage: launchpath.py [--root ROOT | --build DIR] [--work DIR] [--out DIR] [--cache] [--whole] [--ex] [--annotate]
                     [--check BASELINE] [--write-baseline FILE] [FORM...]
  ROOT: the tree whose build/ to count (default: this script's), or DIR the build itself
  (make B=DIR); its test/ holds the fake driver and fakeapp-linked (make check builds them). BASELINE: a file of "FORM IR" lines
  (tests/bench/launchpath.baseline), in a section for the build's compiler and flags;
  --check exits 1 if a form's Ir per launch grew more than LAUNCHPATH_TOLERANCE (default
  0.10) over its line, 3 where valgrind is missing and 4 where the file has no section for
  the build's compiler (one of another major version or flags is taken, and named, where the
  file has none for this build). --write-baseline replaces this build's section of FILE (or adds it).
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
    def __init__(self, b):
        self.tree = os.path.dirname(b.rstrip("/"))
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
        # (--help-all lists every option; a build older than it, --help. --memory-half is
        # another option: getopt would take --mem for it.)
        text = "".join(subprocess.run([self.nvt, h], capture_output=True, text=True, timeout=60).stdout
                       for h in ("--help-all", "--help"))
        return re.search(r"--mem(?![\w-])", text) is not None


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
    return callgrind_counts(out), out


def callgrind_counts(out):
    """callgrind's out file's totals: {event: count} (an event its totals leave out: 0)."""
    events, totals = None, None
    with open(out) as f:
        for line in f:
            if line.startswith("events:"):
                events = line.split()[1:]
            elif line.startswith(("totals:", "summary:")) and totals is None:
                totals = [int(x) for x in line.split()[1:]]
    if not events or totals is None:
        raise RuntimeError("%s: no events or totals" % out)
    return dict(zip(events, totals + [0] * (len(events) - len(totals))))


def per_launch(build, work, prefix, env, toggle, cache, name):
    """Counts per launch: (counts for 2*REPS batches - for REPS) / (BATCH*REPS)."""
    few, _ = callgrind(build, work, prefix, env, REPS, toggle, cache, name)
    many, out = callgrind(build, work, prefix, env, 2 * REPS, toggle, cache, name)
    return {k: (many[k] - few.get(k, 0)) / float(BATCH * REPS) for k in many}, out


def annotate(out, dest, tree):
    """callgrind_annotate's inclusive counts of out's functions, the tree's path left out."""
    p = subprocess.run(["callgrind_annotate", "--inclusive=yes", out], capture_output=True, text=True)
    lines = [l.replace(tree + "/", "") for l in p.stdout.splitlines()
             if l.strip() and not l.startswith(("Profile data file", "Profiled target"))]
    with open(dest, "w") as f:
        f.write("\n".join(lines[:60]) + "\n")


def build_key(build):
    """What the counts depend on besides the code: the compiler and its version's major, and the
    flags that change the code (-O, -f, -m, -D; not the prefix maps, which name the tree)."""
    words = open(build.flags).read().split() if os.path.exists(build.flags) else ["cc"]
    cc = words[0]
    try:
        text = subprocess.run([cc, "--version"], capture_output=True, text=True).stdout
        major = subprocess.run([cc, "-dumpversion"], capture_output=True, text=True).stdout.split(".")[0].strip()
    except OSError:
        text, major = "", "?"
    # (gcc run as cc names itself cc: its copyright line tells.)
    name = "clang" if "clang" in text else "gcc" if "Free Software Foundation" in text else cc
    kept = [w for w in words[1:] if w.startswith(("-O", "-f", "-m", "-D")) and "prefix-map" not in w]
    return "%s %s: %s" % (name, major, " ".join(kept))


def read_baseline(path, key):
    """The counts of path's section for key ("build KEY" then "FORM IR" lines), else of its first
    section of the same compiler (another major version or flags: said), else None. Returns
    ({form: Ir}, the section's key), or (None, None)."""
    sections, current = {}, None
    with open(path) as f:
        for line in f:
            text = line.split("#", 1)[0].strip()
            if text.startswith("build "):
                current = sections.setdefault(text[len("build "):], {})
            elif current is not None and len(text.split()) == 2:
                form, count = text.split()
                current[form] = float(count)
    if key in sections:
        return sections[key], key
    same = [k for k in sections if k.split()[0] == key.split()[0]]
    return (sections[same[0]], same[0]) if same else (None, None)


def write_sections(path, key, head, counts):
    """Replaces (or adds) key's section ("build KEY" then "FORM IR" lines) of baseline file
    path with counts ({form: Ir}), path's other sections kept, head (comment lines) first."""
    sections, current = [], None
    if os.path.exists(path):
        for line in open(path):
            if line.startswith("build "):
                current = [line.rstrip("\n")]
                sections.append(current)
            elif current is not None and line.strip() and not line.startswith("#"):
                current.append(line.rstrip("\n"))
    mine = ["build " + key] + ["%s %.1f" % (f, c) for f, c in counts.items()]
    sections = [sec for sec in sections if sec[0] != mine[0]] + [mine]
    with open(path, "w") as f:
        f.write(head + "".join("\n" + "\n".join(sec) + "\n" for sec in sections))


def write_baseline(path, key, rows):
    """Replaces (or adds) key's section of path with rows' counts."""
    head = ("# Instructions per launch in the shim's driver callback, counted on the fake driver\n"
            "# by tests/bench/launchpath.py --write-baseline FILE, a section for each compiler and\n"
            "# its flags (\"build COMPILER MAJOR: FLAGS\"). make check fails when a form counts more\n"
            "# than %d %% over its line (tests/e2e/launchcost.sh's launch_path_instructions).\n"
            "# mem: a memory limit adds nothing to the launch path, so it is held to partitioned's\n"
            "# count until it is counted on its own.\n" % round(TOLERANCE * 100))
    counts = {r["form"]: r["cb_Ir"] for r in rows if "cb_Ir" in r}
    if "mem" not in counts and "partitioned" in counts:
        counts["mem"] = counts["partitioned"]
    write_sections(path, key, head, counts)


def check(rows, base):
    """Says each form's count against its baseline. Returns 1 if one grew over the tolerance."""
    bad = 0
    for r in rows:
        if "cb_Ir" not in r or r["form"] not in base:
            continue
        limit = base[r["form"]] * (1 + TOLERANCE)
        over = r["cb_Ir"] > limit
        bad |= over
        print("launchpath: %s: %.1f instructions a launch, %s %.1f (its baseline %.1f + %d %%)"
              % (r["form"], r["cb_Ir"], "over" if over else "within", limit, base[r["form"]],
                 round(TOLERANCE * 100)))
    return bad


def report(rows, left_out, header, out):
    """Prints the table (and writes it, and a CSV, to out)."""
    def of(name):
        return next((r.get("cb_Ir") for r in rows if r["form"] == name), None)

    lines = [header]
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
    if not out:
        return
    os.makedirs(out, exist_ok=True)
    with open(os.path.join(out, "launchpath.txt"), "w") as f:
        f.write(text + "\n")
    keys = sorted({k for r in rows for k in r if k != "form"})
    with open(os.path.join(out, "launchpath.csv"), "w") as f:
        f.write(",".join(["form"] + keys) + "\n")
        for r in rows:
            f.write(",".join([r["form"]] + ["%.3f" % r[k] if k in r else "" for k in keys]) + "\n")


def count(a, build, work, forms):
    """Counts each form. Returns the rows and the lines of forms left out."""
    env = base_env(build, work)
    subprocess.run([build.nvt, "--calibrate"], env=env, capture_output=True, timeout=120, check=True)
    rows, left_out = [], []
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
                os.makedirs(a.out, exist_ok=True)
                annotate(out, os.path.join(a.out, form + ".annotate.txt"), build.tree)
        if a.whole:
            counts, _ = per_launch(build, work, prefix, fenv, False, False, form)
            row["whole_Ir"] = counts["Ir"]
        rows.append(row)
    return rows, left_out


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--root", default=os.path.dirname(os.path.dirname(HERE)))
    ap.add_argument("--build")
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
    build = Build(os.path.abspath(a.build or os.path.join(a.root, "build")))
    key = build_key(build)
    base, base_key = read_baseline(a.check, key) if a.check else (None, None)
    if a.check and base is None:
        print("launchpath: %s has no count for this compiler (%s): count one with --write-baseline"
              % (a.check, key))
        return 4
    if base_key and base_key != key:
        print("launchpath: %s has no count for this build (%s): held to %s's; count one with "
              "--write-baseline" % (a.check, key, base_key))
    work = a.work or tempfile.mkdtemp(prefix="nvtaskset-launchpath.")
    try:
        os.makedirs(os.path.join(work, "run"), exist_ok=True)
        os.chmod(os.path.join(work, "run"), 0o1777)
        rows, left_out = count(a, build, work, forms)
    finally:
        if not a.work:
            shutil.rmtree(work, ignore_errors=True)
    report(rows, left_out, "Instructions per launch in the shim's driver callback (callgrind, fake "
           "driver, batches of %d launches, %d vs %d batches); build %s" % (BATCH, REPS, 2 * REPS, key), a.out)
    if a.write_baseline:
        write_baseline(a.write_baseline, key, rows)
    return check(rows, base) if a.check else 0


if __name__ == "__main__":
    sys.exit(main())
