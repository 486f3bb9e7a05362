#!/usr/bin/env python3
"""The eager kind's steps (PRIO_STEP_TRACE's files, one directory): per configuration, the first
step's and the later steps' p50/p90(/p99) in us. Usage: steps.py DIR"""
import glob
import sys


def q(v, p):
    return sorted(v)[int(p * (len(v) - 1))]


for f in sorted(glob.glob(sys.argv[1] + "/steps-*.txt")):
    rows = [list(map(int, line.split()[1:])) for line in open(f) if line.startswith("eager")]
    first = [r[0] / 1e3 for r in rows]
    later = [x / 1e3 for r in rows for x in r[1:]]
    print("%-28s %4d requests  first p50/p90 %4.0f/%4.0f  later p50/p90/p99 %4.0f/%4.0f/%4.0f" % (
        f.split("steps-")[1][:-4], len(rows), q(first, .5), q(first, .9), q(later, .5), q(later, .9), q(later, .99)))
