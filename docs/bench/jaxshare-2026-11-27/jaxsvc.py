"""jaxsvc.py MODE N - a JAX service token by token: N requests every 10 ms of 8 steps (16 bf16
4096^2 layers at batch 1, one jitted function); each step waited for by MODE: ready
(y.block_until_ready()) or item (int(jnp.argmax(y)): the token to the host). Prints request
p50/p99, later steps' p50/p90 (us) and JAX's version."""
import os
import sys
import time

os.environ.setdefault("XLA_PYTHON_CLIENT_PREALLOCATE", "false")
import jax
import jax.numpy as jnp

mode, N = sys.argv[1], int(sys.argv[2])
key = jax.random.PRNGKey(0)
ws = [jax.random.normal(jax.random.fold_in(key, i), (4096, 4096), dtype=jnp.bfloat16) * (4096 ** -0.5) for i in range(16)]


@jax.jit
def step(x, ws):
    for w in ws:
        x = x @ w
    return x


x = jnp.ones((1, 4096), dtype=jnp.bfloat16)
for _ in range(5):
    step(x, ws).block_until_ready()
req, steps, stamps = [], [], []
nxt = time.monotonic()
for i in range(N + 20):
    nxt += 0.010
    while time.monotonic() < nxt:
        pass
    t = [time.monotonic_ns()]
    for j in range(8):
        y = step(x, ws)
        if mode == "item":
            int(jnp.argmax(y))
        else:
            y.block_until_ready()
        t.append(time.monotonic_ns())
    if i >= 20:
        stamps.append(t)
        req.append((t[-1] - t[0]) / 1e3)
        steps += [(b - a) / 1e3 for a, b in zip(t[1:], t[2:])]
if os.environ.get("JAXSVC_OUT"):  # each request's stamps (CLOCK_MONOTONIC ns): start, each wait's return
    with open(os.environ["JAXSVC_OUT"], "w") as f:
        for r in stamps:
            f.write(" ".join(map(str, r)) + "\n")
req.sort()
steps.sort()
print("jax %s %s: request p50 %.0f p90 %.0f p99 %.0f us, over 10 ms %d, later steps p50 %.0f p90 %.0f p99 %.0f us (%d requests)" % (
    jax.__version__, mode, req[len(req) // 2], req[int(0.9 * (len(req) - 1))], req[int(0.99 * (len(req) - 1))],
    sum(r > 10000 for r in req), steps[len(steps) // 2], steps[int(0.9 * (len(steps) - 1))],
    steps[int(0.99 * (len(steps) - 1))], len(req)))
