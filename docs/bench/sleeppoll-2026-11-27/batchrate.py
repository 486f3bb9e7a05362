"""batchrate.py LOG T0 T1: GEMMs a second of ctxsync.py's batch (BATCH_LOG: a line per wait of 8)
between monotonic ns T0 and T1."""
import sys
ts = [int(x) for x in open(sys.argv[1]) if x.strip()]
t0, t1 = int(sys.argv[2]), int(sys.argv[3])
inw = [t for t in ts if t0 <= t <= t1]
print("%.1f" % ((len(inw) - 1) * 8 / ((inw[-1] - inw[0]) / 1e9)) if len(inw) > 2 else "n/a")
