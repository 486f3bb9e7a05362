"""ctxsync.py - token-by-token steps waited for by the stream or by the context.

    python3 ctxsync.py serve MODE N    N requests every 10 ms of 8 steps (16 bf16 4096^2 layers at
                                       batch 1, one CUDA graph); each step waited for by MODE:
                                       stream (torch.cuda.current_stream().synchronize()), ctx
                                       (torch.cuda.synchronize()), poll / repoll (an event
                                       queried in a loop; recorded again before each query),
                                       sleeppoll (SLEEP seconds between its queries), item (the argmax read by .item():
                                       bench-prio's tbt) or ctxitem (ctx, then item: its tbtsync);
                                       prints request p50/p99, step p50/p90 (us); WARM=K: K
                                       steps of six 8192^3 GEMMs first (a warm-up of long steps),
                                       each waited for by torch.cuda.synchronize(); LAST=M: the
                                       steps of the last M requests only; LONG=K: every K-th
                                       step ends in a one-thread kernel of LONGCYC cycles (24e6:
                                       ~12 ms; torch.cuda._sleep), left out of the steps' figures
    python3 ctxsync.py batch STOP      8192^3 bf16 GEMMs until file STOP exists
"""
import os
import sys
import time

import torch

if sys.argv[1] == "batch":  # BATCH_N: the GEMMs' size; BATCH_SYNC=K: wait every K (0: never); BATCH_LOG: each wait's return
    bn, bk = int(os.environ.get("BATCH_N", "8192")), int(os.environ.get("BATCH_SYNC", "8"))
    a = torch.randn(bn, bn, device="cuda", dtype=torch.bfloat16)
    n, lg = 0, []
    while not os.path.exists(sys.argv[2]):
        c = a @ a
        n += 1
        if bk and n % bk == 0:
            torch.cuda.current_stream().synchronize()
            lg.append(time.monotonic_ns())
        elif not bk and n % 64 == 0:
            time.sleep(0)
    torch.cuda.synchronize()
    if os.environ.get("BATCH_LOG"):
        with open(os.environ["BATCH_LOG"], "w") as f:
            f.write("\n".join(map(str, lg)) + "\n")
    sys.exit(0)

mode, N = sys.argv[2], int(sys.argv[3])
ws = [torch.randn(4096, 4096, device="cuda", dtype=torch.bfloat16).mul_(4096 ** -0.5) for _ in range(16)]
x = torch.randn(1, 4096, device="cuda", dtype=torch.bfloat16)
s = torch.cuda.Stream()
with torch.cuda.stream(s):
    for _ in range(3):
        y = x
        for w in ws:
            y = torch.nn.functional.linear(y, w)
torch.cuda.synchronize()
g = torch.cuda.CUDAGraph()
with torch.cuda.graph(g):
    y = x
    for w in ws:
        y = torch.nn.functional.linear(y, w)
stream = torch.cuda.current_stream()
wait = stream.synchronize if mode == "stream" else torch.cuda.synchronize
if mode == "item":
    def wait():
        int(y.argmax().item())
elif mode in ("poll", "repoll"):
    ev = torch.cuda.Event()
    def wait():
        ev.record()
        while not ev.query():
            if mode == "repoll":
                ev.record()
elif mode == "sleeppoll":  # SLEEP: seconds between looks (0.0004)
    ev = torch.cuda.Event()
    nap = float(os.environ.get("SLEEP", "0.0004"))
    def wait():
        ev.record()
        while not ev.query():
            time.sleep(nap)
elif mode == "ctxitem":
    def wait():
        torch.cuda.synchronize()
        int(y.argmax().item())
big = torch.randn(8192, 8192, device="cuda", dtype=torch.bfloat16)
for _ in range(int(os.environ.get("WARM", "0"))):
    for _ in range(6):
        c = big @ big
    torch.cuda.synchronize()
last = int(os.environ.get("LAST", "0"))
longk, longcyc = int(os.environ.get("LONG", "0")), int(os.environ.get("LONGCYC", "24000000"))
req, steps = [], []
nxt = time.monotonic()
for i in range(N + 20):
    nxt += 0.010
    while time.monotonic() < nxt:
        pass
    t = [time.monotonic_ns()]
    longs = []
    for j in range(8):
        g.replay()
        if longk and (i * 8 + j) % longk == longk - 1:
            torch.cuda._sleep(longcyc)
            longs.append(j)
        wait()
        t.append(time.monotonic_ns())
    if i == 20:
        t_first = t[0]
    if i >= 20:
        req.append((t[-1] - t[0]) / 1e3)
    if i >= 20 and (not last or i >= N + 20 - last):
        steps += [(t[j + 1] - t[j]) / 1e3 for j in range(1, 8) if j not in longs]
req.sort()
steps.sort()
print("%s: request p50 %.0f p99 %.0f us, later steps p50 %.0f p90 %.0f us (%d requests)" % (
    mode, req[len(req) // 2], req[int(0.99 * (len(req) - 1))], steps[len(steps) // 2],
    steps[int(0.9 * (len(steps) - 1))], len(req)))
print("span %d %d" % (t_first, time.monotonic_ns()))
