"""steps.py TRACE - a bridge trace's waits (NVTASKSET_BRIDGE_TRACE) by their place in the
request (seq mod 8): how many, the median and the longest time from the wait's return before to
this one's (us), and how each bridge ended."""
import statistics
import sys

rows = [dict(kv.split("=", 1) for kv in l.split()[1:]) for l in open(sys.argv[1]) if l.startswith("bridge ")]
by, ends = {}, {}
for a, b in zip(rows, rows[1:]):
    by.setdefault(int(b["seq"]) % 8, []).append((int(b["ret"]) - int(a["ret"])) / 1e3)
for r in rows:
    key = (int(r["seq"]) % 8, r["end"])
    ends[key] = ends.get(key, 0) + 1
for k in sorted(by):
    print("seq mod 8 = %d: %d waits, %.0f us median, %.0f longest; ended: %s" % (
        k, len(by[k]), statistics.median(by[k]), max(by[k]),
        ", ".join("%s %d" % (e, n) for (m, e), n in sorted(ends.items()) if m == k)))
