# A numba program whose primary context is released (cuda.close()) between two rounds of
# synchronised steps, as a test suite that closes CUDA between tests does.
import numpy as np
from numba import cuda


@cuda.jit
def k(a):
    i = cuda.grid(1)
    if i < a.size:
        a[i] += 1


for r in range(3):
    a = cuda.to_device(np.zeros(1 << 20, np.float32))
    s = cuda.stream()
    for step in range(300):
        k[1024, 1024, s](a)
        k[1024, 1024, s](a)
        s.synchronize()
    h = cuda.current_context().handle
    print("round", r, a.copy_to_host()[0], "context", getattr(h, "value", h), flush=True)
    del a, s
    cuda.close()
