"""prio.py - the priorities benchmark (issue 26): runs the configurations side by
side under one MPS daemon and writes raw logs under OUTDIR (prio_report.py
makes the CSV and PNG from them).

    python3 prio.py ROOT BINDIR OUTDIR guard|full

guard: the guard sweep: memory-bound L (back to back) on GPCs 0-1 beside the
       streaming hog held to a few TPCs (static partitions), and MPS's client
       priority (CUDA_MPS_CLIENT_PRIORITY) under plain MPS.
full:  L at PRIO_DUTIES (default 10,30,70) beside the GEMM loop and the
       streaming hog, every configuration, PRIO_ROUNDS rounds.
Environment: PRIO_ROUNDS, PRIO_PERIODS, PRIO_PERIOD_MS, PRIO_GUARD (the hog's
guard), PRIO_HOLD_MS, PRIO_POLL_US, PRIO_GEMM_N, PRIO_BUDGET_S (stop starting
rounds after this many seconds), PRIO_CASES (a comma list of full's
cases to run, e.g. stream-prio,L-alone-part).
"""
import json
import os
import re
import signal
import subprocess
import sys
import tempfile
import time

ROOT, BIN, OUT, MODE = sys.argv[1:5]
HERE = os.path.dirname(os.path.abspath(__file__))
NVT = os.path.join(ROOT, "build/bin/nvtaskset")
WORK = tempfile.mkdtemp(prefix="nvt-prio.")
E = lambda k, d: os.environ.get(k, d)
ROUNDS = int(E("PRIO_ROUNDS", "2"))
PERIODS = E("PRIO_PERIODS", "6")
PERIOD_MS = E("PRIO_PERIOD_MS", "200")
DUTIES = E("PRIO_DUTIES", "10,30,70")
GUARD = E("PRIO_GUARD", "8")
HOLD = E("PRIO_HOLD_MS", "20")
POLL = E("PRIO_POLL_US", "500")
GEMM_N = E("PRIO_GEMM_N", "8192")
BUDGET = float(E("PRIO_BUDGET_S", "500"))
L_GPCS, H_GPCS = "0-1", "2-11"
ENV = dict(os.environ, CUDA_MPS_PIPE_DIRECTORY=os.path.join(WORK, "mps"),
           CUDA_MPS_LOG_DIRECTORY=os.path.join(WORK, "mpslog"), CUDA_DEVICE_MAX_CONNECTIONS="8",
           NVTASKSET_QUIET="1", PYTHONUNBUFFERED="1")
for k in ("CUDA_MPS_ACTIVE_THREAD_PERCENTAGE", "CUDA_MPS_CLIENT_PRIORITY", "NVTASKSET_PARTITION"):
    ENV.pop(k, None)
T0 = time.time()
os.makedirs(OUT, exist_ok=True)
LOG = open(os.path.join(OUT, "driver.log"), "a")


def log(*a):
    s = "%7.1f %s %s" % (time.time() - T0, time.strftime("%H:%M:%S", time.gmtime()), " ".join(str(x) for x in a))
    print(s, flush=True)
    LOG.write(s + "\n")
    LOG.flush()


def sh(cmd, env=None, timeout=60):
    r = subprocess.run(cmd, env=env or ENV, timeout=timeout, capture_output=True, text=True)
    return r.returncode, r.stdout + r.stderr


def wait_file(path, timeout):
    end = time.time() + timeout
    while time.time() < end:
        if os.path.exists(path):
            return True
        time.sleep(0.01)
    return False


def h_cmd(kind, prefix, record):
    if kind == "gemm":
        return prefix + ["python3", os.path.join(HERE, "gemm.py"), GEMM_N]
    return prefix + [os.path.join(BIN, "hog"), "512", "4"]


def run_case(name, lruns, hog=None, agent=None, h_alone_s=0.0):
    """lruns: [(variant, prefix, env_extra)]; hog: (kind, prefix, env_extra, record)."""
    d = os.path.join(OUT, "raw", name)
    os.makedirs(d, exist_ok=True)
    stop, ready = os.path.join(WORK, name + ".stop"), os.path.join(WORK, name + ".ready")
    for p in (stop, ready):
        if os.path.exists(p):
            os.unlink(p)
    ag = h = None
    meta = {"name": name, "start_ns": time.monotonic_ns()}
    try:
        if agent:
            guard, hold, poll = agent
            aenv = dict(ENV)
            aenv.pop("NVTASKSET_QUIET")  # the agent logs its changes only when not quiet
            ag = subprocess.Popen([NVT, "--agent", "--hold", hold, "--poll", poll, "--guard", guard],
                                  env=aenv, stdout=subprocess.DEVNULL,
                                  stderr=open(os.path.join(d, "agent.log"), "w"))
            meta["agent"] = {"hold_ms": hold, "poll_us": poll, "guard": guard, "pid": ag.pid}
            time.sleep(0.2)
        if hog:
            kind, prefix, extra, record = hog
            cmd = h_cmd(kind, prefix, record) + [stop, ready, os.path.join(d, "h")]
            if record and kind != "gemm":
                cmd.append("record")
            meta["h_cmd"] = cmd
            h = subprocess.Popen(["timeout", "300"] + cmd, env=dict(ENV, **extra),
                                 stdout=open(os.path.join(d, "h.out"), "w"), stderr=subprocess.STDOUT)
            if not wait_file(ready, 90):
                log(name, "H never got ready")
                return None
            time.sleep(0.3)
            meta["h_ready_ns"] = time.monotonic_ns()
        if h_alone_s:
            time.sleep(h_alone_s)
        meta["l"] = []
        for variant, prefix, extra, lmode in lruns:
            if lmode == "sweep":
                args = [variant, "100", "100", "3"]
            else:
                args = [variant, PERIOD_MS, DUTIES, PERIODS]
            cmd = prefix + ["timeout", "120", os.path.join(BIN, "lat")] + args + [os.path.join(d, "l-%s.csv" % variant)]
            rc, out = sh(cmd, env=dict(ENV, **extra), timeout=130)
            meta["l"].append({"variant": variant, "cmd": cmd, "rc": rc, "env": extra})
            if rc:
                log(name, variant, "L failed", rc, out[-400:])
        meta["end_ns"] = time.monotonic_ns()
        if h:
            open(stop, "w").close()
            try:
                meta["h_rc"] = h.wait(timeout=60)
            except subprocess.TimeoutExpired:
                h.kill()
                meta["h_rc"] = "killed"
            h = None
        return meta
    finally:
        if h:
            open(stop, "w").close()
            try:
                h.wait(timeout=30)
            except subprocess.TimeoutExpired:
                h.kill()
        if ag:
            ag.send_signal(signal.SIGTERM)
            try:
                ag.wait(timeout=10)
            except subprocess.TimeoutExpired:
                ag.kill()
        with open(os.path.join(d, "meta.json"), "w") as f:
            json.dump(meta, f, indent=1)


def part(gpcs=None, tpcs=None, prio=None):
    p = [NVT]
    if prio:
        p += prio
    if gpcs:
        p += ["-g", gpcs]
    if tpcs:
        p += ["-c", tpcs]
    return p


def guard_sweep():
    points = [("alone", None), ("c2", "c:2,10"), ("c4", "c:2,10,18,26"), ("g2", "g:2"), ("g4", "g:4"),
              ("g6", "g:6"), ("g7", "g:7"), ("g2-3", "g:2-3"), ("g4-5", "g:4-5"), ("g6-7", "g:6-7"),
              ("g2-11", "g:2-11")]
    lpre = part(gpcs=L_GPCS)
    for r in range(ROUNDS):
        order = points if r % 2 == 0 else points[::-1]
        for tag, hp in order:
            if time.time() - T0 > BUDGET:
                log("budget: stop")
                return
            hog = None
            if hp:
                kind, lst = hp.split(":")
                hog = ("stream", part(gpcs=lst) if kind == "g" else part(tpcs=lst), {}, False)
            m = run_case("guard-%s-r%d" % (tag, r), [("memory", lpre, {}, "sweep")], hog)
            log("done", tag, r, bool(m))
    # MPS's client priority, plain MPS clients: L compute and memory beside the hog.
    for r in range(ROUNDS):
        for tag, lenv, henv in (("mps", {}, {}),
                                ("mpsprio", {"CUDA_MPS_CLIENT_PRIORITY": "0"}, {"CUDA_MPS_CLIENT_PRIORITY": "1"})):
            if time.time() - T0 > BUDGET:
                return
            m = run_case("cprio-%s-r%d" % (tag, r),
                         [("memory", [], lenv, "sweep"), ("compute", [], lenv, "sweep")],
                         ("stream", [], henv, False))
            log("done", tag, r, bool(m))
    for r in range(1):
        run_case("cprio-alone-r%d" % r, [("memory", [], {}, "sweep"), ("compute", [], {}, "sweep")])


def full():
    ag, ag2, ag2p = (GUARD, HOLD, POLL), (GUARD, "2", POLL), (GUARD, "2", "100")
    lv = lambda pre, extra=None: [("compute", pre, extra or {}, "duty"), ("memory", pre, extra or {}, "duty")]
    hi, lo = ["--priority", "high"], ["--priority", "low"]
    lp, hp = part(gpcs=L_GPCS, prio=hi), part(gpcs=H_GPCS, prio=lo)
    cp_l, cp_h = {"CUDA_MPS_CLIENT_PRIORITY": "0"}, {"CUDA_MPS_CLIENT_PRIORITY": "1"}
    cases = [("L-alone", lv([]), None, None, 0),
             ("L-alone-part", lv(part(gpcs=L_GPCS)), None, None, 0)]
    for k in ("gemm", "stream"):
        cases += [
            ("%s-H-alone" % k, [], (k, [], {}, False), None, 3.0),
            ("%s-mps" % k, lv([]), (k, [], {}, False), None, 0),
            ("%s-mps-pct" % k, lv([], {"CUDA_MPS_ACTIVE_THREAD_PERCENTAGE": "20"}),
             (k, [], {"CUDA_MPS_ACTIVE_THREAD_PERCENTAGE": "80"}, False), None, 0),
            ("%s-static" % k, lv(part(gpcs=L_GPCS)), (k, part(gpcs=H_GPCS), {}, False), None, 0),
            ("%s-prio" % k, lv(lp), (k, hp, {}, False), ag, 0),
            ("%s-prio-nolend" % k, lv(part(gpcs=L_GPCS, prio=hi + ["--no-lend"])), (k, hp, {}, False), ag, 0),
            ("%s-prio-cp" % k, lv(lp, cp_l), (k, hp, cp_h, False), ag, 0),
            ("%s-prio-h2" % k, lv(lp), (k, hp, {}, False), ag2, 0),
        ]
    g54 = ("gemm", part(gpcs=H_GPCS, prio=lo + ["--guard", "54"]), {}, False)
    cases += [("gemm-prio-g54", lv(lp), g54, ag, 0),  # lending only: H keeps its 54 TPCs while L runs
              ("gemm-prio-g54-h2", lv(lp), g54, ag2, 0),
              ("stream-prio-h2-p100", lv(lp), ("stream", hp, {}, False), ag2p, 0)]
    only = E("PRIO_CASES", "")
    if only:
        cases = [c for c in cases if c[0] in only.split(",")]
    for r in range(ROUNDS):
        order = cases if r % 2 == 0 else cases[::-1]
        for name, lruns, hog, agent, halone in order:
            if time.time() - T0 > BUDGET:
                log("budget: stop before", name, r)
                return
            log("start", name, r)
            m = run_case("%s-r%d" % (name, r), lruns, hog, agent, halone)
            log("done", name, r, bool(m))


def main():
    os.makedirs(OUT, exist_ok=True)
    for k in ("CUDA_MPS_PIPE_DIRECTORY", "CUDA_MPS_LOG_DIRECTORY"):
        os.makedirs(ENV[k], exist_ok=True)
    rc, out = sh([NVT, "--topology"])
    open(os.path.join(OUT, "topology.txt"), "w").write(out)
    rc, out = sh([NVT, "--mps", "start"])
    log("mps start", rc, out.strip())
    try:
        guard_sweep() if MODE == "guard" else full()
    finally:
        rc, out = sh([NVT, "--mps", "stop"])
        log("mps stop", rc, out.strip())
        subprocess.run(["bash", "-c", "echo quit | timeout 20 nvidia-cuda-mps-control"], env=ENV)


if __name__ == "__main__":
    main()
