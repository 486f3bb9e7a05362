#!/usr/bin/env python3
"""The cost of counting GPU memory, from tests/gpu/mem.sh's churn lines.

Usage: memchurn.py FILE [SCALE]

FILE holds lines "round=R ARM SECONDS LOOP,LOOP,..." (ARM: plain, no nvtaskset; none,
nvtaskset without --mem; limit, with --mem), each a fresh process's median loop and its loops.
Prints the "mem: churn" summary lines, then the verdict, and exits 0 where counting costs at
most 1 % beyond what the run tells from nothing, 1 where it costs more or the data are too few.

A process's loops sit at one of two levels ~30-40 % apart for its whole life (its own mode, in
every arm), so one round's paired ratio lies anywhere between 0.76 and 1.5 and a median of 9
such ratios moves by several per cent between runs of one tree. The verdict reads instead each
arm's first decile of all its loops (the fast level, reached by most processes) and compares
limit with none; the same figure for none against plain, two arms that count nothing, is the
run's own noise floor, which the bound allows beside the 1 %.

SCALE (a planted fault, for the test of this script): the limit arm's loops multiplied by it.
"""
import statistics
import sys

ARMS = ("plain", "none", "limit")
MIN_LOOPS = 20


def read(path, scale):
    medians, loops = {}, {}
    for line in open(path):
        w = line.split()
        if len(w) < 4 or not w[0].startswith("round=") or w[1] not in ARMS:
            continue
        try:
            r = int(w[0][6:])
            k = scale if w[1] == "limit" else 1.0
            got = [float(x) * k for x in w[3].split(",")]
            medians.setdefault(r, {})[w[1]] = float(w[2]) * k
        except ValueError:
            continue
        loops.setdefault(r, {})[w[1]] = got
    return medians, loops


def summary(medians, loops):
    full = [r for r in sorted(medians) if len(medians[r]) == 3 and len(loops.get(r, {})) == 3]
    for arm in ARMS:
        v = [medians[r][arm] for r in full]
        if v:
            print(f"mem: churn {arm} median={statistics.median(v):.4f}s spread {min(v):.4f}-{max(v):.4f}s")
    fastest = {r: {a: min(loops[r][a]) for a in ARMS} for r in full}
    for what, d in (("", medians), ("fastest loops ", fastest)):
        for a, b in (("limit", "none"), ("limit", "plain"), ("none", "plain")):
            v = sorted(d[r][a] / d[r][b] for r in full)
            if v:
                q = statistics.quantiles(v, n=4) if len(v) > 1 else [v[0]] * 3
                print(f"mem: churn {what}paired {a}/{b} median={statistics.median(v):.4f} "
                      f"spread {v[0]:.4f}-{v[-1]:.4f} middle half {q[0]:.4f}-{q[2]:.4f} rounds={len(v)}")


def verdict(loops):
    pooled = {a: sorted(x for r in loops.values() for x in r.get(a, [])) for a in ARMS}
    short = [a for a in ARMS if len(pooled[a]) < MIN_LOOPS]
    if short:
        print(f"mem: churn too few loops in {', '.join(short)} (at least {MIN_LOOPS} each)")
        return False
    p10 = {a: statistics.quantiles(pooled[a], n=10)[0] for a in ARMS}
    cost = p10["limit"] / p10["none"]
    floor = abs(p10["none"] / p10["plain"] - 1)
    bound = 1.01 + floor
    print(f"mem: churn first deciles plain={p10['plain']:.4f}s none={p10['none']:.4f}s "
          f"limit={p10['limit']:.4f}s: limit/none {cost:.4f}, none/plain {p10['none'] / p10['plain']:.4f}, "
          f"bound {bound:.4f} (1.01 and the noise floor {floor:.4f})")
    return cost <= bound


def main():
    if len(sys.argv) not in (2, 3):
        sys.exit("usage: memchurn.py FILE [SCALE]")
    medians, loops = read(sys.argv[1], float(sys.argv[2]) if len(sys.argv) == 3 else 1.0)
    summary(medians, loops)
    sys.exit(0 if verdict(loops) else 1)


if __name__ == "__main__":
    main()
