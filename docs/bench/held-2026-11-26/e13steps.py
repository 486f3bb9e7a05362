#!/usr/bin/env python3
"""e13steps.py FILE... - run E13's step traces (PRIO_STEP_TRACE: one request a line, "eager" then
each step's time in ns): per file, the requests' first and later steps' percentiles and the
three slowest requests' steps, in us."""
import sys

for f in sys.argv[1:]:
    rows = [[int(x) / 1000 for x in w[1:]] for w in (line.split() for line in open(f)) if w and w[0] == "eager"]
    later = sorted(x for r in rows for x in r[1:])
    first = sorted(r[0] for r in rows)

    def q(v, p):
        return v[min(len(v) - 1, int(p * (len(v) - 1) + 0.5))]
    print("%s: %d requests; first step p50 %.0f p99 %.0f; later steps p50 %.0f p90 %.0f p99 %.0f"
          % (f, len(rows), q(first, .5), q(first, .99), q(later, .5), q(later, .9), q(later, .99)))
    for r in sorted(rows, key=sum)[-3:]:
        print("  %.0f: %s" % (sum(r), " ".join("%.0f" % x for x in r)))
