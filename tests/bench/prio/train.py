"""train.py - the neighbour H of the priorities benchmark: a PyTorch training loop.

    python3 train.py [--model gemm|llama|gpt] [--sync N] STOP READY OUT_PREFIX

gemm (the default, H `torch`): each step a linear layer's forward and backward pass as three
bf16 N x N x N matmuls (Y = X W, dW = X^T dY, dX = dY W^T; N = PRIO_GEMM_N, 8192), then an
optimizer-like, memory-bound update of PRIO_UPDATE_MIB (1024) MiB of fp32 parameters (SGD with
momentum: buf = 0.9 buf + grad, p -= lr buf, three elementwise kernels; grad bf16), and one
synchronise (the loss's .item()): its run-ahead is one step. Writes READY after five steps.

llama (H `llama`, `llama-sync20`): a Hugging Face transformers LlamaForCausalLM with random
weights (hidden 2048, intermediate 5632, 8 layers, 16 heads, vocab 32000), bf16 weights,
AdamW (lr 1e-5), a batch of 8 x 512 random tokens; each step forward with the loss, backward,
optimizer step. The loss is read (.item()) every N steps (--sync, default 1): with N > 1 the
loop runs ahead of the GPU between reads, as a training loop that logs rarely. Writes READY
after three warm-up steps (each read), then runs the measured loop.

gpt (H `gpt`): the same loop with a Hugging Face transformers GPT2LMHeadModel with random
weights (a GPT-style model: hidden 2048, 8 layers, 16 heads, vocab 50257, learnt positions,
GELU MLP of 4 x hidden, LayerNorm), bf16 weights, AdamW, a batch of 8 x 512 random tokens.

Until the file STOP exists; writes OUT_PREFIX.steps (priolib: CLOCK_MONOTONIC ns of each
step's end; with --sync N, "NS N" at each read, a start mark "NS 0" before the measured loop,
and at the end the steps since the last read, read once more).
"""
import os
import sys
import time

import torch


def gemm(stop, ready, prefix):
    n = int(os.environ.get("PRIO_GEMM_N", "8192"))
    elems = int(os.environ.get("PRIO_UPDATE_MIB", "1024")) * (1 << 20) // 4
    g = torch.Generator(device="cuda").manual_seed(0)
    bf = dict(device="cuda", dtype=torch.bfloat16, generator=g)
    x, w, dy = (torch.randn(n, n, **bf) for _ in range(3))
    params = torch.randn(elems, device="cuda", dtype=torch.float32, generator=g)
    buf = torch.zeros_like(params)
    grad = torch.randn(elems, **bf)
    ends = []
    while not os.path.exists(stop):
        y = x @ w
        dw = x.t() @ dy
        dx = dy @ w.t()
        buf.mul_(0.9).add_(grad)
        params.add_(buf, alpha=-1e-6)
        (y[0, 0] + dw[0, 0] + dx[0, 0] + params[0]).item()
        ends.append(time.monotonic_ns())
        if len(ends) == 5:
            open(ready, "w").close()
    with open(prefix + ".steps", "w") as f:
        f.write("# h impl=torch n=%d update_mib=%d\n" % (n, elems * 4 >> 20))
        f.write("".join("%d\n" % t for t in ends))


def model_of(name):
    """The model of --model llama or gpt (random weights, bf16, on the GPU) and its line's words."""
    torch.manual_seed(0)
    if name == "gpt":
        from transformers import GPT2Config, GPT2LMHeadModel
        cfg = GPT2Config(n_embd=2048, n_layer=8, n_head=16, vocab_size=50257, n_positions=1024)
        return GPT2LMHeadModel(cfg).to("cuda", dtype=torch.bfloat16), cfg.vocab_size, "hidden=%d layers=%d" % (
            cfg.n_embd, cfg.n_layer)
    from transformers import LlamaConfig, LlamaForCausalLM
    cfg = LlamaConfig(hidden_size=2048, intermediate_size=5632, num_hidden_layers=8, num_attention_heads=16,
                      num_key_value_heads=16, vocab_size=32000, max_position_embeddings=1024)
    return LlamaForCausalLM(cfg).to("cuda", dtype=torch.bfloat16), cfg.vocab_size, "hidden=%d layers=%d" % (
        cfg.hidden_size, cfg.num_hidden_layers)


def llama(stop, ready, prefix, sync, name="llama"):
    model, vocab, words = model_of(name)
    opt = torch.optim.AdamW(model.parameters(), lr=1e-5)
    ids = torch.randint(0, vocab, (8, 512), device="cuda")

    def step():
        loss = model(input_ids=ids, labels=ids).loss
        loss.backward()
        opt.step()
        opt.zero_grad(set_to_none=True)
        return loss

    for _ in range(3):  # warm-up: the allocator's pools, cuBLAS's plans
        step().item()
    ends = [(time.monotonic_ns(), 0)]  # the measured loop starts
    open(ready, "w").close()
    i = 0
    loss = None
    while not os.path.exists(stop):
        loss = step()
        i += 1
        if i % sync == 0:
            loss.item()
            ends.append((time.monotonic_ns(), sync))
    if i % sync:  # the steps since the last read: their end, read now
        loss.item()
        ends.append((time.monotonic_ns(), i % sync))
    with open(prefix + ".steps", "w") as f:
        f.write("# h impl=%s sync=%d %s batch=8x512\n" % (name, sync, words))
        f.write("".join("%d %d\n" % e for e in ends))


def main():
    args, model, sync = sys.argv[1:], "gemm", 1
    try:
        while args and args[0].startswith("--"):
            if args[0] == "--model" and args[1] in ("gemm", "llama", "gpt"):
                model = args[1]
            elif args[0] == "--sync" and int(args[1]) >= 1:
                sync = int(args[1])
            else:
                raise ValueError(args[0])
            args = args[2:]
    except (IndexError, ValueError):
        args = []
    if len(args) != 3 or (model == "gemm" and sync != 1):
        sys.exit("usage: train.py [--model gemm|llama|gpt] [--sync N (llama, gpt)] STOP READY OUT_PREFIX")
    if model == "gemm":
        gemm(*args)
    else:
        llama(*args, sync=sync, name=model)


if __name__ == "__main__":
    main()
