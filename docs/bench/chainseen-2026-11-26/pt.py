# PyTorch eager step probe: steps of K small ops (GAP_US of host spin before each) and a
# synchronise; prints the median and p90 of a step (us).
import sys, time, torch
steps, k, gap = int(sys.argv[1]), int(sys.argv[2]), float(sys.argv[3]) * 1e-6
x = torch.ones(4096, device="cuda")
torch.cuda.synchronize()
v = []
for s in range(steps + 100):
    t0 = time.perf_counter()
    for i in range(k):
        if gap:
            e = time.perf_counter() + gap
            while time.perf_counter() < e:
                pass
        x = x * 1.0001 + 0.5
    torch.cuda.current_stream().synchronize()
    if s >= 100:
        v.append((time.perf_counter() - t0) * 1e6)
v.sort()
print("step_us p50 %.1f p90 %.1f" % (v[len(v) // 2], v[int(len(v) * 0.9)]))
