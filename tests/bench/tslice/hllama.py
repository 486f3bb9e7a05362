"""hllama.py - neighbour H: a Hugging Face Llama-style model, random weights, AdamW, bf16,
loss read each step (or every PRIO_SYNC steps). python3 hllama.py STOP READY OUT.steps"""
import os, sys, time
import torch
from transformers import LlamaConfig, LlamaForCausalLM
stop, ready, outp = sys.argv[1:4]
sync = int(os.environ.get("PRIO_SYNC", "1"))
cfg = LlamaConfig(hidden_size=2048, intermediate_size=5632, num_hidden_layers=8, num_attention_heads=16,
                  num_key_value_heads=16, vocab_size=32000, max_position_embeddings=1024)
torch.manual_seed(0)
m = LlamaForCausalLM(cfg).to("cuda", dtype=torch.bfloat16)
opt = torch.optim.AdamW(m.parameters(), lr=1e-5)
ids = torch.randint(0, 32000, (8, 512), device="cuda")
ends = []
i = 0
while not os.path.exists(stop):
    loss = m(input_ids=ids, labels=ids).loss
    loss.backward()
    opt.step(); opt.zero_grad(set_to_none=True)
    i += 1
    if i % sync == 0:
        loss.item()
        ends.append(time.monotonic_ns())
    if i == 5 * sync:
        open(ready, "w").close()
with open(outp, "w") as f:
    f.write("".join("%d\n" % t for t in ends))
