# Experiment build only: runB1.sh applies it to the device's copy of the tree before building, and
# nvtaskset itself reads no such variable. NVTASKSET_DEV_OLDARM=1 gives the bridge the half-soon
# rule of commit a6b84ec (the whole linger while half the last few gaps were within it, else none).
p = "src/shim/shimbridge.c"
s = open(p).read()
a = "\tlinger = (uint64_t)nvt_bridge_linger_us(&l) * 1000;\n"
assert a in s
s = s.replace(a, a + """\tif (getenv("NVTASKSET_DEV_OLDARM"))
\t\tlinger = !l.waits || l.soon_pm >= NVT_BRIDGE_ON_PM ? (uint64_t)NVT_BRIDGE_LINGER_US * 1000 : 0;
""")
open(p, "w").write(s)
