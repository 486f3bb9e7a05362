#!/usr/bin/env python3
"""One process of the partition-size benchmark (tests/bench/sizes.py).

Runs each workload in this process, on whatever partition or MPS share it
was started with, and prints one JSON line: the SM count the device reports,
the median milliseconds of each workload (timed(): CUDA events, after
warm-up), and the cuBLAS kernel, grid and waves of the square bf16 GEMM
(torch.profiler). The transformer block runs twice: eager, as a program
calls it (the GPU also waits for the CPU's launches between its kernels),
and replayed as one CUDA graph (the GPU's time alone).

SIZES_SET=block-ops runs, instead of the default workloads, the transformer
block (eager, and replayed as a CUDA graph) and each of its parts alone with
the block's shapes: its GEMMs (F.linear with bias), attention
(scaled_dot_product_attention), ReLU and residual add + layer norm, to find
which part a partition runs slower than MPS's share.
"""
import json
import math
import os
import statistics
import sys
import tempfile

import torch

import cudagraph  # noqa: E402 (tests/bench/, this script's folder)

REPS = int(os.environ.get("SIZES_REPS", "10"))


MIN_MS = float(os.environ.get("SIZES_MIN_MS", "2"))


def timed(fn, reps=REPS, warm=3):
    """Median milliseconds of one call of fn over reps samples (CUDA events,
    after warm calls). A sample times as many calls back to back as take
    about MIN_MS (at most 100), so that short workloads are not timed by the
    events' resolution and one call's start-up jitter."""
    for _ in range(warm):
        fn()
    torch.cuda.synchronize()
    a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    a.record()
    fn()
    b.record()
    b.synchronize()
    inner = max(1, min(100, math.ceil(MIN_MS / max(a.elapsed_time(b), 1e-3))))
    times = []
    for _ in range(reps):
        a.record()
        for _ in range(inner):
            fn()
        b.record()
        b.synchronize()
        times.append(a.elapsed_time(b) / inner)
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


def graphed(fn):
    """fn captured once as a CUDA graph; the returned function replays it."""
    return cudagraph.capture(fn)[0].replay


def block_ops():
    """The block, eager and graphed, and its parts alone (8x512 tokens, d 2048, 16 heads, ff 8192)."""
    F = torch.nn.functional
    bf = dict(device="cuda", dtype=torch.bfloat16)
    t, d, ff, heads = 8 * 512, 2048, 8192, 16
    x = torch.randn(t, d, **bf)
    w_in, b_in = torch.randn(3 * d, d, **bf) / d ** 0.5, torch.randn(3 * d, **bf)
    w_out, b_out = torch.randn(d, d, **bf) / d ** 0.5, torch.randn(d, **bf)
    w1, b1 = torch.randn(ff, d, **bf) / d ** 0.5, torch.randn(ff, **bf)
    w2, b2 = torch.randn(d, ff, **bf) / ff ** 0.5, torch.randn(d, **bf)
    q, k, v = (torch.randn(8, heads, 512, d // heads, **bf) for _ in range(3))
    h = torch.randn(t, ff, **bf)
    ln_w, ln_b = torch.ones(d, **bf), torch.zeros(d, **bf)
    eager = block()
    nograd = torch.no_grad()

    def wrap(f):
        def run():
            with nograd:
                f()
        return run
    work = {"block eager": eager}
    try:
        work["block graph"] = graphed(eager)
    except RuntimeError as e:  # the other parts still tell
        print("# block graph: capture failed: %s" % e, file=sys.stderr, flush=True)
    return dict(work, **{
        "in_proj 4096x2048x6144": wrap(lambda: F.linear(x, w_in, b_in)),
        "attention 8x16x512x128": wrap(lambda: F.scaled_dot_product_attention(q, k, v)),
        "out_proj 4096x2048x2048": wrap(lambda: F.linear(x, w_out, b_out)),
        "linear1 4096x2048x8192": wrap(lambda: F.linear(x, w1, b1)),
        "relu 4096x8192": wrap(lambda: F.relu(h)),
        "linear2 4096x8192x2048": wrap(lambda: F.linear(h, w2, b2)),
        "add+layer_norm 4096x2048": wrap(lambda: F.layer_norm(x + x, (d,), ln_w, ln_b)),
    })


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
    work = block_ops() if os.environ.get("SIZES_SET") == "block-ops" else {
        "bf16 8192^3": gemm(8192, 8192, 8192, torch.bfloat16),
        "bf16 64x8192x28672 (decode)": gemm(64, 8192, 28672, torch.bfloat16),
        "fp32 4096^3": gemm(4096, 4096, 4096, torch.float32),
        "fp32 128x4096x4096 (skinny)": gemm(128, 4096, 4096, torch.float32),
        "transformer block bf16 8x512x2048": block(),
    }
    if "transformer block bf16 8x512x2048" in work:
        work["transformer block bf16 8x512x2048 (CUDA graph)"] = graphed(work["transformer block bf16 8x512x2048"])
    only = os.environ.get("SIZES_ONLY")
    out = {"sms": sms, "ms": {}}
    for name, fn in work.items():
        if only and only not in name:
            continue
        out["ms"][name] = timed(fn)
        print("# %s %.3f ms" % (name, out["ms"][name]), file=sys.stderr, flush=True)
    if os.environ.get("SIZES_PROFILE", "1") != "0" and "bf16 8192^3" in work:
        out["kernel"] = kernel_of(work["bf16 8192^3"], sms)
    print(json.dumps(out), flush=True)


if __name__ == "__main__":
    sys.exit(main())
