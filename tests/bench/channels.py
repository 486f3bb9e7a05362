#!/usr/bin/env python3
"""What the channel count buys (paper 000's MPS Pitfall 4, Fig. 8):
with and without MPS (a daemon of our own), CUDA_DEVICE_MAX_CONNECTIONS unset
(CUDA's own count) and 2, 4, 8:
  fig8     tests/bench/channels.cu: 8 single-block kernels of 20 ms in 4
           streams, and 16 in 8 streams (the makespan; the kernels' timeline)
  torch    tests/bench/streams_worker.py: PyTorch with 1-8 streams
Writes fig8.csv (every kernel), fig8.md, torch.csv, torch.md, fig8.png if
matplotlib is there.

Usage: channels.py OUTDIR   (CHANNELS_REPS=2)
"""
import csv
import os
import shutil
import subprocess
import sys
import tempfile

OUT = os.path.abspath(sys.argv[1])
HERE = os.path.dirname(os.path.abspath(__file__))
WORK = tempfile.mkdtemp(prefix="nvt-channels.")
REPS = int(os.environ.get("CHANNELS_REPS", "2"))
CHANNELS = ("cuda", "1", "2", "4", "8")
MODES = ("nomps", "mps")
CONFIGS = ((4, 8), (8, 16), (16, 32))
BASE = dict(os.environ, CUDA_MPS_PIPE_DIRECTORY=os.path.join(WORK, "mps"),
            CUDA_MPS_LOG_DIRECTORY=os.path.join(WORK, "mpslog"))
for k in ("CUDA_DEVICE_MAX_CONNECTIONS", "LD_PRELOAD", "NVTASKSET_PARTITION"):
    BASE.pop(k, None)


def env_of(mode, ch):
    env = dict(BASE)
    if mode == "nomps":
        env["CUDA_MPS_PIPE_DIRECTORY"] = "/dev/null"
    if ch != "cuda":
        env["CUDA_DEVICE_MAX_CONNECTIONS"] = ch
    return env


def run(args, env):
    p = subprocess.run(args, env=env, capture_output=True, text=True, timeout=120)
    if p.returncode:
        raise RuntimeError("%s failed (%d): %s" % (" ".join(args), p.returncode, p.stderr[-600:]))
    return [dict(kv.split("=", 1) for kv in line.split()) for line in p.stdout.splitlines() if "=" in line]


def fig8(probe):
    kernels, spans = [], {}
    for rep in range(REPS):
        for streams, n in CONFIGS:
            for mode in MODES:
                for ch in CHANNELS:
                    lines = run([probe, str(streams), str(n), "20"], env_of(mode, ch))
                    for l in lines[:-1]:
                        kernels.append([rep, streams, mode, ch, l["kernel"], l["stream"], l["launch_us"],
                                        l["start_us"], l["end_us"]])
                    spans.setdefault((streams, mode, ch), []).append(float(lines[-1]["makespan_ms"]))
    with open(os.path.join(OUT, "fig8.csv"), "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["rep", "streams", "mps", "channels", "kernel", "stream", "launch_us", "start_us", "end_us"])
        w.writerows(kernels)
    lines = ["Fig. 8: makespan in ms of K single-block 20 ms kernels in S streams (kernel k on "
             "stream k %% S), each rep; ideal %s" % ", ".join("%d ms for %d/%d" % (20 * n // s, n, s)
                                                               for s, n in CONFIGS), "",
             "| streams/kernels | MPS | CUDA's | 1 | 2 | 4 | 8 |", "|---|---|---|---|---|---|---|"]
    for streams, n in CONFIGS:
        for mode in MODES:
            lines.append("| %d/%d | %s | %s |" % (streams, n, "yes" if mode == "mps" else "no", " | ".join(
                "/".join("%.0f" % x for x in spans[(streams, mode, ch)]) for ch in CHANNELS)))
    return kernels, lines


def torch_streams():
    rows = []
    for mode in MODES:
        for ch in CHANNELS:
            for l in run([sys.executable, os.path.join(HERE, "streams_worker.py")], env_of(mode, ch)):
                rows.append([mode, ch, l["workload"], int(l["streams"]), float(l["ms_per_iter"])])
    with open(os.path.join(OUT, "torch.csv"), "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["mps", "channels", "workload", "streams", "ms_per_iter"])
        w.writerows(rows)
    lines = ["PyTorch, ms per iteration (every stream's work once)", "",
             "| workload | streams | MPS | CUDA's | 1 | 2 | 4 | 8 |", "|---|---|---|---|---|---|---|---|"]
    for wl in ("sleep", "mlp"):
        for s in (1, 2, 4, 8):
            for mode in MODES:
                cells = [r[4] for ch in CHANNELS for r in rows if r[:4] == [mode, ch, wl, s]]
                lines.append("| %s | %d | %s | %s |" % (wl, s, "yes" if mode == "mps" else "no",
                                                        " | ".join("%.3f" % c for c in cells)))
    return lines


def plot(kernels):
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return
    fig, axes = plt.subplots(len(MODES), len(CHANNELS), figsize=(14, 5), sharex=True, sharey=True)
    colours = ["tab:blue", "tab:orange", "tab:green", "tab:red", "tab:purple"]
    for i, mode in enumerate(MODES):
        for j, ch in enumerate(CHANNELS):
            ax = axes[i][j]
            for k in kernels:
                if k[0] == 0 and k[1] == 4 and k[2] == mode and k[3] == ch:
                    b, e = float(k[7]) / 1e3, float(k[8]) / 1e3
                    ax.barh(int(k[4]), e - b, left=b, color=colours[int(k[5]) % 4])
                    ax.plot([float(k[6]) / 1e3], [int(k[4])], "k|")
            ax.set_title("%s, %s channels" % ("MPS" if mode == "mps" else "no MPS",
                                              "CUDA's" if ch == "cuda" else ch), fontsize=9)
            if i == len(MODES) - 1:
                ax.set_xlabel("ms")
            if j == 0:
                ax.set_ylabel("kernel (colour: stream)")
    fig.suptitle("8 single-block kernels of 20 ms in 4 streams (paper 000, Fig. 8); | = launch returned")
    fig.tight_layout()
    fig.savefig(os.path.join(OUT, "fig8.png"), dpi=100)


def main():
    os.makedirs(OUT, exist_ok=True)
    probe = os.path.join(WORK, "channels")
    subprocess.run(["nvcc", "-O2", "-arch=native", "-o", probe, os.path.join(HERE, "channels.cu")], check=True)
    subprocess.run(["nvidia-cuda-mps-control", "-d"], env=BASE, check=True, timeout=30)
    try:
        kernels, lines = fig8(probe)
        with open(os.path.join(OUT, "fig8.md"), "w") as f:
            f.write("\n".join(lines) + "\n")
        print("\n".join(lines), flush=True)
        plot(kernels)
        if os.environ.get("CHANNELS_TORCH", "1") == "1":
            lines = torch_streams()
            with open(os.path.join(OUT, "torch.md"), "w") as f:
                f.write("\n".join(lines) + "\n")
            print("\n".join(lines), flush=True)
    finally:
        subprocess.run(["nvidia-cuda-mps-control"], input="quit\n", env=BASE, text=True,
                       capture_output=True, timeout=30)
        shutil.rmtree(WORK, ignore_errors=True)


main()
