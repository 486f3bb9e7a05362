"""gemm.py - the GEMM training loop H of the priorities benchmark (issue 26).

    python3 gemm.py N STOP READY OUT_PREFIX

Each step is a linear layer's forward and backward pass as three bf16 N x N x N
matmuls (Y = X W, dW = X^T dY, dX = dY W^T) and one synchronise (the loss's
.item()): its run-ahead is one step. Until the file STOP exists; writes READY
after three steps; writes OUT_PREFIX.steps (CLOCK_MONOTONIC ns at each step's
end, "# flop_per_step=F").
"""
import os
import sys
import time

import torch


def main():
    n, stop, ready, prefix = int(sys.argv[1]), sys.argv[2], sys.argv[3], sys.argv[4]
    g = torch.Generator(device="cuda").manual_seed(0)
    x = torch.randn(n, n, device="cuda", dtype=torch.bfloat16, generator=g)
    w = torch.randn(n, n, device="cuda", dtype=torch.bfloat16, generator=g)
    dy = torch.randn(n, n, device="cuda", dtype=torch.bfloat16, generator=g)
    ends = []
    step = 0
    while not os.path.exists(stop):
        y = x @ w
        dw = x.t() @ dy
        dx = dy @ w.t()
        (y[0, 0] + dw[0, 0] + dx[0, 0]).item()
        ends.append(time.monotonic_ns())
        step += 1
        if step == 3:
            open(ready, "w").close()
    with open(prefix + ".steps", "w") as f:
        f.write("# flop_per_step=%d\n" % (3 * 2 * n ** 3))
        f.write("\n".join(str(t) for t in ends) + "\n")


if __name__ == "__main__":
    main()
