#!/usr/bin/env python3
"""End-to-end GPU tests of nvtaskset, run by tests/gpu/check-gpu.sh.

Under the MPS daemon that nvtaskset starts: co-running tasks on disjoint
halves, live re-partitioning and its delay, moving a task started without
nvtaskset, real programs whose time follows the TPCs given, and faults.
Every step has a time limit; the MPS daemon is stopped at the end whatever
happens. Prints PASS/FAIL lines, facts as "INFO" lines, and writes JSON
results to LOGDIR/e2e.json.

Usage: e2e.py ROOT GPUBIN LOGDIR
"""
import json
import os
import signal
import statistics
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from tpclists import compact, expand  # noqa: E402

ROOT, BIN, LOG = sys.argv[1], sys.argv[2], sys.argv[3]
NVT = os.path.join(ROOT, "build/bin/nvtaskset")
WRAPDIR = os.path.join(ROOT, "build/lib/nvtaskset/wrapper")
TESTS = os.path.join(ROOT, "tests/gpu")
WORK = tempfile.mkdtemp(prefix="nvt-e2e.")
ENV = dict(os.environ)
ENV["CUDA_MPS_PIPE_DIRECTORY"] = os.path.join(WORK, "mps")
ENV["CUDA_MPS_LOG_DIRECTORY"] = os.path.join(WORK, "mpslog")
RESULTS = {}
counts = {"pass": 0, "fail": 0}
children = []


def check(name, ok, detail=""):
    counts["pass" if ok else "fail"] += 1
    print("%s %s%s" % ("PASS" if ok else "FAIL", name, (": " + detail) if detail else ""), flush=True)


def info(text):
    print("INFO " + text, flush=True)


def run(args, timeout=120, env=None):
    try:
        p = subprocess.run(args, capture_output=True, text=True, timeout=timeout, env=env or ENV)
        return p.returncode, p.stdout, p.stderr
    except subprocess.TimeoutExpired as e:
        return 124, e.stdout or "", "TIMEOUT after %d s" % timeout


def start(args, err_path, env=None):
    p = subprocess.Popen(args, stdout=subprocess.DEVNULL, stderr=open(err_path, "w"),
                         env=env or ENV)
    children.append(p)
    return p


def wait_lines(path, n, timeout=60):
    end = time.time() + timeout
    while time.time() < end:
        try:
            with open(path) as f:
                lines = f.read().splitlines()
            if len(lines) >= n:
                return lines
        except FileNotFoundError:
            pass
        time.sleep(0.05)
    return None


def records(path):
    """loop.cu output: (t0 ns, t1 ns, ms, tpcs) per launch."""
    out = []
    for line in open(path).read().splitlines():
        f = line.split()
        if len(f) == 4:
            out.append((int(f[0]), int(f[1]), float(f[2]), f[3]))
    return out


def stop_all():
    for p in children:
        if p.poll() is None:
            p.kill()
            p.wait()


def loop(tag, extra, nvt_args=None, env=None):
    out = os.path.join(WORK, tag + ".log")
    args = [os.path.join(BIN, "loop"), "--out", out] + extra
    if nvt_args is not None:
        args = [NVT] + nvt_args + args
    return start(args, out + ".err", env=env), out


def env_tpcs(nvt_args):
    """The TPC list nvtaskset would give a command on its first GPU (from the
    NVTASKSET_PARTITION record it exports: "UUID LIST TOPOLOGY;...")."""
    rc, out, err = run([NVT] + nvt_args + ["/usr/bin/env"])
    for line in out.splitlines():
        if line.startswith("NVTASKSET_PARTITION="):
            return line.split("=", 1)[1].split(";")[0].split(" ")[1]
    raise RuntimeError("no partition: %s %s" % (out, err))


def main():
    rc, out, err = run([NVT, "--mps", "status"])
    check("MPS not running at the start", rc == 3, out.strip())

    # ---- MPS started by nvtaskset -------------------------------------------
    rc, out, err = run([NVT, "-c", "0-3", os.path.join(BIN, "loop"), "--iters", "3"])
    check("first task starts the MPS daemon and says how to stop it",
          rc == 0 and "started the MPS control daemon" in err and "nvtaskset --mps stop" in err,
          err.strip().splitlines()[-1] if err.strip() else "rc=%d" % rc)
    rc, out, err = run([NVT, "--mps", "status"])
    check("--mps status: running", rc == 0 and "running (pid" in out, out.strip())

    # ---- Co-running on disjoint halves ----------------------------------------
    half_a = env_tpcs(["-n", "33"])
    all66 = set(range(66))
    half_b = compact(all66 - expand(half_a))
    info("halves: A=%s B=%s" % (half_a, half_b))
    alone = {}
    for tag, part in (("A", half_a), ("B", half_b)):
        p, path = loop("alone" + tag, ["--iters", "300"], ["-c", part])
        p.wait(timeout=120)
        r = records(path)
        alone[tag] = statistics.median(x[2] for x in r[20:])
        # Inside MPS %smid is virtual (paper 000, Pitfall 5): which SMs ran is
        # invisible, but no launch may use more TPCs than the partition has.
        check("alone on half %s: 300 launches, none on more than %d TPCs" % (tag, len(expand(part))),
              len(r) == 300 and all(len(expand(x[3])) <= len(expand(part)) for x in r))
    pa, path_a = loop("coA", ["--iters", "300"], ["-c", half_a])
    pb, path_b = loop("coB", ["--iters", "300"], ["-c", half_b])
    pa.wait(timeout=120)
    pb.wait(timeout=120)
    ra, rb = records(path_a), records(path_b)
    # A kernel of A overlaps B if their [start, end] intervals intersect.
    ib = [(x[0], x[1]) for x in rb]
    overlap = sum(1 for x in ra if any(s < x[1] and x[0] < e for s, e in ib)) / max(1, len(ra))
    co = {"A": statistics.median(x[2] for x in ra[20:]), "B": statistics.median(x[2] for x in rb[20:])}
    RESULTS["corun"] = {"halves": [half_a, half_b], "alone_ms": alone, "together_ms": co,
                        "overlap": overlap, "launches": [len(ra), len(rb)]}
    info("co-run: alone A %.3f ms B %.3f ms; together A %.3f ms B %.3f ms; %.0f%% of A's kernels overlap B's"
         % (alone["A"], alone["B"], co["A"], co["B"], overlap * 100))
    check("co-running kernels overlap in time", overlap > 0.5, "%.0f%%" % (overlap * 100))
    for t in "AB":
        check("half %s together within 10%% of alone" % t, abs(co[t] / alone[t] - 1) < 0.10,
              "%.3f vs %.3f ms" % (co[t], alone[t]))
        check("half %s together: no launch on more TPCs than its half" % t,
              all(len(expand(x[3])) <= 33 for x in (ra if t == "A" else rb)))

    # ---- Live re-partitioning (outside MPS, where %smid shows the real SMs) ----
    stop = os.path.join(WORK, "live.stop")
    p, path = loop("live", ["--stop", stop], ["--no-mps", "-c", "0-65"])
    wait_lines(path, 50)
    changes = []
    for part in ("0-32", "0-7", "0-15", "0-65", "40-47"):
        time.sleep(0.4)
        t_call = time.monotonic_ns()
        rc, out, err = run([NVT, "-p", "-c", part, str(p.pid)])
        t_ret = time.monotonic_ns()
        changes.append((part, t_ret, rc, t_call))
    time.sleep(0.4)
    open(stop, "w").close()
    p.wait(timeout=60)
    r = records(path)
    live = []
    for i, (part, t_ret, rc, _) in enumerate(changes):
        want = expand(part)
        first = next((x for x in r if expand(x[3]) == want and x[0] >= t_ret - 50_000_000), None)
        # A phase ends when the next change is asked for: that change may take effect before
        # its command returns, so a launch that ends before the return may run on its TPCs.
        phase_end = changes[i + 1][3] if i + 1 < len(changes) else r[-1][1]
        phase = [x[2] for x in r if x[0] > t_ret + 20_000_000 and x[1] < phase_end]
        delay_ms = (first[0] - t_ret) / 1e6 if first else None
        live.append({"tpcs": part, "cli_rc": rc, "first_launch_after_return_ms": delay_ms,
                     "median_kernel_ms": statistics.median(phase) if phase else None,
                     "launches": len(phase)})
        check("live change to %s: later launches run there" % part,
              rc == 0 and first is not None and all(expand(x[3]) == want for x in r if x[0] > t_ret + 20_000_000 and x[1] < phase_end),
              "delay %s ms, median %s ms" % (None if delay_ms is None else "%.3f" % delay_ms,
                                             live[-1]["median_kernel_ms"]))
    RESULTS["live"] = live
    info("live: " + json.dumps(live))

    # ---- A task started without nvtaskset, found and moved -----------------------
    stop = os.path.join(WORK, "wrap.stop")
    wenv = dict(ENV)
    wenv["LD_LIBRARY_PATH"] = WRAPDIR
    wenv["CUDA_MPS_PIPE_DIRECTORY"] = "/dev/null"  # outside MPS: real SM IDs
    p, path = loop("wrap", ["--stop", stop], None, env=wenv)
    wait_lines(path, 20)
    rc, out, err = run([NVT, "-l"])
    RESULTS["list_with_wrapper_task"] = out
    row = [l for l in out.splitlines() if l.split()[:1] == [str(p.pid)]]
    check("nvtaskset -l finds the wrapper-started task", bool(row) and " all " in row[0], row[0] if row else out)
    rc, out, err = run([NVT, "-p", "-c", "8-15", str(p.pid)])
    t_ret = time.monotonic_ns()
    time.sleep(0.5)
    open(stop, "w").close()
    p.wait(timeout=60)
    r = records(path)
    before = [x for x in r if x[1] < t_ret - 5_000_000]
    after = [x for x in r if x[0] > t_ret + 20_000_000]
    check("wrapper-started task moved with -p",
          rc == 0 and before and after and expand(before[0][3]) == all66 and
          all(expand(x[3]) == expand("8-15") for x in after),
          "before %s, after %s" % (before[0][3] if before else "-", after[0][3] if after else "-"))

    # ---- Real programs: correct, and time follows the TPCs given ------------------
    progs = [
        ("pytorch bf16 matmul", ["python3", os.path.join(TESTS, "torch_matmul.py")], "torch_ok=1"),
        ("pytorch CNN inference", ["python3", os.path.join(TESTS, "cnn.py")], "cnn_ok=1"),
        ("cupy matmul", ["python3", os.path.join(TESTS, "cupy_mm.py")], "cupy_ok=1"),
        ("nvcc static cudart", [os.path.join(BIN, "smid"), "time", "5"], "median_ms="),
        ("nvcc shared cudart", [os.path.join(BIN, "smid-shared"), "time", "5"], "median_ms="),
        ("driver API", [os.path.join(BIN, "drvapi"), "time"], "median_ms="),
    ]
    # smid's 1056 spinning blocks run in one wave on 33 TPCs as on 66 (16 blocks of 128
    # threads to an SM): its times there are equal up to noise (0.64-0.77 ms either way in
    # runs on an H100), so only 8 TPCs' is compared for it.
    one_wave_at_33 = ("nvcc static cudart", "nvcc shared cudart")
    scaling = {}
    for name, args, ok_text in progs:
        scaling[name] = {}
        for n in (66, 33, 8):
            rc, out, err = run([NVT, "-n", str(n)] + args, timeout=240)
            ms = None
            for tok in out.split():
                if tok.startswith("ms=") or tok.startswith("median_ms="):
                    ms = float(tok.split("=")[1])
            scaling[name][n] = ms
            check("%s on %d TPCs (MPS)" % (name, n), rc == 0 and ok_text in out and ms is not None,
                  out.strip() or err.strip()[-300:])
        s = scaling[name]
        if None not in s.values():
            check("%s: time grows as TPCs shrink" % name, s[66] < s[8] and s[33] < s[8] and
                  (name in one_wave_at_33 or s[66] <= s[33] * 1.05),
                  "66: %.3f, 33: %.3f, 8: %.3f ms" % (s[66], s[33], s[8]))
    RESULTS["scaling_ms"] = scaling

    # ---- Faults ----------------------------------------------------------------
    stop = os.path.join(WORK, "kill.stop")
    p, path = loop("kill", ["--stop", stop], ["-c", "0-7"])
    wait_lines(path, 5)
    rc, out, _ = run([NVT, "-l"])
    listed = str(p.pid) in out
    p.send_signal(signal.SIGKILL)
    p.wait()
    rc, out2, _ = run([NVT, "-l"])
    check("a killed task disappears from nvtaskset -l", listed and str(p.pid) not in out2)

    # A fatal fault in one MPS client (paper 000, Pitfall 2).
    stop = os.path.join(WORK, "victim.stop")
    victim, vpath = loop("victim", ["--stop", stop, "--sleep-us", "2000"], ["-c", "33-65"])
    wait_lines(vpath, 5)
    rc, out, err = run([NVT, "-c", "0-32", os.path.join(BIN, "oob")], timeout=60)
    RESULTS["oob"] = {"rc": rc, "stdout": out, "stderr": err}
    info("oob client: rc=%d out=%r err=%r" % (rc, out.strip(), err.strip()[-400:]))
    time.sleep(1.0)
    open(stop, "w").close()
    try:
        victim.wait(timeout=30)
    except subprocess.TimeoutExpired:
        victim.kill()
        victim.wait()
    verr = open(vpath + ".err").read()
    RESULTS["oob"]["victim_rc"] = victim.returncode
    RESULTS["oob"]["victim_stderr"] = verr
    info("victim: rc=%s err=%r" % (victim.returncode, verr.strip()[-400:]))
    rc, out, err = run([NVT, "--mps", "status"])
    RESULTS["oob"]["mps_status"] = out + err
    info("--mps status after the fault: %r" % (out + err))
    check("the fault took down the client in the other partition too (Pitfall 2)",
          victim.returncode not in (0, None) and "illegal memory access" in verr, verr.strip()[-200:])
    check("nvtaskset --mps status says what happened",
          "last fatal GPU error" in out and str(victim.pid) in out.split("tore down", 1)[-1], out.strip())
    try:
        RESULTS["oob"]["log_dir"] = os.listdir(ENV["CUDA_MPS_LOG_DIRECTORY"])
    except OSError as e:
        RESULTS["oob"]["log_dir"] = str(e)
    for name in ("control.log", "server.log"):
        try:
            tail = open(os.path.join(ENV["CUDA_MPS_LOG_DIRECTORY"], name)).read().splitlines()[-25:]
        except OSError:
            tail = []
        RESULTS["oob"][name] = tail
        info("%s tail:\n  %s" % (name, "\n  ".join(tail)))
    rc, out, err = run([NVT, "-c", "0-7", os.path.join(BIN, "loop"), "--iters", "3"], timeout=60)
    check("MPS serves new tasks after the fault", rc == 0, err.strip()[-300:])

    # More than 15 clients of 8 channels (--channels 8; CUDA's own count,
    # nvtaskset's default, leaves room for 48).
    stop = os.path.join(WORK, "many.stop")
    many = []
    for i in range(15):
        p, path = loop("many%d" % i, ["--stop", stop, "--sleep-us", "50000", "--blocks", "8", "--spin", "1000"],
                       ["--channels", "8", "-c", str(i)])
        many.append((p, path))
    for p, path in many:
        wait_lines(path, 2, timeout=90)
    alive = sum(1 for p, _ in many if p.poll() is None)
    rc, out, err = run([NVT, "--channels", "8", "-c", "20", os.path.join(BIN, "loop"), "--iters", "3"],
                       timeout=90)
    RESULTS["sixteenth"] = {"alive_before": alive, "rc": rc, "stdout": out, "stderr": err}
    info("15 clients alive: %d; the 16th: rc=%d err=%r" % (alive, rc, err.strip()[-500:]))
    check("a 16th MPS client is refused with a clear message",
          alive == 15 and rc == 1 and "already has 15 clients" in err, err.strip())
    # What the 16th would have met without nvtaskset's check.
    env16 = dict(ENV)
    env16["CUDA_DEVICE_MAX_CONNECTIONS"] = "8"
    rc, out, err = run([os.path.join(BIN, "loop"), "--iters", "3"], timeout=90, env=env16)
    RESULTS["sixteenth"]["without_nvtaskset"] = {"rc": rc, "stderr": err}
    info("a 16th client without nvtaskset: rc=%d err=%r" % (rc, err.strip()[-300:]))
    rc, out, err = run([NVT, "--no-mps", "-c", "20", os.path.join(BIN, "loop"), "--iters", "3"], timeout=90)
    check("the 16th task runs with --no-mps", rc == 0, err.strip()[-200:])
    rc, out, err = run([NVT, "-l"])
    RESULTS["list_with_15"] = out
    open(stop, "w").close()
    for p, _ in many:
        try:
            p.wait(timeout=30)
        except subprocess.TimeoutExpired:
            p.kill()

    rc, out, err = run([NVT, "--topology"])
    RESULTS["topology"] = out
    print("---- nvtaskset -l with 15 tasks ----\n" + RESULTS["list_with_15"], flush=True)
    print("---- nvtaskset --mps status ----\n" + run([NVT, "--mps", "status"])[1], flush=True)


try:
    main()
except Exception as e:  # a broken step must not leave MPS running
    check("e2e script", False, "%s: %s" % (type(e).__name__, e))
finally:
    stop_all()
    rc, out, err = run([NVT, "--mps", "stop"], timeout=60)
    info("--mps stop: rc=%d %s" % (rc, (out + err).strip()))
    rc, out, err = run([NVT, "--mps", "status"])
    check("MPS stopped at the end", rc == 3, out.strip())
    with open(os.path.join(LOG, "e2e.json"), "w") as f:
        json.dump(RESULTS, f, indent=1, default=str)
    print("%d passed, %d failed" % (counts["pass"], counts["fail"]))
    sys.exit(1 if counts["fail"] else 0)
