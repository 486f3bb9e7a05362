import sys, bisect, re
def load(p):
    br, cp = [], []
    for l in open(p):
        if l.startswith("bridge"):
            d = dict(kv.split("=") for kv in l.split()[1:])
            br.append({k: (int(v) if v.isdigit() else v) for k, v in d.items()})
        elif l.startswith("copy"):
            d = dict(kv.split("=") for kv in l.split()[1:])
            cp.append((int(d["start"]), int(d["queued"])))
    cp.sort()
    return br, cp
def pct(a, q):
    a = sorted(a); return a[min(len(a)-1, int(q*len(a)))] if a else None
for p in sys.argv[1:]:
    br, cp = load(p)
    starts = [c[0] for c in cp]
    rows = []
    for b in br:
        if b["end"] != "released" or not b["stop"]: continue
        i = bisect.bisect_right(starts, b["stop"])
        if i >= len(cp): continue
        d = (cp[i][0] - b["stop"]) / 1e3
        if d > 3000: continue  # the request's last step: no later copy soon
        hostgap = (b["rel"] - b["ret"]) / 1e3 if b["rel"] and b["ret"] else None
        held = (b["stop"] - b["saw_rel"]) / 1e3
        rows.append((d, hostgap, held, (cp[i][1] - b["rel"]) / 1e3 if b["rel"] else None))
    ds = [r[0] for r in rows]
    paid = [r for r in rows if r[0] > 380]
    unp = [r for r in rows if r[0] <= 380]
    print(p.split("/")[-1], "steps", len(rows), "end->copy p10/p50/p90/p99", [round(pct(ds, q)) for q in (.1, .5, .9, .99)], "paid(>380)", len(paid))
    for name, grp in (("unpaid", unp), ("paid", paid)):
        if not grp: continue
        hg = [r[1] for r in grp if r[1] is not None]; cq = [r[3] for r in grp if r[3] is not None]
        print("   %-6s n=%4d end->copy p50 %4.0f | host ret->rel p10/50/90 %s | rel->copy queued p50/90 %s | held after rel p50 %.0f" % (
            name, len(grp), pct([r[0] for r in grp], .5), [round(pct(hg, q)) for q in (.1, .5, .9)], [round(pct(cq, q)) for q in (.5, .9)], pct([r[2] for r in grp], .5)))
    # paid fraction by host gap bucket
    for lo, hi in ((0, 10), (10, 15), (15, 20), (20, 30), (30, 60), (60, 1e9)):
        g = [r for r in rows if r[1] is not None and lo <= r[1] < hi]
        if g: print("     ret->rel in [%g,%g) us: %d steps, %d paid" % (lo, hi, len(g), sum(r[0] > 380 for r in g)))
print("paid by rel->copy queued (host):")
for p in sys.argv[1:]:
    br, cp = load(p)
    starts = [c[0] for c in cp]
    rows = []
    for b in br:
        if b["end"] != "released" or not b["stop"] or not b["rel"]: continue
        i = bisect.bisect_right(starts, b["stop"])
        if i >= len(cp): continue
        d = (cp[i][0] - b["stop"]) / 1e3
        if d > 3000: continue
        rows.append((d, (cp[i][1] - b["rel"]) / 1e3))
    out = []
    for lo, hi in ((0, 10), (10, 15), (15, 20), (20, 25), (25, 30), (30, 40), (40, 60), (60, 100), (100, 1e9)):
        g = [r for r in rows if lo <= r[1] < hi]
        out.append("[%g,%g): %d/%d" % (lo, hi, sum(r[0] > 380 for r in g), len(g)))
    print(" ", p.split("/")[-1], "  ".join(out))
