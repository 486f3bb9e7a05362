#!/usr/bin/env python3
"""One process of tests/bench/smcount_probe.py: on whatever partition or MPS share it
was started with, prints one JSON line: the SM count reported, the median ms of a bf16
8192^3 torch.matmul (cuBLAS), the GEMM kernel's name and grid (the PyTorch profiler's
trace), and how many distinct SMs a grid of 4 blocks per reported SM, each spinning
~200 us, ran on (CuPy, %smid): the SMs a task really gets."""
import json
import os
import sys
import tempfile

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from smcount_worker import timed  # noqa: E402  (the median ms of a call, after warm calls)

N = 8192


def kernel_of(fn):
    """The name and grid of the longest kernel fn launches (the profiler's trace)."""
    from torch.profiler import profile, ProfilerActivity
    with profile(activities=[ProfilerActivity.CUDA]) as prof:
        fn()
        torch.cuda.synchronize()
    path = tempfile.mktemp(suffix=".json")
    prof.export_chrome_trace(path)
    with open(path) as f:
        events = json.load(f).get("traceEvents", [])
    os.unlink(path)
    kernels = [e for e in events if e.get("cat") == "kernel"]
    if not kernels:
        return None, None
    k = max(kernels, key=lambda e: e.get("dur", 0))
    return k.get("name", "")[:160], k.get("args", {}).get("grid")


def sms_used(sms):
    try:
        import cupy
    except ImportError:
        return None
    src = r'''extern "C" __global__ void spin(unsigned *smid, long long cycles) {
        unsigned s; asm volatile("mov.u32 %0, %%smid;" : "=r"(s));
        long long t0 = clock64(); while (clock64() - t0 < cycles) {}
        if (threadIdx.x == 0) smid[blockIdx.x] = s; }'''
    k = cupy.RawKernel(src, "spin")
    blocks = 4 * sms
    out = cupy.zeros(blocks, dtype=cupy.uint32)
    k((blocks,), (1024,), (out, cupy.int64(400000)))
    cupy.cuda.Device().synchronize()
    return len(set(out.get().tolist()))


def main():
    sms = torch.cuda.get_device_properties(0).multi_processor_count
    bf = dict(device="cuda", dtype=torch.bfloat16)
    x, w = torch.randn(N, N, **bf), torch.randn(N, N, **bf)
    out = torch.empty(N, N, **bf)
    fn = lambda: torch.matmul(x, w, out=out)
    ms = timed(fn)
    name, grid = kernel_of(fn)
    print(json.dumps({"sms": sms, "ms": ms, "kernel": name, "grid": grid, "sms_used": sms_used(sms)}),
          flush=True)


if __name__ == "__main__":
    sys.exit(main())
