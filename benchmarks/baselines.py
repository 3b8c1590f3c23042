#!/usr/bin/env python3
"""Measure the baselines that horizontal fusion must beat.

One gpu-run invocation (a JSON run spec, so that process start-up, module
loading and input generation happen once) times, with CUDA events:
  - every suite kernel alone;
  - for every pair that fusion targets: each kernel alone again, the two back
    to back on one stream (serial), and the two on two streams released by
    one event (concurrent), these four interleaved round by round;
with the median, min and max over --repeat repetitions after --warmup.

Pairs:
  dl      all 10 pairs of HFuse's deep-learning kernels: im2col, maxpool,
          batchnorm_stats, upsample_bilinear, histogram;
  crypto  all 6 pairs of HFuse's four crypto kernels: ethash_like, blake2b,
          sha256d, blake256;
  gemm    Tacker-style: the tensor-core GEMM gemm_mma with each memory-bound
          kernel (the five DL kernels, ethash_like, reduce_shfl): 7 pairs.

Inputs are gpu-run's seeded random numbers at the sizes of the kernels'
headers (check_suite.py checks the same kernels for correctness). Output:
OUT_DIR/baselines-<gpu>.md, .csv and .json (the raw gpu-run report). The run
goes through gpuopt.bench (pip install ./python).

usage: baselines.py [--gpu-run PATH] [--out-dir DIR] [--warmup N] [--repeat N]
                    [--date YYYY-MM-DD] [--only-pairs SUBSTR] [--from-json FILE]
"""

import argparse
import csv
import datetime
import itertools
import json
import os
import re
import sys
import tempfile

from gpuopt import bench
from gpuopt.tools import ToolNotFound, find_tool

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

DL = ["im2col", "maxpool", "batchnorm_stats", "upsample_bilinear", "histogram"]
CRYPTO = ["ethash_like", "blake2b", "sha256d", "blake256"]
MEMORY_BOUND = DL + ["ethash_like", "reduce_shfl"]


def sm_count():
    """SMs of the GPU (PyTorch's view), else an H100 SXM's 132: the grids of
    the grid-stride kernels, here and in check_suite.py."""
    try:
        import torch
        if torch.cuda.is_available():
            return torch.cuda.get_device_properties(0).multi_processor_count
    except ImportError:
        pass
    return 132


def default_gpu_run():
    try:
        return find_tool("gpu-run")
    except ToolNotFound:
        return os.path.join(ROOT, "build", "bin", "gpu-run")


def cdiv(a, b):
    return (a + b - 1) // b


def s32(v):
    return f"scalar:s32:{v}"


def u32(v):
    return f"scalar:u32:{v}"


def kernel_specs(sms):
    """Launches at the problem sizes of the kernels' headers."""
    k = {}

    def add(label, ptx, grid, block, args, smem=0, kernel=None):
        spec = {"label": label, "module": os.path.join(ROOT, "test", "corpus", ptx),
                "grid": list(grid) if isinstance(grid, tuple) else [grid],
                "block": [block], "smem": smem, "args": args}
        if kernel:
            spec["kernel"] = kernel
        k[label] = spec

    N, C, H, W = 16, 64, 56, 56
    add("im2col", "nvcc/im2col.ptx", cdiv(N * C * H * W, 256), 256,
        [f"buf:f32:{N * C * H * W}:random:1"] +
        [s32(v) for v in (N, C, H, W, 3, 3, 1, 1, 1, 1, 1, 1, H, W)] +
        [f"buf:f32:{N * C * 9 * H * W}:out"])
    N, C, H, W, HO = 32, 64, 112, 112, 56
    add("maxpool", "nvcc/maxpool.ptx", cdiv(N * C * HO * HO, 256), 256,
        [f"buf:f32:{N * C * H * W}:random:2"] +
        [s32(v) for v in (N, C, H, W, HO, HO, 3, 3, 2, 2, 1, 1)] +
        [f"buf:f32:{N * C * HO * HO}:out", f"buf:s64:{N * C * HO * HO}:out"])
    N, C, HW = 64, 512, 28 * 28
    add("batchnorm_stats", "nvcc/batchnorm_stats.ptx", C, 256,
        [f"buf:f32:{N * C * HW}:random:3", s32(N), s32(C), s32(HW),
         f"buf:f32:{C}:out", f"buf:f32:{C}:out"])
    N, C, IH, OH = 32, 64, 64, 128
    add("upsample_bilinear", "nvcc/upsample_bilinear.ptx", cdiv(N * C * OH * OH, 256), 256,
        [f"buf:f32:{N * C * IH * IH}:random:4"] +
        [s32(v) for v in (N, C, IH, IH, OH, OH)] + [f"buf:f32:{N * C * OH * OH}:out"])
    n = 1 << 26
    add("histogram", "nvcc/histogram.ptx", 8 * sms, 256,
        [f"buf:u32:{n}:random:5:0:1024", f"scalar:s64:{n}", u32(1024), "buf:u32:1024:zero"],
        smem=4096)
    add("reduce_shfl", "nvcc/reduce_shfl.ptx", 8 * sms, 256,
        [f"buf:f32:{n}:random:6:0:1", f"scalar:s64:{n}", "buf:f32:1:zero"])
    pages, nonces = 1 << 25, 1 << 20
    add("ethash_like", "nvcc/ethash_like.ptx", cdiv(nonces, 128), 128,
        [f"buf:u32:{pages * 32}:random:7", u32(pages), "buf:u64:4:random:8",
         "scalar:u64:1234567", u32(nonces), f"buf:u64:{nonces * 4}:out"])
    nonces = 1 << 24
    add("blake2b", "nvcc/blake2b.ptx", cdiv(nonces, 256), 256,
        ["buf:u64:10:random:9", u32(0), u32(nonces), f"buf:u64:{nonces * 8}:out"])
    nonces = 1 << 26
    add("sha256d", "nvcc/sha256d.ptx", cdiv(nonces, 256), 256,
        ["buf:u32:20:random:10", u32(0), u32(nonces), f"buf:u32:{nonces * 8}:out"])
    add("blake256", "nvcc/blake256.ptx", cdiv(nonces, 256), 256,
        ["buf:u32:20:random:23", u32(0), u32(nonces), f"buf:u32:{nonces * 8}:out"])
    M = 8192
    for label, tile_m, block in (("gemm_mma", 128, 256), ("gemm_wgmma", 64, 128)):
        add(label, f"nvcc/{label}.ptx", (M // 128, M // tile_m), block,
            [f"buf:f16:{M * M}:random:11", f"buf:f16:{M * M}:random:12",
             f"buf:f32:{M * M}:out", s32(M), s32(M), s32(M)])

    rows, stride = 65536, 1024
    add("triton_softmax", "triton/softmax_fp32_b1024.ptx", rows, 128,
        [f"buf:f32:{rows * stride}:out", f"buf:f32:{rows * stride}:random:13",
         s32(stride), s32(stride), s32(1000), "null", "null"], smem=16)
    M, N = 16384, 4096
    add("triton_layernorm", "triton/layernorm_fwd_fp16.ptx", M, 256,
        [f"buf:f16:{M * N}:random:14", f"buf:f16:{M * N}:out", f"buf:f16:{N}:random:15",
         f"buf:f16:{N}:random:16", f"buf:f32:{M}:out", f"buf:f32:{M}:out",
         s32(N), s32(N), "scalar:f32:1e-5", "null", "null"], smem=32)
    M = 8192
    add("triton_matmul", "triton/matmul_fp16_128x128x64_w8_s3.ptx", (M // 128) ** 2, 256,
        [f"buf:f16:{M * M}:random:17", f"buf:f16:{M * M}:random:18", f"buf:f16:{M * M}:out",
         s32(M), s32(M), s32(M), s32(M), s32(M), s32(M), "null", "null"], smem=98304)
    Z, H, n, d = 4, 32, 4096, 64
    add("triton_attention", "triton/attn_fwd_noncausal_d64.ptx", (n // 128, Z * H), 256,
        [f"buf:f16:{Z * H * n * d}:random:{19 + i}" for i in range(3)] +
        [f"buf:f16:{Z * H * n * d}:out", "scalar:f32:0.125"] +
        [s32(s) for s in [H * n * d, n * d, d] * 4] + [s32(H), s32(n), "null", "null"],
        smem=65536)
    return k


def pairs():
    out = [("dl", a, b) for a, b in itertools.combinations(DL, 2)]
    out += [("crypto", a, b) for a, b in itertools.combinations(CRYPTO, 2)]
    out += [("gemm", "gemm_mma", b) for b in MEMORY_BOUND]
    return out


def gpu_slug(name):
    m = re.search(r"\b([A-Z]{1,2}\d{2,4}[A-Z]?)\b", name)
    return (m.group(1) if m else re.sub(r"[^A-Za-z0-9]+", "-", name)).lower()


def fmt(x):
    return f"{x:.4f}"


def portable(obj):
    """The same data with paths inside the repository made relative to it."""
    if isinstance(obj, str):
        return obj.replace(ROOT + os.sep, "")
    if isinstance(obj, list):
        return [portable(x) for x in obj]
    if isinstance(obj, dict):
        return {k: portable(v) for k, v in obj.items()}
    return obj


def describe_command(argv):
    """The command line as recorded in the results, without machine paths."""
    out, it = [], iter(argv)
    for a in it:
        if a in ("--gpu-run", "--out-dir"):
            v = next(it, "")
            rel = os.path.relpath(os.path.abspath(v), ROOT)
            out += [a, "gpu-run" if a == "--gpu-run" else
                    "OUT_DIR" if rel.startswith("..") else rel]
        else:
            out.append(a)
    return "python3 benchmarks/baselines.py " + " ".join(out)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--gpu-run", default=default_gpu_run())
    ap.add_argument("--out-dir", default=os.path.join(ROOT, "docs", "results"))
    ap.add_argument("--warmup", type=int, default=10)
    ap.add_argument("--repeat", type=int, default=30)
    ap.add_argument("--date", default=datetime.date.today().isoformat())
    ap.add_argument("--only-pairs", default=None,
                    help="measure only pairs whose name contains this (and their kernels)")
    ap.add_argument("--from-json", default=None,
                    help="write the tables again from a baselines-<gpu>.json (no GPU)")
    args = ap.parse_args(argv)

    if args.from_json:
        with open(args.from_json) as f:
            saved = json.load(f)
        write_results(saved["spec"], saved["report"], args.out_dir,
                      saved.get("date", args.date), saved.get("command", "(not recorded)"))
        return 0

    specs = kernel_specs(sm_count())
    chosen = [p for p in pairs() if not args.only_pairs or args.only_pairs in f"{p[1]}+{p[2]}"]
    labels = list(specs) if not args.only_pairs else sorted({k for p in chosen for k in p[1:]})
    spec = {"warmup": args.warmup, "repeat": args.repeat,
            "kernels": [specs[k] for k in labels],
            "groups": [{"name": f"{a}+{b}", "kernels": [a, b],
                        "modes": ["alone", "serial", "concurrent"]} for _, a, b in chosen]}
    os.makedirs(args.out_dir, exist_ok=True)
    with tempfile.TemporaryDirectory() as tmp:
        report, error, _ = bench.run_spec(
            args.gpu_run, spec, tmp, "baselines-spec", timeout=420, stream=True,
            log=lambda cmd: print("baselines:", cmd, flush=True))
        if error:
            print(f"baselines: error: gpu-run {error}", file=sys.stderr)
            return 1

    command = describe_command(argv if argv is not None else sys.argv[1:])
    write_results(spec, report, args.out_dir, args.date, command)
    return 0


def write_results(spec, report, out_dir, date, command):
    """OUT_DIR/baselines-<gpu>.md, .csv and .json from a run spec and gpu-run's
    report; the spec says which kernels and pairs were measured."""
    labels = [k["label"] for k in spec["kernels"]]
    kind_of = {(a, b): kind for kind, a, b in pairs()}
    chosen = [(kind_of.get(tuple(g["kernels"]), ""), *g["kernels"]) for g in spec["groups"]]
    dev = report["device"]
    stem = os.path.join(out_dir, f"baselines-{gpu_slug(dev['name'])}")
    os.makedirs(out_dir, exist_ok=True)
    with open(stem + ".json", "w") as f:
        json.dump(portable({"command": command, "date": date, "spec": spec,
                            "report": report}), f, indent=1)
    kernels = {k["label"]: k for k in report["kernels"]}
    rows_csv = []
    md = [f"# Baselines for fusion on {dev['name']}", "",
          f"- GPU: {dev['name']} (compute capability {dev['compute_capability']}, "
          f"{dev['multiprocessors']} SMs, {dev['l2_bytes'] // (1 << 20)} MiB L2, "
          f"driver {dev['driver_version'] // 1000}.{dev['driver_version'] % 1000 // 10})",
          f"- Date: {date}",
          f"- Command: `{command.strip()}` (one gpu-run --spec process)",
          f"- Method: CUDA events around each repetition, {spec['warmup']} warm-up and "
          f"{spec['repeat']} timed repetitions enqueued back to back; times in ms, median "
          "(min-max); spread = (max - min) / median. Inputs: seeded random numbers at "
          "the sizes of the kernels' headers; kernels from test/corpus (PTX, JIT-compiled "
          "by the driver).",
          "- serial: both kernels on one stream; concurrent: one stream each, released "
          "by one event; speedup = serial / concurrent. A pair's four measurements (A "
          "alone, B alone, serial, concurrent) are interleaved round by round, so that "
          "clock drift affects them alike.", "",
          "## Kernels alone", "",
          "| kernel | grid | block | smem | regs | median | min | max | spread |",
          "| --- | --- | --- | ---: | ---: | ---: | ---: | ---: | ---: |"]
    for label in labels:
        k = kernels[label]
        t = k["time"]
        grid = "x".join(str(g) for g in k["grid"] if g != 1) or "1"
        md.append(f"| {label} | {grid} | {k['block'][0]} | {k['dynamic_smem']} | "
                  f"{k['registers']} | {fmt(t['median_ms'])} | {fmt(t['min_ms'])} | "
                  f"{fmt(t['max_ms'])} | {100 * t['spread']:.1f}% |")
        rows_csv.append({"kind": "alone", "name": label, "set": "", "a": label, "b": "",
                         "a_alone_ms": t["median_ms"], "b_alone_ms": "",
                         "serial_ms": "", "serial_min_ms": "", "serial_max_ms": "",
                         "concurrent_ms": "", "concurrent_min_ms": "",
                         "concurrent_max_ms": "", "speedup": "",
                         "min_ms": t["min_ms"], "max_ms": t["max_ms"],
                         "spread": t["spread"]})

    md += ["", "## Pairs", "",
           "| set | pair | A alone | B alone | A + B | serial | concurrent | speedup | "
           "spread serial / concurrent |",
           "| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |"]
    groups = {g["name"]: g for g in report.get("groups", [])}
    for kind, a, b in chosen:
        g = groups[f"{a}+{b}"]
        ta, tb = g["alone"][a]["median_ms"], g["alone"][b]["median_ms"]
        s, c = g["serial"], g["concurrent"]
        speedup = s["median_ms"] / c["median_ms"]
        md.append(f"| {kind} | {a} + {b} | {fmt(ta)} | {fmt(tb)} | {fmt(ta + tb)} | "
                  f"{fmt(s['median_ms'])} ({fmt(s['min_ms'])}-{fmt(s['max_ms'])}) | "
                  f"{fmt(c['median_ms'])} ({fmt(c['min_ms'])}-{fmt(c['max_ms'])}) | "
                  f"{speedup:.3f} | {100 * s['spread']:.1f}% / {100 * c['spread']:.1f}% |")
        rows_csv.append({"kind": "pair", "name": f"{a}+{b}", "set": kind, "a": a, "b": b,
                         "a_alone_ms": ta, "b_alone_ms": tb,
                         "serial_ms": s["median_ms"], "serial_min_ms": s["min_ms"],
                         "serial_max_ms": s["max_ms"], "concurrent_ms": c["median_ms"],
                         "concurrent_min_ms": c["min_ms"], "concurrent_max_ms": c["max_ms"],
                         "speedup": speedup, "min_ms": "", "max_ms": "",
                         "spread": max(s["spread"], c["spread"])})
    md += ["", "Fusion of a pair beats the baselines when the fused kernel takes less "
           "than the concurrent time (and the serial time).", ""]
    with open(stem + ".md", "w") as f:
        f.write("\n".join(md))
    with open(stem + ".csv", "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=list(rows_csv[0]))
        w.writeheader()
        w.writerows(rows_csv)
    print("\n".join(md))
    print(f"baselines: wrote {stem}.md, .csv and .json")


if __name__ == "__main__":
    sys.exit(main())
