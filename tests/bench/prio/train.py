"""train.py - the neighbour H of the priorities benchmark: a PyTorch training loop.

    python3 train.py STOP READY OUT_PREFIX

Each step: a linear layer's forward and backward pass as three bf16 N x N x N matmuls
(Y = X W, dW = X^T dY, dX = dY W^T; N = PRIO_GEMM_N, 8192), then an optimizer-like,
memory-bound update of PRIO_UPDATE_MIB (1024) MiB of fp32 parameters (SGD with momentum:
buf = 0.9 buf + grad, p -= lr buf, three elementwise kernels; grad bf16), and one
synchronise (the loss's .item()): its run-ahead is one step. Until the file STOP exists;
writes READY after five steps; writes OUT_PREFIX.steps (priolib: CLOCK_MONOTONIC ns of each
step's end).
"""
import os
import sys
import time

import torch


def main():
    if len(sys.argv) != 4:
        sys.exit("usage: train.py STOP READY OUT_PREFIX")
    stop, ready, prefix = sys.argv[1:4]
    n = int(os.environ.get("PRIO_GEMM_N", "8192"))
    elems = int(os.environ.get("PRIO_UPDATE_MIB", "1024")) * (1 << 20) // 4
    g = torch.Generator(device="cuda").manual_seed(0)
    bf = dict(device="cuda", dtype=torch.bfloat16, generator=g)
    x, w, dy = (torch.randn(n, n, **bf) for _ in range(3))
    params = torch.randn(elems, device="cuda", dtype=torch.float32, generator=g)
    buf = torch.zeros_like(params)
    grad = torch.randn(elems, **bf)
    ends = []
    while not os.path.exists(stop):
        y = x @ w
        dw = x.t() @ dy
        dx = dy @ w.t()
        buf.mul_(0.9).add_(grad)
        params.add_(buf, alpha=-1e-6)
        (y[0, 0] + dw[0, 0] + dx[0, 0] + params[0]).item()
        ends.append(time.monotonic_ns())
        if len(ends) == 5:
            open(ready, "w").close()
    with open(prefix + ".steps", "w") as f:
        f.write("# h impl=torch n=%d update_mib=%d\n" % (n, elems * 4 >> 20))
        f.write("".join("%d\n" % t for t in ends))


if __name__ == "__main__":
    main()
