#!/usr/bin/env python3
"""One process of the SM-count benchmark (tests/bench/smcount.py).

Times, on whatever partition or MPS share it was started with, compute-bound
bf16 work whose grid follows the SM count the device reports:
  cublas   torch.matmul of two bf16 8192 x 8192 matrices (cuBLAS's persistent
           GEMM on Hopper, one CTA per SM it is told of)
  triton   the same product by a persistent Triton kernel of this file: as many
           programs as SMs reported (one per SM: its tiles need all of an SM's
           shared memory), each looping over 128 x 256 tiles
  train    the priorities benchmark's training step (tests/bench/prio/train.py):
           three bf16 8192^3 GEMMs (forward and backward of a linear layer) and
           a 1 GiB memory-bound update, then a synchronisation
  fp32     torch.matmul of two fp32 4096 x 4096 matrices, TF32 off (cuBLAS's
           SIMT GEMM)
  conv     a convolution net's forward and backward: four 3x3 bf16 convolutions
           of 256 channels on 64 images of 56 x 56 (channels-last, cuDNN), ReLU
  jax      jax.numpy's bf16 8192^3 product, jitted (XLA's GEMM through cuBLAS),
           timed by the host around block_until_ready; JAX allocates on demand
and prints one JSON line: {"sms": the count reported, "ms": {workload: median}}.
The SM count is read once, at the start, as a library reads it.

  smcount_worker.py                 time once
  smcount_worker.py stale READY GO  time, write READY, wait for file GO (the
                                    driver moves the task with -p), time again:
                                    a JSON line for each
SMCOUNT_WORK=cublas,triton,train[,fp32,conv,jax] picks workloads; SMCOUNT_REPS (20) samples.
"""
import json
import os
import statistics
import sys
import time

import torch

REPS = int(os.environ.get("SMCOUNT_REPS", "20"))
WORK = os.environ.get("SMCOUNT_WORK", "cublas,triton,train").split(",")
N = 8192


def timed(fn, reps=REPS, warm=3):
    """Median ms of one call of fn (CUDA events, after warm calls); fn given as
    ("host", f) is timed by the host's clock around f, which waits for its work."""
    if isinstance(fn, tuple):
        f = fn[1]
        for _ in range(warm):
            f()
        times = []
        for _ in range(reps):
            t = time.perf_counter()
            f()
            times.append((time.perf_counter() - t) * 1e3)
        return statistics.median(times)
    for _ in range(warm):
        fn()
    torch.cuda.synchronize()
    a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    times = []
    for _ in range(reps):
        a.record()
        fn()
        b.record()
        b.synchronize()
        times.append(a.elapsed_time(b))
    return statistics.median(times)


try:
    import triton
    import triton.language as tl
except ImportError:
    triton = None

if triton:
    @triton.jit(do_not_specialize=["programs"])
    def persistent_gemm(a, b, c, M, N, K, programs, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr,
                        GROUP: tl.constexpr):
        """c = a b (row-major, sizes multiples of the tiles): program p takes tiles p,
        p + programs, ..., in groups of GROUP rows of tiles for L2 reuse."""
        tiles_m = M // BM
        tiles_n = N // BN
        for tile in range(tl.program_id(0), tiles_m * tiles_n, programs):
            group_first = (tile // (GROUP * tiles_n)) * GROUP
            group_rows = tl.minimum(tiles_m - group_first, GROUP)
            tm = group_first + (tile % group_rows)
            tn = (tile % (GROUP * tiles_n)) // group_rows
            rm = tm * BM + tl.arange(0, BM)
            rn = tn * BN + tl.arange(0, BN)
            rk = tl.arange(0, BK)
            pa = a + rm[:, None] * K + rk[None, :]
            pb = b + rk[:, None] * N + rn[None, :]
            acc = tl.zeros((BM, BN), dtype=tl.float32)
            for _ in range(0, K // BK):
                acc = tl.dot(tl.load(pa), tl.load(pb), acc)
                pa += BK
                pb += BK * N
            tl.store(c + rm[:, None] * N + rn[None, :], acc.to(tl.bfloat16))


def triton_gemm(sms):
    """A persistent bf16 GEMM of sms programs, or None without Triton."""
    if not triton:
        return None

    def run(x, w, out):
        m, k = x.shape
        n = w.shape[1]
        assert m % 128 == 0 and n % 256 == 0 and k % 64 == 0
        persistent_gemm[(sms,)](x, w, out, m, n, k, sms, BM=128, BN=256, BK=64, GROUP=8, num_warps=8,
                                num_stages=3)
        return out

    # First, a small product against cuBLAS's.
    x = torch.randn(1024, 1024, device="cuda", dtype=torch.bfloat16)
    w = torch.randn(1024, 1024, device="cuda", dtype=torch.bfloat16)
    got = run(x, w, torch.empty(1024, 1024, device="cuda", dtype=torch.bfloat16)).float()
    want = (x @ w).float()
    err = ((got - want).abs().max() / want.abs().max()).item()
    if not err < 2e-2:
        raise RuntimeError("the Triton GEMM is wrong: relative error %g" % err)
    return run


def workloads(sms):
    bf = dict(device="cuda", dtype=torch.bfloat16)
    x, w = torch.randn(N, N, **bf), torch.randn(N, N, **bf)
    out, work = torch.empty(N, N, **bf), {}
    if "cublas" in WORK:
        work["cublas bf16 8192^3"] = lambda: torch.matmul(x, w, out=out)
    if "triton" in WORK:
        run = triton_gemm(sms)
        if run:
            work["triton persistent bf16 8192^3"] = lambda: run(x, w, out)
    if "train" in WORK:
        dy = torch.randn(N, N, **bf)
        elems = (1 << 30) // 4
        params = torch.randn(elems, device="cuda", dtype=torch.float32)
        buf = torch.zeros_like(params)
        grad = torch.randn(elems, **bf)

        def step():
            y = x @ w
            dw = x.t() @ dy
            dx = dy @ w.t()
            buf.mul_(0.9).add_(grad)
            params.add_(buf, alpha=-1e-6)
            (y[0, 0] + dw[0, 0] + dx[0, 0] + params[0]).item()
        work["train step (3 GEMMs + 1 GiB update)"] = step
    if "fp32" in WORK:
        torch.backends.cuda.matmul.allow_tf32 = False
        xf, wf = x[:N // 2, :N // 2].float(), w[:N // 2, :N // 2].float()
        outf = torch.empty(N // 2, N // 2, device="cuda", dtype=torch.float32)
        work["cublas fp32 4096^3"] = lambda: torch.matmul(xf, wf, out=outf)
    if "conv" in WORK:
        net = torch.nn.Sequential(*[m for _ in range(4) for m in (
            torch.nn.Conv2d(256, 256, 3, padding=1, bias=False), torch.nn.ReLU())])
        net = net.to(device="cuda", dtype=torch.bfloat16, memory_format=torch.channels_last)
        img = torch.randn(64, 256, 56, 56, **bf).to(memory_format=torch.channels_last)

        def conv():
            net.zero_grad(set_to_none=True)
            net(img).float().sum().backward()
        work["conv net fwd+bwd bf16"] = conv
    if "jax" in WORK:
        os.environ.setdefault("XLA_PYTHON_CLIENT_PREALLOCATE", "false")
        import jax
        import jax.numpy as jnp
        key = jax.random.PRNGKey(0)
        ja = jax.random.normal(key, (N, N), dtype=jnp.bfloat16)
        jb = jax.random.normal(jax.random.PRNGKey(1), (N, N), dtype=jnp.bfloat16)
        dot = jax.jit(jnp.matmul)
        work["jax bf16 8192^3"] = ("host", lambda: dot(ja, jb).block_until_ready())
    return work


def main():
    sms = torch.cuda.get_device_properties(0).multi_processor_count
    work = workloads(sms)

    def once():
        return {"sms": sms, "ms": {name: timed(fn) for name, fn in work.items()}}
    if len(sys.argv) == 4 and sys.argv[1] == "stale":
        print(json.dumps(once()), flush=True)
        open(sys.argv[2], "w").close()
        while not os.path.exists(sys.argv[3]):
            time.sleep(0.01)
        print(json.dumps(once()), flush=True)
    elif len(sys.argv) == 1:
        print(json.dumps(once()), flush=True)
    else:
        sys.exit(__doc__)


if __name__ == "__main__":
    main()
