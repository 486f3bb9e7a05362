"""genalone.py - Hugging Face generate() alone, timed: the host-bound service of the
priorities benchmark (service.py's generate: a random-weight Llama, hidden 2048, 8 layers,
bf16, eager, 8 new tokens from a 32-token prompt), 5 requests to warm up and then REQUESTS
timed back to back. Prints one line: "generate n=N median_ms=M p90_ms=P p99_ms=Q".

    python3 genalone.py [REQUESTS]
"""
import os
import sys
import time

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import service  # noqa: E402


def main():
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 30
    request = service.model_generate()
    for _ in range(5):
        request()
    times = []
    for _ in range(n):
        t0 = time.perf_counter()
        request()
        times.append((time.perf_counter() - t0) * 1e3)
    times.sort()
    pick = lambda q: times[min(len(times) - 1, int(q * len(times)))]  # noqa: E731
    print("generate n=%d median_ms=%.2f p90_ms=%.2f p99_ms=%.2f" % (n, pick(0.5), pick(0.9), pick(0.99)))
    torch.cuda.synchronize()


if __name__ == "__main__":
    main()
