#!/usr/bin/env python3
"""e12pct.py RAW - run E12's L latencies by configuration, H and phase (0 periodic, 1 Poisson),
pooled over its two rounds: p50, p90, p95, p99 and the worst, in us (RAW: raw.tar.xz unpacked)."""
import os
import sys

raw = sys.argv[1]
for cfg, hs in (("prio-debug", ("torch", "llama")), ("prio-hold0", ("torch", "llama")),
                ("static", ("torch", "llama")), ("L-alone-whole", ("none",))):
    for h in hs:
        lat = {}
        for r in ("r1", "r2"):
            for line in open(os.path.join(raw, "%s.%s.%s" % (cfg, h, r), "l-torch.csv")):
                if line.startswith("#") or line.startswith("phase"):
                    continue
                p, _, v = line.strip().split(",")
                lat.setdefault(p, []).append(float(v))
        for p, v in sorted(lat.items()):
            v.sort()

            def q(x, v=v):
                return v[min(len(v) - 1, int(x * (len(v) - 1) + 0.5))]
            print("%-14s %-6s phase %s n=%d p50 %.0f p90 %.0f p95 %.0f p99 %.0f max %.0f"
                  % (cfg, h, p, len(v), q(.5), q(.9), q(.95), q(.99), v[-1]))
