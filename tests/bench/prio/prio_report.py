"""prio_report.py - summary CSV, text and PNG of the priorities benchmark from
prio.py's raw logs.

    python3 prio_report.py OUTDIR

Percentiles pool the jobs of every round; H's throughput is the mean over
rounds of (steps ended in L's phase) x (work per step) / (phase length).
"""
import glob
import json
import os
import re
import sys
from collections import defaultdict

import numpy as np

OUT = sys.argv[1]
RAW = os.path.join(OUT, "raw")


def read_lat(path):
    meta, rows, phases = {}, [], {}
    for line in open(path):
        if line.startswith("#"):
            for k, v in re.findall(r"(\w+)=(-?\d+)", line):
                meta[k] = int(v)
            if line.startswith("# sms="):
                meta["sms"] = [int(x) for x in line[6:].split()]
            m = re.match(r"# phase (\d+) (\d+) (\d+)", line)
            if m:
                phases[int(m.group(1))] = (int(m.group(2)), int(m.group(3)))
        elif line[0].isdigit():
            rows.append([float(x) for x in line.split(",")])
    a = np.array(rows) if rows else np.zeros((0, 6))
    return meta, a, phases


def read_steps(path):
    per, ts = 0, []
    for line in open(path):
        if line.startswith("#"):
            m = re.search(r"(bytes|flop)_per_step=(\d+)", line)
            per = int(m.group(2))
            unit = "GB/s" if m.group(1) == "bytes" else "TFLOP/s"
        elif line.strip():
            ts.append(int(line))
    return per, unit, np.array(ts, dtype=np.int64)


def topo_sms(gpcs):
    sms = set()
    try:
        for line in open(os.path.join(OUT, "topology.txt")):
            m = re.match(r"\s+(\d+)\s+\S+\s+\S+\s+(\S+)", line)
            if m and int(m.group(1)) in gpcs:
                for part in m.group(2).split(","):
                    lo, _, hi = part.partition("-")
                    sms.update(range(int(lo), int(hi or lo) + 1))
    except OSError:
        pass
    return sms


def cases():
    out = defaultdict(list)  # base name -> [dir]
    for d in sorted(glob.glob(os.path.join(RAW, "*"))):
        base = re.sub(r"-r\d+$", "", os.path.basename(d))
        out[base].append(d)
    return out


def lat_stats(dirs, variant):
    """duty -> dict of pooled stats; plus H throughput per duty (list over rounds)."""
    res = defaultdict(lambda: {"lat": [], "first": [], "rest": [], "thr": []})
    unit = None
    for d in dirs:
        p = os.path.join(d, "l-%s.csv" % variant)
        if not os.path.exists(p):
            continue
        meta, a, phases = read_lat(p)
        hs = os.path.join(d, "h.steps")
        steps = read_steps(hs) if os.path.exists(hs) else None
        for duty in np.unique(a[:, 0]) if len(a) else []:
            x = a[a[:, 0] == duty]
            r = res[int(duty)]
            r["lat"].append(x[:, 4])
            r["first"].append(x[x[:, 2] == 0][:, 4])
            r["rest"].append(x[x[:, 2] > 0][:, 4])
            if steps and int(duty) in phases:
                per, unit, ts = steps
                b, e = phases[int(duty)]
                r["thr"].append(np.count_nonzero((ts >= b) & (ts < e)) * per / ((e - b) * 1e-9))
    out = {}
    for duty, r in res.items():
        lat = np.concatenate(r["lat"])
        first = np.concatenate(r["first"]) if r["first"] else np.zeros(0)
        rest = np.concatenate(r["rest"]) if r["rest"] else np.zeros(0)
        out[duty] = {"n": len(lat), "p50": np.percentile(lat, 50), "p99": np.percentile(lat, 99),
                     "max": lat.max(), "first_p50": np.median(first) if len(first) else float("nan"),
                     "first_max": first.max() if len(first) else float("nan"),
                     "rest_p50": np.median(rest) if len(rest) else float("nan"),
                     "thr": float(np.mean(r["thr"])) if r["thr"] else float("nan"),
                     "thr_rounds": r["thr"], "unit": unit}
    return out


def h_alone(dirs):
    v = []
    for d in dirs:
        meta = json.load(open(os.path.join(d, "meta.json")))
        per, unit, ts = read_steps(os.path.join(d, "h.steps"))
        b, e = meta["h_ready_ns"], meta["end_ns"]
        v.append(np.count_nonzero((ts >= b) & (ts < e)) * per / ((e - b) * 1e-9))
    return float(np.mean(v)), v, unit


def fmt_thr(x, unit):
    return "%.1f" % (x / 1e9) if unit == "GB/s" else "%.1f" % (x / 1e12)


def reaction(dirs, l_sms):
    """Per burst: L's first launch -> first H kernel started entirely off L's SMs, and L's
    last job -> first H kernel on L's SMs again (borrowing); from %globaltimer."""
    rows = []
    for d in dirs:
        kp = os.path.join(d, "h.kernels")
        if not os.path.exists(kp):
            continue
        koff = None
        ks = []
        for line in open(kp):
            if line.startswith("#"):
                koff = int(re.search(r"gt_offset_ns=(-?\d+)", line).group(1))
                continue
            s, e, w0, w1, w2 = line.split()
            s, e = int(s), int(e)
            if e == 0:
                continue
            m = int(w0, 16) | int(w1, 16) << 64 | int(w2, 16) << 128
            on = any(m >> sm & 1 for sm in l_sms)
            ks.append((s, e, on))
        if not ks:
            continue
        ks.sort()
        st = np.array([k[0] for k in ks], dtype=np.int64)
        en = np.array([k[1] for k in ks], dtype=np.int64)
        on = np.array([k[2] for k in ks])
        for variant in ("compute", "memory"):
            p = os.path.join(d, "l-%s.csv" % variant)
            if not os.path.exists(p):
                continue
            meta, a, phases = read_lat(p)
            off = meta["gt_offset_ns"]
            run0 = meta["run_start_ns"]
            for duty in np.unique(a[:, 0]):
                x = a[a[:, 0] == duty]
                for per in np.unique(x[:, 1]):
                    y = x[x[:, 1] == per]
                    t_launch = run0 + int(y[0, 3] * 1e3) + off  # L's first launch, globaltimer
                    t_last = run0 + int(y[-1, 3] * 1e3 + y[-1, 4] * 1e3) + off
                    i = np.searchsorted(st, t_launch)
                    j = i
                    while j < len(st) and on[j]:
                        j += 1
                    react = (st[j] - t_launch) / 1e3 if j < len(st) else float("nan")
                    inflight = int(np.count_nonzero((st < t_launch) & (en > t_launch) & on))
                    runon = float((en[(st < t_launch) & (en > t_launch) & on].max() - t_launch) / 1e3) if inflight else 0.0
                    k = np.searchsorted(st, t_last)
                    while k < len(st) and not on[k]:
                        k += 1
                    back = (st[k] - t_last) / 1e3 if k < len(st) else float("nan")
                    rows.append((os.path.basename(d), variant, int(duty), int(per), react, inflight, runon, back,
                                 y[0, 4], float(np.median(y[1:, 4])) if len(y) > 1 else float("nan")))
    return rows


def agent_latency(dirs):
    """L's first launch of each burst (CLOCK_MONOTONIC) -> the agent's first line that guards."""
    v = []
    for d in dirs:
        lg = os.path.join(d, "agent.log")
        if not os.path.exists(lg):
            continue
        ev = []
        for line in open(lg):
            m = re.search(r"agent: (\d+\.\d+) pid \d+ slot \d+: TPCs (\S+) \((\w+)\)", line)
            if m:
                ev.append((int(round(float(m.group(1)) * 1e9)), m.group(3)))
        for variant in ("compute", "memory"):
            p = os.path.join(d, "l-%s.csv" % variant)
            if not os.path.exists(p):
                continue
            meta, a, _ = read_lat(p)
            for duty in np.unique(a[:, 0]):
                x = a[a[:, 0] == duty]
                for per in np.unique(x[:, 1]):
                    t = meta["run_start_ns"] + int(x[x[:, 1] == per][0, 3] * 1e3)
                    nxt = [e for e in ev if e[0] >= t - 2000000 and e[1] != "borrowing"]
                    if nxt:
                        v.append((os.path.basename(d), variant, int(duty), (nxt[0][0] - t) / 1e3))
    return v


def main():
    cs = cases()
    lines, csv = [], ["h,config,l,duty,jobs,p50_us,p99_us,max_us,first_job_p50_us,first_job_max_us,"
                      "rest_p50_us,baseline,p50_x,p99_x,max_x,h_thr,h_unit,h_x_alone,h_x_static"]
    if any(k.startswith("guard-") for k in cs):
        guard_report(cs, lines)
    base = {v: lat_stats(cs.get("L-alone", []), v) for v in ("compute", "memory")}
    basep = {v: lat_stats(cs.get("L-alone-part", []), v) for v in ("compute", "memory")}
    l_sms = topo_sms({0, 1})
    plot = []
    for hk in ("gemm", "stream"):
        if "%s-H-alone" % hk not in cs:
            continue
        ha, har, unit = h_alone(cs["%s-H-alone" % hk])
        lines.append("\n== H = %s: alone on the whole GPU %s %s (rounds %s)" %
                     (hk, fmt_thr(ha, unit), unit, " ".join(fmt_thr(x, unit) for x in har)))
        static = {v: lat_stats(cs.get("%s-static" % hk, []), v) for v in ("compute", "memory")}
        for cfg in ("mps", "mps-pct", "static", "prio", "prio-nolend", "prio-g54"):
            name = "%s-%s" % (hk, cfg)
            if name not in cs:
                continue
            for v in ("compute", "memory"):
                st = lat_stats(cs[name], v)
                bl, bname = (base, "alone") if cfg.startswith("mps") else (basep, "alone-part")
                for duty in sorted(st):
                    s, b = st[duty], bl[v].get(duty)
                    if not b:
                        continue
                    sx = static[v].get(duty, {}).get("thr", float("nan"))
                    r = (s["p50"] / b["p50"], s["p99"] / b["p99"], s["max"] / b["max"])
                    csv.append("%s,%s,%s,%d,%d,%.1f,%.1f,%.1f,%.1f,%.1f,%.1f,%s,%.3f,%.3f,%.3f,%s,%s,%.3f,%.3f" % (
                        hk, cfg, v, duty, s["n"], s["p50"], s["p99"], s["max"], s["first_p50"], s["first_max"],
                        s["rest_p50"], bname, r[0], r[1], r[2], fmt_thr(s["thr"], unit), unit, s["thr"] / ha,
                        s["thr"] / sx))
                    lines.append("%-6s %-12s L %-7s %2d%%: p50 %7.1f p99 %7.1f max %8.1f us = %5.2fx %5.2fx %5.2fx of %-10s"
                                 " first job p50 %7.1f; H %s %s = %.3f alone, %.3f static" % (
                                     hk, cfg, v, duty, s["p50"], s["p99"], s["max"], r[0], r[1], r[2], bname,
                                     s["first_p50"], fmt_thr(s["thr"], unit), unit, s["thr"] / ha, s["thr"] / sx))
                    plot.append((hk, cfg, v, duty, r[1], s["thr"] / ha))
    for v in ("compute", "memory"):
        for nm, bl in (("alone", base), ("alone-part", basep)):
            for duty, s in sorted(bl[v].items()):
                lines.append("L %-7s %-10s %2d%%: p50 %7.1f p99 %7.1f max %8.1f us, first job p50 %7.1f (n %d)" % (
                    v, nm, duty, s["p50"], s["p99"], s["max"], s["first_p50"], s["n"]))
    rx = []
    for name in ("stream-prio", "stream-prio-nolend", "stream-static"):
        rows = reaction(cs.get(name, []), l_sms)
        if rows:
            rx += ["%s,%s" % (name, ",".join(str(round(x, 1)) if isinstance(x, float) else str(x) for x in r))
                   for r in rows]
            for v in ("compute", "memory"):
                for duty in (10, 30, 70):
                    sel = [r for r in rows if r[1] == v and r[2] == duty]
                    if not sel:
                        continue
                    re_ = np.array([r[4] for r in sel])
                    bk = np.array([r[7] for r in sel])
                    lines.append("reaction %-18s L %-7s %2d%%: first H kernel off L's SMs after L's first launch: "
                                 "median %.0f max %.0f us; H kernels on L's SMs running at L's launch: median %d, "
                                 "they ran on for median %.0f us; back on L's SMs after L's last job: median %.0f us; "
                                 "L's first job %.0f us vs %.0f us the rest (medians)" % (
                                     name, v, duty, np.nanmedian(re_), np.nanmax(re_),
                                     np.median([r[5] for r in sel]), np.median([r[6] for r in sel]),
                                     np.nanmedian(bk), np.median([r[8] for r in sel]), np.nanmedian([r[9] for r in sel])))
    if rx:
        with open(os.path.join(OUT, "reaction.csv"), "w") as f:
            f.write("case,l,duty,period,react_us,h_inflight_on_l,h_runon_us,back_us,l_first_us,l_rest_p50_us\n")
            f.write("\n".join(rx) + "\n")
    for name in ("stream-prio", "gemm-prio", "stream-prio-nolend", "gemm-prio-nolend", "gemm-prio-g54"):
        al = agent_latency(cs.get(name, []))
        if al:
            x = np.array([a[3] for a in al])
            lines.append("agent %-18s: L's first launch -> agent's write guarding H: median %.0f us, p90 %.0f, max %.0f (n %d)"
                         % (name, np.median(x), np.percentile(x, 90), x.max(), len(x)))
    with open(os.path.join(OUT, "prio.csv"), "w") as f:
        f.write("\n".join(csv) + "\n")
    with open(os.path.join(OUT, "summary.txt"), "w") as f:
        f.write("\n".join(lines) + "\n")
    print("\n".join(lines))
    if plot:
        make_png(plot)


def guard_report(cs, lines):
    alone = None
    rows = ["point,h_tpcs,jobs,p50_us,p99_us,max_us,p50_x,p99_x,h_gbps"]
    tp = {"alone": 0, "c2": 2, "c4": 4, "g2": 8, "g4": 8, "g6": 9, "g7": 9, "g2-3": 16, "g4-5": 16, "g6-7": 18,
          "g2-11": 54}
    lines.append("== guard sweep: memory-bound L on GPCs 0-1 (back to back), hog on static partitions")
    for pt in tp:
        dirs = cs.get("guard-" + pt, [])
        if not dirs:
            continue
        st = lat_stats(dirs, "memory").get(100)
        if not st:
            continue
        if pt == "alone":
            alone = st
        r50, r99 = st["p50"] / alone["p50"], st["p99"] / alone["p99"]
        rows.append("%s,%d,%d,%.1f,%.1f,%.1f,%.3f,%.3f,%.1f" % (pt, tp[pt], st["n"], st["p50"], st["p99"], st["max"],
                                                             r50, r99, st["thr"] / 1e9))
        lines.append("hog %-6s (%2d TPCs): L p50 %6.1f p99 %6.1f max %7.1f us = %.2fx / %.2fx alone; hog %.0f GB/s"
                     % (pt, tp[pt], st["p50"], st["p99"], st["max"], r50, r99, st["thr"] / 1e9))
    with open(os.path.join(OUT, "guard.csv"), "w") as f:
        f.write("\n".join(rows) + "\n")
    al = {v: lat_stats(cs.get("cprio-alone", []), v).get(100) for v in ("compute", "memory")}
    for tag in ("mps", "mpsprio"):
        for v in ("compute", "memory"):
            st = lat_stats(cs.get("cprio-" + tag, []), v).get(100)
            if st and al[v]:
                lines.append("plain MPS %-8s L %-7s beside the hog: p50 %7.1f p99 %7.1f max %8.1f us = %.2fx / %.2fx alone;"
                             " hog %.0f GB/s" % (tag, v, st["p50"], st["p99"], st["max"], st["p50"] / al[v]["p50"],
                                                 st["p99"] / al[v]["p99"], st["thr"] / 1e9))


def make_png(plot):
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("no matplotlib: no PNG")
        return
    cfgs = ["mps", "mps-pct", "static", "prio", "prio-nolend", "prio-g54"]
    fig, axes = plt.subplots(2, 4, figsize=(20, 9))
    for i, (hk, v) in enumerate([(h, v) for h in ("gemm", "stream") for v in ("compute", "memory")]):
        for j, what in enumerate(("L p99 / L alone", "H throughput / H alone")):
            ax = axes[j][i]
            for k, c in enumerate(cfgs):
                pts = sorted((p[3], p[4] if j == 0 else p[5]) for p in plot if p[0] == hk and p[1] == c and p[2] == v)
                if pts:
                    ax.bar([x + (k - 2.5) * 3.2 for x, _ in [(d, 0) for d, _ in pts]], [y for _, y in pts], 3.0,
                           label=c)
            ax.set_title("H %s, L %s: %s" % (hk, v, what), fontsize=9)
            ax.set_xticks([10, 30, 70])
            ax.set_xlabel("L's duty (%)")
            if j == 0:
                ax.axhline(1.5 if v == "memory" else 1.2, color="k", ls="--", lw=0.8)
                ax.set_yscale("log")
            ax.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(os.path.join(OUT, "prio.png"), dpi=80)


if __name__ == "__main__":
    main()
