"""GPU memory limits on a real GPU (tests/gpu/mem.sh): one mode per run, one line of results.

  fill STEP_MIB      allocate STEP_MIB tensors until out of memory; "got=BYTES limit=L free=F total=T"
                     (mem_get_info before the first allocation)
  info               "free=F total=T props=P" (mem_get_info, get_device_properties().total_memory)
  hold MIB FILE      allocate MIB, write "held" to FILE, then sleep until killed
  churn N SIZE_KIB [REPS]  REPS loops (1 if left out) of N cudaMalloc/cudaFree of SIZE_KIB each
                     (run with PYTORCH_NO_CUDA_MEMORY_CACHING=1), after a warm-up loop of N/4
                     that is not timed; "seconds=S loops=S1,S2,..." (S: the loops' median; only
                     the loops are timed, not Python's or CUDA's start)
  raw                cudart: cudaMalloc 1 MiB at a time through ctypes; "got=BYTES rc=RC"
  capture            64 MiB on a side stream, then a CUDA graph captured with a 16 MiB tensor
                     allocated inside it, replayed 10 times; then fill 256 MiB tensors:
                     "captured=SUM side=SUM got=BYTES total=T" (run it with the cudaMallocAsync
                     backend: its allocations go to cuMemAllocAsync on created streams)
  refill STEP_MIB FILE  fill, write "ready" to FILE.ready, wait until FILE exists (nvtaskset -p
                     --mem changes the limit meanwhile), fill again;
                     "first=BYTES second=BYTES total=T" (mem_get_info's total after the wait)
"""
import ctypes
import os
import statistics
import sys
import time

import torch


def fill(step, held):
    """Allocates step-byte tensors into held until out of memory; returns the bytes taken."""
    got = 0
    try:
        while True:
            held.append(torch.empty(step, dtype=torch.uint8, device="cuda"))
            got += step
    except torch.OutOfMemoryError:
        pass
    return got


def main():
    mode = sys.argv[1]
    if mode == "raw":
        rt = ctypes.CDLL("libcudart.so")
        p = ctypes.c_void_p()
        got, rc = 0, 0
        while rc == 0:
            rc = rt.cudaMalloc(ctypes.byref(p), 1 << 20)
            got += (1 << 20) if rc == 0 else 0
        print(f"got={got} rc={rc}")
        return
    torch.cuda.init()
    free, total = torch.cuda.mem_get_info()
    if mode == "info":
        print(f"free={free} total={total} props={torch.cuda.get_device_properties(0).total_memory}")
    elif mode == "fill":
        step = int(sys.argv[2]) << 20
        held = []
        try:
            while True:
                held.append(torch.empty(step, dtype=torch.uint8, device="cuda"))
        except torch.OutOfMemoryError:
            pass
        got = sum(t.numel() for t in held)
        print(f"got={got} limit={total} free={free} total={total}")
    elif mode == "capture":
        side = torch.cuda.Stream()
        with torch.cuda.stream(side):
            a = torch.ones(64 << 20, dtype=torch.uint8, device="cuda")
        side.synchronize()
        x = torch.ones(1 << 20, device="cuda")
        warm_stream = torch.cuda.Stream()
        warm_stream.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(warm_stream):
            for _ in range(3):
                warm = (x * 2).sum()
        torch.cuda.current_stream().wait_stream(warm_stream)
        g = torch.cuda.CUDAGraph()
        with torch.cuda.graph(g):
            inside = torch.empty(16 << 20, dtype=torch.uint8, device="cuda")
            out = (x * 2 + inside[:1].float() * 0).sum()
        for _ in range(10):
            g.replay()
        torch.cuda.synchronize()
        captured, side_sum = out.item(), int(a.sum().item())
        held = []
        got = fill(256 << 20, held)
        print(f"captured={captured:.0f} side={side_sum} got={got} total={torch.cuda.mem_get_info()[1]}")
    elif mode == "refill":
        step, path, held = int(sys.argv[2]) << 20, sys.argv[3], []
        first = fill(step, held)
        with open(path + ".ready", "w") as f:
            f.write("ready\n")
        while not os.path.exists(path):
            time.sleep(0.05)
        second = fill(step, held)
        print(f"first={first} second={second} total={torch.cuda.mem_get_info()[1]}")
    elif mode == "hold":
        t = torch.ones(int(sys.argv[2]) << 20, dtype=torch.uint8, device="cuda")
        torch.cuda.synchronize()
        with open(sys.argv[3], "w") as f:
            f.write("held\n")
        while t is not None:
            time.sleep(1)
    elif mode == "churn":
        n, size = int(sys.argv[2]), int(sys.argv[3]) << 10
        reps = int(sys.argv[4]) if len(sys.argv) > 4 else 1

        def loop(k):
            for _ in range(k):
                x = torch.empty(size, dtype=torch.uint8, device="cuda")
                del x
            torch.cuda.synchronize()

        loop(max(n // 4, 1))
        times = []
        for _ in range(reps):
            t0 = time.perf_counter()
            loop(n)
            times.append(time.perf_counter() - t0)
        print(f"seconds={statistics.median(times):.6f} loops={','.join(f'{t:.6f}' for t in times)}")


main()
