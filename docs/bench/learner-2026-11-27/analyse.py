"""analyse.py - run L1's numbers from its files: python3 analyse.py [DIR] (this directory).

Per configuration and round (steps.tar.xz: each request's step times on the service's clock),
the request's p50 and p90 and the later steps' p50; per traced process (bridge-waits.txt.xz:
head.PID is HEAD's learner, var.PID the variant's), the later steps by the way their bridge went
and how many requests were released all through."""
import io
import lzma
import os
import sys
import tarfile


def q(v, p):
    v = sorted(v)
    return v[min(len(v) - 1, int(len(v) * p))]


def main(d):
    tar = tarfile.open(os.path.join(d, "steps.tar.xz"))
    print("configuration, round: request p50 / p90 (us), later steps p50 (us)")
    for m in sorted(tar.getmembers(), key=lambda m: m.name):
        if not m.isfile():
            continue
        rows = [list(map(int, line.split()[1:])) for line in io.TextIOWrapper(tar.extractfile(m))
                if line.startswith("eager")]
        tot = [sum(r) / 1000 for r in rows]
        later = [s / 1000 for r in rows for s in r[1:]]
        print("  %-40s %5.0f / %5.0f  %4.0f" % (os.path.basename(m.name), q(tot, .5), q(tot, .9), q(later, .5)))
    waits = {}
    for line in lzma.open(os.path.join(d, "bridge-waits.txt.xz"), "rt"):
        tag, ret, way = line.split()
        waits.setdefault(tag, []).append((int(ret), way))
    for tag, w in sorted(waits.items()):
        by, reqs, cur, started = {"held": [], "released": []}, [], "", False
        for (a, _), (b, way) in zip(w, w[1:]):
            us = (b - a) / 1000
            if us >= 3000:  # a new request (the first is the end of the warm-up)
                started = True
                reqs.append(cur)
                cur = way[0]
                continue
            cur += way[0]
            if started and len(cur) <= 8:
                by[way].append(us)
        full = [r for r in reqs if len(r) == 8]
        print("%s: later steps held p50 %.0f us (%d), released p50 %.0f us (%d); later steps released %.3f; "
              "requests released all through %d of %d" %
              (tag, q(by["held"], .5), len(by["held"]), q(by["released"], .5), len(by["released"]),
               sum(r[1:].count("r") for r in full) / (7.0 * len(full)), sum(r[1:] == "r" * 7 for r in full), len(full)))


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else os.path.dirname(os.path.abspath(__file__)))
