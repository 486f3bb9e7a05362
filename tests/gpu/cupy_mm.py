# CuPy under nvtaskset: a float32 matmul is correct and timed.
import sys, time, cupy as cp, numpy as np
rs = np.random.default_rng(0)
a = rs.standard_normal((4096, 4096), dtype=np.float32)
b = rs.standard_normal((4096, 4096), dtype=np.float32)
ga, gb = cp.asarray(a), cp.asarray(b)
c = (ga @ gb).get()
ref = a[:64].astype(np.float64) @ b.astype(np.float64)
err = float(np.linalg.norm(c[:64] - ref) / np.linalg.norm(ref))
for _ in range(3):
    ga @ gb
cp.cuda.Device().synchronize()
t = time.perf_counter()
for _ in range(20):
    ga @ gb
cp.cuda.Device().synchronize()
ms = (time.perf_counter() - t) / 20 * 1e3
print("cupy_ok=%d rel_err=%.2e ms=%.3f" % (err < 1e-3, err, ms))
sys.exit(0 if err < 1e-3 else 1)
