#!/usr/bin/env python3
"""Where a partition's SMs lie: the same count of TPCs packed into
few GPCs (nvtaskset -n N, the default strategy), spread over every GPC
(--strategy spread), and an MPS client limited to the same share, each running
tests/bench/gpcbw.cu's memory stream and FMA loop (a fixed grid: the same work
in every configuration). Fresh processes, interleaved rounds, one MPS daemon.

Usage: gpcbw.py ROOT BIN OUTDIR   (GPCBW_SIZES="8,16,24,42,50" GPCBW_ROUNDS=3)
"""
import csv
import math
import os
import statistics
import subprocess
import sys
import tempfile

ROOT, BIN, OUT = sys.argv[1], sys.argv[2], sys.argv[3]
NVT = os.path.join(ROOT, "build/bin/nvtaskset")
PROBE = os.path.join(BIN, "gpcbw")
WORK = tempfile.mkdtemp(prefix="nvt-gpcbw.")
os.makedirs(OUT, exist_ok=True)
ENV = dict(os.environ, CUDA_MPS_PIPE_DIRECTORY=os.path.join(WORK, "mps"),
           CUDA_MPS_LOG_DIRECTORY=os.path.join(WORK, "mpslog"), CUDA_DEVICE_MAX_CONNECTIONS="8")
ENV.pop("CUDA_MPS_ACTIVE_THREAD_PERCENTAGE", None)
SIZES = [int(x) for x in os.environ.get("GPCBW_SIZES", "8,16,24,42,50").split(",")]
ROUNDS = int(os.environ.get("GPCBW_ROUNDS", "3"))
MODES = (("stream", "2048", "9"), ("fma", "200000", "9"))
CONFIGS = ("mps", "packed", "spread")


def run(args, env=ENV):
    p = subprocess.run(args, env=env, capture_output=True, text=True, timeout=120)
    if p.returncode:
        raise RuntimeError("%s failed (%d): %s" % (" ".join(args), p.returncode, p.stderr[-600:]))
    return dict(kv.split("=", 1) for kv in p.stdout.split()[-4:])


def main():
    total = 66
    run_plain = lambda a, e=ENV: subprocess.run(a, env=e, capture_output=True, text=True, timeout=120)
    run_plain([NVT, "--mps", "start"])
    rows = []
    try:
        for rnd in range(ROUNDS):
            for n in SIZES:
                for mode, arg, reps in MODES:
                    for config in CONFIGS:
                        probe = [PROBE, mode, arg, reps]
                        if config == "mps":
                            r = run(probe, dict(ENV, CUDA_MPS_ACTIVE_THREAD_PERCENTAGE=str(math.ceil(100 * n / total))))
                        else:
                            r = run([NVT, "-n", str(n), "--strategy", config] + probe)
                        rows.append((rnd, n, mode, config, int(r["sms"]), float(r["median_ms"]), float(r["gbps"])))
            print("round %d done" % rnd, flush=True)
    finally:
        run_plain([NVT, "--mps", "stop"])
    with open(os.path.join(OUT, "gpcbw.csv"), "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["round", "tpcs", "mode", "config", "sms_reported", "median_ms", "gbps"])
        w.writerows(rows)
    lines = ["Packed against spread TPCs, and MPS's share: median ms over rounds (ratio to MPS)", ""]
    for mode, _, _ in MODES:
        lines.append("%s:  TPCs   mps ms   packed ms (ratio)   spread ms (ratio)" % mode)
        for n in SIZES:
            med = {c: statistics.median(r[5] for r in rows if r[1] == n and r[2] == mode and r[3] == c)
                   for c in CONFIGS}
            lines.append("        %4d %8.3f %8.3f (%.3f)    %8.3f (%.3f)" % (
                n, med["mps"], med["packed"], med["packed"] / med["mps"], med["spread"],
                med["spread"] / med["mps"]))
        lines.append("")
    text = "\n".join(lines)
    open(os.path.join(OUT, "gpcbw_summary.txt"), "w").write(text + "\n")
    print(text, flush=True)


if __name__ == "__main__":
    main()
