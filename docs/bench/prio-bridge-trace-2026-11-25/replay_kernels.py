"""What PyTorch's CUDAGraph.replay() launches besides the graph (the profiler's list)."""
import sys
import torch
from torch.profiler import profile, ProfilerActivity
sys.path.insert(0, "tests/bench")
import cudagraph  # noqa: E402
w = [torch.randn(4096, 4096, device="cuda", dtype=torch.bfloat16) for _ in range(4)]
x = torch.randn(1, 4096, device="cuda", dtype=torch.bfloat16)
def f():
    y = x
    for a in w:
        y = torch.nn.functional.linear(y, a)
    return y
g, out = cudagraph.capture(f)
g.replay()
torch.cuda.synchronize()
with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]) as prof:
    for _ in range(3):
        g.replay()
    torch.cuda.synchronize()
print(torch.__version__)
print(prof.key_averages().table(row_limit=25, max_name_column_width=90))
