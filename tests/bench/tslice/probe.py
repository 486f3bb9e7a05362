"""probe.py - time-slicing probe: L (lsvc.py) beside H (train.py GEMM+update or hllama.py),
each configuration in fresh processes. python3 probe.py ROOT OUTDIR [CONFIG...]"""
import json, os, subprocess, sys, time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from tslib import pct, wait_file  # noqa: E402

R, OUT = sys.argv[1], sys.argv[2]
ONLY = sys.argv[3:]
T = os.path.join(R, "tests/bench/tslice")
W = "/tmp/tsw"
NVT = os.path.join(R, "build/bin/nvtaskset")
TSG = os.path.join(W, "tsg.so")
os.makedirs(OUT, exist_ok=True)
LOG = open(os.path.join(OUT, "probe.log"), "a")

def log(*a):
    s = " ".join(str(x) for x in a)
    print(s, flush=True)
    LOG.write(s + "\n"); LOG.flush()

def envfor(mps, extra, pipe="mps"):
    e = dict(os.environ)
    e["CUDA_MPS_PIPE_DIRECTORY"] = os.path.join(W, pipe if mps else "nomps")
    e["CUDA_MPS_LOG_DIRECTORY"] = os.path.join(W, pipe + "log")
    e.update(extra)
    return e

def run(name, L, H):
    """L, H: None or (prefix, mps, env, [hkind])."""
    d = os.path.join(W, name)
    subprocess.run(["rm", "-rf", d]); os.makedirs(d)
    procs = []
    hp = None
    if H:
        pre, mps, ex, kind = H[:4]
        prog = [sys.executable, os.path.join(T, "h%s.py" % kind)] if kind in ("llama", "spin", "split") else \
               [sys.executable, os.path.join(R, "tests/bench/prio/train.py")]
        outp = os.path.join(d, "h") + (".steps" if kind in ("llama", "spin", "split") else "")
        hp = subprocess.Popen(["timeout", "200"] + pre + prog + [d + "/hstop", d + "/hready", outp],
                              env=envfor(mps, ex, H[4] if len(H) > 4 else "mps"),
                              stdout=open(d + "/h.log", "w"), stderr=subprocess.STDOUT, start_new_session=True)
        procs.append(hp)
    lp = None
    if L:
        pre, mps, ex = L[:3]
        e = envfor(mps, ex); e["L_READY"] = d + "/lready"; e["L_GO"] = d + "/lgo"
        lp = subprocess.Popen(["timeout", "200"] + pre + [sys.executable, os.path.join(T, "lsvc.py"), d + "/l.csv"],
                              env=e, stdout=open(d + "/l.log", "w"), stderr=subprocess.STDOUT, start_new_session=True)
        procs.append(lp)
    ok = True
    if H and not wait_file(d + "/hready", 150, hp): ok = False; log(name, "H not ready")
    if L and not wait_file(d + "/lready", 150, lp): ok = False; log(name, "L not ready")
    t0 = time.monotonic_ns()
    if ok and L:
        open(d + "/lgo", "w").close()
        try:
            lp.wait(120)
        except subprocess.TimeoutExpired:
            log(name, "L timed out")
    elif ok:
        time.sleep(8)
    t1 = time.monotonic_ns()
    if H:
        open(d + "/hstop", "w").close()
        try:
            hp.wait(60)
        except subprocess.TimeoutExpired:
            log(name, "H did not stop")
    for p in procs:
        try:
            os.killpg(p.pid, 9)
        except OSError:
            pass
    res = {"name": name}
    if H:
        try:
            ends = [int(x) for x in open(os.path.join(d, "h.steps")) if x.strip() and x[0] != "#"]
            inw = [t for t in ends if t0 <= t <= t1]
            res["h_rate"] = len(inw) / ((t1 - t0) / 1e9) if inw else 0.0
        except OSError as e:
            res["h_rate"] = None; log(name, "no H steps", e)
    if L:
        try:
            rows = [x.split(",") for x in open(d + "/l.csv").read().split("\n")[1:] if x]
            for ph in ("decode", "tbt", "prefill"):
                v = [float(r[2]) for r in rows if r[0] == ph]
                if v:
                    res[ph] = (round(pct(v, 0.5), 3), round(pct(v, 0.99), 3), round(max(v), 3))
        except OSError as e:
            log(name, "no L csv", e)
    for f in ("l.log", "h.log"):
        p = os.path.join(d, f)
        if os.path.exists(p):
            lines = [x for x in open(p).read().split("\n") if x]
            ts = [x for x in lines if x.startswith("tsgprobe")]
            other = [x for x in lines if not x.startswith("tsgprobe")]
            res[f] = {"tsg": ts[:6], "ntsg": len(ts), "tail": other[-4:]}
    log(json.dumps(res))
    return res

def nvt(*a):
    return [NVT] + list(a)

PL = {"LD_PRELOAD": TSG, "TSGP_LOG": "1"}
def ts(us, **kw):
    e = dict(PL); e["TSGP_TS_US"] = str(us); e.update(kw); return e

LBIG = ts(100000)
CONFIGS = [
    ("L-alone-g01", (nvt("-g", "0-1"), True, {}), None),
    ("L-alone-whole", ([], False, LBIG), None),
    ("H-alone-g2-11", None, (nvt("-g", "2-11"), True, {}, "gemm")),
    ("H-alone-whole", None, ([], False, PL, "gemm")),
    ("H-alone-whole-ts50", None, ([], False, ts(50), "gemm")),
    ("static", (nvt("-g", "0-1"), True, {}), (nvt("-g", "2-11"), True, {}, "gemm")),
    ("mps-cp", ([], True, {}), ([], True, {"CUDA_MPS_CLIENT_PRIORITY": "1"}, "gemm")),
    ("ts-default", ([], False, LBIG), ([], False, PL, "gemm")),
    ("ts-200", ([], False, LBIG), ([], False, ts(200), "gemm")),
    ("ts-50", ([], False, LBIG), ([], False, ts(50), "gemm")),
    ("ts-10", ([], False, LBIG), ([], False, ts(10), "gemm")),
    ("ts-50-Ldef", ([], False, PL), ([], False, ts(50), "gemm")),
    ("mpsserver-ts50", ([], False, LBIG), ([], True, {}, "gemm", "mps2")),
    ("L-g01-nomps-ts", (nvt("--no-mps", "-g", "0-1"), False, LBIG), ([], False, ts(50), "gemm")),
    ("H-alone-g2-11-llama", None, (nvt("-g", "2-11"), True, {}, "llama")),
    ("H-alone-whole-llama", None, ([], False, PL, "llama")),
    ("static-llama", (nvt("-g", "0-1"), True, {}), (nvt("-g", "2-11"), True, {}, "llama")),
    ("mps-cp-llama", ([], True, {}), ([], True, {"CUDA_MPS_CLIENT_PRIORITY": "1"}, "llama")),
    ("ts-50-later", ([], False, LBIG), ([], False, ts(50, TSGP_DELAY_MS="4000"), "gemm")),
    ("ts-5-later", ([], False, LBIG), ([], False, ts(5, TSGP_DELAY_MS="4000"), "gemm")),
    ("ts-default-spin", ([], False, LBIG), ([], False, PL, "spin")),
    ("ts-5-later-spin", ([], False, LBIG), ([], False, ts(5, TSGP_DELAY_MS="4000"), "spin")),
    ("static-spin", (nvt("-g", "0-1"), True, {}), (nvt("-g", "2-11"), True, {}, "spin")),
    ("H-alone-whole-split8", None, ([], False, PL, "split")),
    ("H-alone-g2-11-split8", None, (nvt("-g", "2-11"), True, {}, "split")),
    ("static-split8", (nvt("-g", "0-1"), True, {}), (nvt("-g", "2-11"), True, {}, "split")),
    ("ts-5-later-split8", ([], False, LBIG), ([], False, ts(5, TSGP_DELAY_MS="4000"), "split")),
    ("ts-5-later-split32", ([], False, LBIG), ([], False, ts(5, TSGP_DELAY_MS="4000", SPLIT="32"), "split")),
    ("ts-5-later-llama", ([], False, LBIG), ([], False, ts(5, TSGP_DELAY_MS="8000"), "llama")),
    ("ts-50-llama", ([], False, LBIG), ([], False, ts(50), "llama")),
    # Inside MPS: does splitting the GEMMs bound the wait where the MPS server, not a
    # timeslice, shares the SMs (client priority; nvtaskset's whole-GPU priorities)?
    ("mps-cp-split8", ([], True, {}), ([], True, {"CUDA_MPS_CLIENT_PRIORITY": "1"}, "split")),
    ("nvt-protect", (nvt("--priority", "high"), True, {}), (nvt("--priority", "low", "--yield", "protect"), True, {}, "gemm")),
    ("nvt-protect-split8", (nvt("--priority", "high"), True, {}),
     (nvt("--priority", "low", "--yield", "protect"), True, {}, "split")),
]
# Which pick shares less with a neighbour: H on -n 46's default pick (whole GPCs first) or on
# --strategy clusters' (which may share one GPC), L on the rest of the GPU.
sys.path.insert(0, os.path.join(R, "tests/gpu"))
from tpclists import compact as _list, expand as _tpcs  # noqa: E402

def _pick(*args):
    r = subprocess.run(nvt("--dry-run", *args, "true"), capture_output=True, text=True, timeout=60,
                       env=envfor(False, {}))
    return _tpcs(r.stdout.strip().rsplit("TPCs ", 1)[-1])

if any(n.startswith(("pick-", "L-alone-pick-", "H-alone-pick-")) for n in ONLY):
    _all = set(range(int(json.loads(subprocess.run(nvt("--topology", "--json", "--gpu", "0"), capture_output=True,
                                                   text=True, timeout=60).stdout)["gpus"][0]["tpcs"])))
    for how, extra in (("packed", []), ("clusters", ["--strategy", "clusters"])):
        h = _pick(*(extra + ["-n", "46"]))
        l = _all - h
        log("pick", how, "H", _list(h), "L", _list(l))
        CONFIGS += [("pick-" + how, (nvt("-c", _list(l)), True, {}), (nvt("-c", _list(h)), True, {}, "gemm")),
                    ("L-alone-pick-" + how, (nvt("-c", _list(l)), True, {}), None),
                    ("H-alone-pick-" + how, None, (nvt("-c", _list(h)), True, {}, "gemm"))]

for name, L, H in CONFIGS:
    if ONLY and name not in ONLY:
        continue
    if name.startswith("mpsserver"):
        e = envfor(True, ts(50), "mps2")
        os.makedirs(e["CUDA_MPS_PIPE_DIRECTORY"], exist_ok=True); os.makedirs(e["CUDA_MPS_LOG_DIRECTORY"], exist_ok=True)
        r = subprocess.run(["nvidia-cuda-mps-control", "-d"], env=e, capture_output=True, text=True)
        log("mps2 start", r.returncode, r.stdout, r.stderr)
    try:
        run(name, L, H)
    finally:
        if name.startswith("mpsserver"):
            e = envfor(True, {}, "mps2")
            subprocess.run(["bash", "-c", "echo quit | timeout 20 nvidia-cuda-mps-control"], env=e)
            time.sleep(1)
            try:
                log("mps2 server log:", open(os.path.join(W, "mps2log", "server.log")).read()[-1500:])
            except OSError:
                pass
            r = subprocess.run(["bash", "-c", "grep -h tsgprobe %s/mps2log/* | head" % W], capture_output=True, text=True)
            log("mps2 tsg:", r.stdout)
