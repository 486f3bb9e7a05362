# PyTorch under nvtaskset: a bf16 matmul is correct and its time is printed.
import sys, time, torch
torch.manual_seed(0)
a = torch.randn(8192, 8192, device="cuda", dtype=torch.bfloat16)
b = torch.randn(8192, 8192, device="cuda", dtype=torch.bfloat16)
c = a @ b
ref = (a[:64].double() @ b.double())
err = ((c[:64].double() - ref).norm() / ref.norm()).item()
for _ in range(3):
    a @ b
torch.cuda.synchronize()
t = time.perf_counter()
for _ in range(20):
    a @ b
torch.cuda.synchronize()
ms = (time.perf_counter() - t) / 20 * 1e3
print("torch_ok=%d rel_err=%.2e ms=%.3f" % (err < 1e-2, err, ms))
sys.exit(0 if err < 1e-2 else 1)
