"""PyTorch's GEMMs under libsmctrl masks set through ctypes, as SGLang-based
servers set them (libsmctrl_set_global_mask, libsmctrl_set_stream_mask with a
torch stream's cuda_stream), in a program that nvtaskset did not start.

cuBLAS runs most bf16 GEMMs on Hopper in thread-block clusters: a mask of N of
the GPU's T TPCs that holds the clusters must slow an 8192^2 matmul by about
T/N. The masks lie inside one GPC (its first 4 TPCs, a whole GPC of 8), as
libsmctrl_get_gpc_info_ext reports them; a mask of one TPC in each of 4 GPCs
cannot hold clusters of 4 and runs on those GPCs whole (reported, not judged).

Usage: python3 smctrl_torch.py LIBSMCTRL_SO     (called by tests/gpu/smctrl.sh)
Prints "NAME tpcs=N ms=M slowdown=S want=W" per case and "PASS/FAIL torch-NAME: ..."
lines; exits 1 on a failure. libsmctrl.so is loaded after CUDA is up.
"""
import ctypes
import sys

import torch

U64 = (1 << 64) - 1


def bits(mask):
    return [t for t in range(128) if mask >> t & 1]


def main():
    a = torch.randn(8192, 8192, device="cuda", dtype=torch.bfloat16)
    b = torch.randn(8192, 8192, device="cuda", dtype=torch.bfloat16)
    torch.cuda.synchronize()
    lib = ctypes.CDLL(sys.argv[1])
    lib.libsmctrl_set_global_mask.argtypes = [ctypes.c_uint64]
    lib.libsmctrl_set_stream_mask.argtypes = [ctypes.c_void_p, ctypes.c_uint64]
    n_gpcs, table = ctypes.c_uint32(), ctypes.c_void_p()
    rc = lib.libsmctrl_get_gpc_info_ext(ctypes.byref(n_gpcs), ctypes.byref(table), 0)
    n_tpcs = ctypes.c_uint32()
    rc2 = lib.libsmctrl_get_tpc_info_cuda(ctypes.byref(n_tpcs), 0)
    if rc or rc2:
        print(f"FAIL torch-queries: get_gpc_info_ext rc={rc}, get_tpc_info_cuda rc={rc2}")
        return 1
    gpcs = [int.from_bytes(ctypes.string_at(table.value + 16 * g, 16), "little")
            for g in range(n_gpcs.value)]
    total = n_tpcs.value
    low = [g & U64 for g in gpcs]  # the 64-bit API reaches TPCs 0-63
    four = next(sum(1 << t for t in bits(g)[:4]) for g in low if len(bits(g)) >= 4)
    eight = next(g for g in low if len(bits(g)) == 8)
    spread = sum(1 << bits(g)[0] for g in low[:4])
    print(f"gpus: {torch.cuda.get_device_name(0)}, {total} TPCs, {n_gpcs.value} GPCs; "
          f"4 in a GPC: {bits(four)}, a GPC of 8: {bits(eight)}, spread: {bits(spread)}")

    def time_ms(stream=None, reps=10):
        s = stream or torch.cuda.current_stream()
        with torch.cuda.stream(s):
            for _ in range(3):
                a @ b
            start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            start.record(s)
            for _ in range(reps):
                a @ b
            end.record(s)
        end.synchronize()
        return start.elapsed_time(end) / reps

    base = time_ms()
    print(f"whole tpcs={total} ms={base:.3f}")
    failed = 0

    def case(name, on, ms, judged=True):
        nonlocal failed
        n = len(bits(on))
        want = total / n
        got = ms / base
        print(f"{name} tpcs={n} ms={ms:.3f} slowdown={got:.2f} want={want:.2f}")
        if not judged:
            return
        ok = 0.6 * want <= got <= 1.5 * want
        failed += not ok
        print(f"{'PASS' if ok else 'FAIL'} torch-{name}: {n} of {total} TPCs slowed the matmul "
              f"{got:.2f}x (TPC ratio {want:.2f})")

    for name, on in (("global-4", four), ("global-8", eight)):
        lib.libsmctrl_set_global_mask(~on & U64)
        case(name, on, time_ms())
    lib.libsmctrl_set_global_mask(~spread & U64)
    case("global-spread-4", spread, time_ms(), judged=False)
    lib.libsmctrl_set_global_mask(0)
    cleared = time_ms()
    ok = cleared < 1.5 * base
    failed += not ok
    print(f"{'PASS' if ok else 'FAIL'} torch-global-cleared: {cleared:.3f} ms (whole GPU {base:.3f})")
    stream = torch.cuda.Stream()
    for name, on in (("stream-4", four), ("stream-8", eight)):
        lib.libsmctrl_set_stream_mask(ctypes.c_void_p(stream.cuda_stream), ~on & U64)
        case(name, on, time_ms(stream))
        other = time_ms()
        ok = other < 1.5 * base
        failed += not ok
        print(f"{'PASS' if ok else 'FAIL'} torch-{name}-other-stream: {other:.3f} ms "
              f"(whole GPU {base:.3f})")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
