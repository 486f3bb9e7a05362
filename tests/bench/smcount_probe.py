#!/usr/bin/env python3
"""Why a partition told its SM count can still be slower than MPS's percentage of the same
count (docs/bench/smcount-*): for each size, under one MPS daemon, fresh processes of
tests/bench/smcount_probe_worker.py in interleaved rounds as
  mps       CUDA_MPS_ACTIVE_THREAD_PERCENTAGE=ceil(100 N / all TPCs)
  packed    nvtaskset -n N (whole GPCs first, the default)
  spread    nvtaskset --strategy spread -n N
  clusters  nvtaskset --strategy clusters -n N
  both      nvtaskset -n N under MPS's percentage as well
Prints one JSON line per process and a table of medians (ms, the GEMM kernel, its grid,
the SMs a spinning grid really ran on).

Usage: smcount_probe.py ROOT OUTDIR   (PROBE_SIZES=46,54 PROBE_ROUNDS=2 PROBE_CONFIGS=...)
"""
import json
import math
import os
import statistics
import subprocess
import sys
import tempfile

ROOT, OUT = os.path.abspath(sys.argv[1]), os.path.abspath(sys.argv[2])
NVT = os.path.join(ROOT, "build/bin/nvtaskset")
WORKER = os.path.join(ROOT, "tests/bench/smcount_probe_worker.py")
WORK = tempfile.mkdtemp(prefix="nvt-smprobe.")
ENV = dict(os.environ, CUDA_MPS_PIPE_DIRECTORY=os.path.join(WORK, "mps"),
           CUDA_MPS_LOG_DIRECTORY=os.path.join(WORK, "mpslog"), PYTHONUNBUFFERED="1")
for k in ("CUDA_MPS_ACTIVE_THREAD_PERCENTAGE", "NVTASKSET_SM_COUNT", "LD_PRELOAD"):
    ENV.pop(k, None)
SIZES = [int(s) for s in os.environ.get("PROBE_SIZES", "46,54").split(",")]
ROUNDS = int(os.environ.get("PROBE_ROUNDS", "2"))
CONFIGS = os.environ.get("PROBE_CONFIGS", "mps,packed,spread,clusters,both").split(",")


def args_of(config, n, total):
    py = [sys.executable, WORKER]
    pct = dict(ENV, CUDA_MPS_ACTIVE_THREAD_PERCENTAGE=str(math.ceil(100 * n / total)))
    return {"mps": (py, pct),
            "packed": ([NVT, "-n", str(n)] + py, ENV),
            "spread": ([NVT, "--strategy", "spread", "-n", str(n)] + py, ENV),
            "clusters": ([NVT, "--strategy", "clusters", "-n", str(n)] + py, ENV),
            "both": ([NVT, "-n", str(n)] + py, pct)}[config]


def main():
    os.makedirs(OUT, exist_ok=True)
    subprocess.run([NVT, "--calibrate"], env=dict(ENV, CUDA_MPS_PIPE_DIRECTORY="/dev/null"), check=True,
                   capture_output=True, timeout=60)
    total = json.loads(subprocess.run([NVT, "--topology", "--json", "--gpu", "0"], env=ENV, check=True,
                                      capture_output=True, text=True, timeout=60).stdout)["gpus"][0]["tpcs"]
    subprocess.run([NVT, "--mps", "start"], env=ENV, check=True, timeout=60)
    rows = []
    try:
        for rnd in range(ROUNDS):
            for n in SIZES:
                for c in CONFIGS:
                    args, env = args_of(c, n, total)
                    if c != "mps":
                        tpcs = subprocess.run(args[:-2] + ["--dry-run", "true"], env=env, capture_output=True,
                                              text=True, timeout=60).stdout.strip()
                    else:
                        tpcs = "-"
                    p = subprocess.run(args, env=env, capture_output=True, text=True, timeout=240)
                    line = [l for l in p.stdout.splitlines() if l.startswith("{")]
                    r = json.loads(line[0]) if line else {"error": p.stderr[-400:]}
                    r.update(round=rnd, tpcs=n, config=c, placement=tpcs[-200:])
                    rows.append(r)
                    print(json.dumps(r), flush=True)
    finally:
        subprocess.run([NVT, "--mps", "stop"], env=ENV, timeout=60)
    with open(os.path.join(OUT, "probe.jsonl"), "w") as f:
        f.writelines(json.dumps(r) + "\n" for r in rows)
    print("\n| TPCs | config | SMs told | SMs used | ms (median) | grid | kernel |")
    print("|---|---|---|---|---|---|---|")
    for n in SIZES:
        for c in CONFIGS:
            rs = [r for r in rows if r["tpcs"] == n and r["config"] == c and "ms" in r]
            if rs:
                print("| %d | %s | %s | %s | %.3f | %s | %s |" % (
                    n, c, rs[0]["sms"], "/".join(str(r["sms_used"]) for r in rs),
                    statistics.median(r["ms"] for r in rs), rs[0]["grid"], (rs[0]["kernel"] or "")[:90]))


if __name__ == "__main__":
    main()
