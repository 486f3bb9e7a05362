#!/usr/bin/env python3
"""The size benchmark's two workloads that trail MPS under --sm-limit,
and which cuBLAS algorithm (tile, cluster shape) they got, without a profiler.

  gemm_algo.py
      In this process: a bf16 8192^3 torch.matmul, then a bf16
      TransformerEncoderLayer(d_model=2048, nhead=16, dim_feedforward=8192,
      batch_first=True) forward on 8x512 (eval, torch.no_grad). Prints one line:
        sms=S gemm_ms=.. gemm_tflops=.. block_ms=.. torch=..
      (sizes_worker.py's workloads and timed(): median of 15 samples; S is
      multi_processor_count as this process sees it). Start it with
      CUBLASLT_LOG_LEVEL=5 and CUBLASLT_LOG_FILE=PATH to have cuBLASLt log
      what it chose (the CUPTI profiler does not start under nvtaskset).

  gemm_algo.py --extract LOG HEADER EXCERPTS
      After that process ended: reads the cuBLASLt log LOG, appends HEADER
      and the log's distinct lines that mention 8192, cluster or tile
      (timestamps and pointers blanked, each with its count; the last 25 of
      the GEMM's part, before the first other bf16 matmul, and the last 40 of
      the block's part) to EXCERPTS, and prints one summary line:
        lt_lines=N lt_matmuls=N lt_gemm=algo:A,tile:T,stages:S,cluster:C[,smtarget:M][,custom:O]
        lt_gemm_calls=N lt_gemm_choices=N lt_block=MxNxK:TILE/CLUSTER;...
      lt_gemm is the algorithm of the last cublasLtMatmul on 8192x8192 bf16
      operands (lt_gemm_choices: how many different ones were seen), lt_block
      each other bf16 cublasLtMatmul shape (D's rows x cols x k) with its
      last tile and cluster shape (and @smN: the smCountTarget logged, if
      any); "none" where the log has no such line.
"""
import collections
import os
import re
import sys

REPS = int(os.environ.get("GEMM_ALGO_REPS", "15"))


def run():
    import torch
    # The size benchmark's timing and workloads (sizes_worker.py).
    sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "../../../bench"))
    from sizes_worker import block, gemm, timed
    sms = torch.cuda.get_device_properties(0).multi_processor_count
    n = 8192
    gemm_ms = timed(gemm(n, n, n, torch.bfloat16), reps=REPS)
    block_ms = timed(block(), reps=REPS)
    torch.cuda.synchronize()
    print("sms=%d gemm_ms=%.3f gemm_tflops=%.1f block_ms=%.3f torch=%s" % (
        sms, gemm_ms, 2 * n ** 3 / gemm_ms / 1e9, block_ms, torch.__version__), flush=True)


DESC = re.compile(r"\b([ABCD])desc=\[([^\]]*)\]")
FIELD = re.compile(r"\b(\w+)=([^\s\]\[,]+)")
ALGO = re.compile(r"\balgo=\[([^\]]*)\]")
NOISE = [(re.compile(r"^\[[^\]]*\]"), "[time]"), (re.compile(r"0[xX][0-9a-fA-F]+"), "0x."),
         (re.compile(r"\]\[\d+\]\["), "][pid]["), (re.compile(r"\s+$"), "")]


def fields(text):
    return dict(FIELD.findall(text))


def short(v, prefix):
    return v[len(prefix):] if v.startswith(prefix) else v


def parse_matmul(line):
    """Shape and algorithm of one cublasLtMatmul trace line, or None."""
    # cuBLAS 13 logs the square GEMM as cublasLtTSTMatmul (H100, 2026-11-22).
    if ("cublasLtMatmul]" not in line and "cublasLtTSTMatmul]" not in line) or "algo=[" not in line:
        return None
    desc = {k: fields(v) for k, v in DESC.findall(line)}
    algo = ALGO.search(line)
    if "A" not in desc or not algo:
        return None
    a = desc["A"]
    d = desc.get("D") or desc.get("C") or {}
    b = desc.get("B", {})
    transa = re.search(r"\btransa=OP_T", line, re.I) is not None
    try:
        k = int(a["rows"] if transa else a["cols"])
        shape = "%sx%sx%d" % (d.get("rows", "?"), d.get("cols", "?"), k)
    except (KeyError, ValueError):
        shape = "?"
    al = fields(algo.group(1))
    info = {
        "algo": al.get("algoId", "?"),
        "tile": short(al.get("tile", "?"), "MATMUL_TILE_"),
        "stages": short(al.get("stages", "?"), "MATMUL_STAGES_"),
        "cluster": short(al.get("clusterShape", "?"), "CLUSTER_SHAPE_"),
    }
    m = re.search(r"\bsmCountTarget=(\d+)", line)
    if m:
        info["smtarget"] = m.group(1)
    if "customOption" in al:
        info["custom"] = al["customOption"]
    for key in ("numSplitsK", "reductionScheme", "swizzle"):
        if key in al and al[key] not in ("0", "1", "NONE", "REDUCTION_SCHEME_NONE"):
            info[key] = al[key]
    sq = all(x.get("rows") == "8192" and x.get("cols") == "8192" for x in (a, b))
    bf16 = "16BF" in a.get("type", "")
    return shape, info, sq and bf16, bf16


def extract(log, header, excerpts):
    try:
        with open(log, errors="replace") as f:
            lines = f.read().splitlines()
    except OSError as e:
        lines = []
        header += " (no log: %s)" % e.strerror
    gemm, gemm_calls, choices, block, matmuls = None, 0, set(), {}, 0
    # Distinct lines (with counts) of the GEMM's phase, up to the first other
    # bf16 matmul, and of the block's, after it.
    seen = [collections.OrderedDict(), collections.OrderedDict()]
    phase = 0
    for line in lines:
        p = parse_matmul(line)
        if p:
            matmuls += 1
            shape, info, is_gemm, bf16 = p
            text = ",".join("%s:%s" % kv for kv in info.items())
            if is_gemm:
                gemm, gemm_calls = text, gemm_calls + 1
                choices.add(text)
            elif bf16:
                phase = 1
                block.pop(shape, None)
                block[shape] = "%s/%s%s" % (info["tile"], info["cluster"],
                                            "@sm" + info["smtarget"] if "smtarget" in info else "")
        if re.search(r"8192|cluster|tile", line, re.I):
            norm = line
            for rx, rep in NOISE:
                norm = rx.sub(rep, norm)
            norm = norm[:2000]
            seen[phase][norm] = seen[phase].pop(norm, 0) + 1
    with open(excerpts, "a") as f:
        f.write("=== %s log_lines=%d\n" % (header, len(lines)))
        for name, d, keep in (("gemm 8192^3", seen[0], 25), ("transformer block", seen[1], 40)):
            kept = list(d.items())[-keep:]
            f.write("--- %s: last %d of %d distinct lines that mention 8192, cluster or tile\n" % (
                name, len(kept), len(d)))
            for norm, count in kept:
                f.write("[x%d] %s\n" % (count, norm))
    print("lt_lines=%d lt_matmuls=%d lt_gemm=%s lt_gemm_calls=%d lt_gemm_choices=%d lt_block=%s" % (
        len(lines), matmuls, gemm or "none", gemm_calls, len(choices),
        ";".join("%s:%s" % kv for kv in block.items()) or "none"))


if __name__ == "__main__":
    if len(sys.argv) == 5 and sys.argv[1] == "--extract":
        extract(*sys.argv[2:])
    elif len(sys.argv) == 1:
        run()
    else:
        sys.exit("usage: gemm_algo.py | gemm_algo.py --extract LOG HEADER EXCERPTS")
