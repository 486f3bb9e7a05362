# Experiment build only (runs B1, B4, B5): runB1.sh applies it to the device's copy of the tree
# before building, and nvtaskset itself reads no such variable. NVTASKSET_DEV_OLDARM=1 gives the
# bridge a half-soon rule: the whole linger while half the gaps of the learnt shares (weight 1/16)
# were within it, else none (commit a6b84ec's rule, whose average had weight 1/8: oldarm-soon.py).
p = "src/shim/shimbridge.c"
s = open(p).read()
a = "\tlinger = (uint64_t)nvt_bridge_linger_us(&l) * 1000;\n"
assert a in s
s = s.replace(a, a + """\tif (getenv("NVTASKSET_DEV_OLDARM")) {
\t\tuint64_t t = 0, c = 0;
\t\tfor (int i = 0; i < NVT_BRIDGE_GAPS; i++) {
\t\t\tt += l.share[i];
\t\t\tif (i < NVT_BRIDGE_GAPS - 1)
\t\t\t\tc += l.share[i];
\t\t}
\t\tlinger = !l.waits || 2 * c >= t ? (uint64_t)NVT_BRIDGE_LINGER_US * 1000 : 0;
\t}
""")
open(p, "w").write(s)
