#!/usr/bin/env python3
"""analyze.py - the timeline of each phase of run.sh: where a service's step spends its time beside
a batch, from the stamps of tl.cu (service: host submit / return, each kernel's first CTA start and
last CTA end; batch: the gaps in its watchers' progress, i.e. when its context was off the GPU).

    python3 analyze.py DIR            # every DIR/PHASE.svc (and DIR/PHASE.batch) -> DIR/timeline.json, a table

Per step (us, medians and p90 over the phase's steps):
  submit->run  first CTA start - the host's submit (host time mapped to %globaltimer)
  run          the step on the GPU: last kernel's last CTA end - first CTA start
  end->return  the host's return from its wait - the last CTA's end
  step         the host's return - its submit (step_first: a request's first step; step_later: the
               others, whose submit follows the step before by the host's turnaround)
and, beside a batch whose gaps were recorded:
  submit->off  the batch stops (start of the gap that holds the step's first CTA) - the submit
  off->run     the service's first CTA - the batch stopping (the switch in)
  end->on      the batch running again - the service's last CTA end (the switch back)
  busy@submit  fraction of steps submitted while the batch was on the GPU
  off_spread   the spread of the batch's stop times over its watching SMs (timeline.json)
  ran@in       fraction of a request's later steps inside which the batch ran (its context
               switched in between the step's first CTA and its last)
Where the batch ran less than GAP_NS between two steps its gaps merge into one: submit->off, off->run
and end->on describe single-step requests (or a request's first step) exactly, later steps not.
A request's latency = its last step's return - its arrival: p50, p99.
"""
import glob, json, os, sys


def pct(v, q):
    if not v:
        return None
    v = sorted(v)
    return v[min(len(v) - 1, int(q * (len(v) - 1) + 0.5))]


def read_svc(path):
    hdr, cal, rows = {}, None, []
    for line in open(path):
        if line.startswith("# svc"):
            w = line.split()[2:]
            hdr = dict(zip(w[0::2], w[1::2]))
        elif line.startswith("# calib"):
            cal = [float(x) for x in line.split()[2:]]
        elif line.strip() and not line.startswith("#"):
            rows.append([int(x) for x in line.split()])
    return hdr, cal, rows


def read_gaps(path):
    if not os.path.exists(path):
        return None, ""
    gaps, head = [], ""
    for line in open(path):
        if line.startswith("#"):
            head = line.strip()
            continue
        sm, a, b = (int(x) for x in line.split())
        gaps.append((a, b, sm))
    return gaps, head


def merge(gaps):
    """Union of the watchers' gaps: intervals when some watcher was stopped, with per-interval
    the earliest and latest start (the spread of the stop over SMs)."""
    out = []
    for a, b, _ in sorted(gaps):
        if out and a <= out[-1][1]:
            o = out[-1]
            o[1] = max(o[1], b)
            if a - o[0] < 200000:  # a stop of the same switch on another SM
                o[3] = max(o[3], a)
        else:
            out.append([a, b, a, a])
    return out


def analyze(svcp):
    hdr, cal, rows = read_svc(svcp)
    off0, _, at0, off1, _, at1 = cal
    def h2g(h):
        if at1 == at0:
            return h + off0
        return h + off0 + (off1 - off0) * (h - at0) / (at1 - at0)
    gaps, ghead = read_gaps(svcp[:-4] + ".batch")
    iv = merge(gaps) if gaps else []
    starts = [i[0] for i in iv]
    import bisect
    def holding(t):
        k = bisect.bisect_right(starts, t) - 1
        if k >= 0 and iv[k][0] <= t <= iv[k][1]:
            return iv[k]
        return None
    def on_at(t):  # batch running at gpu time t (not inside a gap), within the batch's recorded span
        return holding(t) is None
    comp = {k: [] for k in ("submit_run", "run", "end_return", "step", "submit_off", "off_run", "end_on",
                            "off_spread", "step_first", "step_later")}
    busy_at_submit, ran_inside = [], []
    req_lat = {}
    nk = int(hdr.get("kernels", 1))
    span = (iv[0][0], iv[-1][1]) if iv else None
    for r in rows:
        req, k, arr, s0, s1, ret = r[:6]
        firsts, lasts = r[6::2][:nk], r[7::2][:nk]
        first, last = min(firsts), max(lasts)
        g0, gret = h2g(s0), h2g(ret)
        comp["submit_run"].append((first - g0) / 1e3)
        comp["run"].append((last - first) / 1e3)
        comp["end_return"].append((gret - last) / 1e3)
        comp["step"].append((ret - s0) / 1e3)
        comp["step_first" if k == 0 else "step_later"].append((ret - s0) / 1e3)
        req_lat[req] = max(req_lat.get(req, 0), (ret - arr) / 1e3)
        if iv and span[0] < g0 < span[1]:
            h = holding(first)
            busy_at_submit.append(0 if holding(g0) else 1)
            if k > 0:
                ran_inside.append(0 if h and h[1] >= last else 1)
            if h:
                comp["submit_off"].append((h[0] - g0) / 1e3)
                comp["off_run"].append((first - h[0]) / 1e3)
                comp["end_on"].append((h[1] - last) / 1e3)
                comp["off_spread"].append((h[3] - h[0]) / 1e3)
    # A phase with a batch (its log there) whose stamps are missing: the batch did not end in
    # time to write them (run.sh kills it 5 s after its stop); its columns say so, not "-".
    lost = gaps is None and os.path.exists(svcp[:-4] + ".blog")
    res = {"svc": hdr, "batch": ghead, "steps": len(rows), "requests": len(req_lat),
           "batch_lost": lost,
           "calib_drift_us": round((off1 - off0) / 1e3, 2), "calib_rtt_ns": [cal[1], cal[4]]}
    for k, v in comp.items():
        if v:
            res[k] = {"p50": round(pct(v, 0.5), 1), "p90": round(pct(v, 0.9), 1), "n": len(v)}
    if busy_at_submit:
        res["busy_at_submit"] = round(sum(busy_at_submit) / len(busy_at_submit), 3)
    if ran_inside:
        res["ran_inside_later"] = round(sum(ran_inside) / len(ran_inside), 3)
    lat = list(req_lat.values())
    res["req_p50_us"] = round(pct(lat, 0.5), 1)
    res["req_p99_us"] = round(pct(lat, 0.99), 1)
    if iv:
        tot = sum(b - a for a, b, _, _ in iv)
        res["batch_off_intervals"] = len(iv)
        res["batch_off_us_median"] = round(pct([(b - a) / 1e3 for a, b, _, _ in iv], 0.5), 1)
    return res


def main():
    d = sys.argv[1]
    out = {}
    for p in sorted(glob.glob(os.path.join(d, "*.svc"))):
        name = os.path.basename(p)[:-4]
        try:
            out[name] = analyze(p)
        except Exception as e:  # a phase that failed is named, the rest still reported
            out[name] = {"error": repr(e)}
    json.dump(out, open(os.path.join(d, "timeline.json"), "w"), indent=1)
    cols = ["step_first", "step_later", "submit_run", "run", "end_return", "step", "submit_off", "off_run",
            "end_on"]
    print("%-22s %9s %9s " % ("phase", "req_p50", "req_p99") + " ".join("%11s" % c for c in cols) + "  busy@sub ran@in")
    for n, r in out.items():
        if "error" in r:
            print("%-22s %s" % (n, r["error"]))
            continue
        cells = []
        for c in cols:
            v = r.get(c)
            cells.append("%5.0f/%-5.0f" % (v["p50"], v["p90"]) if v else "%11s" % "-")
        print("%-22s %9.0f %9.0f " % (n, r["req_p50_us"], r["req_p99_us"]) + " ".join(cells) +
              "  %s %s" % (r.get("busy_at_submit", "-"), r.get("ran_inside_later", "-")) +
              ("  (the batch's stamps were lost: it did not end in time)" if r.get("batch_lost") else ""))


if __name__ == "__main__":
    main()
