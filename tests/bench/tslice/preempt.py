"""preempt.py - probe: a service L (lsvc.py) beside a batch task H, H's channel groups given a
short timeslice by rmprobe.c (at allocation, after each schedule, libcuda's own calls
rewritten), optionally held off the GPU while L's request is open (rmprobe's gate), inside and
outside MPS. Fresh processes per configuration; one JSON line each in OUT/preempt.log, every
process's rmprobe log under OUT's work directory.

    python3 preempt.py ROOT OUT [CONFIG...]
"""
import json, os, shutil, subprocess, sys, time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from tslib import pct, wait_file  # noqa: E402

R, OUT = sys.argv[1], sys.argv[2]
ONLY = sys.argv[3:]
T = os.path.join(R, "tests/bench/tslice")
W = "/tmp/pw"
NVT = os.path.join(R, "build/bin/nvtaskset")
RMP = os.path.join(W, "rmprobe.so")
os.makedirs(OUT, exist_ok=True)
LOG = open(os.path.join(OUT, "preempt.log"), "a")
LN = os.environ.get("L_N", "150")


def log(*a):
    s = " ".join(str(x) for x in a)
    print(s, flush=True)
    LOG.write(s + "\n")
    LOG.flush()


def env_for(pipe, extra):
    e = dict(os.environ)
    e["CUDA_MPS_PIPE_DIRECTORY"] = os.path.join(W, pipe or "nomps")
    e["CUDA_MPS_LOG_DIRECTORY"] = os.path.join(W, (pipe or "nomps") + "log")
    e.update(extra)
    return e


def rmp(d, who, ts=None, when="alloc,sched,rewrite", **kw):
    e = {"LD_PRELOAD": RMP, "RMP_LOG": os.path.join(d, who)}
    if ts is not None:
        e["RMP_TS"] = str(ts)
        e["RMP_WHEN"] = when
    e.update({k: str(v) for k, v in kw.items()})
    return e


def mps_start(pipe, extra):
    e = env_for(pipe, extra)
    os.makedirs(e["CUDA_MPS_PIPE_DIRECTORY"], exist_ok=True)
    os.makedirs(e["CUDA_MPS_LOG_DIRECTORY"], exist_ok=True)
    r = subprocess.run(["nvidia-cuda-mps-control", "-d"], env=e, capture_output=True, text=True, timeout=30)
    log("mps start", pipe, r.returncode, r.stdout.strip(), r.stderr.strip())


def mps_stop(pipe):
    e = env_for(pipe, {})
    subprocess.run(["bash", "-c", "echo quit | timeout 20 nvidia-cuda-mps-control"], env=e)
    for _ in range(100):
        r = subprocess.run(["pgrep", "-f", "nvidia-cuda-mps"], capture_output=True, text=True)
        if not r.stdout.strip():
            break
        time.sleep(0.1)


HPROG = {"gemm": [os.path.join(R, "tests/bench/prio/train.py")],
         "spin": [os.path.join(T, "hspin.py")], "llama": [os.path.join(T, "hllama.py")]}


def run(name, L, H, servers=()):
    """L: (prefix, pipe, env) or None; H: (prefix, pipe, env, kind) or None;
    servers: ((pipe, env), ...) MPS control daemons started for this configuration."""
    d = os.path.join(W, name)
    shutil.rmtree(d, ignore_errors=True)
    os.makedirs(d)
    flag = os.path.join(d, "flag")
    with open(flag, "wb") as f:
        f.write(b"\0" * 4096)
    L = L and (L[0], L[1], {k: v.replace("@D", d) for k, v in L[2].items()})
    H = H and (H[0], H[1], {k: v.replace("@D", d) for k, v in H[2].items()}, H[3])
    servers = [(p, {k: v.replace("@D", d) for k, v in e.items()}) for p, e in servers]
    for p, e in servers:
        mps_start(p, e)
    procs, hp, lp = [], None, None
    t_begin = time.time()
    try:
        if H:
            pre, pipe, ex, kind = H
            suffix = ".steps" if kind != "gemm" else ""
            hp = subprocess.Popen(["timeout", "150"] + pre + [sys.executable] + HPROG[kind] +
                                  [d + "/hstop", d + "/hready", os.path.join(d, "h") + suffix],
                                  env=env_for(pipe, ex), stdout=open(d + "/h.log", "w"),
                                  stderr=subprocess.STDOUT, start_new_session=True)
            procs.append(hp)
        if L:
            pre, pipe, ex = L
            e = env_for(pipe, ex)
            e.update({"L_READY": d + "/lready", "L_GO": d + "/lgo", "L_N": LN, "L_FLAG": flag})
            e.update({k: v for k, v in ex.items() if k.startswith("L_")})
            lp = subprocess.Popen(["timeout", "150"] + pre + [sys.executable, os.path.join(T, "lsvc.py"),
                                                               d + "/l.csv"],
                                  env=e, stdout=open(d + "/l.log", "w"), stderr=subprocess.STDOUT,
                                  start_new_session=True)
            procs.append(lp)
        ok = True
        if H and not wait_file(d + "/hready", 120, hp):
            ok = False
            log(name, "H not ready")
        if L and not wait_file(d + "/lready", 120, lp):
            ok = False
            log(name, "L not ready")
        t0 = time.monotonic_ns()
        if ok and L:
            open(d + "/lgo", "w").close()
            time.sleep(3)
            snap = subprocess.run([NVT, "-l", "--json"], capture_output=True, text=True, timeout=30,
                                  env=env_for(None, {}))
            open(d + "/list.json", "w").write(snap.stdout + snap.stderr)
            try:
                lp.wait(100)
            except subprocess.TimeoutExpired:
                log(name, "L timed out")
        elif ok:
            time.sleep(6)
        t1 = time.monotonic_ns()
        if H:
            open(d + "/hstop", "w").close()
            try:
                hp.wait(40)
            except subprocess.TimeoutExpired:
                log(name, "H did not stop")
    finally:
        for p in procs:
            try:
                os.killpg(p.pid, 9)
            except OSError:
                pass
        for p, _ in servers:
            mps_stop(p)
    res = {"name": name, "s": round(time.time() - t_begin, 1)}
    if H:
        try:
            ends = [int(x.split()[0]) for x in open(os.path.join(d, "h.steps")) if x.strip() and x[0] != "#"]
            inw = [t for t in ends if t0 <= t <= t1]
            res["h_rate"] = round(len(inw) / ((t1 - t0) / 1e9), 1) if inw else 0.0
        except OSError as e:
            res["h_rate"] = None
            log(name, "no H steps", e)
    if L:
        try:
            rows = [x.split(",") for x in open(d + "/l.csv").read().split("\n")[1:] if x]
            for ph in ("decode", "tbt", "prefill"):
                v = [float(r[2]) for r in rows if r[0] == ph]
                if v:
                    res[ph] = (round(pct(v, 0.5), 3), round(pct(v, 0.99), 3), round(max(v), 3))
        except OSError as e:
            log(name, "no L csv", e)
    try:
        tasks = json.load(open(d + "/list.json")).get("tasks", [])
        res["list"] = [{"pid": t.get("pid"), "cmd": (t.get("command") or "")[-24:],
                        "gpus": [{k: g.get(k) for k in ("priority", "yield") if k in g} for g in t.get("gpus", [])]}
                       for t in tasks]
    except (OSError, ValueError):
        pass
    for f in ("l.log", "h.log"):
        p = os.path.join(d, f)
        if os.path.exists(p):
            lines = [x for x in open(p).read().split("\n") if x]
            if lines:
                res[f] = lines[-3:]
    # What rmprobe saw: per process, the set-ts/rewrite/gate lines in brief.
    summ = {}
    for fn in sorted(os.listdir(d)):
        if fn.startswith(("H.", "L.", "S")) and fn.split(".")[-1].isdigit():
            txt = open(os.path.join(d, fn)).read().split("\n")
            exe = next((x.split("exe=")[1].split()[0] for x in txt if " start " in x), "?")
            sets = [x for x in txt if "set-ts" in x]
            rew = [x for x in txt if "rewrite" in x]
            gate = [x for x in txt if " gate " in x]
            nalloc = sum(1 for x in txt if "alloc cls=0xa06c" in x)
            bad = [x for x in sets if "status=0x0 " not in x]
            summ[fn] = {"exe": os.path.basename(exe), "tsgs": nalloc, "sets": len(sets), "bad_sets": bad[:3],
                        "rewrites": len(rew), "rewrite_eg": rew[:2], "gate": gate[-2:]}
    if summ:
        res["rmp"] = summ
    log(json.dumps(res))
    return res


def nvt(*a):
    return [NVT] + list(a)


LONG = 100000  # L's own groups: 100 ms
GATE = {"RMP_GATE": "@D/flag"}
STEPS = {"L_FLAG_STEPS": "1"}
CONFIGS2 = [
    ("L-alone", ([], None, {}), None, ()),
    ("H-alone-gemm", None, ([], None, {}, "gemm"), ()),
    ("static-gemm", (nvt("-g", "0-1"), "mps", {}), (nvt("-g", "2-11"), "mps", {}, "gemm"), ()),
    ("gemm-ts5", ([], None, rmp("@D", "L", LONG)), ([], None, rmp("@D", "H", 5), "gemm"), ()),
    ("gemm-ts1", ([], None, rmp("@D", "L", LONG)), ([], None, rmp("@D", "H", 1), "gemm"), ()),
    ("gemm-rewrite-only", ([], None, rmp("@D", "L", LONG, "rewrite")), ([], None, rmp("@D", "H", 5, "rewrite"), "gemm"), ()),
    ("gemm-gate-req", ([], None, rmp("@D", "L", LONG)), ([], None, rmp("@D", "H", 5, **GATE), "gemm"), ()),
    ("gemm-gate-steps", ([], None, dict(rmp("@D", "L", LONG), **STEPS)),
     ([], None, rmp("@D", "H", 5, RMP_LINGER_US=300, **GATE), "gemm"), ()),
    ("gemm-gate-req-reset", ([], None, rmp("@D", "L", LONG)),
     ([], None, rmp("@D", "H", 5, RMP_GATE_RESET=1, **GATE), "gemm"), ()),
    ("mps-low-gate-steps", ([], None, dict(rmp("@D", "L", LONG), **STEPS)), ([], "mpsB", {}, "gemm"),
     (("mpsB", rmp("@D", "SB", 5, RMP_LINGER_US=300, **GATE)),)),
    ("llama-ts5", ([], None, rmp("@D", "L", LONG)), ([], None, rmp("@D", "H", 5), "llama"), ()),
    ("llama-gate-steps", ([], None, dict(rmp("@D", "L", LONG), **STEPS)),
     ([], None, rmp("@D", "H", 5, RMP_LINGER_US=300, **GATE), "llama"), ()),
]
# The product: nvtaskset's own forms (--yield slice, preempt), each task in its own context.
HS = ["--no-mps", "--priority", "high", "--yield", "slice"]
LS = ["--no-mps", "--priority", "low", "--yield", "slice"]
LP = ["--no-mps", "--priority", "low", "--yield", "preempt"]
CONFIGS3 = [
    ("L-alone", ([], None, {}), None, ()),
    ("H-alone-gemm", None, ([], None, {}, "gemm"), ()),
    ("H-alone-gemm-nvt", None, (nvt(*LP), None, {}, "gemm"), ()),
    ("static-gemm", (nvt("-g", "0-1"), "mps", {}), (nvt("-g", "2-11"), "mps", {}, "gemm"), ()),
    ("nvt-slice-gemm", (nvt(*HS), None, {}), (nvt(*LS), None, {}, "gemm"), ()),
    ("nvt-preempt-gemm", (nvt(*HS), None, {}), (nvt(*LP), None, {}, "gemm"), ()),
    ("H-alone-llama", None, ([], None, {}, "llama"), ()),
    ("static-llama", (nvt("-g", "0-1"), "mps", {}), (nvt("-g", "2-11"), "mps", {}, "llama"), ()),
    ("nvt-preempt-llama", (nvt(*HS), None, {}), (nvt(*LP), None, {}, "llama"), ()),
    ("nvt-preempt-llama20", (nvt(*HS), None, {}), (nvt(*LP), None, {"PRIO_SYNC": "20"}, "llama"), ()),
    ("L-alone-2", ([], None, {}), None, ()),
]
KEEP = {"L_KEEPALIVE_US": "400"}
CONFIGS4 = [
    ("L-alone", ([], None, {}), None, ()),
    ("L-alone-keep", ([], None, dict(KEEP)), None, ()),
    ("H-alone-gemm", None, ([], None, {}, "gemm"), ()),
    ("static-gemm", (nvt("-g", "0-1"), "mps", {}), (nvt("-g", "2-11"), "mps", {}, "gemm"), ()),
    ("gemm-ts5", ([], None, rmp("@D", "L", LONG)), ([], None, rmp("@D", "H", 5, "rewrite"), "gemm"), ()),
    ("gemm-keep", ([], None, dict(rmp("@D", "L", LONG), **KEEP)), ([], None, rmp("@D", "H", 5, "rewrite"), "gemm"), ()),
    ("llama-keep", ([], None, dict(rmp("@D", "L", LONG), **KEEP)), ([], None, rmp("@D", "H", 5, "rewrite"), "llama"), ()),
    ("static-gemm-2", (nvt("-g", "0-1"), "mps", {}), (nvt("-g", "2-11"), "mps", {}, "gemm"), ()),
    ("gemm-ts5-2", ([], None, rmp("@D", "L", LONG)), ([], None, rmp("@D", "H", 5, "rewrite"), "gemm"), ()),
    ("gemm-keep-2", ([], None, dict(rmp("@D", "L", LONG), **KEEP)), ([], None, rmp("@D", "H", 5, "rewrite"), "gemm"), ()),
    ("L-alone-2", ([], None, {}), None, ()),
]
KEEPE = {"L_KEEPALIVE_US": "400", "L_KEEPALIVE_EARLY": "1"}
CONFIGS5 = [
    ("L-alone-keepe", ([], None, dict(KEEPE)), None, ()),
    ("gemm-ts5", ([], None, rmp("@D", "L", LONG)), ([], None, rmp("@D", "H", 5, "rewrite"), "gemm"), ()),
    ("gemm-keepe", ([], None, dict(rmp("@D", "L", LONG), **KEEPE)), ([], None, rmp("@D", "H", 5, "rewrite"), "gemm"), ()),
    ("llama-keepe", ([], None, dict(rmp("@D", "L", LONG), **KEEPE)), ([], None, rmp("@D", "H", 5, "rewrite"), "llama"), ()),
]
# make check-gpu-preempt (tests/gpu/preempt.sh): each form of nvtaskset's beside the default
# timeslices, the read-back in -l; the level daemons started by nvtaskset itself.
HM = ["--priority", "high", "--yield", "slice"]
LM = ["--priority", "low", "--yield", "slice"]
CONFIGS6 = [
    ("gpu-default", ([], None, {}), ([], None, {}, "gemm"), ()),
    ("gpu-slice-own", (nvt(*HS), None, {}), (nvt(*LS), None, {}, "gemm"), ()),
    ("gpu-slice-mps", (nvt(*HM), "mpsT", {}), (nvt(*LM), "mpsT", {}, "gemm"), ()),
]
CONFIGS = [
    ("L-alone", ([], None, {}), None, ()),
    ("H-alone-gemm", None, ([], None, {}, "gemm"), ()),
    ("H-alone-gemm-ts5", None, ([], None, rmp("@D", "H", 5), "gemm"), ()),
    ("H-alone-llama", None, ([], None, {}, "llama"), ()),
    # the default timeslices, each in its own context
    ("ts-default-gemm", ([], None, rmp("@D", "L")), ([], None, rmp("@D", "H"), "gemm"), ()),
    # set at allocation only (the earlier probe's way): does it hold?
    ("spin-alloc", ([], None, rmp("@D", "L", LONG)), ([], None, rmp("@D", "H", 5, "alloc", RMP_MON=1), "spin"), ()),
    ("spin-full", ([], None, rmp("@D", "L", LONG)), ([], None, rmp("@D", "H", 5, RMP_MON=1), "spin"), ()),
    ("gemm-full", ([], None, rmp("@D", "L", LONG)), ([], None, rmp("@D", "H", 5, RMP_MON=1), "gemm"), ()),
    ("gemm-full-Ldef", ([], None, rmp("@D", "L")), ([], None, rmp("@D", "H", 5), "gemm"), ()),
    ("gemm-gate", ([], None, rmp("@D", "L", LONG)),
     ([], None, rmp("@D", "H", 5, RMP_GATE="@D/flag"), "gemm"), ()),
    ("gemm-gate-preempt", ([], None, rmp("@D", "L", LONG)),
     ([], None, rmp("@D", "H", 5, RMP_GATE="@D/flag", RMP_GATE_MODE="preempt"), "gemm"), ()),
    ("llama-full", ([], None, rmp("@D", "L", LONG)), ([], None, rmp("@D", "H", 5), "llama"), ()),
    ("llama-gate", ([], None, rmp("@D", "L", LONG)),
     ([], None, rmp("@D", "H", 5, RMP_GATE="@D/flag"), "llama"), ()),
    # H inside an MPS server whose groups are at 5 us; L outside MPS
    ("mps-low-server", ([], None, rmp("@D", "L", LONG)), ([], "mpsB", {}, "gemm"),
     (("mpsB", rmp("@D", "SB", 5)),)),
    # two MPS servers on one GPU: L's at 100 ms, H's at 5 us
    ("two-servers", ([], "mpsA", {}), ([], "mpsB", {}, "gemm"),
     (("mpsA", rmp("@D", "SA", LONG)), ("mpsB", rmp("@D", "SB", 5)))),
    ("static-gemm", (nvt("-g", "0-1"), "mps", {}), (nvt("-g", "2-11"), "mps", {}, "gemm"), ()),
]

SETS = {"1": CONFIGS, "2": CONFIGS2, "3": CONFIGS3, "4": CONFIGS4, "5": CONFIGS5, "gpu": CONFIGS6}
for name, L, H, servers in SETS[os.environ.get("PREEMPT_SET", "1")]:
    if ONLY and name not in ONLY:
        continue
    try:
        run(name, L, H, servers)
    except Exception as e:  # one configuration's failure never stops the others
        log(name, "failed:", repr(e))
