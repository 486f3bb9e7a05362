"""Workloads for --profile's GPU verification (tests/gpu/profile/run.sh).
Each runs a fixed amount of work after a warm-up and prints
"time: MS ms" (CUDA events), so that Python's start-up is not measured.
  gemm     bf16 4096^3 matmuls (compute-bound)
  stream   copies of a 1 GiB tensor (memory-bound)
  infer    an MLP inference loop, batch 256 (a PyTorch inference service)
"""
import sys
import torch

kind = sys.argv[1]
dev = torch.device("cuda")
torch.manual_seed(0)
if kind == "gemm":
    a = torch.randn(4096, 4096, device=dev, dtype=torch.bfloat16)
    b = torch.randn(4096, 4096, device=dev, dtype=torch.bfloat16)
    step = lambda: a @ b
    reps = 60
elif kind == "stream":
    src = torch.randn(256 * 1024 * 1024, device=dev)
    dst = torch.empty_like(src)
    step = lambda: dst.copy_(src)
    reps = 30
elif kind == "infer":
    net = torch.nn.Sequential(*[m for _ in range(6) for m in (torch.nn.Linear(2048, 2048), torch.nn.GELU())]).to(dev).half()
    x = torch.randn(256, 2048, device=dev, dtype=torch.half)
    def step():
        with torch.inference_mode():
            return net(x)
    reps = 200
else:
    sys.exit("unknown workload " + kind)
for _ in range(5):
    step()
torch.cuda.synchronize()
start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
start.record()
for _ in range(reps):
    step()
end.record()
torch.cuda.synchronize()
print("time: %.4f ms" % start.elapsed_time(end))
