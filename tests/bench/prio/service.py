"""service.py - the latency-critical service L of the priorities benchmark (PyTorch).

    python3 service.py KINDS READY PLAN OUT.csv [measure]

Per kind one model of 16 bf16 4096x4096 linear layers captured in ONE
torch.cuda.CUDAGraph: decode = batch 1 (memory-bound), prefill = batch 512
(compute-bound). A request is graph.replay() then a synchronise of the stream.
tbt (token by token) = the decode graph replayed priolib.TBT_STEPS (8) times, each
step synchronised by a host-side sampler (the output's argmax, read by .item()).
tbtsync = tbt with each step's replay waited for by torch.cuda.synchronize() (the context's
synchronisation) before the sampler reads the token.
tbtpoll = tbt whose steps are waited for by polling: the token (the output's argmax) copied to
pinned memory (non_blocking, on the step's stream), an event recorded after it and
Event.query() in a loop until it is done, then the token read from the host's memory (a
service that polls its steps' events instead of blocking).
tbtsleep = tbtpoll whose loop sleeps SLEEP_S (0.4 ms) between its queries (a service that
polls without spinning a core).
tbt7b = the same with steps of a 7B-sized decode: 56 bf16 8192x8192 layers at batch 1
(7 GiB of weights, made only where the kind runs).
async = 8 steps of the 16-layer decode, each step's graph also looking up its input row
by the previous token and writing its own (argmax) on the GPU; the host queues step k+1
before it reads step k's token from pinned memory (copied non_blocking on the step's
stream, then an event), as SGLang's overlap scheduler and vLLM's async scheduling do.
asyncside = the same with each token copied on a stream of its own (after an event),
as vLLM's async scheduling does (its copy stream).
generate = a Hugging Face transformers LlamaForCausalLM (random weights, hidden 2048,
8 layers; bf16, eager) answering with generate(): 8 new tokens, greedy, from a prompt of
PROMPT tokens: host-bound (Python and kernel launches between small kernels).
eager = priolib.TBT_STEPS steps of EAGER_LAYERS bf16 EAGER_DIM-wide linear layers at batch 1
launched op by op (no graph), each step's argmax read by .item(): a small policy (a robot's)
whose host launches slower than its kernels run.
After a warm-up it writes READY (with "measure": first each kind's service
time, the median of back-to-back requests for 0.5 s and at least 10, as "KIND US"
lines), then waits for the file PLAN (priolib.py) and runs its phases, printing
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
LAYERS_7B, DIM_7B = 56, 8192  # a 7B model's decode: 7 GiB of bf16 weights read per step
BATCH = {"decode": 1, "prefill": 512, "tbt": 1, "tbtsync": 1, "tbtpoll": 1, "tbtsleep": 1}
SLEEP_S = 0.0004  # tbtsleep: between its queries
PROMPT = 32  # generate's prompt, in tokens
EAGER_LAYERS, EAGER_DIM = 16, 1024


def graphed(fn):
    """fn captured once as a CUDA graph (cudagraph.capture); returns the replay and the
    graph's output tensor."""
    g, out = cudagraph.capture(fn)
    return g.replay, out


def linears(batch, dim, weights):
    """A graph of the linear layers at this batch: its replay, input and output."""
    x = torch.randn(batch, dim, device="cuda", dtype=torch.bfloat16)

    def forward():
        y = x
        for w in weights:
            y = torch.nn.functional.linear(y, w)
        return y

    replay, out = graphed(forward)
    return replay, x, out


def model(kind, weights):
    """The graph of decode, prefill or tbt and its request function."""
    replay, x, out = linears(BATCH[kind], DIM, weights)
    stream = torch.cuda.current_stream()
    if kind in ("tbt", "tbtsync", "tbtpoll", "tbtsleep"):
        request = token_by_token(replay, out, kind, ctxsync=kind == "tbtsync",
                                 poll={"tbtpoll": 0.0, "tbtsleep": SLEEP_S}.get(kind))
    else:
        def request():
            replay()
            stream.synchronize()
    request.keep = (x, out)  # the graph reads x and writes out: both must live
    return request


# PRIO_STEP_TRACE=DIR: token-by-token and eager requests record each step's time (ns) once the phases
# run; main writes DIR/steps-OUT.txt (one request a line: its kind, then its steps).
TRACE = {"on": False, "rows": []}


def token_by_token(replay, out, kind="tbt", ctxsync=False, poll=None):
    """TBT_STEPS replays, each followed by the host-side sampler (the output's argmax read
    by .item()): the next step is launched after the host has the token. ctxsync: each replay
    waited for by torch.cuda.synchronize() first. poll (seconds between queries, or None): the
    argmax copied to pinned memory on the stream, an event recorded and polled until done
    (sleeping poll seconds between the queries), the token read from the host."""
    host = torch.zeros(1, dtype=torch.int64, pin_memory=True) if poll is not None else None
    done = torch.cuda.Event() if poll is not None else None

    def step():
        replay()
        if poll is not None:
            host.copy_(out.argmax(dim=-1), non_blocking=True)
            done.record()
            while not done.query():
                if poll:
                    time.sleep(poll)
            int(host[0])
            return
        if ctxsync:
            torch.cuda.synchronize()
        int(out.argmax().item())

    def request():
        if not TRACE["on"]:
            for _ in range(priolib.TBT_STEPS):
                step()
            return
        t = [time.monotonic_ns()]
        for _ in range(priolib.TBT_STEPS):
            step()
            t.append(time.monotonic_ns())
        TRACE["rows"].append((kind, [b - a for a, b in zip(t, t[1:])]))
    return request


def model_7b():
    """tbt7b: steps of 56 bf16 8192x8192 layers at batch 1 (weights made here, 7 GiB)."""
    g = torch.Generator(device="cuda").manual_seed(1)
    weights = [torch.randn(DIM_7B, DIM_7B, device="cuda", dtype=torch.bfloat16, generator=g).mul_(DIM_7B ** -0.5)
               for _ in range(LAYERS_7B)]
    replay, x, out = linears(1, DIM_7B, weights)
    request = token_by_token(replay, out, "tbt7b")
    request.keep = (weights, x, out)
    return request


def model_async(weights, side=False):
    """async: each step's graph takes its input row by the previous step's token (a table
    of DIM rows) and writes its own token (the argmax) on the GPU, so step k+1 needs no
    host in between. The host queues step k+1, then waits for step k's token: its copy to
    pinned memory (non_blocking, on the stream) and an event recorded after it. side
    (asyncside): the copy on a stream of its own, from a slot the step's stream fills,
    as vLLM's async scheduling copies its sampled tokens."""
    table = torch.randn(DIM, DIM, device="cuda", dtype=torch.bfloat16)
    tok = torch.zeros(1, device="cuda", dtype=torch.int64)

    def forward():
        y = table.index_select(0, tok)
        for w in weights:
            y = torch.nn.functional.linear(y, w)
        tok.copy_(y.argmax(dim=-1))
        return tok

    replay, _ = graphed(forward)
    host = torch.zeros(priolib.TBT_STEPS, dtype=torch.int64, pin_memory=True)
    copied = [torch.cuda.Event() for _ in range(priolib.TBT_STEPS)]
    slots = torch.zeros(priolib.TBT_STEPS, dtype=torch.int64, device="cuda")
    done = [torch.cuda.Event() for _ in range(priolib.TBT_STEPS)]
    copier = torch.cuda.Stream() if side else None

    def step(k):
        replay()
        if not side:
            host[k:k + 1].copy_(tok, non_blocking=True)
            copied[k].record()
            return
        # As vLLM's async output: the token kept in a slot of its own (a kernel on the
        # step's stream), copied to the host on a stream of its own after an event.
        torch.add(tok, 0, out=slots[k:k + 1])
        done[k].record()
        copier.wait_event(done[k])
        with torch.cuda.stream(copier):
            host[k:k + 1].copy_(slots[k:k + 1], non_blocking=True)
            copied[k].record(copier)

    def request():
        step(0)
        for k in range(priolib.TBT_STEPS):
            if k + 1 < priolib.TBT_STEPS:
                step(k + 1)  # queued before step k's token is read
            copied[k].synchronize()
            int(host[k])
    request.keep = (table, tok, host)
    return request


def model_generate():
    """generate: a small Llama (random weights, made on the GPU: a start of seconds), eager
    Hugging Face generate(): greedy, 8 new tokens (min_new_tokens: an end-of-sequence token
    does not cut it short)."""
    from transformers import LlamaConfig, LlamaForCausalLM
    cfg = LlamaConfig(hidden_size=2048, intermediate_size=5632, num_hidden_layers=8, num_attention_heads=16,
                      num_key_value_heads=16, vocab_size=32000, max_position_embeddings=1024)
    torch.manual_seed(0)
    with torch.device("cuda"):
        lm = LlamaForCausalLM(cfg)
    lm = lm.to("cuda", dtype=torch.bfloat16).eval()
    ids = torch.randint(0, cfg.vocab_size, (1, PROMPT), device="cuda")
    mask = torch.ones_like(ids)

    def request():
        with torch.inference_mode():
            out = lm.generate(input_ids=ids, attention_mask=mask, max_new_tokens=priolib.TBT_STEPS,
                              min_new_tokens=priolib.TBT_STEPS, do_sample=False, pad_token_id=0)
        int(out[0, -1].item())
    request.keep = (lm, ids, mask)
    return request


def model_eager():
    """eager: steps of small layers launched op by op, each read by the host."""
    g = torch.Generator(device="cuda").manual_seed(2)
    ws = [torch.randn(EAGER_DIM, EAGER_DIM, device="cuda", dtype=torch.bfloat16, generator=g).mul_(EAGER_DIM ** -0.5)
          for _ in range(EAGER_LAYERS)]
    x = torch.randn(1, EAGER_DIM, device="cuda", dtype=torch.bfloat16)

    def step():
        y = x
        for w in ws:
            y = torch.nn.functional.linear(y, w)
        int(y.argmax().item())

    def request():
        with torch.inference_mode():
            if not TRACE["on"]:
                for _ in range(priolib.TBT_STEPS):
                    step()
                return
            t = [time.monotonic_ns()]
            for _ in range(priolib.TBT_STEPS):
                step()
                t.append(time.monotonic_ns())
            TRACE["rows"].append(("eager", [b - a for a, b in zip(t, t[1:])]))
    request.keep = (ws, x)
    return request


def make(kind, weights):
    if kind == "tbt7b":
        return model_7b()
    if kind == "async":
        return model_async(weights)
    if kind == "asyncside":
        return model_async(weights, side=True)
    if kind == "generate":
        return model_generate()
    if kind == "eager":
        return model_eager()
    return model(kind, weights)


def measure(request, seconds=0.5, least=10):
    lat, end = [], time.monotonic_ns() + int(seconds * 1e9)
    while time.monotonic_ns() < end or len(lat) < least:
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
    requests = {k: make(k, weights) for k in kinds}
    for r in requests.values():  # warm-up: 30 requests, or 1 s of them (at least 3)
        end, n = time.monotonic_ns() + 1000000000, 0
        while n < 3 or (n < 30 and time.monotonic_ns() < end):
            r()
            n += 1
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
    TRACE["on"] = bool(os.environ.get("PRIO_STEP_TRACE"))
    res = priolib.run_phases(gap, phases, requests,
                             lambda lab, b: print("phase %s %d" % (lab, b), flush=True))
    priolib.write_l(out, "torch", service, bool(service), res)
    if TRACE["on"]:
        with open(os.path.join(os.environ["PRIO_STEP_TRACE"], "steps-%s.txt" % os.path.basename(os.path.dirname(os.path.abspath(out)))), "w") as f:
            f.writelines("%s %s\n" % (k, " ".join(map(str, steps))) for k, steps in TRACE["rows"])


if __name__ == "__main__":
    main()
