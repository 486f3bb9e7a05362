#!/usr/bin/env python3
"""One process of the partition-size benchmark (tests/bench/sizes.py).

Runs each workload in this process, on whatever partition or MPS share it
was started with, and prints one JSON line: the SM count the device reports,
the median milliseconds of each workload (CUDA events, after warm-up), and
the cuBLAS kernel, grid and waves of the square bf16 GEMM (torch.profiler).
"""
import json
import math
import os
import statistics
import sys
import tempfile

import torch

REPS = int(os.environ.get("SIZES_REPS", "10"))


def timed(fn, reps=REPS, warm=3):
    for _ in range(warm):
        fn()
    torch.cuda.synchronize()
    times = []
    for _ in range(reps):
        a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        a.record()
        fn()
        b.record()
        b.synchronize()
        times.append(a.elapsed_time(b))
    return statistics.median(times)


def gemm(m, k, n, dtype):
    x = torch.randn(m, k, device="cuda", dtype=dtype)
    w = torch.randn(k, n, device="cuda", dtype=dtype)
    return lambda: torch.matmul(x, w)


def block():
    layer = torch.nn.TransformerEncoderLayer(d_model=2048, nhead=16, dim_feedforward=8192, batch_first=True,
                                             device="cuda", dtype=torch.bfloat16).eval()
    x = torch.randn(8, 512, 2048, device="cuda", dtype=torch.bfloat16)

    def run():
        with torch.no_grad():
            layer(x)
    return run


def kernel_of(fn, sms):
    """Name, grid and waves (blocks / SMs reported) of the longest kernel fn launches."""
    with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CUDA]) as prof:
        fn()
        torch.cuda.synchronize()
    with tempfile.NamedTemporaryFile(suffix=".json") as f:
        prof.export_chrome_trace(f.name)
        events = json.load(open(f.name)).get("traceEvents", [])
    kernels = [e for e in events if e.get("cat") == "kernel"]
    if not kernels:
        return {}
    k = max(kernels, key=lambda e: e.get("dur", 0))
    grid = k.get("args", {}).get("grid", [0, 0, 0])
    blocks = math.prod(grid) if grid else 0
    return {"name": k.get("name", "")[:120], "grid": grid, "blocks": blocks,
            "waves": round(blocks / sms, 2) if sms else None}


def main():
    torch.backends.cuda.matmul.allow_tf32 = False  # fp32 means fp32
    sms = torch.cuda.get_device_properties(0).multi_processor_count
    work = {
        "bf16 8192^3": gemm(8192, 8192, 8192, torch.bfloat16),
        "bf16 64x8192x28672 (decode)": gemm(64, 8192, 28672, torch.bfloat16),
        "fp32 4096^3": gemm(4096, 4096, 4096, torch.float32),
        "fp32 128x4096x4096 (skinny)": gemm(128, 4096, 4096, torch.float32),
        "transformer block bf16 8x512x2048": block(),
    }
    only = os.environ.get("SIZES_ONLY")
    out = {"sms": sms, "ms": {}}
    for name, fn in work.items():
        if only and only not in name:
            continue
        out["ms"][name] = timed(fn)
        print("# %s %.3f ms" % (name, out["ms"][name]), file=sys.stderr, flush=True)
    if os.environ.get("SIZES_PROFILE", "1") != "0":
        out["kernel"] = kernel_of(work["bf16 8192^3"], sms)
    print(json.dumps(out), flush=True)


if __name__ == "__main__":
    sys.exit(main())
