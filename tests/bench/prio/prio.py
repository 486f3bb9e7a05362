"""prio.py - the priorities benchmark (make bench-prio): a latency-critical service L beside
a neighbour H, every configuration side by side under one MPS daemon, fresh processes per
configuration. tests/bench/prio/README.md describes it; prio_report.py makes the CSV, the
summary and the plot from the raw logs written here.

    python3 prio.py ROOT BINDIR OUTDIR

One L process per configuration and L version runs every phase (each kind's periodic and
Poisson arrivals at each duty, then its closed loop at 100 %); one H process per
configuration runs through all of them. Knobs (environment): PRIO_SET, PRIO_CASES, PRIO_H,
PRIO_L, PRIO_KINDS, PRIO_DUTIES, PRIO_ARRIVALS, PRIO_PHASE_S, PRIO_MIN_REQUESTS, PRIO_ROUNDS,
PRIO_BUDGET_S, PRIO_GAP_S, PRIO_HALONE_S, PRIO_CONFIG_FILE, PRIO_DRY, PRIO_FAKE (README.md).
"""
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import priolib  # noqa: E402
from fake import SERVICE_US as FAKE_SERVICE_US  # noqa: E402

# ---- The configurations ------------------------------------------------------------------
# Each: name; "l", "h": the nvtaskset arguments that start L and H (MPS: a plain MPS client,
# no nvtaskset; None: not started); "l_env", "h_env": extra environment; "agent": None, or
# the arguments of `nvtaskset --agent ARGS`, started before L and H (stderr in agent.log,
# SIGTERM at the end; then one `nvtaskset -l --json` per phase in list.jsonl); "whole": true
# for a whole-GPU configuration (no partitions): its ratios are against L-alone-whole and
# H-alone-whole, the others' against L-alone and H-alone.
# The order is the run's order (round 1; round 2 reversed), so put the important first: a
# budget stops the run before the rest. PRIO_CONFIG_FILE (JSON, a list of the same entries)
# replaces entries of the same name and appends the others.
HI, LO = ["--priority", "high"], ["--priority", "low"]
SLICE = ["--yield", "slice"]
L_PART, H_PART = ["-g", "0-1"], ["-g", "2-11"]
MPS = "mps"
CLIENT_PRIO = {"CUDA_MPS_CLIENT_PRIORITY": "1"}
CONFIGS = [
    {"name": "L-alone", "l": L_PART, "h": None},  # the baseline of the partitioned L ratios
    {"name": "H-alone", "l": None, "h": H_PART},  # the baseline of the partitioned H ratios
    {"name": "static", "l": L_PART, "h": H_PART},
    {"name": "prio", "l": HI + L_PART, "h": LO + H_PART, "agent": []},  # the defaults
    {"name": "L-alone-whole", "l": MPS, "h": None, "whole": True},  # the whole-GPU baselines
    {"name": "H-alone-whole", "l": None, "h": MPS, "whole": True},
    {"name": "mps-cp", "l": MPS, "h": MPS, "h_env": CLIENT_PRIO, "whole": True},
    {"name": "prio-whole", "l": HI, "h": LO, "agent": [], "whole": True},  # the defaults, no masks
    {"name": "yield-client", "l": HI + L_PART, "h": LO + ["--yield", "client"] + H_PART, "agent": []},
    {"name": "yield-gate", "l": HI + L_PART, "h": LO + ["--yield", "gate"] + H_PART, "agent": []},
    {"name": "yield-gate+bound", "l": HI + L_PART, "h": LO + ["--yield", "gate,bound"] + H_PART,
     "agent": []},
    {"name": "yield-gate+bound+ahead", "l": HI + L_PART,
     "h": LO + ["--yield", "gate,bound,ahead"] + H_PART, "agent": []},
    {"name": "yield-borrow", "l": HI + L_PART, "h": LO + ["--yield", "borrow"] + H_PART, "agent": []},
    {"name": "static-cp", "l": L_PART, "h": H_PART, "h_env": CLIENT_PRIO},
    {"name": "mps", "l": MPS, "h": MPS, "whole": True},
    {"name": "prio-old", "l": HI + L_PART, "h": LO + ["--yield", "guard", "--guard", "8"] + H_PART,
     "agent": []},
    # Preemption (docs/priorities.md): each task in a context of its own, time-sliced on the whole
    # GPU, the lower one's channel groups at 5 us, the higher one's at 20 ms.
    {"name": "slice-whole", "l": HI + SLICE + ["--no-mps"], "h": LO + SLICE + ["--no-mps"], "whole": True},
]
BASE_L, BASE_H = "L-alone", "H-alone"  # L-alone also measures the service times
BASE_WHOLE = ("L-alone-whole", "H-alone-whole")

# Presets (PRIO_SET); a knob set in the environment wins. full fits one 10-minute command
# with the PyTorch L and H (one torch start costs ~5-10 s; so does each configuration).
SETS = {
    "full": {"PRIO_L": "torch", "PRIO_H": "torch", "PRIO_KINDS": "decode,prefill",
             "PRIO_DUTIES": "10,30,100", "PRIO_ARRIVALS": "periodic,poisson", "PRIO_CASES": "",
             "PRIO_ROUNDS": "1", "PRIO_PHASE_S": "2.0"},
    "quick": {"PRIO_L": "torch", "PRIO_H": "torch", "PRIO_KINDS": "decode,prefill",
              "PRIO_DUTIES": "10,100", "PRIO_ARRIVALS": "periodic,poisson",
              "PRIO_CASES": "L-alone,H-alone,static,static-cp,prio", "PRIO_ROUNDS": "2",
              "PRIO_PHASE_S": "1.5"},
    # What users run: three services (one token by token) at 10 % duty beside a transformer's
    # training (then the GEMM loop, where the budget leaves time), partitioned and whole-GPU.
    "users": {"PRIO_L": "torch", "PRIO_H": "llama,torch", "PRIO_KINDS": "decode,prefill,tbt",
              "PRIO_DUTIES": "10", "PRIO_ARRIVALS": "periodic,poisson",
              "PRIO_CASES": "L-alone,H-alone,static,prio,L-alone-whole,H-alone-whole,mps-cp,prio-whole",
              "PRIO_ROUNDS": "1", "PRIO_PHASE_S": "2.0", "PRIO_MIN_REQUESTS": "100", "PRIO_HALONE_S": "3"},
    # Preemption beside what users run, against static partitions and MPS client priority.
    "preempt": {"PRIO_L": "torch", "PRIO_H": "llama,torch", "PRIO_KINDS": "decode,prefill,tbt",
                "PRIO_DUTIES": "10", "PRIO_ARRIVALS": "periodic,poisson",
                "PRIO_CASES": "L-alone,H-alone,static,L-alone-whole,H-alone-whole,mps-cp,slice-whole",
                "PRIO_ROUNDS": "1", "PRIO_PHASE_S": "2.0", "PRIO_MIN_REQUESTS": "60", "PRIO_HALONE_S": "3"},
}
DEFAULTS = {"PRIO_SET": "full", "PRIO_BUDGET_S": "540", "PRIO_GAP_S": "0.15", "PRIO_HALONE_S": "4",
            "PRIO_MIN_REQUESTS": "0", "PRIO_CONFIG_FILE": "", "PRIO_DRY": "0", "PRIO_FAKE": "0",
            "PRIO_FAKE_FAIL": ""}
# Seconds to start a process and be ready (estimates, for the plan and the budget).
START_S = {"torch": 8.0, "cuda": 1.5, "hog": 1.0, "llama": 15.0, "llama-sync20": 15.0}
L_IMPLS, H_IMPLS = ("torch", "cuda"), ("torch", "hog", "llama", "llama-sync20")
# L's service times (us) on GPCs 0-1 before L-alone measures them (H100, 2026-11-23): the
# plan's length where PRIO_MIN_REQUESTS stretches a phase, in the estimates only.
SERVICE_EST_US = {"torch": {"decode": 600.0, "prefill": 2100.0, "tbt": 5000.0},
                  "cuda": {"decode": 550.0, "prefill": 11000.0, "tbt": 5000.0}}
SETTLE_S = 0.3      # after both are ready, before L's first phase
READY_LIMIT_S = 120  # a program that is not ready by then has failed
# Fake mode (PRIO_FAKE=1, the self-test): L's latency and H's step time multiplied by these.
FAKE_X = {"L-alone": (1.0, 1.0), "H-alone": (1.0, 1.0), "static": (1.7, 1.0), "static-cp": (1.6, 1.0),
          "L-alone-whole": (0.7, 1.0), "H-alone-whole": (1.0, 0.85), "mps": (4.9, 0.81),
          "mps-cp": (1.7, 0.82), "prio": (1.15, 0.88), "prio-whole": (1.9, 2.5), "prio-old": (1.2, 3.5)}


def settings():
    s = dict(DEFAULTS)
    s.update(SETS.get(os.environ.get("PRIO_SET", s["PRIO_SET"]), {}))
    s.update({k: v for k, v in os.environ.items() if k.startswith("PRIO_")})
    if s["PRIO_SET"] not in SETS:
        sys.exit("PRIO_SET: one of %s" % ", ".join(SETS))
    configs = load_configs(s["PRIO_CONFIG_FILE"])
    names = [c["name"] for c in configs]
    lst = lambda k: [x for x in s[k].split(",") if x]
    out = {"set": s["PRIO_SET"], "l": lst("PRIO_L"), "h": lst("PRIO_H"), "kinds": lst("PRIO_KINDS"),
           "arrivals": lst("PRIO_ARRIVALS"), "cases": lst("PRIO_CASES") or names,
           "fake": s["PRIO_FAKE"] == "1", "dry": s["PRIO_DRY"] == "1",
           "fake_fail": lst("PRIO_FAKE_FAIL")}
    try:
        out["duties"] = sorted({int(x) for x in lst("PRIO_DUTIES")})
        for k in ("PRIO_PHASE_S", "PRIO_BUDGET_S", "PRIO_GAP_S", "PRIO_HALONE_S"):
            out[k[5:].lower()] = float(s[k])
        out["rounds"] = int(s["PRIO_ROUNDS"])
        out["min_requests"] = int(s["PRIO_MIN_REQUESTS"])
    except ValueError as e:
        sys.exit("bad knob: %s" % e)
    checks = [("PRIO_L", out["l"], L_IMPLS), ("PRIO_H", out["h"], H_IMPLS),
              ("PRIO_KINDS", out["kinds"], priolib.KINDS), ("PRIO_ARRIVALS", out["arrivals"], priolib.ARRIVALS),
              ("PRIO_CASES", out["cases"], names)]
    for k, vals, known in checks:
        bad = [v for v in vals if v not in known]
        if bad or not vals:
            sys.exit("%s: %s: give a comma list of %s" % (k, ",".join(bad) or "empty", ", ".join(known)))
    if not out["duties"] or any(d < 1 or d > 100 for d in out["duties"]):
        sys.exit("PRIO_DUTIES: a comma list of percents, 1-100 (100: back to back)")
    if out["rounds"] < 1 or out["phase_s"] <= 0 or not 0 <= out["min_requests"] <= 100000:
        sys.exit("PRIO_ROUNDS >= 1, PRIO_PHASE_S > 0 and PRIO_MIN_REQUESTS 0-100000")
    if len(set(out["l"])) != len(out["l"]) or len(set(out["h"])) != len(out["h"]):
        sys.exit("PRIO_L, PRIO_H: each version once")
    if 100 in out["duties"] and len(out["duties"]) == 1:
        out["arrivals"] = []
    # The baselines run in every run (L-alone measures the service times); the whole-GPU
    # ones where a whole-GPU configuration runs.
    whole = any(c.get("whole") for c in configs if c["name"] in out["cases"])
    for base in (BASE_L, BASE_H) + (BASE_WHOLE if whole else ()):
        if base not in out["cases"]:
            out["cases"].append(base)
    out["configs"] = [c for c in configs if c["name"] in out["cases"]]
    return out


def load_configs(path):
    configs = [dict(c) for c in CONFIGS]
    if path:
        with open(path) as f:
            extra = json.load(f)
        for c in extra:
            if not isinstance(c, dict) or not isinstance(c.get("name"), str) or "," in c["name"]:
                sys.exit("%s: each entry a dict with a name (no commas)" % path)
            i = next((i for i, o in enumerate(configs) if o["name"] == c["name"]), None)
            if i is None:
                configs.append(c)
            else:
                configs[i] = c
    for c in configs:
        for side in ("l", "h"):
            v = c.get(side)
            if not (v is None or v == MPS or (isinstance(v, list) and all(isinstance(x, str) for x in v))):
                sys.exit("config %s: %s must be a list of arguments, \"mps\" or null" % (c["name"], side))
        if c.get("l") is None and c.get("h") is None:
            sys.exit("config %s: neither L nor H" % c["name"])
        if not isinstance(c.get("whole", False), bool):
            sys.exit("config %s: whole must be true or false" % c["name"])
    for name in (BASE_L, BASE_H) + BASE_WHOLE:
        c = next(c for c in configs if c["name"] == name)
        if (c.get("l") is None) != name.startswith("H") or bool(c.get("whole")) != name.endswith("whole"):
            sys.exit("config %s: a baseline keeps its side and scope" % name)
    return configs


# ---- The plan and its duration ------------------------------------------------------------
def phase_count(s):
    opened = len(s["kinds"]) * len(s["arrivals"]) * len([d for d in s["duties"] if d < 100])
    return opened, len(s["kinds"]) if 100 in s["duties"] else 0


def plan_phases(s, impl, service):
    """The phases of L version impl: with its measured service times where known, else
    fake.py's (fake mode) or SERVICE_EST_US's."""
    svc = service.get(impl) or (FAKE_SERVICE_US if s["fake"] else SERVICE_EST_US)[impl]
    return priolib.make_plan(s["kinds"], s["arrivals"], s["duties"], svc, s["phase_s"],
                             min_requests=s["min_requests"])


def est_l(s, impl, service, measure):
    phases = plan_phases(s, impl, service)
    opened = sum(1 for p in phases if p[2] != "closed")
    return sum(p[4] / 1e9 + s["gap_s"] for p in phases) + opened * 0.05 + (
        0.7 * len(s["kinds"]) if measure else 0)


def est_job(s, cfg, h, measure, service=None):
    start = START_S if not s["fake"] else {k: 0.3 for k in START_S}
    hs = start[h] if cfg.get("h") is not None else 0.0
    if cfg.get("l") is None:
        return hs + SETTLE_S + s["halone_s"] + 1.0
    t = max(hs, start[s["l"][0]]) + 1.0
    for i, impl in enumerate(s["l"]):
        t += (start[impl] if i else 0.0) + SETTLE_S + est_l(s, impl, service or {}, measure)
    return t


def schedule(s):
    """[(config, h, round)]: L-alone first, then per H its H-alone and the rest; round 2 in
    reverse order. With one round, H-alone runs again at the end (as round 2): its mean
    spans the run, and the two tell the drift (clocks, temperature)."""
    one = [(c, None) for c in s["configs"] if c.get("h") is None]
    for h in s["h"]:
        one += [(c, h) for c in s["configs"] if c.get("h") is not None]
    jobs = [(c, h, r) for r in range(s["rounds"]) for c, h in (one if r % 2 == 0 else one[::-1])]
    if s["rounds"] == 1:
        jobs += [(c, h, 1) for c, h in one if c.get("l") is None]
    return jobs


def merge(*dicts):
    out = {}
    for d in dicts:
        out.update(d or {})
    return out


# ---- Running ------------------------------------------------------------------------------
class Run:
    def __init__(self, root, bindir, out, s):
        self.s, self.out, self.bindir = s, out, bindir
        self.t0 = float(os.environ.get("PRIO_T0", time.time()))
        self.work = tempfile.mkdtemp(prefix="nvt-prio.")
        self.procs, self.service, self.lock = [], {}, threading.Lock()
        py = sys.executable or "python3"
        fake = [py, os.path.join(HERE, "fake.py")]
        self.nvt = fake + ["nvtaskset"] if s["fake"] else [os.path.join(root, "build/bin/nvtaskset")]
        stub = os.path.join(bindir, "service")
        self.l_prog = {"torch": fake + ["l", "torch"] if s["fake"] else [py, os.path.join(HERE, "service.py")],
                       "cuda": [stub] if (not s["fake"] or os.path.exists(stub)) else fake + ["l", "cuda"]}
        train = [py, os.path.join(HERE, "train.py")]
        self.h_prog = {"torch": train, "hog": [os.path.join(bindir, "hog"), "512", "4"],
                       "llama": train + ["--model", "llama"],
                       "llama-sync20": train + ["--model", "llama", "--sync", "20"]}
        if s["fake"]:
            self.h_prog = {h: fake + ["h", h] for h in H_IMPLS}
        self.env = dict(os.environ, CUDA_MPS_PIPE_DIRECTORY=os.path.join(self.work, "mps"),
                        CUDA_MPS_LOG_DIRECTORY=os.path.join(self.work, "mpslog"),
                        CUDA_DEVICE_MAX_CONNECTIONS="8", NVTASKSET_QUIET="1", PYTHONUNBUFFERED="1")
        for k in ("CUDA_MPS_ACTIVE_THREAD_PERCENTAGE", "CUDA_MPS_CLIENT_PRIORITY", "NVTASKSET_PARTITION",
                  "NVTASKSET_PARTITION_FOR", "NVTASKSET_PRIORITY"):
            self.env.pop(k, None)
        for k in ("CUDA_MPS_PIPE_DIRECTORY", "CUDA_MPS_LOG_DIRECTORY"):
            os.makedirs(self.env[k], exist_ok=True)
        self.logf = open(os.path.join(out, "driver.log"), "a")
        self.pidfile = os.path.join(out, ".cleanup")
        with open(self.pidfile, "w") as f:
            f.write("mps %s\n" % self.env["CUDA_MPS_PIPE_DIRECTORY"])

    def log(self, *a):
        line = "%7.1f %s %s" % (time.time() - self.t0, time.strftime("%H:%M:%S", time.gmtime()),
                                " ".join(str(x) for x in a))
        with self.lock:
            print(line, flush=True)
            self.logf.write(line + "\n")
            self.logf.flush()

    def sh(self, cmd, timeout=60):
        try:
            r = subprocess.run(cmd, env=self.env, timeout=timeout, capture_output=True, text=True)
            return r.returncode, r.stdout + r.stderr
        except (subprocess.TimeoutExpired, OSError) as e:
            return -1, str(e)

    def start(self, cmd, limit, env, log_path, pipe=False):
        """cmd under timeout, in a process group of its own (killed whole at the end)."""
        full = ["timeout", "-k", "5", "%d" % limit] + cmd
        f = open(log_path, "w")
        p = subprocess.Popen(full, env=env, stdin=subprocess.DEVNULL, start_new_session=True,
                             stdout=subprocess.PIPE if pipe else f, stderr=subprocess.STDOUT,
                             text=pipe, bufsize=1 if pipe else -1)
        p.logfile, p.cmd = f, full
        self.procs.append(p)
        with open(self.pidfile, "a") as pf:  # for run.sh, should this process be killed
            pf.write("pgid %d\n" % p.pid)
        return p

    def stop(self, p, sig=None, wait=30):
        """Ends p (a signal first if given), then its whole group; returns its exit status."""
        if ENDING:  # SIGTERM: run.sh's timeout kills this process 20 s later
            wait = min(wait, 1)
        if sig is not None and p.poll() is None:
            try:
                p.send_signal(sig)
            except OSError:
                pass
        try:
            rc = p.wait(timeout=wait)
        except subprocess.TimeoutExpired:
            rc = "killed"
        try:
            os.killpg(p.pid, signal.SIGKILL)
        except OSError:
            pass
        if rc == "killed":
            p.wait()
        if getattr(p, "follower", None):  # it copies the rest of the output to the log
            p.follower.join(10)
        p.logfile.close()
        return rc

    def cleanup(self):
        for p in self.procs:
            if p.poll() is None:
                self.stop(p, signal.SIGKILL, 5)
            try:  # what the group may have left (a child of a killed program)
                os.killpg(p.pid, signal.SIGKILL)
            except OSError:
                pass

    def wait_ready(self, p, path, limit):
        end = time.time() + limit
        while not os.path.exists(path):
            if p.poll() is not None:
                return "exited (%s) before it was ready" % p.returncode
            if time.time() > end:
                return "not ready after %d s" % limit
            time.sleep(0.02)
        return None

    def fake_env(self, cfg, side):
        """Fake mode: how much slower L is and H's steps are in this configuration."""
        if not self.s["fake"]:
            return {}
        lx, hx = FAKE_X.get(cfg["name"], (1.3, 1.1))
        e = {"PRIO_FAKE_X": "%.2f" % (lx if side == "l" else hx)}
        if side == "l" and cfg["name"] in self.s["fake_fail"]:
            e["PRIO_FAKE_FAIL"] = "1"
        return e

    def wrap(self, args, cmd):
        return cmd if args == MPS else self.nvt + list(args) + cmd

    def tail(self, path, n=1500):
        try:
            with open(path, "rb") as f:
                f.seek(0, 2)
                f.seek(max(0, f.tell() - n))
                return f.read().decode(errors="replace")
        except OSError as e:
            return str(e)

    def snapshot(self, d, lab):
        rc, out = self.sh(self.nvt + ["-l", "--json"], timeout=5)
        try:
            val = json.loads(out)
        except ValueError:
            val = out[-2000:]
        with self.lock, open(os.path.join(d, "list.jsonl"), "a") as f:
            f.write(json.dumps({"phase": lab, "t_ns": time.monotonic_ns(), "rc": rc, "list": val}) + "\n")

    def follow_l(self, p, d, snap):
        """Copies L's output to its log; per phase a snapshot of -l halfway through it."""
        for line in p.stdout:
            p.logfile.write(line)
            p.logfile.flush()
            w = line.split()
            if snap and len(w) == 3 and w[0] == "phase" and w[2].isdigit():
                delay = (int(w[2]) + self.s["phase_s"] * 0.5e9 - time.monotonic_ns()) / 1e9
                t = threading.Timer(max(0.0, delay), self.snapshot, (d, w[1]))
                t.daemon = True
                t.start()
                p.timers.append(t)

    def plan(self, impl):
        path = os.path.join(self.out, "raw", "plan-%s.txt" % impl)
        if not os.path.exists(path):
            priolib.write_plan(path, plan_phases(self.s, impl, self.service), self.s["gap_s"])
        return path

    def paths(self, d, impl):
        """L's ready file, its plan (it waits for this file: the go), its folder."""
        base = os.path.join(self.work, "%s.l-%s" % (d, impl))
        return base + ".ready", base + ".go", os.path.join(self.out, "raw", d)

    def start_l(self, cfg, impl, d, measure):
        s, tag = self.s, "l-" + impl
        ready, go, dd = self.paths(d, impl)
        cmd = self.l_prog[impl] + [",".join(s["kinds"]), ready, go, os.path.join(dd, tag + ".csv")]
        cmd += ["measure"] if measure else []
        env = merge(self.env, cfg.get("l_env"), self.fake_env(cfg, "l"))
        limit = READY_LIMIT_S + 2 * est_l(s, impl, self.service, measure) + 60
        p = self.start(self.wrap(cfg["l"], cmd), limit, env, os.path.join(dd, tag + ".log"), pipe=True)
        p.timers, p.measure = [], measure
        p.follower = threading.Thread(target=self.follow_l, args=(p, dd, cfg.get("agent") is not None))
        p.follower.daemon = True
        p.follower.start()
        return p

    def run_l(self, cfg, impl, d, meta, p):
        """One L process, started: ready, plan, phases. Returns a failure or None."""
        tag = "l-" + impl
        ready, go, dd = self.paths(d, impl)
        meta["l"][impl] = {"cmd": p.cmd, "measure": p.measure}
        why = self.wait_ready(p, ready, READY_LIMIT_S)
        if why is None and p.measure:
            with open(ready) as f:
                self.service[impl] = {k: float(v) for k, v in (x.split() for x in f if x.strip())}
            self.log(cfg["name"], impl, "service times (us):", self.service[impl])
            meta["l"][impl]["service_us"] = self.service[impl]
            if set(self.service[impl]) != set(self.s["kinds"]):
                why = "measured no service time for every kind"
                del self.service[impl]
        if why is None:
            time.sleep(SETTLE_S)
            shutil.copyfile(self.plan(impl), go + ".tmp")
            os.rename(go + ".tmp", go)
            limit = 1.5 * est_l(self.s, impl, self.service, False) + 30
            try:
                p.wait(timeout=limit)
            except subprocess.TimeoutExpired:
                why = "still running %d s after its plan" % limit
        rc = self.stop(p, signal.SIGTERM if why else None, 10)
        for t in p.timers:
            t.cancel()
        meta["l"][impl]["rc"] = rc
        if why is None and rc != 0:
            why = "exit status %s" % rc
        if why is None and not os.path.exists(os.path.join(dd, tag + ".csv")):
            why = "wrote no %s.csv" % tag
        return None if why is None else "L %s: %s\n%s" % (impl, why, self.tail(os.path.join(dd, tag + ".log")))

    def run_job(self, cfg, h, rnd):
        s, name = self.s, cfg["name"]
        d = "%s.%s.r%d" % (name, h or "none", rnd + 1)
        dd = os.path.join(self.out, "raw", d)
        os.makedirs(dd, exist_ok=True)
        meta = {"config": cfg, "name": name, "h": h, "round": rnd, "l": {}, "failed": [],
                "start_ns": time.monotonic_ns()}
        impls = []
        if cfg.get("l") is not None:
            for impl in s["l"]:
                if impl in self.service or name == BASE_L:
                    impls.append(impl)
                else:
                    meta["failed"].append("L %s: no service time (L-alone did not measure it)" % impl)
        agent = hp = None
        try:
            if cfg.get("agent") is not None:
                aenv = dict(self.env)
                aenv.pop("NVTASKSET_QUIET")  # the agent logs its changes only when not quiet
                agent = self.start(self.nvt + ["--agent"] + list(cfg["agent"]), 3600, aenv,
                                   os.path.join(dd, "agent.log"))
                time.sleep(0.3)
                if agent.poll() is not None:
                    meta["failed"].append("agent: exited (%s)\n%s" % (agent.returncode,
                                                                      self.tail(os.path.join(dd, "agent.log"))))
            hstop, hready = os.path.join(self.work, d + ".h.stop"), os.path.join(self.work, d + ".h.ready")
            if cfg.get("h") is not None:
                cmd = self.h_prog[h] + [hstop, hready, os.path.join(dd, "h")]
                env = merge(self.env, cfg.get("h_env"), self.fake_env(cfg, "h"))
                hp = self.start(self.wrap(cfg["h"], cmd), 3600, env, os.path.join(dd, "h.log"))
                meta["h_cmd"] = hp.cmd
            lp = None
            if impls:
                lp = self.start_l(cfg, impls[0], d, name == BASE_L and impls[0] not in self.service)
            if hp:
                why = self.wait_ready(hp, hready, READY_LIMIT_S)
                if why:
                    meta["failed"].append("H: %s\n%s" % (why, self.tail(os.path.join(dd, "h.log"))))
                    if lp:
                        self.stop(lp, signal.SIGKILL, 5)
                    return meta
                meta["h_ready_ns"] = time.monotonic_ns()
            if cfg.get("l") is None:
                time.sleep(SETTLE_S)
                meta["window"] = [time.monotonic_ns()]
                time.sleep(s["halone_s"])
                meta["window"].append(time.monotonic_ns())
            for i, impl in enumerate(impls):
                if i:
                    lp = self.start_l(cfg, impl, d, name == BASE_L and impl not in self.service)
                why = self.run_l(cfg, impl, d, meta, lp)
                if why:
                    meta["failed"].append(why)
                if hp and hp.poll() is not None:
                    break
            if hp:
                early = hp.poll()
                open(hstop, "w").close()
                rc = self.stop(hp, None, 60)
                meta["h_rc"] = rc
                if early is not None or rc != 0 or not os.path.exists(os.path.join(dd, "h.steps")):
                    meta["failed"].append("H: %s, exit status %s\n%s" % (
                        "ended before the end" if early is not None else "ended", rc,
                        self.tail(os.path.join(dd, "h.log"))))
                hp = None
        except BaseException:
            meta["failed"].append("interrupted: the run's time limit (PRIO_TIMEOUT_S) or a signal")
            raise
        finally:
            if hp:
                open(hstop, "w").close()
                self.stop(hp, None, 20)
            if agent:
                meta["agent_rc"] = self.stop(agent, signal.SIGTERM, 10)
            meta["end_ns"] = time.monotonic_ns()
            with open(os.path.join(dd, "meta.json"), "w") as f:
                json.dump(meta, f, indent=1)
        return meta

    def save(self, run):
        run["service_us"] = self.service
        run["elapsed_s"] = time.time() - self.t0
        with open(os.path.join(self.out, "run.json.tmp"), "w") as f:
            json.dump(run, f, indent=1)
        os.rename(os.path.join(self.out, "run.json.tmp"), os.path.join(self.out, "run.json"))

    def main(self):
        s = self.s
        jobs = schedule(s)
        total = sum(est_job(s, c, h, c["name"] == BASE_L and r == 0) for c, h, r in jobs)
        opened, closed = phase_count(s)
        self.log("plan: set %s, L %s, H %s, kinds %s, arrivals %s, duties %s, %d phases of %.1f s%s per L,"
                 " %d rounds, %d runs (configuration x H x round): ~%.0f s (%.1f min) planned, budget %.0f s"
                 " from the start (%.0f s gone)" % (
                     s["set"], ",".join(s["l"]), ",".join(s["h"]), ",".join(s["kinds"]), ",".join(s["arrivals"]),
                     ",".join(map(str, s["duties"])), opened + closed, s["phase_s"],
                     " (open loop: at least %d requests)" % s["min_requests"] if s["min_requests"] else "",
                     s["rounds"], len(jobs), total, total / 60, s["budget_s"], time.time() - self.t0))
        for c, h, r in jobs:
            self.log("  %-24s H %-5s round %d ~%.0f s" % (c["name"], h or "-", r + 1,
                                                          est_job(s, c, h, c["name"] == BASE_L and r == 0)))
        if s["dry"]:
            shutil.rmtree(self.work, ignore_errors=True)
            os.unlink(self.pidfile)
            return 0
        os.makedirs(os.path.join(self.out, "raw"), exist_ok=True)
        run = {"settings": {k: v for k, v in s.items() if k != "configs"}, "configs": s["configs"],
               "planned_s": total, "service_us": self.service, "jobs": [], "skipped": []}
        if not s["fake"]:
            rc, out = self.sh(self.nvt + ["--topology"])
            with open(os.path.join(self.out, "topology.txt"), "w") as f:
                f.write(out)
        self.save(run)  # now, for the report of a run that gets killed, and again at the end
        rc, out = self.sh(self.nvt + ["--mps", "start"])
        self.log("mps start", rc, out.strip())
        try:
            for c, h, r in jobs:
                e = est_job(s, c, h, c["name"] == BASE_L and r == 0, self.service)
                if time.time() - self.t0 + e > s["budget_s"]:
                    self.log("budget: skip", c["name"], h or "-", r + 1, "(~%.0f s)" % e)
                    run["skipped"].append([c["name"], h, r])
                    continue
                self.log("start", c["name"], "H", h or "-", "round", r + 1, "(~%.0f s)" % e)
                meta = self.run_job(c, h, r)
                run["jobs"].append([c["name"], h, r])
                self.save(run)
                self.log("done", c["name"], "H", h or "-", "round", r + 1,
                         "failed: " + "; ".join(x.split("\n")[0] for x in meta["failed"]) if meta["failed"] else "ok")
        finally:
            self.cleanup()
            rc, out = self.sh(self.nvt + ["--mps", "stop"])
            self.log("mps stop", rc, out.strip())
            if not s["fake"]:
                self.sh(["bash", "-c", "echo quit | timeout 20 nvidia-cuda-mps-control"], timeout=30)
            self.save(run)
            shutil.rmtree(self.work, ignore_errors=True)
            os.unlink(self.pidfile)
        return 0


ENDING = False


def on_term(*_):
    """The first SIGTERM ends the run through every finally; the next ones (timeout signals
    its process group too) must not cut that clean-up short."""
    global ENDING
    if not ENDING:
        ENDING = True
        sys.exit(143)


def main():
    if sys.argv[1:] == ["--programs"]:  # run.sh builds only these
        s = settings()
        print(" ".join(p for p, need in (("service", "cuda" in s["l"]), ("hog", "hog" in s["h"])) if need))
        return 0
    if len(sys.argv) != 4:
        sys.exit("usage: prio.py ROOT BINDIR OUTDIR | prio.py --programs")
    signal.signal(signal.SIGTERM, on_term)  # a timeout still cleans up
    root, bindir, out = sys.argv[1:4]
    s = settings()
    os.makedirs(out, exist_ok=True)
    return Run(root, bindir, out, s).main()


if __name__ == "__main__":
    sys.exit(main())
