"""hsplit.py - neighbour H: train.py's step (three bf16 8192^3 matmuls and a 1 GiB update)
with each matmul split into SPLIT row blocks (SPLIT separate GEMM kernels, each a persistent
cuBLAS kernel of 1/SPLIT of the work). python3 hsplit.py STOP READY OUT.steps"""
import os, sys, time
import torch
stop, ready, outp = sys.argv[1:4]
k = int(os.environ.get("SPLIT", "8"))
n = 8192
elems = 1024 * (1 << 20) // 4
g = torch.Generator(device="cuda").manual_seed(0)
bf = dict(device="cuda", dtype=torch.bfloat16, generator=g)
x, w, dy = (torch.randn(n, n, **bf) for _ in range(3))
xt, wt = x.t().contiguous(), w.t().contiguous()
params = torch.randn(elems, device="cuda", dtype=torch.float32, generator=g)
buf = torch.zeros_like(params)
grad = torch.randn(elems, **bf)
y, dw, dx = (torch.empty(n, n, device="cuda", dtype=torch.bfloat16) for _ in range(3))
r = n // k
def mm(a, b, out):
    for i in range(k):
        torch.matmul(a[i * r:(i + 1) * r], b, out=out[i * r:(i + 1) * r])
# bit-identical to the unsplit products?
ref = x @ w
mm(x, w, y)
same = bool(torch.equal(ref, y))
print("split %d: identical to the unsplit matmul: %s" % (k, same), flush=True)
del ref
ends = []
while not os.path.exists(stop):
    mm(x, w, y)
    mm(xt, dy, dw)
    mm(dy, wt, dx)
    buf.mul_(0.9).add_(grad)
    params.add_(buf, alpha=-1e-6)
    (y[0, 0] + dw[0, 0] + dx[0, 0] + params[0]).item()
    ends.append(time.monotonic_ns())
    if len(ends) == 5:
        open(ready, "w").close()
open(outp, "w").write("".join("%d\n" % t for t in ends))
