#!/usr/bin/env python3
"""The cost of counting GPU memory, in instructions: what the shim executes per cuMemAlloc and
cuMemFree pair, with a memory limit and without one, on the fake driver under valgrind's
callgrind (no GPU; deterministic: the same build runs the same instructions for the same calls).

Each form runs memapp's "churn:N:B" (N pairs of cuMemAlloc of B bytes and its cuMemFree, through
the entry points cuGetProcAddress hands out, as cudart and PyTorch reach them) and "churn:2N:B",
under `valgrind --tool=callgrind --toggle-collect=shim_on_launch`: only the instructions of the
shim's driver callback and what it calls are counted (its API callbacks on each call's entry and
return: the count, the limit's check, the table of allocations). The difference of the two runs
over the N pairs between them is the cost of a pair, set-up and exit left out. The driver's own
work is not counted: the fake's is no real driver's.

Forms (nvtaskset --no-mps -c 0-3, the fake H100):
  nolimit   no --mem: the shim counts what the program holds (-l's MEM) without a limit
  limit     --mem SIZE (ALLOCPATH_MEM, default 1G): the count held to the limit as well
  unset     the shim loaded through the wrapper, no partition and no limit (it follows nothing)

Usage: allocpath.py [--root ROOT | --build DIR] [--work DIR] [--out DIR]
                    [--check BASELINE] [--write-baseline FILE] [FORM...]
  ROOT, DIR as tests/bench/launchpath.py's (its test/ holds the fake driver and memapp). BASELINE:
  a file of "FORM IR" lines (tests/bench/allocpath.baseline; FORM-mem: shim_mem_api's part of
  FORM's count) in a section for the build's
  compiler and flags; --check exits 1 if a form's Ir per pair grew more than
  ALLOCPATH_TOLERANCE (default 0.10) over its line, 3 where valgrind is missing and 4 where the
  file has no section for the build's compiler. --write-baseline replaces this build's section
  of FILE (or adds it). ALLOCPATH_PAIRS (2000), ALLOCPATH_BYTES (1M).
"""
import argparse
import os
import shutil
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import launchpath  # noqa: E402  (the build, its key and the baseline's sections)

FORMS = ["unset", "nolimit", "limit"]
PAIRS = int(os.environ.get("ALLOCPATH_PAIRS", "2000"))
BYTES = os.environ.get("ALLOCPATH_BYTES", "1M")
TOLERANCE = float(os.environ.get("ALLOCPATH_TOLERANCE", "0.10"))


def form_command(build, env, form):
    """The command prefix and environment of a form."""
    nvt = [build.nvt, "--no-mps"]
    if form == "unset":
        return [], dict(env, LD_LIBRARY_PATH=build.wrapper + ":" + build.fake)
    if form == "nolimit":
        return nvt + ["-c", "0-3"], env
    if form == "limit":
        return nvt + ["--mem", os.environ.get("ALLOCPATH_MEM", "1G"), "-c", "0-3"], env
    raise ValueError(form)


def callgrind(build, work, prefix, env, pairs, form, toggle):
    """Runs form for pairs alloc+free pairs under callgrind, counting in toggle. Returns its Ir."""
    out = os.path.join(work, "%s.%d.%s.cg" % (form, pairs, toggle))
    args = prefix + ["valgrind", "--tool=callgrind", "--callgrind-out-file=" + out,
                     "--toggle-collect=" + toggle, build.memapp,
                     "churn:%d:%s" % (pairs, BYTES)]
    p = subprocess.run(args, env=env, capture_output=True, text=True, timeout=600)
    if p.returncode or "churn rc=0 pairs=%d" % pairs not in p.stdout:
        raise RuntimeError("%s exited %d: %s %s" % (" ".join(args), p.returncode, p.stdout[-300:],
                                                    p.stderr[-600:]))
    return launchpath.callgrind_counts(out)["Ir"]


def write_baseline(path, key, counts):
    """Replaces (or adds) key's section of path with counts."""
    head = ("# Instructions per cuMemAlloc and cuMemFree pair in the shim's driver callback, counted\n"
            "# on the fake driver by tests/bench/allocpath.py --write-baseline FILE, a section for\n"
            "# each compiler and its flags (\"build COMPILER MAJOR: FLAGS\"). make check fails when a\n"
            "# form counts more than %d %% over its line (tests/e2e/mem.sh's\n"
            "# mem_alloc_path_instructions).\n" % round(TOLERANCE * 100))
    launchpath.write_sections(path, key, head, counts)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--root", default=os.path.dirname(os.path.dirname(HERE)))
    ap.add_argument("--build")
    ap.add_argument("--work")
    ap.add_argument("--out")
    ap.add_argument("--check")
    ap.add_argument("--write-baseline")
    ap.add_argument("forms", nargs="*")
    a = ap.parse_args()
    forms = a.forms or FORMS
    unknown = [f for f in forms if f not in FORMS]
    if unknown:
        sys.exit("allocpath: unknown form %s (forms: %s)" % (",".join(unknown), " ".join(FORMS)))
    if not shutil.which("valgrind"):
        print("allocpath: valgrind is missing (Debian: apt-get install valgrind)")
        return 3
    build = launchpath.Build(os.path.abspath(a.build or os.path.join(a.root, "build")))
    build.memapp = os.path.join(os.path.dirname(build.app), "memapp")
    if not os.path.exists(build.memapp):
        sys.exit("allocpath: %s is missing: build it (make build/test/memapp)" % build.memapp)
    key = launchpath.build_key(build)
    base, base_key = launchpath.read_baseline(a.check, key) if a.check else (None, None)
    if a.check and base is None:
        print("allocpath: %s has no count for this compiler (%s): count one with --write-baseline"
              % (a.check, key))
        return 4
    if base_key and base_key != key:
        print("allocpath: %s has no count for this build (%s): held to %s's; count one with "
              "--write-baseline" % (a.check, key, base_key))
    work = a.work or tempfile.mkdtemp(prefix="nvtaskset-allocpath.")
    counts = {}
    try:
        os.makedirs(os.path.join(work, "run"), exist_ok=True)
        os.chmod(os.path.join(work, "run"), 0o1777)
        env = launchpath.base_env(build, work)
        subprocess.run([build.nvt, "--calibrate"], env=env, capture_output=True, timeout=120,
                       check=True)
        for form in forms:
            prefix, fenv = form_command(build, env, form)
            for toggle, name in (("shim_on_launch", form), ("shim_mem_api", form + "-mem")):
                few = callgrind(build, work, prefix, fenv, PAIRS, form, toggle)
                many = callgrind(build, work, prefix, fenv, 2 * PAIRS, form, toggle)
                counts[name] = (many - few) / float(PAIRS)
    finally:
        if not a.work:
            shutil.rmtree(work, ignore_errors=True)
    lines = ["Instructions per cuMemAlloc+cuMemFree pair of %s in the shim's driver callback "
             "(callgrind, fake driver, %d vs %d pairs); build %s" % (BYTES, PAIRS, 2 * PAIRS, key)]
    for form in (f for f in forms):
        text = "  %-8s Ir %7.1f, of which shim_mem_api %7.1f" % (form, counts[form],
                                                                counts[form + "-mem"])
        if form != "nolimit" and "nolimit" in counts:
            text += "  (nolimit %+7.1f, %+7.1f)" % (counts[form] - counts["nolimit"],
                                                   counts[form + "-mem"] - counts["nolimit-mem"])
        lines.append(text)
    print("\n".join(lines), flush=True)
    if a.out:
        os.makedirs(a.out, exist_ok=True)
        with open(os.path.join(a.out, "allocpath.txt"), "w") as f:
            f.write("\n".join(lines) + "\n")
    if a.write_baseline:
        write_baseline(a.write_baseline, key, counts)
    bad = 0
    for form, ir in counts.items() if a.check else ():
        if form not in base:
            continue
        limit = base[form] * (1 + TOLERANCE)
        bad |= ir > limit
        print("allocpath: %s: %.1f instructions a pair, %s %.1f (its baseline %.1f + %d %%)"
              % (form, ir, "over" if ir > limit else "within", limit, base[form],
                 round(TOLERANCE * 100)))
    return bad


if __name__ == "__main__":
    sys.exit(main())
