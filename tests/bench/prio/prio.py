"""prio.py - the priorities benchmark (make bench-prio): a latency-critical service L beside
a neighbour H, every configuration side by side under one MPS daemon, fresh processes per
configuration. tests/bench/prio/README.md describes it; prio_report.py makes the CSV, the
summary and the plot from the raw logs written here.

    python3 prio.py ROOT BINDIR OUTDIR

One L process per configuration and L version runs every phase (each kind's periodic and
Poisson arrivals at each duty, then its closed loop at 100 %); one H process per
configuration runs through all of them. Knobs (environment): PRIO_SET, PRIO_CASES, PRIO_H,
PRIO_L, PRIO_KINDS, PRIO_DUTIES, PRIO_ARRIVALS, PRIO_PHASE_S, PRIO_MIN_REQUESTS, PRIO_ROUNDS,
PRIO_BASE, PRIO_BUDGET_S, PRIO_TIMEOUT_S, PRIO_GAP_S, PRIO_HALONE_S, PRIO_CONFIG_FILE, PRIO_DRY,
PRIO_FAKE (README.md).
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
# H-alone-whole, the others' against L-alone and H-alone (with PRIO_BASE=whole, every one's
# against L-alone-whole and H-alone-whole).
# The order is the run's order (round 1; round 2 reversed), so put the important first: a
# budget stops the run before the rest. PRIO_CONFIG_FILE (JSON, a list of the same entries)
# replaces entries of the same name and appends the others.
HI, LO = ["--priority", "high"], ["--priority", "low"]
# full: every configuration but slice-mps, prio-nopart and L-alone-slice (all would not fit 10 minutes)
FULL_CASES = ("L-alone,H-alone,static,prio,L-alone-whole,H-alone-whole,mps-cp,prio-whole,yield-client,yield-gate,"
              "yield-gate+bound,yield-gate+bound+ahead,yield-borrow,static-cp,mps,prio-old,slice-whole")
ROUND5_KINDS = "decode,prefill:poisson,tbt:poisson,tbt7b:poisson,async:poisson,generate:poisson"
ROUND5_CASES = "L-alone-whole,L-alone-slice,H-alone-whole,static,mps-cp,slice-mps,prio-nopart"
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
    # Time-sliced in the levels' MPS servers, the whole GPU; L alone in the same form.
    {"name": "slice-mps", "l": HI + SLICE, "h": LO + SLICE, "whole": True},
    # A priority without a partition or a --yield: prio-whole's arguments, whatever form the
    # product gives them (the default as shipped), compared with static and mps-cp both.
    {"name": "prio-nopart", "l": HI, "h": LO, "agent": [], "whole": True},
    {"name": "L-alone-slice", "l": HI + SLICE, "h": None, "whole": True},
    # MPS client priority as nvtaskset gives it (`--yield client` on both, no partition): mps-cp's
    # form through the shim, the batch at client priority below normal.
    {"name": "client-whole", "l": HI + ["--yield", "client"], "h": LO + ["--yield", "client"], "whole": True},
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
BASE_WHOLE = ("L-alone-whole", "H-alone-whole")  # with PRIO_BASE=whole, L-alone-whole does

# Presets (PRIO_SET); a knob set in the environment wins. full fits one 10-minute command
# with the PyTorch L and H (one torch start costs ~5-10 s; so does each configuration).
SETS = {
    "full": {"PRIO_L": "torch", "PRIO_H": "torch", "PRIO_KINDS": "decode,prefill",
             "PRIO_DUTIES": "10,30,100", "PRIO_ARRIVALS": "periodic,poisson", "PRIO_CASES": FULL_CASES,
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
    # round5: six services at 10 % beside GEMM training, every ratio against
    # each alone on the whole GPU: alone (plain and time-sliced), static partitions, MPS client
    # priority, time-slicing in level servers, the default of a priority without a partition.
    # One device command of at most 9 minutes with the build (budget and limit from PRIO_T0).
    "round5": {"PRIO_L": "torch", "PRIO_H": "torch", "PRIO_KINDS": ROUND5_KINDS, "PRIO_DUTIES": "10",
               "PRIO_ARRIVALS": "periodic,poisson", "PRIO_CASES": ROUND5_CASES, "PRIO_BASE": "whole",
               "PRIO_ROUNDS": "1", "PRIO_PHASE_S": "1.0", "PRIO_MIN_REQUESTS": "100,tbt7b=80,generate=12",
               "PRIO_HALONE_S": "3", "PRIO_BUDGET_S": "515", "PRIO_TIMEOUT_S": "530"},
}
# The same beside Llama training (its start is slower: generate's phase is shorter)
SETS["round5-llama"] = dict(SETS["round5"], PRIO_H="llama", PRIO_MIN_REQUESTS="100,tbt7b=80,generate=8")
# ... and beside GPT-style training (GPT2LMHeadModel)
SETS["round5-gpt"] = dict(SETS["round5-llama"], PRIO_H="gpt")
DEFAULTS = {"PRIO_SET": "full", "PRIO_BUDGET_S": "540", "PRIO_TIMEOUT_S": "575", "PRIO_GAP_S": "0.15",
            "PRIO_HALONE_S": "4", "PRIO_MIN_REQUESTS": "0", "PRIO_BASE": "partition", "PRIO_CONFIG_FILE": "",
            "PRIO_DRY": "0", "PRIO_FAKE": "0", "PRIO_FAKE_FAIL": ""}
# Seconds to start a process and be ready (estimates, for the plan and the budget); a torch L
# takes longer with these kinds (the 7B weights and their warm-up; importing transformers,
# the model, generate()'s warm-up).
START_S = {"torch": 8.0, "cuda": 1.5, "hog": 1.0, "llama": 15.0, "llama-sync20": 15.0, "gpt": 15.0}
START_KIND_S = {"tbt7b": 3.0, "generate": 6.0}
L_IMPLS, H_IMPLS = ("torch", "cuda"), ("torch", "hog", "llama", "llama-sync20", "gpt")
CUDA_KINDS = ("decode", "prefill", "tbt")  # service.cu's; the others are service.py's only
# L's service times (us) before L-alone measures them: the plan's length where
# PRIO_MIN_REQUESTS stretches a phase, in the estimates only. On GPCs 0-1 (H100, 2026-11-23;
# tbt7b, async, generate and eager guessed), and on the whole GPU (PRIO_BASE=whole: H100 guesses from
# the H200's of 2026-11-25, its memory ~1.4x slower; generate host-bound).
SERVICE_EST_US = {"torch": {"decode": 600.0, "prefill": 2100.0, "tbt": 5000.0, "tbtsync": 5000.0, "tbtpoll": 5000.0, "tbtsleep": 5000.0,
                            "tbt7b": 45000.0,
                            "async": 5000.0, "asyncside": 5000.0, "generate": 130000.0, "eager": 3000.0},
                  "cuda": {"decode": 550.0, "prefill": 11000.0, "tbt": 5000.0}}
SERVICE_EST_WHOLE_US = {"torch": {"decode": 400.0, "prefill": 1300.0, "tbt": 2200.0, "tbtsync": 2200.0,
                                  "tbtpoll": 2200.0, "tbtsleep": 4000.0, "tbt7b": 22000.0,
                                  "async": 2000.0, "asyncside": 2000.0, "generate": 130000.0, "eager": 2000.0},
                        "cuda": {"decode": 400.0, "prefill": 4000.0, "tbt": 2200.0}}
SETTLE_S = 0.3      # after both are ready, before L's first phase
READY_LIMIT_S = 120  # a program that is not ready by then has failed
# Fake mode (PRIO_FAKE=1, the self-test): L's latency and H's step time multiplied by these.
FAKE_X = {"L-alone": (1.0, 1.0), "H-alone": (1.0, 1.0), "static": (1.7, 1.0), "static-cp": (1.6, 1.0),
          "L-alone-whole": (0.7, 1.0), "H-alone-whole": (1.0, 0.85), "mps": (4.9, 0.81),
          "mps-cp": (1.7, 0.82), "prio": (1.15, 0.88), "prio-whole": (1.9, 2.5), "prio-old": (1.2, 3.5),
          "L-alone-slice": (0.75, 1.0), "slice-mps": (0.8, 0.85), "prio-nopart": (0.8, 1.6)}


def settings():
    s = dict(DEFAULTS)
    s.update(SETS.get(os.environ.get("PRIO_SET", s["PRIO_SET"]), {}))
    s.update({k: v for k, v in os.environ.items() if k.startswith("PRIO_")})
    if s["PRIO_SET"] not in SETS:
        sys.exit("PRIO_SET: one of %s" % ", ".join(SETS))
    configs = load_configs(s["PRIO_CONFIG_FILE"])
    names = [c["name"] for c in configs]
    lst = lambda k: [x for x in s[k].split(",") if x]
    out = {"set": s["PRIO_SET"], "l": lst("PRIO_L"), "h": lst("PRIO_H"), "kinds_spec": s["PRIO_KINDS"],
           "arrivals": lst("PRIO_ARRIVALS"), "cases": lst("PRIO_CASES") or names, "base": s["PRIO_BASE"],
           "fake": s["PRIO_FAKE"] == "1", "dry": s["PRIO_DRY"] == "1",
           "fake_fail": lst("PRIO_FAKE_FAIL")}
    try:
        out["duties"] = sorted({int(x) for x in lst("PRIO_DUTIES")})
        for k in ("PRIO_PHASE_S", "PRIO_BUDGET_S", "PRIO_TIMEOUT_S", "PRIO_GAP_S", "PRIO_HALONE_S"):
            out[k[5:].lower()] = float(s[k])
        out["rounds"] = int(s["PRIO_ROUNDS"])
        mins = lst("PRIO_MIN_REQUESTS")
        out["min_requests"] = int(mins[0]) if mins and "=" not in mins[0] else 0
        out["kind_min_requests"] = {k: int(v) for k, v in (x.split("=", 1) for x in mins if "=" in x)}
    except ValueError as e:
        sys.exit("bad knob: %s" % e)
    kinds_arrivals(out, lst("PRIO_KINDS"))
    checks = [("PRIO_L", out["l"], L_IMPLS), ("PRIO_H", out["h"], H_IMPLS),
              ("PRIO_KINDS", out["kinds"], priolib.KINDS), ("PRIO_ARRIVALS", out["arrivals"], priolib.ARRIVALS),
              ("PRIO_ARRIVALS of a kind", sum(out["kind_arrivals"].values(), []), priolib.ARRIVALS),
              ("PRIO_CASES", out["cases"], names), ("PRIO_BASE", [out["base"]], ("partition", "whole"))]
    for k, vals, known in checks:
        bad = [v for v in vals if v not in known]
        if bad or (not vals and k != "PRIO_ARRIVALS of a kind"):
            sys.exit("%s: %s: give a comma list of %s" % (k, ",".join(bad) or "empty", ", ".join(known)))
    if "cuda" in out["l"] and set(out["kinds"]) - set(CUDA_KINDS):
        sys.exit("PRIO_KINDS: %s: service.cu (PRIO_L cuda) has only %s" % (
            ",".join(sorted(set(out["kinds"]) - set(CUDA_KINDS))), ", ".join(CUDA_KINDS)))
    if not out["duties"] or any(d < 1 or d > 100 for d in out["duties"]):
        sys.exit("PRIO_DUTIES: a comma list of percents, 1-100 (100: back to back)")
    if out["rounds"] < 1 or out["phase_s"] <= 0 or not all(
            0 <= n <= 100000 for n in [out["min_requests"]] + list(out["kind_min_requests"].values())) or \
            set(out["kind_min_requests"]) - set(priolib.KINDS):
        sys.exit("PRIO_ROUNDS >= 1, PRIO_PHASE_S > 0 and PRIO_MIN_REQUESTS N[,KIND=N...] (0-100000, kinds "
                 "of %s)" % ", ".join(priolib.KINDS))
    if len(set(out["l"])) != len(out["l"]) or len(set(out["h"])) != len(out["h"]):
        sys.exit("PRIO_L, PRIO_H: each version once")
    if 100 in out["duties"] and len(out["duties"]) == 1:
        out["arrivals"], out["kind_arrivals"] = [], {k: [] for k in out["kinds"]}
    # The baselines of the ratios run in every run: L-alone and H-alone (L-alone measures the
    # service times), and L-alone-whole and H-alone-whole where a whole-GPU configuration runs;
    # with PRIO_BASE=whole only the whole-GPU ones (L-alone-whole measures the service times).
    whole = any(c.get("whole") for c in configs if c["name"] in out["cases"])
    bases = BASE_WHOLE if out["base"] == "whole" else (BASE_L, BASE_H) + (BASE_WHOLE if whole else ())
    for base in bases:
        if base not in out["cases"]:
            out["cases"].append(base)
    out["base_l"] = bases[0]
    out["configs"] = [c for c in configs if c["name"] in out["cases"]]
    # Where L-alone does not run, a partitioned configuration's L measures its service times
    # alone on its partition before H starts (its busy fractions' base).
    out["measure_first"] = [] if BASE_L in out["cases"] else [
        c["name"] for c in out["configs"] if not c.get("whole") and c.get("l") is not None and c.get("h") is not None]
    return out


def kinds_arrivals(out, spec):
    """PRIO_KINDS entries KIND or KIND:ARRIVAL+ARRIVAL (that kind's open-loop arrivals instead
    of PRIO_ARRIVALS'): out's kinds and kind_arrivals (kind -> arrivals)."""
    out["kinds"], out["kind_arrivals"] = [], {}
    for x in spec:
        kind, _, arr = x.partition(":")
        out["kinds"].append(kind)
        out["kind_arrivals"][kind] = [a for a in arr.split("+") if a] if arr else list(out["arrivals"])
    if len(set(out["kinds"])) != len(out["kinds"]):
        sys.exit("PRIO_KINDS: each kind once")


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
    opened = sum(len(s["kind_arrivals"][k]) for k in s["kinds"]) * len([d for d in s["duties"] if d < 100])
    return opened, len(s["kinds"]) if 100 in s["duties"] else 0


def min_requests(s):
    return {k: s["kind_min_requests"].get(k, s["min_requests"]) for k in s["kinds"]}


def service_est(s, impl, service):
    """L version impl's service times: measured where known, else fake.py's (fake mode) or
    the estimates of the base's scope."""
    est = SERVICE_EST_WHOLE_US if s["base"] == "whole" else SERVICE_EST_US
    return service.get(impl) or (FAKE_SERVICE_US if s["fake"] else est)[impl]


def plan_phases(s, impl, service):
    """The phases of L version impl, from service_est's times."""
    return priolib.make_plan(s["kinds"], s["kind_arrivals"], s["duties"], service_est(s, impl, service),
                             s["phase_s"], min_requests=min_requests(s))


def est_l(s, impl, service):
    phases = plan_phases(s, impl, service)
    opened = sum(1 for p in phases if p[2] != "closed")
    return sum(p[4] / 1e9 + s["gap_s"] for p in phases) + opened * 0.05


def est_measure(s, impl, service):
    """service.py's measure: per kind 0.5 s of back-to-back requests, at least 10."""
    svc = service_est(s, impl, service)
    return sum(max(0.5, 10 * svc[k] / 1e6) + 0.2 for k in s["kinds"])


def start_s(s, prog, side):
    """Seconds to start prog (an L version, side "l", or an H version, "h") and be ready."""
    if s["fake"]:
        return 0.3
    return START_S[prog] + (sum(START_KIND_S.get(k, 0.0) for k in s["kinds"]) if side == "l" else 0.0)


def est_job(s, cfg, h, measure, service=None):
    """A run's seconds: its programs' starts (L and H together, or L first where it measures
    alone before H starts), L's measurement, its phases per L version."""
    service = service or {}
    hs = start_s(s, h, "h") if cfg.get("h") is not None else 0.0
    if cfg.get("l") is None:
        return hs + SETTLE_S + s["halone_s"] + 1.0
    first = s["l"][0]
    m = est_measure(s, first, service) if measure else 0.0
    ls = start_s(s, first, "l")
    t = (ls + m + hs if measure and hs else max(hs, ls) + m) + 1.0
    for i, impl in enumerate(s["l"]):
        t += (start_s(s, impl, "l") if i else 0.0) + SETTLE_S + est_l(s, impl, service)
        t += est_measure(s, impl, service) if i and measure and not hs else 0.0
    return t


def measures(s, cfg, impl, rnd):
    """Whether L version impl measures its service times in this run: an L baseline
    (L-alone, L-alone-whole) and a configuration that measures first, in their first round."""
    return rnd == 0 and impl == s["l"][0] if cfg["name"] in s["measure_first"] else (
        rnd == 0 and cfg["name"] in (BASE_L, BASE_WHOLE[0]))


def schedule(s):
    """[(config, h, round)]: the L baselines first (the one that measures the service times
    first of all), then per H its H-alone and the rest; round 2 in reverse order. With one
    round, the H baselines run again at the end (as round 2): their mean spans the run, and
    the two tell the drift (clocks, temperature)."""
    lone = [c for c in s["configs"] if c.get("h") is None]
    one = [(c, None) for c in sorted(lone, key=lambda c: c["name"] != s["base_l"])]
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
                       "llama-sync20": train + ["--model", "llama", "--sync", "20"],
                       "gpt": train + ["--model", "gpt"]}
        if s["fake"]:
            self.h_prog = {h: fake + ["h", h] for h in H_IMPLS}
        self.env = dict(os.environ, CUDA_MPS_PIPE_DIRECTORY=os.path.join(self.work, "mps"),
                        CUDA_MPS_LOG_DIRECTORY=os.path.join(self.work, "mpslog"),
                        NVTASKSET_QUIET="1", PYTHONUNBUFFERED="1")
        # CUDA's own hardware queues, as users run (nvtaskset gives a high time-sliced task one).
        for k in ("CUDA_DEVICE_MAX_CONNECTIONS", "CUDA_MPS_ACTIVE_THREAD_PERCENTAGE", "CUDA_MPS_CLIENT_PRIORITY",
                  "NVTASKSET_PARTITION",
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
        limit = READY_LIMIT_S + 2 * (est_l(s, impl, self.service) + est_measure(s, impl, self.service)) + 60
        p = self.start(self.wrap(cfg["l"], cmd), limit, env, os.path.join(dd, tag + ".log"), pipe=True)
        p.timers, p.measure = [], measure
        snap = cfg.get("agent") is not None or any(
            isinstance(cfg.get(k), list) and "--priority" in cfg[k] for k in ("l", "h"))
        p.follower = threading.Thread(target=self.follow_l, args=(p, dd, snap))
        p.follower.daemon = True
        p.follower.start()
        return p

    def l_ready(self, cfg, impl, d, meta, p):
        """Waits until L is ready; keeps the service times it measured (those of the run's base
        L are the plan's). Returns a failure or None (also kept in p.why)."""
        ready, _, _ = self.paths(d, impl)
        meta["l"][impl] = {"cmd": p.cmd, "measure": p.measure}
        why = self.wait_ready(p, ready, READY_LIMIT_S)
        if why is None and p.measure:
            with open(ready) as f:
                svc = {k: float(v) for k, v in (x.split() for x in f if x.strip())}
            self.log(cfg["name"], impl, "service times (us):", svc)
            meta["l"][impl]["service_us"] = svc
            if set(svc) != set(self.s["kinds"]):
                why = "measured no service time for every kind"
            elif cfg["name"] == self.s["base_l"] and impl not in self.service:
                self.service[impl] = svc
        p.why = why
        return why

    def run_l(self, cfg, impl, d, meta, p):
        """One L process, started: ready (l_ready, unless done), plan, phases. Returns a
        failure or None."""
        tag = "l-" + impl
        _, go, dd = self.paths(d, impl)
        why = p.why if hasattr(p, "why") else self.l_ready(cfg, impl, d, meta, p)
        if why is None:
            time.sleep(SETTLE_S)
            shutil.copyfile(self.plan(impl), go + ".tmp")
            os.rename(go + ".tmp", go)
            limit = 1.5 * est_l(self.s, impl, self.service) + 30
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
                if impl in self.service or name == s["base_l"]:
                    impls.append(impl)
                else:
                    meta["failed"].append("L %s: no service time (%s did not measure it)" % (impl, s["base_l"]))
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
            lp = None
            if impls and name in s["measure_first"] and measures(s, cfg, impls[0], rnd):
                # L measures its service times alone on its partition; then H starts
                lp = self.start_l(cfg, impls[0], d, True)
                self.l_ready(cfg, impls[0], d, meta, lp)
                meta["l_alone_ns"] = time.monotonic_ns()
            if cfg.get("h") is not None:
                cmd = self.h_prog[h] + [hstop, hready, os.path.join(dd, "h")]
                env = merge(self.env, cfg.get("h_env"), self.fake_env(cfg, "h"))
                hp = self.start(self.wrap(cfg["h"], cmd), 3600, env, os.path.join(dd, "h.log"))
                meta["h_cmd"] = hp.cmd
            if impls and lp is None:
                lp = self.start_l(cfg, impls[0], d, measures(s, cfg, impls[0], rnd))
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
                    lp = self.start_l(cfg, impl, d, measures(s, cfg, impl, rnd))
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
        total = sum(est_job(s, c, h, measures(s, c, s["l"][0], r)) for c, h, r in jobs)
        opened, closed = phase_count(s)
        mins = ",".join("%s %d" % kv for kv in min_requests(s).items() if kv[1])
        self.log("plan: set %s, L %s, H %s, kinds %s, arrivals %s, duties %s, %d phases of %.1f s%s per L,"
                 " %d rounds, %d runs (configuration x H x round), base %s: ~%.0f s (%.1f min) planned, budget"
                 " %.0f s from the start (%.0f s gone)" % (
                     s["set"], ",".join(s["l"]), ",".join(s["h"]), s["kinds_spec"], ",".join(s["arrivals"]),
                     ",".join(map(str, s["duties"])), opened + closed, s["phase_s"],
                     " (open loop: at least %s requests)" % mins if mins else "",
                     s["rounds"], len(jobs), s["base"], total, total / 60, s["budget_s"], time.time() - self.t0))
        for impl in s["l"]:
            for lab, kind, arrival, duty, dur, offs in plan_phases(s, impl, self.service):
                self.log("  L %s %-22s %5.1f s, %d requests (service %.0f us%s)" % (
                    impl, lab, dur / 1e9, len(offs), service_est(s, impl, self.service)[kind],
                    "" if self.service.get(impl) else ", estimated"))
        for c, h, r in jobs:
            self.log("  %-24s H %-5s round %d ~%.0f s" % (c["name"], h or "-", r + 1,
                                                          est_job(s, c, h, measures(s, c, s["l"][0], r))))
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
                e = est_job(s, c, h, measures(s, c, s["l"][0], r), self.service)
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
    if sys.argv[1:] == ["--timeout"]:  # run.sh's limit for this process, from the start
        print("%d" % settings()["timeout_s"])
        return 0
    if len(sys.argv) != 4:
        sys.exit("usage: prio.py ROOT BINDIR OUTDIR | prio.py --programs | prio.py --timeout")
    signal.signal(signal.SIGTERM, on_term)  # a timeout still cleans up
    root, bindir, out = sys.argv[1:4]
    s = settings()
    os.makedirs(out, exist_ok=True)
    return Run(root, bindir, out, s).main()


if __name__ == "__main__":
    sys.exit(main())
