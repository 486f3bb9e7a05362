"""cudagraph.py - one call of a function captured as a CUDA graph, as the benchmarks replay
their work (sizes_worker.py, prio/service.py, tslice/lsvc.py): PyTorch's recipe, a warm-up
on a side stream (allocations and lazy set-up happen outside the graph), then the capture."""
import torch


def capture(fn, warmup=3):
    """Runs fn warmup times on a side stream, then captures one call of it. Returns the
    graph (g.replay() runs it again) and what the captured call returned (the tensors
    each replay writes)."""
    s = torch.cuda.Stream()
    s.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(s):
        for _ in range(warmup):
            fn()
    torch.cuda.current_stream().wait_stream(s)
    g = torch.cuda.CUDAGraph()
    with torch.cuda.graph(g):
        out = fn()
    return g, out
