# Experiment build only: NVTASKSET_DEV_PREV=1 gives the bridge the learnt linger of commit 9eb06b8
# (shares of weight 1/16, no slack) beside the committed rule (weight 1/32, a quarter's slack).
import re
p = "src/core/bridge.c"
s = open(p).read()
s = s.replace('#include <string.h>\n', '#include <stdlib.h>\n#include <string.h>\n\nstatic int dev_prev(void)\n{\n\tstatic int v = -1;\n\tif (v < 0)\n\t\tv = getenv("NVTASKSET_DEV_PREV") != NULL;\n\treturn v;\n}\n', 1)
a = "l->share[i] = l->waits ? l->share[i] - l->share[i] / 32 + in / 32 : in;"
assert a in s
s = s.replace(a, "l->share[i] = l->waits ? (dev_prev() ? l->share[i] - l->share[i] / 16 + in / 16 : l->share[i] - l->share[i] / 32 + in / 32) : in;")
b = "(NVT_BRIDGE_SLACK_DIV * total + caught) * NVT_BRIDGE_SWITCHES_US"
assert b in s
s = s.replace(b, "(NVT_BRIDGE_SLACK_DIV * total + (dev_prev() ? 0 : caught)) * NVT_BRIDGE_SWITCHES_US")
open(p, "w").write(s)
