# A small convolutional network's inference under nvtaskset: correct (same
# result as on the CPU, to bf16-free float32 accuracy) and timed.
import sys, time, torch, torch.nn as nn
torch.manual_seed(0)
net = nn.Sequential(
    nn.Conv2d(3, 64, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
    nn.Conv2d(64, 128, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
    nn.Conv2d(128, 256, 3, padding=1), nn.ReLU(), nn.AdaptiveAvgPool2d(1),
    nn.Flatten(), nn.Linear(256, 10)).eval()
x = torch.randn(64, 3, 128, 128)
with torch.no_grad():
    ref = net(x)
    torch.backends.cudnn.allow_tf32 = False
    torch.backends.cuda.matmul.allow_tf32 = False
    gnet, gx = net.cuda(), x.cuda()
    y = gnet(gx).cpu()
    err = ((y - ref).norm() / ref.norm()).item()
    for _ in range(3):
        gnet(gx)
    torch.cuda.synchronize()
    t = time.perf_counter()
    for _ in range(20):
        gnet(gx)
    torch.cuda.synchronize()
ms = (time.perf_counter() - t) / 20 * 1e3
print("cnn_ok=%d rel_err=%.2e ms=%.3f" % (err < 1e-3, err, ms))
sys.exit(0 if err < 1e-3 else 1)
