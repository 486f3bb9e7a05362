"""hspin.py - neighbour H without persistent kernels: each step 20 launches of a kernel of
1056 CTAs (8 a SM) that each spin SPIN_US microseconds. python3 hspin.py STOP READY OUT.steps"""
import os, sys, time
import cupy as cp
stop, ready, outp = sys.argv[1:4]
us = int(os.environ.get("SPIN_US", "200"))
k = cp.RawKernel(r'''
extern "C" __global__ void spin(long long cycles, int *out) {
  long long t0 = clock64();
  while (clock64() - t0 < cycles) {}
  if (threadIdx.x == 0) out[blockIdx.x] = 1;
}''', "spin")
out = cp.zeros(1056, dtype=cp.int32)
cyc = us * 1755  # ~1.755 GHz
ends = []
while not os.path.exists(stop):
    for _ in range(20):
        k((1056,), (128,), (cp.int64(cyc), out))
    cp.cuda.Stream.null.synchronize()
    ends.append(time.monotonic_ns())
    if len(ends) == 5:
        open(ready, "w").close()
open(outp, "w").write("".join("%d\n" % t for t in ends))
