"""tslib.py - what the time-slicing probes (probe.py, preempt.py) share: waiting for a file a
program writes when ready, and a percentile."""
import os
import time


def wait_file(p, t, proc=None):
    """Waits up to t seconds for file p; False at once if proc ends first."""
    end = time.time() + t
    while time.time() < end:
        if os.path.exists(p):
            return True
        if proc is not None and proc.poll() is not None:
            return False
        time.sleep(0.05)
    return False


def pct(v, q):
    """The q-quantile of v (nearest rank below)."""
    v = sorted(v)
    return v[min(len(v) - 1, int(q * len(v)))]
