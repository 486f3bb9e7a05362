"""Replays a captured graph (PyTorch CUDAGraph, or a jitted JAX function) until
STOP exists, writing one line per replay to OUT: start (CLOCK_MONOTONIC ns)
and milliseconds. For nvtaskset's GPU test of graphs following -p.
Usage: graph_replay.py torch|jax OUT STOP"""
import os
import sys
import time

kind, out_path, stop = sys.argv[1], sys.argv[2], sys.argv[3]
out = open(out_path, "w", buffering=1)
if kind == "torch":
    import torch
    a = torch.randn(4096, 4096, device="cuda", dtype=torch.bfloat16)
    b = torch.randn(4096, 4096, device="cuda", dtype=torch.bfloat16)
    s = torch.cuda.Stream()
    s.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(s):
        for _ in range(3):
            c = a @ b
    torch.cuda.current_stream().wait_stream(s)
    g = torch.cuda.CUDAGraph()
    with torch.cuda.graph(g):
        for _ in range(8):
            c = a @ b
    def step():
        g.replay()
        torch.cuda.synchronize()
else:
    import jax
    import jax.numpy as jnp
    x = jnp.ones((4096, 4096), dtype=jnp.bfloat16)
    @jax.jit
    def f(x):
        for _ in range(8):
            x = jnp.tanh(x @ x) * 0.5
        return x
    f(x).block_until_ready()
    def step():
        f(x).block_until_ready()
for _ in range(5):
    step()
while not os.path.exists(stop):
    t0 = time.monotonic_ns()
    step()
    out.write("%d %.4f\n" % (t0, (time.monotonic_ns() - t0) / 1e6))
