#!/usr/bin/env python3
"""batchoff.py DIR PHASE... - for each timeline phase in DIR (tests/bench/timeline/run.sh's output),
the fraction of the service's span on the GPU (its first kernel's start to its last kernel's end)
during which the batch's context was off the GPU (the union of its watchers' gaps, analyze.py's)."""
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "../../../tests/bench/timeline"))
import analyze as A  # noqa: E402

d = sys.argv[1]
for ph in sys.argv[2:]:
    _, _, rows = A.read_svc(os.path.join(d, ph + ".svc"))
    gaps, _ = A.read_gaps(os.path.join(d, ph + ".batch"))
    t0, t1 = min(rows[0][6::2]), max(rows[-1][7::2])
    off = sum(max(0, min(b, t1) - max(a, t0)) for a, b, _, _ in A.merge(gaps or []))
    print("%-26s batch off %.3f of %.2f s" % (ph, off / (t1 - t0), (t1 - t0) / 1e9))
