#!/usr/bin/env python3
"""queued.py RAWDIR...: one-step requests (bench-prio's decode phases) split into fresh ones (started
at their arrival) and queued ones (arrived while the one before ran: started as it completed), with
each request's own time (completion - start) at p50 / p90 / p99, per configuration.
RAWDIR: bench-prio's raw/ folder (raw.tar.xz unpacked); reads CONFIG/l-torch.csv."""
import glob
import os
import sys


def q(a, p):
    a = sorted(a)
    return a[min(len(a) - 1, int(p * len(a)))] if a else float("nan")


def phases(path):
    names, rows = [], []
    for line in open(path):
        if line.startswith("# phase "):
            names.append(line.split()[2])
        elif line[0].isdigit():
            i, s, lat = line.strip().split(",")
            rows.append((int(i), float(s), float(lat)))
    return names, rows


for raw in sys.argv[1:]:
    for csv in sorted(glob.glob(os.path.join(raw, "*", "l-torch.csv"))):
        names, rows = phases(csv)
        for pi, name in enumerate(names):
            if not name.startswith("decode-"):
                continue
            prev, fresh, queued, lat = -1e18, [], [], []
            for i, s, l in rows:
                if i != pi or l < 0:
                    continue
                start = max(s, prev)
                (fresh if s >= prev else queued).append(s + l - start)
                prev = s + l
                lat.append(l)
            print("%-28s %-18s n=%3d p99 %5.0f | fresh n=%3d %4.0f/%4.0f/%4.0f | queued n=%3d %4.0f/%4.0f/%4.0f" % (
                os.path.basename(os.path.dirname(csv)), name, len(lat), q(lat, .99), len(fresh), q(fresh, .5),
                q(fresh, .9), q(fresh, .99), len(queued), q(queued, .5), q(queued, .9), q(queued, .99)))
