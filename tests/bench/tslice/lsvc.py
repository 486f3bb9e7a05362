"""lsvc.py - probe service L: requests at random (Poisson) of three kinds.
    python3 lsvc.py OUT.csv [PHASES]   PHASES: comma list of decode,tbt,prefill,decodeper
decode: one CUDA-graph replay of 16 bf16 4096^2 linears at batch 1, then synchronise.
tbt: token by token: 8 such steps, each synchronised, with a host-side sampler (argmax .item()).
prefill: the graph at batch 512. Latency = completion - scheduled arrival (ms)."""
import os, random, sys, time
import torch
sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
import cudagraph  # noqa: E402 (tests/bench/)

def graph(batch, ws):
    x = torch.randn(batch, 4096, device="cuda", dtype=torch.bfloat16)
    def fwd():
        y = x
        for w in ws:
            y = torch.nn.functional.linear(y, w)
        return y
    g, out = cudagraph.capture(fwd)
    return g, out, x  # x: the graph reads it; keep it alive

def main():
    out = sys.argv[1]
    phases = (sys.argv[2] if len(sys.argv) > 2 else "decode,tbt,prefill").split(",")
    n = int(os.environ.get("L_N", "200"))
    ws = [torch.randn(4096, 4096, device="cuda", dtype=torch.bfloat16) * 0.01 for _ in range(16)]
    gd, od, xd = graph(1, ws)
    gp, op, xp = graph(512, ws)
    st = torch.cuda.current_stream()
    def decode():
        gd.replay(); st.synchronize()
    steps = os.environ.get("L_FLAG_STEPS") == "1"  # the flag marks each step, not the request
    # L_KEEPALIVE_US: between two steps of a token-by-token request, a one-block kernel on a side
    # stream keeps this context on the GPU (spins until the next step sets a host flag, at most
    # this long), so that the batch is not switched in between the steps.
    keep_us = int(os.environ.get("L_KEEPALIVE_US", "0"))
    if keep_us:
        import cupy as cp
        import numpy as np
        kern = cp.RawKernel(r"""
extern "C" __global__ void linger(volatile int *flag, long long cycles) {
  long long t0 = clock64();
  while (*flag == 0 && clock64() - t0 < cycles) __nanosleep(500);
}""", "linger")
        pinned = cp.cuda.alloc_pinned_memory(64)
        hflag = np.frombuffer(pinned, np.int32, 16)
        side = torch.cuda.Stream()
        cside = cp.cuda.ExternalStream(side.cuda_stream)
        cycles = keep_us * 1980
    # L_KEEPALIVE_EARLY=1: the kernel is queued before the step's synchronisation (its work done,
    # the context still has work queued), not after it returns.
    early = os.environ.get("L_KEEPALIVE_EARLY") == "1"
    def tbt():
        for i in range(8):
            if steps and i:
                mark(1)
            if keep_us and i:
                hflag[0] = 1
            gd.replay()
            am = od.argmax()
            if keep_us and early and i < 7:
                hflag[0] = 0
                side.wait_stream(torch.cuda.current_stream())
                with cside:
                    kern((1,), (32,), (pinned.ptr, cp.int64(cycles)))
            int(am.item())
            if steps and i < 7:
                mark(0)
            if keep_us and not early and i < 7:
                hflag[0] = 0
                with cside:
                    kern((1,), (32,), (pinned.ptr, cp.int64(cycles)))
    def prefill():
        gp.replay(); st.synchronize()
    # L_FLAG: a file whose first 8 bytes say a request is open (non-zero) to rmprobe.c's gate
    flagf = os.environ.get("L_FLAG")
    flag = None
    if flagf:
        import mmap
        fd = os.open(flagf, os.O_RDWR)
        flag = mmap.mmap(fd, 4096)
    def mark(v):
        if flag is not None:
            flag[0:8] = int(v).to_bytes(8, "little")
    kinds = {"decode": (decode, 10.0), "decodeper": (decode, 10.0), "tbt": (tbt, 60.0), "prefill": (prefill, 25.0)}
    for f, _ in kinds.values():
        for _ in range(20):
            f()
    rows = []
    ready = os.environ.get("L_READY")
    if ready:
        open(ready, "w").close()
    go = os.environ.get("L_GO")
    while go and not os.path.exists(go):
        time.sleep(0.01)
    for ph in phases:
        f, mean = kinds[ph]
        rng = random.Random(ph)
        t = time.monotonic_ns() + 50_000_000
        for i in range(n if ph != "tbt" else n // 3):
            gap = mean if ph == "decodeper" else rng.expovariate(1.0 / mean)
            t += int(gap * 1e6)
            now = time.monotonic_ns()
            if now < t:
                time.sleep((t - now) / 1e9)
            mark(1)
            f()
            mark(0)
            rows.append((ph, i, (time.monotonic_ns() - t) / 1e6, t))
        time.sleep(0.1)
    with open(out, "w") as fo:
        fo.write("phase,i,ms,t_ns\n")
        for r in rows:
            fo.write("%s,%d,%.4f,%d\n" % r)

main()
