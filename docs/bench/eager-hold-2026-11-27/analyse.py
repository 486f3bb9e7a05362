"""analyse.py - run R2's numbers from its files: python3 analyse.py DIR (this directory).

Per configuration (both rounds), the median time of each step of a request (steps/, the
service's own clock); per default process (bridge-waits.txt.xz, the bridge trace's waits), the
later steps by the way their bridge went (held, released: a try of the learner) and how
often requests had a try."""
import glob
import lzma
import os
import sys


def steps(path):
    return [list(map(int, line.split()[1:])) for line in open(path) if line.startswith("eager")]


def med(v):
    v = sorted(v)
    return v[len(v) // 2]


def main(d):
    print("median step (us), steps 1-8 of a request, both rounds:")
    for name in ("L-alone-whole", "static", "prio-trace", "prio-hold0", "prio-hold1"):
        rows = []
        for f in sorted(glob.glob(os.path.join(d, "steps", "steps-%s.*.txt" % name))):
            rows += steps(f)
        print("  %-14s %s" % (name, " ".join("%4d" % (med(c) // 1000) for c in zip(*rows))))
    waits = {}
    for line in lzma.open(os.path.join(d, "bridge-waits.txt.xz"), "rt"):
        pid, ret, way = line.split()
        waits.setdefault(pid, []).append((int(ret), way))
    for pid, w in sorted(waits.items()):
        by, reqs, cur = {"held": [], "released": []}, [], ""
        for (a, _), (b, way) in zip(w, w[1:]):
            us = (b - a) / 1000
            if us >= 3000:  # a new request
                reqs.append(cur)
                cur = way[0]
                continue
            cur += way[0]
            if len(cur) <= 8:
                by[way].append(us)
        full = [r for r in reqs if len(r) == 8]
        print("default, pid %s: later steps held p50 %.0f us (%d), released p50 %.0f us (%d); "
              "requests with a released later step %.2f, later steps released %.3f" %
              (pid, med(by["held"]), len(by["held"]), med(by["released"]), len(by["released"]),
               sum("r" in r[1:] for r in full) / len(full), sum(r[1:].count("r") for r in full) / (7.0 * len(full))))


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else os.path.dirname(os.path.abspath(__file__)))
