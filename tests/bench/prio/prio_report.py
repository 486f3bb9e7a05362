"""prio_report.py - the priorities benchmark's results from prio.py's raw logs.

    python3 prio_report.py OUTDIR

Reads OUTDIR/run.json and OUTDIR/raw/ (README.md); writes prio.csv, summary.txt and
prio.png (matplotlib), or prio.svg drawn by hand where matplotlib is missing (or
PRIO_NO_MPL=1). Pure Python otherwise.

L's ratios: against L-alone (GPCs 0-1) of the same L version and phase, requests pooled over
rounds. H's ratio: H's steps/s during the phase (steps that ended inside it, priolib.steps_in)
against H-alone (GPCs 2-11), the mean over its rounds. A whole-GPU configuration ("whole" in
its entry: mps, mps-cp, prio-whole, ...) has its ratios against L-alone-whole and H-alone-whole
(plain MPS clients alone on the whole GPU) instead; with PRIO_BASE=whole every configuration
has. A summary cell pools the rounds of its configuration.

L's busy fraction in a phase: the requests it served x its service time alone (measured by
L-alone-whole for a whole-GPU configuration; by L-alone, or the configuration's own L before
H started, for a partitioned one) / the phase's window. The batch's share target: H's ratio
>= 1 - busy - SHARE_SLACK.
"""
import glob
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import priolib  # noqa: E402

BASE_L, BASE_H, DEFAULT, STATIC = "L-alone", "H-alone", "prio", "static"
# The baselines per scope (False: partitioned, True: whole GPU), and per scope the
# configuration the 100 % target compares H with.
BASES = {False: (BASE_L, BASE_H), True: ("L-alone-whole", "H-alone-whole")}
L_BASES, H_BASES = {BASES[w][0] for w in BASES}, {BASES[w][1] for w in BASES}
REF = {False: STATIC, True: "mps-cp"}
# The defaults and the simple alternatives each must not be worse than, on L's p99 or on H.
ALT = {DEFAULT: (STATIC,), "prio-whole": ("mps-cp",), "prio-nopart": (STATIC, "mps-cp")}
P99_MAX, H_MIN_LOW, H_MIN_BUSY = 1.2, 0.8, 0.95  # the targets
SHARE_SLACK = 0.05  # the batch's share: H >= 1 - L's busy fraction - this
SHARE_WHAT = "H >= 1 - busy - %.2f" % SHARE_SLACK
H_WORSE = 0.02  # H "worse" than the alternative's: lower by more than this (of H alone): noise
NAN = float("nan")


def isnan(x):
    return x != x


def load(out):
    with open(os.path.join(out, "run.json")) as f:
        run = json.load(f)
    jobs = []
    for d in sorted(glob.glob(os.path.join(out, "raw", "*", "meta.json"))):
        with open(d) as f:
            m = json.load(f)
        m["dir"] = os.path.dirname(d)
        m["lres"] = {}
        for impl in m.get("l", {}):
            p = os.path.join(m["dir"], "l-%s.csv" % impl)
            if os.path.exists(p):
                m["lres"][impl] = priolib.read_l(p)[1]
        p = os.path.join(m["dir"], "h.steps")
        try:
            m["steps"] = priolib.read_steps(p) if os.path.exists(p) else None
        except ValueError as e:  # a step file cut short: H's ratios left out
            m["steps"] = None
            m["failed"].append("H: %s" % e)
        jobs.append(m)
    return run, jobs


def stats(lat):
    return {"n": len(lat), "p50": priolib.percentile(lat, 50), "p99": priolib.percentile(lat, 99),
            "max": max(lat) if lat else NAN}


def ratio(a, b):
    return a / b if b and not isnan(a) and not isnan(b) else NAN


def mean(xs):
    xs = [x for x in xs if not isnan(x)]
    return sum(xs) / len(xs) if xs else NAN


class Results:
    def __init__(self, run, jobs):
        self.run, self.jobs = run, jobs
        s = run["settings"]
        self.impls, self.hs, self.kinds = s["l"], s["h"], s["kinds"]
        self.order = [c["name"] for c in run["configs"]]
        # Where a configuration runs (True: the whole GPU, run.json's table), and its scope:
        # the baselines of its ratios (the whole GPU's where it runs there, or for every
        # configuration with PRIO_BASE=whole).
        self.on_whole = {c["name"]: bool(c.get("whole")) for c in run["configs"]}
        for w, (bl, bh) in BASES.items():
            self.on_whole.setdefault(bl, w)
            self.on_whole.setdefault(bh, w)
        self.base_whole = s.get("base") == "whole"
        self.whole = {n: self.base_whole or w for n, w in self.on_whole.items()}
        self.lonly = {c["name"] for c in run["configs"] if c.get("h") is None} | L_BASES
        self.honly = {c["name"] for c in run["configs"] if c.get("l") is None} | H_BASES
        # Pooled cells: (config, h, impl, label) -> {lat, dropped, hx, hs: [per round], served, window_ns}
        self.cells, self.rows = {}, []
        self.h_rounds = {}  # (where it ran, h) -> H alone's steps/s per round
        for m in jobs:
            if m["name"] in H_BASES and m["steps"] is not None and "window" in m:
                self.h_rounds.setdefault((self.on_whole[m["name"]], m["h"]), []).append(
                    priolib.steps_in(m["steps"], *m["window"]))
        self.base_h = {k: sum(v) / len(v) for k, v in self.h_rounds.items()}
        # (config, impl) -> {kind: service us}: what each configuration's L measured alone
        # (the mean over its rounds)
        measured = {}
        for m in jobs:
            for impl, lm in m.get("l", {}).items():
                for kind, us in (lm.get("service_us") or {}).items():
                    measured.setdefault((m["name"], impl), {}).setdefault(kind, []).append(us)
        self.svc = {k: {kind: mean(v) for kind, v in d.items()} for k, d in measured.items()}
        for m in jobs:
            w = self.whole.get(m["name"], False)
            for impl, phases in m["lres"].items():
                for ph in phases:
                    c = self.cells.setdefault((m["name"], m["h"], impl, ph["label"]),
                                              {"lat": [], "dropped": 0, "hx": [], "hs": [], "served": 0,
                                               "window_ns": 0, "rounds": set()})
                    c["rounds"].add(m["round"])
                    c["lat"] += ph["lat"]
                    c["dropped"] += ph["dropped"]
                    c["served"] += len(ph["lat"]) - ph["dropped"]
                    c["window_ns"] += ph["end"] - ph["begin"]
                    if m["steps"] is not None:
                        hs = priolib.steps_in(m["steps"], ph["begin"], ph["end"])
                        c["hs"].append(hs)
                        c["hx"].append(ratio(hs, self.base_h.get((w, m["h"]))))
        # (where it ran, impl, label) -> L alone's stats
        self.base_l = {(self.on_whole[n], impl, lab): stats(c["lat"])
                       for (n, h, impl, lab), c in self.cells.items() if n in L_BASES}

    def service(self, name, impl, kind):
        """L's service time alone (us) for a configuration's busy fraction: what its own L
        measured alone, else L alone's where it runs (L-alone-whole's on the whole GPU,
        L-alone's on a partition); NaN where none measured it."""
        own = self.svc.get((name, impl), {})
        if kind in own:
            return own[kind]
        base = BASES[self.on_whole.get(name, False)][0]
        return self.svc.get((base, impl), {}).get(kind, NAN)

    def busy(self, name, impl, lab, served, window_ns):
        svc = self.service(name, impl, priolib.parse_label(lab)[0])
        return served * svc * 1e3 / window_ns if window_ns > 0 and not isnan(svc) else NAN

    def labels(self, impl, kind):
        """The phases of a kind, in plan order (from L-alone's file, else any)."""
        seen = []
        for m in self.jobs:
            for ph in m["lres"].get(impl, []):
                if ph["label"].startswith(kind + "-") and ph["label"] not in seen:
                    seen.append(ph["label"])
        return seen

    def cell(self, name, h, impl, lab):
        """Pooled: L's stats and ratios, H's ratio and steps/s (means over rounds), dropped,
        L's busy fraction."""
        c = self.cells.get((name, h, impl, lab))
        if not c:
            return None
        st, b = stats(c["lat"]), self.base_l.get((self.whole.get(name, False), impl, lab), {})
        return dict(st, p50x=ratio(st["p50"], b.get("p50")), p99x=ratio(st["p99"], b.get("p99")),
                    maxx=ratio(st["max"], b.get("max")), hx=mean(c["hx"]), hs=mean(c["hs"]),
                    dropped=c["dropped"], requests=len(c["lat"]),
                    busy=self.busy(name, impl, lab, c["served"], c["window_ns"]),
                    rate=c["served"] * 1e9 / c["window_ns"] if c["window_ns"] > 0 else NAN)

    def worse_than(self, name, h, c, a):
        """Whether cell c (of configuration name) is worse than cell a: L's p99 higher, or H's
        steps/s lower by more than H_WORSE of H alone (c's scope's)."""
        hb = self.base_h.get((self.whole.get(name, False), h))
        lower = c["hs"] < a["hs"] - H_WORSE * hb if hb else c["hx"] < a["hx"] - H_WORSE
        return c["p99"] > a["p99"] or lower

    def worse(self, name, h, impl, lab, c):
        """For a default (ALT): None where none of its alternatives' cells is there, else
        whether it is worse than any of them."""
        alts = [a for a in (self.cell(x, h, impl, lab) for x in ALT.get(name, ())) if a is not None]
        if not alts or c is None:
            return None
        return any(self.worse_than(name, h, c, a) for a in alts)

    def share_met(self, name, c):
        """The batch's share: H's ratio >= 1 - L's busy fraction - SHARE_SLACK (None where
        either is unknown or the configuration has no L or no H)."""
        if c is None or name in self.lonly or name in self.honly or isnan(c["hx"]) or isnan(c["busy"]):
            return None
        return c["hx"] >= 1.0 - c["busy"] - SHARE_SLACK

    def targets(self, name, h, impl, lab, c):
        """[(target, met)] that apply to a cell."""
        if name in self.lonly or name in self.honly or c is None or h is None:
            return []
        duty = priolib.parse_label(lab)[2]
        out = []
        for alt in ALT.get(name, ()):
            a = self.cell(alt, h, impl, lab)
            if a is not None:
                out.append(("not worse than %s" % alt, not self.worse_than(name, h, c, a)))
        if duty <= 10:
            out.append(("p99 <= 1.2x, H >= 0.8", c["p99x"] <= P99_MAX and c["hx"] >= H_MIN_LOW))
        ref = REF[self.whole.get(name, False)]
        st = self.cell(ref, h, impl, lab) if name != ref else None
        if duty == 100 and st and st["hx"] == st["hx"]:
            # Of what H keeps beside L busy all the time on static partitions (on the whole
            # GPU: under plain MPS with client priority): memory is shared whatever the partitions.
            out.append(("H >= 0.95 of %s's" % ref, c["hx"] >= H_MIN_BUSY * st["hx"]))
        share = self.share_met(name, c)
        if share is not None:
            out.append((SHARE_WHAT, share))
        return out

    def csv_rows(self):
        rows = ["config,h,l,kind,arrival,duty,round,requests,dropped,p50_us,p99_us,max_us,p50_x,p99_x,max_x,"
                "h_steps_s,h_x,status,scope,l_busy,share_met"]
        key = lambda m: (self.order.index(m["name"]) if m["name"] in self.order else 99, m["h"] or "", m["round"])
        for m in sorted(self.jobs, key=key):
            status = "ok" if not m["failed"] else "partial"
            w = self.whole.get(m["name"], False)
            scope = "whole" if w else "partition"
            if m["name"] in self.honly:
                thr = priolib.steps_in(m["steps"], *m["window"]) if m["steps"] and "window" in m else NAN
                rows.append("%s,%s,,,,,%d,,,,,,,,,%.2f,%.3f,%s,%s,," % (
                    m["name"], m["h"], m["round"] + 1, thr,
                    ratio(thr, self.base_h.get((self.on_whole.get(m["name"], w), m["h"]))), status, scope))
                continue
            for impl, phases in m["lres"].items():
                for ph in phases:
                    kind, arrival, duty = priolib.parse_label(ph["label"])
                    st, b = stats(ph["lat"]), self.base_l.get((w, impl, ph["label"]), {})
                    thr = priolib.steps_in(m["steps"], ph["begin"], ph["end"]) if m["steps"] else NAN
                    served = st["n"] - ph["dropped"]
                    c = {"hx": ratio(thr, self.base_h.get((w, m["h"]))),
                         "busy": self.busy(m["name"], impl, ph["label"], served, ph["end"] - ph["begin"])}
                    share = self.share_met(m["name"], c)
                    rows.append("%s,%s,%s,%s,%s,%d,%d,%d,%d,%.1f,%.1f,%.1f,%.3f,%.3f,%.3f,%.2f,%.3f,%s,%s,%.3f,%s" % (
                        m["name"], m["h"] or "", impl, kind, arrival, duty, m["round"] + 1, served,
                        ph["dropped"], st["p50"], st["p99"], st["max"], ratio(st["p50"], b.get("p50")),
                        ratio(st["p99"], b.get("p99")), ratio(st["max"], b.get("max")), thr, c["hx"],
                        status, scope, c["busy"], "" if share is None else int(share)))
        return [r.replace("nan", "") for r in rows]


def short(lab):
    kind, arrival, duty = priolib.parse_label(lab)
    return {"periodic": "per", "poisson": "poi", "closed": "closed"}[arrival] + " %d" % duty


def fmt(x, f="%.2f"):
    return "-" if isnan(x) else f % x


def ms(us):
    """A latency in ms, three significant digits or so."""
    if isnan(us):
        return "-"
    x = us / 1e3
    return "%.3f" % x if x < 10 else "%.1f" % x if x < 1000 else "%.0f" % x


def alts_text(res):
    """The defaults of this run and their alternatives, in words."""
    return ", ".join("%s: not worse than %s" % (n, " or ".join(a)) for n, a in ALT.items()
                     if n in res.order) or "no default ran"


def summary(res):
    run, lines = res.run, []
    s = run["settings"]
    lines.append("prio benchmark: set %s, L %s, H %s, kinds %s, duties %s, arrivals %s, phases of %g s%s, "
                 "%d round(s), base %s; %.0f s (planned %.0f)" % (
                     s["set"], ",".join(s["l"]), ",".join(s["h"]), s.get("kinds_spec", ",".join(s["kinds"])),
                     ",".join(map(str, s["duties"])), ",".join(s["arrivals"]) or "-", s["phase_s"],
                     " (open loop: at least %s requests)" % ",".join(
                         "%s %d" % (k, s.get("kind_min_requests", {}).get(k, s["min_requests"])) for k in s["kinds"])
                     if s.get("min_requests") or s.get("kind_min_requests") else "",
                     s["rounds"], s.get("base", "partition"), run.get("elapsed_s", NAN), run.get("planned_s", NAN)))
    where = "the whole GPU" if res.base_whole else "GPCs 0-1"
    for impl, svc in sorted(run.get("service_us", {}).items()):
        lines.append("service time of L %s alone on %s (the arrival periods' base, every configuration's): %s" % (
            impl, where, ", ".join("%s %.1f us" % kv for kv in sorted(svc.items()))))
    for (name, impl), svc in sorted(res.svc.items(), key=lambda kv: res.order.index(kv[0][0])
                                    if kv[0][0] in res.order else 99):
        lines.append("  measured alone by %s's L %s (%s): %s" % (
            name, impl, "the whole GPU" if res.on_whole.get(name) else "its partition, before H started"
            if name not in L_BASES else "GPCs 0-1", ", ".join("%s %.1f us" % kv for kv in sorted(svc.items()))))
    for h in res.hs:
        for w in (False, True):
            if BASES[w][1] not in res.order:
                continue
            lines.append("H %s alone %s: %s steps/s (rounds: %s)" % (
                h, "on the whole GPU (plain MPS client)" if w else "on GPCs 2-11", fmt(res.base_h.get((w, h), NAN)),
                " ".join("%.2f" % x for x in res.h_rounds.get((w, h), []))))
    failed = [m for m in res.jobs if m["failed"]]
    for m in failed:
        lines.append("FAILED %s (H %s, round %d):" % (m["name"], m["h"] or "-", m["round"] + 1))
        for f in m["failed"]:
            first, _, rest = f.partition("\n")
            lines.append("  " + first)
            lines += ["    | " + x for x in rest.strip().split("\n")[-12:] if rest.strip()]
    for name, h, r in run.get("skipped", []):
        lines.append("not run (budget): %s H %s round %d" % (name, h or "-", r + 1))
    configs = [n for n in res.order if any(k[0] == n for k in res.cells)]
    lines += overview(res, configs)
    lines.append("")
    if res.base_whole:
        lines.append("Cells: L's p99 / L alone's on the whole GPU, H's steps/s / H alone's on the whole GPU (plain MPS "
                     "clients; PRIO_BASE=whole: every configuration's); requests pooled over rounds.")
    else:
        lines.append("Cells: L's p99 / L alone's (GPCs 0-1), H's steps/s / H alone's (GPCs 2-11); requests pooled over "
                     "rounds.")
    lines.append("Mark: + every target of the cell met, - one missed (<= 10 %% duty: p99 <= %.1fx and H >= %.2f; "
                 "100 %%: H >= %.2f of static's, on the whole GPU of mps-cp's; %s; %s); ! requests dropped (L could "
                 "not keep up; p99 is then a lower bound); W a default worse than an alternative (L's p99 higher, or "
                 "H lower by more than %.2f of H alone)." % (P99_MAX, H_MIN_LOW, H_MIN_BUSY, SHARE_WHAT, alts_text(res),
                                                            H_WORSE))
    if any(res.whole.get(n) for n in res.order) and not res.base_whole:
        lines.append("Whole-GPU configurations (%s, below the line): L against L alone on the whole GPU, H against H "
                     "alone on the whole GPU (plain MPS clients); at 100 %% H against %s's." % (
                         ", ".join(n for n in res.order if res.whole.get(n) and n not in L_BASES | H_BASES),
                         REF[True]))
    # The partitioned configurations first, then the whole-GPU ones (each group in table order)
    configs = [n for n in configs if not res.whole.get(n)] + [n for n in configs if res.whole.get(n)]
    for impl in res.impls:
        for h in res.hs:
            for kind in res.kinds:
                labs = res.labels(impl, kind)
                if not labs:
                    continue
                lines += table(res, impl, h, kind, labs, configs)
    return lines


def overview_columns(res, configs):
    """The overview's columns: L alone (plain, then other forms), the time-sliced forms,
    static, mps-cp, the rest, the defaults last (each group in table order)."""
    def group(n):
        if n in L_BASES:
            return 0
        if n in res.lonly:
            return 1
        if "slice" in n:
            return 2
        if n == STATIC:
            return 3
        if n == REF[True]:
            return 4
        return 6 if n in ALT else 5
    return sorted((n for n in configs if n not in res.honly), key=lambda n: (group(n), configs.index(n)))


def overview(res, configs, per_block=7):
    """Per L version and H: a row per kind and phase, a column per configuration; cells "L's
    p99 in ms / H's ratio / L's busy fraction" and marks: + or - the batch's share target met
    or missed, ! requests dropped, W a default worse than an alternative."""
    cols = overview_columns(res, configs)
    lines = ["", "Overview: rows a kind's phase, n= its requests (the plan's, per configuration and round); cells "
             "L's p99 in ms / H's steps over H alone's%s / L's busy fraction (served requests x its service time "
             "alone / the phase); marks: + or - %s met or missed, ! requests dropped, W a default worse than an "
             "alternative (%s)." % (" on the whole GPU" if res.base_whole else "", SHARE_WHAT, alts_text(res))]
    for impl in res.impls:
        for h in res.hs:
            rows = [(kind, lab) for kind in res.kinds for lab in res.labels(impl, kind)]
            if not rows:
                continue
            for k in range(0, len(cols), per_block):
                block = cols[k:k + per_block]
                lines += ["", "== L %s beside H %s%s" % (impl, h, " (continued)" if k else ""),
                          "%-22s" % "" + "".join("%-20s" % n for n in block)]
                for kind, lab in rows:
                    cells, n = [], 0
                    for name in block:
                        hh = None if name in res.lonly else h
                        c = res.cell(name, hh, impl, lab)
                        if c is None:
                            cells.append("%-20s" % "")
                            continue
                        n = max(n, c["requests"] // len(res.cells[(name, hh, impl, lab)]["rounds"]))
                        share = res.share_met(name, c)
                        mark = {True: "+", False: "-", None: ""}[share] + ("!" if c["dropped"] else "") + (
                            "W" if res.worse(name, hh, impl, lab, c) else "")
                        cells.append("%-20s" % ("%s/%s/%s%s" % (ms(c["p99"]), fmt(c["hx"]), fmt(c["busy"]), mark)))
                    lines.append("%-22s" % ("%s %s n=%d" % (kind, short(lab), n)) + "".join(cells))
    return lines


def table(res, impl, h, kind, labs, configs):
    w = max(len(c) for c in configs) + 2
    head = "%-*s" % (w, "") + "".join("%-14s" % short(l) for l in labs)
    lines = ["", "== L %s, %s, beside H %s: L p99 ratio / H ratio" % (impl, kind, h), head]
    absl = ["", "   L's p50 / p99 in us:", head]
    met = {}
    for i, name in enumerate(configs):
        hh = None if name in res.lonly else h
        if name in res.honly:
            continue
        if i and res.whole.get(name) and not res.whole.get(configs[i - 1]):
            lines.append("%-*s" % (w, "-- whole GPU"))
            absl.append("%-*s" % (w, "-- whole GPU"))
        cells, acells = [], []
        for lab in labs:
            c = res.cell(name, hh, impl, lab)
            if c is None:
                cells.append("%-14s" % "")
                acells.append("%-14s" % "")
                continue
            t = res.targets(name, hh, impl, lab, c)
            for what, ok in t:
                met.setdefault((name, what), []).append((lab, ok, c))
            mark = ("+" if all(ok for _, ok in t) else "-") if t else ""
            mark += "!" if c["dropped"] else ""
            mark += "W" if res.worse(name, hh, impl, lab, c) else ""
            cells.append("%-14s" % ("%s/%s%s" % (fmt(c["p99x"]), fmt(c["hx"]), mark)))
            acells.append("%-14s" % ("%s/%s" % (fmt(c["p50"], "%.0f"), fmt(c["p99"], "%.0f"))))
        lines.append("%-*s" % (w, name) + "".join(cells))
        absl.append("%-*s" % (w, name) + "".join(acells))
    lines += absl
    lines.append("   targets:")
    whats = sorted({"not worse than %s" % a for alts in ALT.values() for a in alts}) + [
        "p99 <= 1.2x, H >= 0.8"] + ["H >= 0.95 of %s's" % r for r in REF.values()] + [SHARE_WHAT]
    for what in whats:
        who = [(n, v) for (n, w_), v in met.items() if w_ == what]
        if not who:
            continue
        full = [n for n, v in who if all(ok for _, ok, _ in v)]
        detail = "".join("; %s: %s" % (n, ", ".join("%s %s" % (short(lab), "ok" if ok else "MISS")
                                                     for lab, ok, _ in v))
                         for n, v in sorted(who, key=lambda x: configs.index(x[0])) if n in ALT)
        lines.append("   - %s: met in every cell by %s%s" % (what, ", ".join(full) or "none", detail))
    lines += lost_per_request(res, impl, h, labs, configs)
    for arrival in ("periodic", "poisson"):
        lab = "%s-%s-30" % (kind, arrival)
        if lab not in labs:
            continue
        best = []
        for name in configs:
            c = res.cell(name, h, impl, lab) if name not in res.lonly | res.honly else None
            if c and c["hx"] >= H_MIN_LOW:
                best.append((c["p99x"], name, c["hx"]))
        best.sort()
        lines.append("   - 30 %% %s: lowest L p99 with H >= %.1f: %s" % (
            arrival, H_MIN_LOW, ", ".join("%s %.2fx/%.2f" % (n, p, x) for p, n, x in best[:3]) or "none"))
    return lines


def lost_per_request(res, impl, h, labs, configs):
    """What each request costs the batch beyond L's busy share, in us: (1 - H - busy) / L's
    requests a second, per configuration with an H and phase (on the whole GPU, time-sliced:
    the two context switches a request pays; on partitions it holds the partition's own loss
    too)."""
    out = []
    for name in configs:
        if name in res.lonly or name in res.honly:
            continue
        parts = []
        for lab in labs:
            c = res.cell(name, h, impl, lab)
            if c is None or isnan(c["hx"]) or isnan(c["busy"]) or not c["rate"] > 0:
                continue
            parts.append("%s %.0f" % (short(lab), (1.0 - c["hx"] - c["busy"]) * 1e6 / c["rate"]))
        if parts:
            out.append("%s: %s" % (name, ", ".join(parts)))
    if not out:
        return []
    return ["   the batch's time lost per request beyond L's busy share, (1 - H - busy) / L's requests a second, "
            "in us (time-sliced: what the request's switches cost it):"] + ["     " + x for x in out]


# ---- The plot ------------------------------------------------------------------------------
COLOURS = ["#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2", "#7f7f7f",
           "#bcbd22", "#17becf", "#393b79", "#637939", "#843c39", "#7b4173"]
MARKERS = ["o", "s", "^", "D", "v", "P", "X", "*", "h", "<", ">", "p", "d", "H"]


def points(res):
    """Panels [(title, duty, [(config, arrival, hx, p99x)])]."""
    duties = sorted({priolib.parse_label(k[3])[2] for k in res.cells})
    panels = []
    for impl in res.impls:
        for h in res.hs:
            for kind in res.kinds:
                for duty in duties:
                    pts = []
                    for (name, hh, im, lab) in res.cells:
                        k, arrival, d = priolib.parse_label(lab)
                        if hh != h or im != impl or k != kind or d != duty or name in res.lonly | res.honly:
                            continue
                        c = res.cell(name, hh, im, lab)
                        if not isnan(c["hx"]) and not isnan(c["p99x"]) and c["p99x"] > 0:
                            pts.append((name, arrival, c["hx"], c["p99x"]))
                    panels.append(("L %s %s, H %s, %d %%" % (impl, kind, h, duty), duty, pts))
    return panels


def plot_png(res, panels, path):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from matplotlib.ticker import FuncFormatter, LogLocator, NullFormatter
    names = [n for n in res.order if n not in res.lonly | res.honly]
    ncol = len({p[1] for p in panels}) or 1
    nrow = max(1, (len(panels) + ncol - 1) // ncol)
    height = 3.4 * nrow + 0.3 * ((len(names) + 9) // 8) + 0.3
    fig, axes = plt.subplots(nrow, ncol, figsize=(4.2 * ncol, height), squeeze=False)
    for i, (title, duty, pts) in enumerate(panels):
        ax = axes[i // ncol][i % ncol]
        for name, arrival, hx, p99x in pts:
            k = names.index(name) if name in names else 0
            ax.scatter([hx], [p99x], marker=MARKERS[k % len(MARKERS)], s=40, edgecolors=COLOURS[k % len(COLOURS)],
                       facecolors="none" if arrival == "poisson" else COLOURS[k % len(COLOURS)])
        ax.set_yscale("log")
        ax.yaxis.set_major_locator(LogLocator(subs=(1.0, 2.0, 5.0)))
        ax.yaxis.set_major_formatter(FuncFormatter(lambda v, _: "%g" % v))
        ax.yaxis.set_minor_formatter(NullFormatter())
        ax.axhline(1.0, color="grey", lw=0.6, ls=":")
        if duty <= 10:
            ax.axhline(P99_MAX, color="k", lw=0.7, ls="--")
            ax.axvline(H_MIN_LOW, color="k", lw=0.7, ls="--")
        if duty == 100:
            ax.axvline(H_MIN_BUSY, color="k", lw=0.7, ls="--")
        ax.set_title(title, fontsize=9)
        ax.set_xlabel("H steps/s / H alone", fontsize=8)
        ax.set_ylabel("L p99 / L alone", fontsize=8)
        ax.tick_params(labelsize=7)
    for j in range(len(panels), nrow * ncol):
        axes[j // ncol][j % ncol].axis("off")
    handles = [plt.Line2D([], [], ls="", marker=MARKERS[k % len(MARKERS)], color=COLOURS[k % len(COLOURS)],
                          label=n) for k, n in enumerate(names)]
    handles += [plt.Line2D([], [], ls="", marker="o", color="k", label="periodic / closed (filled)"),
                plt.Line2D([], [], ls="", marker="o", color="k", mfc="none", label="Poisson (hollow)")]
    fig.legend(handles=handles, loc="lower center", ncol=min(8, len(handles)), fontsize=8)
    fig.tight_layout(rect=(0, (height - 3.4 * nrow) / height, 1, 1))
    fig.savefig(path, dpi=80)
    plt.close(fig)


def svg_marker(k, x, y, colour, hollow):
    fill = "none" if hollow else colour
    r = 4
    shape = k % 4
    if shape == 0:
        return '<circle cx="%.1f" cy="%.1f" r="%d" fill="%s" stroke="%s"/>' % (x, y, r, fill, colour)
    if shape == 1:
        return '<rect x="%.1f" y="%.1f" width="%d" height="%d" fill="%s" stroke="%s"/>' % (
            x - r, y - r, 2 * r, 2 * r, fill, colour)
    pts = [(x, y - r - 1), (x + r + 1, y + r), (x - r - 1, y + r)] if shape == 2 else \
        [(x, y - r - 1), (x + r + 1, y), (x, y + r + 1), (x - r - 1, y)]
    return '<polygon points="%s" fill="%s" stroke="%s"/>' % (
        " ".join("%.1f,%.1f" % p for p in pts), fill, colour)


def plot_svg(res, panels, path):
    """The same figure without matplotlib: x linear, y logarithmic, one colour and shape per
    configuration (Poisson hollow)."""
    import math
    names = [n for n in res.order if n not in res.lonly | res.honly]
    ncol = len({p[1] for p in panels}) or 1
    nrow = max(1, (len(panels) + ncol - 1) // ncol)
    pw, ph, ml, mb, mt = 300, 230, 48, 36, 22
    leg = 18 * ((len(names) + 3) // 4) + 30
    W, H = ncol * pw, nrow * ph + leg
    out = ['<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" font-family="sans-serif" '
           'font-size="10">' % (W, H), '<rect width="100%" height="100%" fill="white"/>']
    for i, (title, duty, pts) in enumerate(panels):
        ox, oy = (i % ncol) * pw, (i // ncol) * ph
        x0, x1, y0, y1 = ox + ml, ox + pw - 10, oy + ph - mb, oy + mt
        xs = [p[2] for p in pts] + [1.1]
        ys = [p[3] for p in pts] + [0.8, 2.0]
        xmin, xmax = 0.0, math.ceil(max(xs) * 1.05 / 0.25) * 0.25
        lmin, lmax = math.log10(min(ys) / 1.25), math.log10(max(ys) * 1.25)
        X = lambda v: x0 + (v - xmin) / (xmax - xmin) * (x1 - x0)
        Y = lambda v: y0 - (math.log10(v) - lmin) / (lmax - lmin) * (y0 - y1)
        out.append('<text x="%.1f" y="%.1f" text-anchor="middle">%s</text>' % ((x0 + x1) / 2, oy + 14, title))
        out.append('<rect x="%.1f" y="%.1f" width="%.1f" height="%.1f" fill="none" stroke="black"/>' % (
            x0, y1, x1 - x0, y0 - y1))
        step = 0.25 if xmax <= 2 else 0.5 if xmax <= 4 else 1.0
        for k in range(int(round(xmax / step)) + 1):
            out.append('<text x="%.1f" y="%.1f" text-anchor="middle">%g</text>' % (X(k * step), y0 + 12, k * step))
        for v in (0.2, 0.5, 1, 1.2, 2, 5, 10, 20, 50, 100) if duty <= 10 else (0.2, 0.5, 1, 2, 5, 10, 20, 50, 100):
            if lmin <= math.log10(v) <= lmax:
                out.append('<text x="%.1f" y="%.1f" text-anchor="end">%g</text>' % (x0 - 3, Y(v) + 3, v))
                out.append('<line x1="%.1f" x2="%.1f" y1="%.1f" y2="%.1f" stroke="#ddd"/>' % (x0, x1, Y(v), Y(v)))
        out.append('<text x="%.1f" y="%.1f" text-anchor="middle">H / H alone</text>' % ((x0 + x1) / 2, y0 + 26))
        out.append('<text x="%.1f" y="%.1f" transform="rotate(-90 %.1f %.1f)" text-anchor="middle">L p99 / L '
                   'alone</text>' % (ox + 12, (y0 + y1) / 2, ox + 12, (y0 + y1) / 2))
        dash = 'stroke="black" stroke-dasharray="4,3"'
        if duty <= 10 and lmin <= math.log10(P99_MAX) <= lmax:
            out.append('<line x1="%.1f" x2="%.1f" y1="%.1f" y2="%.1f" %s/>' % (x0, x1, Y(P99_MAX), Y(P99_MAX), dash))
        for v in ((H_MIN_LOW,) if duty <= 10 else (H_MIN_BUSY,) if duty == 100 else ()):
            out.append('<line x1="%.1f" x2="%.1f" y1="%.1f" y2="%.1f" %s/>' % (X(v), X(v), y0, y1, dash))
        for name, arrival, hx, p99x in pts:
            k = names.index(name) if name in names else 0
            out.append(svg_marker(k, X(hx), Y(p99x), COLOURS[k % len(COLOURS)], arrival == "poisson"))
    ly = nrow * ph + 10
    for k, n in enumerate(names + ["Poisson: hollow"]):
        x, y = 10 + (k % 4) * (W - 20) / 4, ly + 18 * (k // 4)
        if k < len(names):
            out.append(svg_marker(k, x + 5, y + 5, COLOURS[k % len(COLOURS)], False))
        out.append('<text x="%.1f" y="%.1f">%s</text>' % (x + 14, y + 9, n))
    out.append("</svg>")
    with open(path, "w") as f:
        f.write("\n".join(out) + "\n")


def main():
    if len(sys.argv) != 2:
        sys.exit("usage: prio_report.py OUTDIR")
    out = sys.argv[1]
    run, jobs = load(out)
    res = Results(run, jobs)
    with open(os.path.join(out, "prio.csv"), "w") as f:
        f.write("\n".join(res.csv_rows()) + "\n")
    lines = summary(res)
    with open(os.path.join(out, "summary.txt"), "w") as f:
        f.write("\n".join(lines) + "\n")
    print("\n".join(lines))
    panels = points(res)
    if not panels:
        return
    try:
        if os.environ.get("PRIO_NO_MPL") == "1":
            raise ImportError("PRIO_NO_MPL")
        plot_png(res, panels, os.path.join(out, "prio.png"))
        print("plot: prio.png")
    except ImportError:
        plot_svg(res, panels, os.path.join(out, "prio.svg"))
        print("plot: prio.svg (no matplotlib)")


if __name__ == "__main__":
    main()
