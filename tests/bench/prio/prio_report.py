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


def nanfmt(x):
    return "nan" if x != x else "%.0f" % x


def fmt_thr(x, unit):
    return "%.1f" % (x / 1e9) if unit == "GB/s" else "%.1f" % (x / 1e12)


def agent_events(path):
    ev = []
    for line in open(path):
        m = re.search(r"agent: (\d+)\.(\d+) pid \d+ slot \d+: TPCs (\S+) \((\w+)\)", line)
        if m:
            ev.append((int(m.group(1)) * 1000000000 + int(m.group(2)) * 1000, m.group(4)))
    return ev


def reaction(dirs):
    """Per burst of L, from CLOCK_MONOTONIC (L's job times, the agent's log, H's step ends):
    agent = L's first launch -> the agent's write that takes L's TPCs from H; react = L's first
    launch -> the end of H's step in flight at that write (H's next launches carry the new
    mask; its queue is empty then); back = L's last job's end -> the agent's write that gives H
    more again."""
    rows = []
    for d in dirs:
        lg, hs = os.path.join(d, "agent.log"), os.path.join(d, "h.steps")
        if not (os.path.exists(lg) and os.path.exists(hs)):
            continue
        ev = agent_events(lg)
        _, _, ts = read_steps(hs)
        et = np.array([e[0] for e in ev], dtype=np.int64)
        for variant in ("compute", "memory"):
            p = os.path.join(d, "l-%s.csv" % variant)
            if not os.path.exists(p):
                continue
            meta, a, _ = read_lat(p)
            run0 = meta["run_start_ns"]
            for duty in np.unique(a[:, 0]):
                x = a[a[:, 0] == duty]
                for per in np.unique(x[:, 1]):
                    y = x[x[:, 1] == per]
                    t_l = run0 + int(y[0, 3] * 1e3)
                    t_end = run0 + int((y[-1, 3] + y[-1, 4]) * 1e3)
                    i = np.searchsorted(et, t_l)
                    agent = react = back = float("nan")
                    if i < len(ev) and ev[i][1] in ("guarded", "own", "squeezed") and ev[i][0] < t_end:
                        agent = (ev[i][0] - t_l) / 1e3
                        k = np.searchsorted(ts, ev[i][0])
                        if k < len(ts):
                            react = (ts[k] - t_l) / 1e3
                    j = np.searchsorted(et, t_end)
                    if j < len(ev) and ev[j][1] != "guarded":
                        back = (ev[j][0] - t_end) / 1e3
                    rows.append((os.path.basename(d), variant, int(duty), int(per), agent, react, back,
                                 float(y[0, 4]), float(np.median(y[1:, 4])) if len(y) > 1 else float("nan")))
    return rows


def main():
    cs = cases()
    lines, csv = [], ["h,config,l,duty,jobs,p50_us,p99_us,max_us,first_job_p50_us,first_job_max_us,"
                      "rest_p50_us,baseline,p50_x,p99_x,max_x,h_thr,h_unit,h_x_alone,h_x_static"]
    if any(k.startswith("guard-") for k in cs):
        guard_report(cs, lines)
    base = {v: lat_stats(cs.get("L-alone", []), v) for v in ("compute", "memory")}
    basep = {v: lat_stats(cs.get("L-alone-part", []), v) for v in ("compute", "memory")}
    plot = []
    for hk in ("gemm", "stream"):
        if "%s-H-alone" % hk not in cs:
            continue
        ha, har, unit = h_alone(cs["%s-H-alone" % hk])
        lines.append("\n== H = %s: alone on the whole GPU %s %s (rounds %s)" %
                     (hk, fmt_thr(ha, unit), unit, " ".join(fmt_thr(x, unit) for x in har)))
        static = {v: lat_stats(cs.get("%s-static" % hk, []), v) for v in ("compute", "memory")}
        for cfg in ("mps", "mps-pct", "static", "prio", "prio-nolend", "prio-cp", "prio-h2", "prio-h2-p100", "prio-g54", "prio-g54-h2"):
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
    for name in sorted(cs):
        if "-prio" not in name:
            continue
        rows = reaction(cs[name])
        if not rows:
            continue
        rx += ["%s,%s" % (name, ",".join(("%.1f" % x) if isinstance(x, float) else str(x) for x in r[1:]))
               for r in rows]
        for v in ("compute", "memory"):
            for duty in (10, 30, 70):
                sel = [r for r in rows if r[1] == v and r[2] == duty]
                if not sel:
                    continue
                col = lambda c: np.array([r[c] for r in sel], dtype=float)
                lines.append("reaction %-18s L %-7s %2d%%: agent wrote %s us after L's first launch (median; max %s), "
                             "H's next launch %s us (max %s); gave back %s us after L's last job; L's first job %.0f us "
                             "vs %.0f the rest (medians; %d bursts)" % (
                                 name, v, duty, nanfmt(np.nanmedian(col(4))), nanfmt(np.nanmax(col(4))),
                                 nanfmt(np.nanmedian(col(5))), nanfmt(np.nanmax(col(5))), nanfmt(np.nanmedian(col(6))),
                                 np.median(col(7)), np.nanmedian(col(8)), len(sel)))
    if rx:
        with open(os.path.join(OUT, "reaction.csv"), "w") as f:
            f.write("case,l,duty,period,agent_us,react_us,back_us,l_first_us,l_rest_p50_us\n")
            f.write("\n".join(rx) + "\n")
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
    cfgs = ["mps", "mps-pct", "static", "prio", "prio-nolend", "prio-cp", "prio-h2", "prio-h2-p100", "prio-g54", "prio-g54-h2"]
    fig, axes = plt.subplots(2, 4, figsize=(20, 9))
    for i, (hk, v) in enumerate([(h, v) for h in ("gemm", "stream") for v in ("compute", "memory")]):
        for j, what in enumerate(("L p99 / L alone", "H throughput / H alone")):
            ax = axes[j][i]
            for k, c in enumerate(cfgs):
                pts = sorted((p[3], p[4] if j == 0 else p[5]) for p in plot if p[0] == hk and p[1] == c and p[2] == v)
                if pts:
                    ax.bar([x + (k - 4.5) * 1.9 for x, _ in [(d, 0) for d, _ in pts]], [y for _, y in pts], 1.8,
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
