"""priolib.py - what the priorities benchmark's programs share: the plan of L's
phases (arrival times), L's request loop and output, H's step file, and the
statistics. Pure Python (no numpy): it runs on the GPU machine and here alike.

Plan file (prio.py writes it, service.py / service.cu / fake.py read it; text):
    plan GAP_NS NPHASES
    phase LABEL KIND ARRIVAL DUTY DURATION_NS COUNT
    OFFSET_NS            (COUNT lines: each request's arrival after the phase's start)
    ...
KIND is one of KINDS: decode, prefill, tbt (token by token: TBT_STEPS decode steps, each
synchronised), tbtsync (tbt, each step's replay waited for by torch.cuda.synchronize()), tbtpoll
(tbt, each step's token copied to the host and an event after it polled until done), tbtsleep
(tbtpoll, sleeping 0.4 ms between its queries), tbt7b
(the same, steps of a 7B-sized decode), async (TBT_STEPS steps, each
queued before the previous token is read), asyncside (async, its copies on a stream of their
own), generate (a Hugging Face generate()), eager (TBT_STEPS steps of a small model launched
op by op, each synchronised: a host-bound policy).
ARRIVAL is periodic, poisson or closed (back to back for DURATION_NS, COUNT 0).

L's output (l-IMPL.csv):
    # l impl=IMPL
    # service_us KIND=US ...          (measured=1 where this process measured them)
    # phase LABEL BEGIN_NS END_NS SERVED DROPPED   (CLOCK_MONOTONIC)
    phase,sched_us,lat_us
    I,SCHED_US,LAT_US     (SCHED_US: scheduled arrival after BEGIN; LAT_US: completion -
                           scheduled arrival; negative: dropped at the phase's deadline,
                           its absolute value a lower bound)
H's output (h.steps): comment lines "#", then per line "NS" (one step ended at NS,
CLOCK_MONOTONIC) or "NS K" (K steps ended by NS: a loop that synchronises every K steps;
K = 0 marks the start of the measured loop).
"""
import math
import os
import random
import time
import zlib

KINDS = ("decode", "prefill", "tbt", "tbtsync", "tbtpoll", "tbtsleep", "tbt7b", "async", "asyncside", "generate", "eager")
TBT_STEPS = 8  # a token-by-token request (tbt, tbtsync, tbtpoll, tbtsleep, tbt7b, async, asyncside, eager; generate's new tokens): this many steps
ARRIVALS = ("periodic", "poisson")


def label(kind, arrival, duty):
    return "%s-%s-%d" % (kind, arrival, duty)


def per_kind(value, kind, default):
    """value: one for every kind, or a dict kind -> value (default where a kind is missing)."""
    return value.get(kind, default) if isinstance(value, dict) else value


def make_plan(kinds, arrivals, duties, service_us, phase_s, seed=1, min_requests=0):
    """Phases per kind: the open-loop ones (periodic, then poisson, duties ascending), then the
    closed loop (duty 100) once. Mean period = service time / duty. Poisson gaps come from a
    generator seeded by the phase's name, so every configuration sees the same arrivals. An
    open-loop phase lasts phase_s, or min_requests mean periods where that is longer, and
    holds at least min_requests requests (Poisson: it lasts until the last of them arrives).
    arrivals and min_requests: one for every kind, or a dict per kind (missing: none, 0)."""
    phases = []
    for kind in kinds:
        svc_ns = service_us[kind] * 1e3
        least = per_kind(min_requests, kind, 0)
        for arrival in per_kind(arrivals, kind, ()):
            for duty in sorted(d for d in duties if d < 100):
                period = svc_ns * 100.0 / duty
                dur = max(int(phase_s * 1e9), int(math.ceil(least * period)))
                if arrival == "periodic":
                    offs = [int(k * period) for k in range(int(math.ceil(dur / period)))]
                else:
                    rng = random.Random(zlib.crc32(label(kind, arrival, duty).encode()) ^ seed)
                    offs, t = [], rng.expovariate(1.0 / period)
                    while t < dur or len(offs) < least:
                        offs.append(int(t))
                        t += rng.expovariate(1.0 / period)
                    dur = max(dur, offs[-1] + 1 if offs else 0)
                phases.append((label(kind, arrival, duty), kind, arrival, duty, dur, offs))
        if 100 in duties:
            phases.append((label(kind, "closed", 100), kind, "closed", 100, int(phase_s * 1e9), []))
    return phases


def write_plan(path, phases, gap_s):
    lines = ["plan %d %d" % (int(gap_s * 1e9), len(phases))]
    for lab, kind, arrival, duty, dur, offs in phases:
        lines.append("phase %s %s %s %d %d %d" % (lab, kind, arrival, duty, dur, len(offs)))
        lines.extend(str(o) for o in offs)
    # Whole or not at all: the service reads it as soon as the name exists.
    with open(path + ".tmp", "w") as f:
        f.write("\n".join(lines) + "\n")
    os.rename(path + ".tmp", path)


def read_plan(path):
    with open(path) as f:
        tok = f.read().split()
    if tok[0] != "plan":
        raise ValueError("%s: not a plan" % path)
    gap, n, i, phases = int(tok[1]), int(tok[2]), 3, []
    for _ in range(n):
        if tok[i] != "phase":
            raise ValueError("%s: phase expected at token %d" % (path, i))
        lab, kind, arrival, duty, dur, cnt = tok[i + 1:i + 7]
        i += 7
        cnt = int(cnt)
        phases.append((lab, kind, arrival, int(duty), int(dur), [int(x) for x in tok[i:i + cnt]]))
        i += cnt
    return gap, phases


def sleep_until(t_ns):
    """Sleep to within a millisecond, then spin: a late wake-up would count as L's latency."""
    d = t_ns - time.monotonic_ns()
    if d > 1500000:
        time.sleep((d - 1000000) / 1e9)
    while time.monotonic_ns() < t_ns:
        pass


STARTS = []  # (phase index, us from a request's arrival to its start): the host's share


def run_phases(gap_ns, phases, requests, announce):
    """Runs the plan: requests[kind]() serves one request (returns when it completed).
    announce(label, begin_ns) is called as a phase is about to start. Open loop: a request
    starts at its arrival or when the one before it completed, whichever is later; those not
    started by the deadline (the phase's length and half again, plus 0.2 s) are dropped.
    Returns [(label, begin, end, rows)] with rows [(sched_us, lat_us)]."""
    out, prev_end = [], time.monotonic_ns()
    for lab, kind, arrival, duty, dur, offs in phases:
        req = requests[kind]
        begin = max(prev_end, time.monotonic_ns()) + gap_ns
        announce(lab, begin)
        rows = []
        if arrival == "closed":
            sleep_until(begin)
            end_at = begin + dur
            while True:
                s = time.monotonic_ns()
                if s >= end_at:
                    break
                req()
                rows.append(((s - begin) / 1e3, (time.monotonic_ns() - s) / 1e3))
        else:
            deadline = begin + dur + dur // 2 + 200000000
            for k, off in enumerate(offs):
                sched = begin + off
                now = time.monotonic_ns()
                if now < sched:
                    sleep_until(sched)
                elif now > deadline:
                    rows.extend((o / 1e3, -(now - begin - o) / 1e3) for o in offs[k:])
                    break
                started = time.monotonic_ns()
                req()
                rows.append((off / 1e3, (time.monotonic_ns() - sched) / 1e3))
                STARTS.append((len(out), (started - sched) / 1e3))
        prev_end = time.monotonic_ns()
        out.append((lab, begin, prev_end, rows))
    return out


def write_l(path, impl, service_us, measured, results):
    with open(path, "w") as f:
        f.write("# l impl=%s\n" % impl)
        f.write("# service_us %s measured=%d\n" % (
            " ".join("%s=%.1f" % kv for kv in sorted(service_us.items())), int(measured)))
        for lab, begin, end, rows in results:
            dropped = sum(1 for r in rows if r[1] < 0)
            f.write("# phase %s %d %d %d %d\n" % (lab, begin, end, len(rows) - dropped, dropped))
        f.write("phase,sched_us,lat_us\n")
        for i, (_, _, _, rows) in enumerate(results):
            f.write("".join("%d,%.1f,%.1f\n" % (i, s, l) for s, l in rows))
    # When each request started after its arrival: a late start is the host's doing (or a
    # request before it still running), not the GPU's.
    with open(path + ".start", "w") as f:
        f.write("".join("%d,%.1f\n" % st for st in STARTS))


def read_l(path):
    """Returns (service_us, phases): phases = [dict(label, begin, end, lat=[us...],
    dropped=N)] in file order; a dropped request's latency is its lower bound."""
    service, phases = {}, []
    with open(path) as f:
        for line in f:
            if line.startswith("# service_us "):
                for kv in line.split()[2:]:
                    k, v = kv.split("=")
                    if k != "measured":
                        service[k] = float(v)
            elif line.startswith("# phase "):
                _, _, lab, b, e, _, d = line.split()
                phases.append({"label": lab, "begin": int(b), "end": int(e), "lat": [],
                               "dropped": int(d)})
            elif line[:1].isdigit():
                i, _, lat = line.split(",")
                phases[int(i)]["lat"].append(abs(float(lat)))
    return service, phases


def read_steps(path):
    """H's steps: [(ns, cumulative steps ended by then)], in time order; one point per time."""
    points, n = [], 0
    with open(path) as f:
        for line in f:
            w = line.split()
            if not w or w[0].startswith("#"):
                continue
            t, k = int(w[0]), int(w[1]) if len(w) > 1 else 1
            if k < 0 or (points and t < points[-1][0]):
                raise ValueError("%s: bad line %r" % (path, line))
            n += k
            if points and points[-1][0] == t:
                points[-1] = (t, n)
            else:
                points.append((t, n))
    return points


def steps_at(points, t):
    """Cumulative steps at time t: linear between the recorded points (a loop that
    synchronises every K steps records every K-th step's end), 0 before the first point,
    the last count after the last."""
    if not points or t < points[0][0]:
        return 0.0
    lo, hi = 0, len(points) - 1
    if t >= points[hi][0]:
        return float(points[hi][1])
    while hi - lo > 1:  # points[lo][0] <= t < points[hi][0]
        mid = (lo + hi) // 2
        if points[mid][0] <= t:
            lo = mid
        else:
            hi = mid
    (t0, n0), (t1, n1) = points[lo], points[hi]
    return n0 + (n1 - n0) * (t - t0) / float(t1 - t0)


def steps_in(points, begin, end):
    """Steps per second in [begin, end] (CLOCK_MONOTONIC ns), from steps_at: for a loop that
    records every step's end, the steps that ended inside, the edges' steps in part."""
    if end <= begin:
        return float("nan")
    return (steps_at(points, end) - steps_at(points, begin)) / ((end - begin) / 1e9)


def percentile(xs, q):
    """Linear interpolation between closest ranks (numpy's default)."""
    if not xs:
        return float("nan")
    s = sorted(xs)
    pos = q / 100.0 * (len(s) - 1)
    lo = int(math.floor(pos))
    hi = min(lo + 1, len(s) - 1)
    return s[lo] + (s[hi] - s[lo]) * (pos - lo)


def parse_label(lab):
    kind, arrival, duty = lab.split("-")
    return kind, arrival, int(duty)
