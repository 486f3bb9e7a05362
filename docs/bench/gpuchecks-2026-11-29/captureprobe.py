"""Run G37's probe: PyTorch's cudaMallocAsync backend under nvtaskset --mem, allocating on a side
stream and inside a CUDA graph's capture (cuMemAllocAsync on created streams, the shim asking each
stream's device in the allocation's callback); then a fill to the limit."""
import torch

torch.cuda.init()
s = torch.cuda.Stream()
with torch.cuda.stream(s):
    a = torch.ones(64 << 20, dtype=torch.uint8, device="cuda")  # 64 MiB on a side stream
s.synchronize()
x = torch.ones(1 << 20, device="cuda")
g = torch.cuda.CUDAGraph()
w = torch.cuda.Stream()
w.wait_stream(torch.cuda.current_stream())
with torch.cuda.stream(w):
    for _ in range(3):
        warm = (x * 2).sum()
torch.cuda.current_stream().wait_stream(w)
with torch.cuda.graph(g):
    t = torch.empty(16 << 20, dtype=torch.uint8, device="cuda")  # allocated inside the capture
    y = (x * 2 + t[:1].float()).sum()
for _ in range(10):
    g.replay()
torch.cuda.synchronize()
print(f"capture ok: y={y.item():.0f} side={int(a.sum().item())}")
held, got = [], 0
try:
    while True:
        held.append(torch.empty(256 << 20, dtype=torch.uint8, device="cuda"))
        got += 256 << 20
except torch.OutOfMemoryError:
    pass
free, total = torch.cuda.mem_get_info()
print(f"fill got={got} total={total}")
