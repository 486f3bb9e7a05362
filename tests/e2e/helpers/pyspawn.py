#!/usr/bin/env python3
"""A Python launcher for tests/e2e/tree.sh, run under nvtaskset.

    pyspawn.py HOW GO STOP STATE APP

Waits until file GO exists, then starts one worker by HOW and waits for it:
  popen        subprocess.Popen of "APP loop STOP STATE.child" (CPython starts
               it with vfork where it can: no fork handler runs)
  spawn        a multiprocessing Process, start method "spawn" (a new Python)
  forkserver   a multiprocessing Process, start method "forkserver" (forked
               from a server process that a new Python runs)
The worker's PID goes to STATE.childpid. A multiprocessing worker launches one
kernel on the fake driver itself (through ctypes, as a CUDA library in that
worker would), writes the TPCs it ran on to STATE.child and waits for STOP.
"""
import ctypes
import multiprocessing
import os
import subprocess
import sys
import time


class Launch(ctypes.Structure):
    """struct fakecuda_launch (tests/fake/fakecuda.h)."""
    _fields_ = [
        ("tmd_version", ctypes.c_uint8),
        ("mask_enabled", ctypes.c_int),
        ("disable", ctypes.c_uint32 * 4),
        ("hung", ctypes.c_int),
        ("ran_tpcs", ctypes.c_uint64 * 4),
        ("callbacks", ctypes.c_int),
        ("disable_hi", ctypes.c_uint32 * 4),
        ("stray_bits", ctypes.c_int),
    ]


def write(path, text):
    with open(path + ".tmp", "w") as f:
        f.write(text + "\n")
    os.rename(path + ".tmp", path)


def tpc_list(words):
    """The TPCs of a 256-bit set as a list text, "8-9,12", as fakeapp writes it."""
    tpcs = [t for t in range(256) if words[t // 64] >> (t % 64) & 1]
    items, i = [], 0
    while i < len(tpcs):
        j = i
        while j + 1 < len(tpcs) and tpcs[j + 1] == tpcs[j] + 1:
            j += 1
        items.append(str(tpcs[i]) if i == j else "%d-%d" % (tpcs[i], tpcs[j]))
        i = j + 1
    return ",".join(items)


def wait_for(path):
    while not os.path.exists(path):
        time.sleep(0.02)


def worker(stop, state):
    cuda = ctypes.CDLL("libcuda.so.1")
    if cuda.cuInit(0):
        sys.exit("cuInit failed")
    cuda.cuLaunchKernel(ctypes.c_void_p(1), 1, 1, 1, 1, 1, 1, 0, None, None, None)
    rec = Launch()
    if cuda.fakecuda_last_launch(ctypes.byref(rec)):
        sys.exit("no launch record")
    write(state + ".childpid", str(os.getpid()))
    write(state + ".child", tpc_list(rec.ran_tpcs) + ("" if not rec.hung else " hung"))
    wait_for(stop)


def main():
    how, go, stop, state, app = sys.argv[1:6]
    wait_for(go)
    if how == "popen":
        child = subprocess.Popen([app, "loop", stop, state + ".child"])
        write(state + ".childpid", str(child.pid))
        sys.exit(child.wait())
    process = multiprocessing.get_context(how).Process(target=worker, args=(stop, state))
    process.start()
    process.join()
    sys.exit(process.exitcode)


if __name__ == "__main__":
    main()
