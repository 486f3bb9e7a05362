"""TPC list text ("0-15,32") to sets and back, for the GPU tests and benchmarks."""


def expand(text):
    """'0-3,7' -> {0, 1, 2, 3, 7}"""
    s = set()
    for part in text.split(","):
        a, _, b = part.partition("-")
        s.update(range(int(a), int(b or a) + 1))
    return s


def compact(values):
    """{0, 1, 2, 3, 7} -> '0-3,7'"""
    s, out, i = sorted(values), [], 0
    while i < len(s):
        j = i
        while j + 1 < len(s) and s[j + 1] == s[j] + 1:
            j += 1
        out.append(str(s[i]) if i == j else "%d-%d" % (s[i], s[j]))
        i = j + 1
    return ",".join(out)
