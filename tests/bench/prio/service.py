"""service.py - the latency-critical service L of the priorities benchmark (PyTorch).

    python3 service.py KINDS READY PLAN OUT.csv [measure]

Per kind one model of 16 bf16 4096x4096 linear layers captured in ONE
torch.cuda.CUDAGraph: decode = batch 1 (memory-bound), prefill = batch 512
(compute-bound). A request is graph.replay() then a synchronise of the stream.
tbt (token by token) = the decode graph replayed priolib.TBT_STEPS (8) times, each
step synchronised by a host-side sampler (the output's argmax, read by .item()).
After a warm-up it writes READY (with "measure": first each kind's service
time, the median of back-to-back requests for 0.5 s, as "KIND US" lines), then
waits for the file PLAN (priolib.py) and runs its phases, printing
"phase LABEL BEGIN_NS" as each starts; writes OUT.csv (priolib.write_l).
"""
import gc
import os
import sys
import time

import torch

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.dirname(HERE))
import priolib  # noqa: E402
import cudagraph  # noqa: E402

LAYERS, DIM = 16, 4096
BATCH = {"decode": 1, "prefill": 512, "tbt": 1}


def graphed(fn):
    """fn captured once as a CUDA graph (cudagraph.capture); returns the replay and the
    graph's output tensor."""
    g, out = cudagraph.capture(fn)
    return g.replay, out


def model(kind, weights):
    """The graph of one kind and its request function."""
    x = torch.randn(BATCH[kind], DIM, device="cuda", dtype=torch.bfloat16)

    def forward():
        y = x
        for w in weights:
            y = torch.nn.functional.linear(y, w)
        return y

    (replay, out), stream = graphed(forward), torch.cuda.current_stream()

    if kind == "tbt":
        def request():
            for _ in range(priolib.TBT_STEPS):
                replay()
                int(out.argmax().item())  # the sampler: the next step waits for it
    else:
        def request():
            replay()
            stream.synchronize()
    request.keep = (x, out)  # the graph reads x and writes out: both must live
    return request


def measure(request, seconds=0.5):
    lat, end = [], time.monotonic_ns() + int(seconds * 1e9)
    while time.monotonic_ns() < end or len(lat) < 20:
        a = time.monotonic_ns()
        request()
        lat.append((time.monotonic_ns() - a) / 1e3)
    return priolib.percentile(lat, 50)


def wait_file(path, seconds):
    end = time.time() + seconds
    while not os.path.exists(path):
        if time.time() > end:
            sys.exit("service: no plan %s after %d s" % (path, seconds))
        time.sleep(0.01)


def main():
    if len(sys.argv) not in (5, 6) or (len(sys.argv) == 6 and sys.argv[5] != "measure"):
        sys.exit("usage: service.py KINDS READY PLAN OUT.csv [measure]")
    kinds, ready, plan, out = sys.argv[1].split(","), sys.argv[2], sys.argv[3], sys.argv[4]
    torch.manual_seed(0)
    weights = [torch.randn(DIM, DIM, device="cuda", dtype=torch.bfloat16) * DIM ** -0.5
               for _ in range(LAYERS)]
    requests = {k: model(k, weights) for k in kinds}
    for r in requests.values():
        for _ in range(30):
            r()
    service = {}
    if len(sys.argv) == 6:
        service = {k: measure(requests[k]) for k in kinds}
    with open(ready + ".tmp", "w") as f:
        f.write("".join("%s %.1f\n" % kv for kv in service.items()) or "ok\n")
    os.rename(ready + ".tmp", ready)
    wait_file(plan, 300)
    gap, phases = priolib.read_plan(plan)
    gc.collect()
    gc.disable()
    res = priolib.run_phases(gap, phases, requests,
                             lambda lab, b: print("phase %s %d" % (lab, b), flush=True))
    priolib.write_l(out, "torch", service, bool(service), res)


if __name__ == "__main__":
    main()
