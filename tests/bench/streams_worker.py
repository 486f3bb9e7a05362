#!/usr/bin/env python3
"""A PyTorch program with several streams (the channel experiment,
run by channels.py): for S = 1, 2, 4 and 8 streams, the time per iteration of
  sleep  one torch.cuda._sleep kernel (a single thread spinning ~0.5 ms) per
         stream: paper 000's Fig. 8 as PyTorch launches it
  mlp    a small MLP per stream (batch 64, 4 layers of 2048x2048 bf16 and
         ReLU): independent models served side by side
Prints "workload=W streams=S ms_per_iter=T" lines.
"""
import time

import torch


def timed(step, iters):
    step()
    torch.cuda.synchronize()
    t0 = time.perf_counter()
    for _ in range(iters):
        step()
    torch.cuda.synchronize()
    return (time.perf_counter() - t0) * 1e3 / iters


def main():
    for s in (1, 2, 4, 8):
        streams = [torch.cuda.Stream() for _ in range(s)]

        def sleep():
            for st in streams:
                with torch.cuda.stream(st):
                    torch.cuda._sleep(1000000)

        weights = [[torch.randn(2048, 2048, device="cuda", dtype=torch.bfloat16) / 45
                    for _ in range(4)] for _ in streams]
        xs = [torch.randn(64, 2048, device="cuda", dtype=torch.bfloat16) for _ in streams]

        def mlp():
            for st, ws, x in zip(streams, weights, xs):
                with torch.cuda.stream(st):
                    for w in ws:
                        x = torch.relu(x @ w)

        print("workload=sleep streams=%d ms_per_iter=%.4f" % (s, timed(sleep, 20)), flush=True)
        print("workload=mlp streams=%d ms_per_iter=%.4f" % (s, timed(mlp, 200)), flush=True)


main()
