#!/usr/bin/env python3
"""queued_trace.py CSV TRACE: for each queued one-step request of the decode-poisson phase (l-torch.csv),
the bridge of the wait before it (NVTASKSET_BRIDGE_TRACE): none, or how it ended, how long after the
wait's return the host released it, and how long the kernel lingered; split by whether the request paid."""
import sys, collections
csv, traces = sys.argv[1], sys.argv[2:]
names, rows = [], []
for line in open(csv):
    if line.startswith("# phase "):
        t = line.split(); names.append((t[2], int(t[3])))
    elif line[0].isdigit():
        i, s, l = line.strip().split(","); rows.append((int(i), float(s), float(l)))
br = []
for line in (l for t in traces for l in open(t)):
    if line.startswith("bridge "):
        kv = dict(x.split("=", 1) for x in line.split()[1:])
        br.append({k: (int(v) if v.isdigit() else v) for k, v in kv.items()})
br.sort(key=lambda b: b["ret"] or 0)
rets = [b["ret"] for b in br]
import bisect
for pi, (name, begin) in enumerate(names):
    if not name.startswith("decode-poisson"):
        continue
    prev_done, stats = None, collections.Counter()
    detail = []
    for i, s, l in rows:
        if i != pi or l < 0:
            continue
        arr = begin + s * 1000; done = arr + l * 1000
        if prev_done is not None and arr < prev_done:
            own = (done - prev_done) / 1000
            paid = own > 450
            k = bisect.bisect_left(rets, prev_done - 200000)
            cand = [b for b in br[k:k + 5] if b["ret"] and abs(b["ret"] - prev_done) < 200000]
            if not cand:
                key = "no bridge"
            else:
                b = cand[0]
                gap = (b["rel"] - b["ret"]) / 1000 if b["rel"] else -1
                held = (b["stop"] - b["saw_ret"]) / 1000 if b["saw_ret"] and b["stop"] else -1
                key = "%s" % b["end"]
                detail.append((paid, b["end"], round(gap, 1), round(held, 1)))
            stats[(paid, key)] += 1
        prev_done = done
    print(name, dict(stats))
    for d in sorted(detail)[:80]:
        print("  paid=%d end=%s host_gap_us=%s held_after_ret_us=%s" % d)
