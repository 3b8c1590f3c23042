#!/usr/bin/env python3
"""Triton kernels fused by gpuopt.triton.fuse: build, check, time.

Pairs of tutorial-style Triton kernels, each fused by every strategy
(auto, thread, interleave, dynamic) through `gpuopt.triton.fuse`:

  add+softmax        vector add (2^26 fp32)       + row softmax (32768 x 1024 fp32)
  softmax+layernorm  row softmax (32768 x 1024)   + layer norm forward (32768 x 1024)
  matmul+add         fp16 matmul (4096^3, 128x128x64 tiles, 8 warps) + vector add (2^24 fp32)

Subcommands:
  prepare  (no GPU: Triton and gpu-opt) binds every pair's launches for an
           sm_90 GPU without one (gpuopt.triton.fuse.offline_target, placeholder
           tensors at 16-byte aligned addresses, as real allocations are) and
           builds the fused kernels into the fuse cache OUT/cache, which
           `measure` reads on a machine without gpu-opt. Writes OUT/prepare.json
           (per row: the build's key, strategy, gpu-opt's remarks or why not).
  measure  (GPU: torch, triton, the gpuopt package) per row: launches the
           kernels apart into reference outputs and the fused callable into
           its own (first use verifies bit for bit against the kernels apart;
           a difference is reported, never timed), compares all outputs bit
           for bit, then times with CUDA events (warm-up, then --reps
           iterations queued behind a GPU sleep so that host launch cost is
           hidden, median): each kernel alone, serial (back to back on one
           stream), two streams, and the fused callable. Prints one JSON table
           and writes it to --json.

  python3 benchmarks/triton_fuse/run.py prepare --out build/triton_fuse
  python3 benchmarks/triton_fuse/run.py measure --out build/triton_fuse --json results.json

On the GPU machine run it from the repository root with build/triton_fuse
carried; the package is imported from python/ when it is not installed.
"""

import argparse
import datetime
import hashlib
import importlib
import importlib.util
import json
import os
import statistics
import sys
import traceback

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))

if importlib.util.find_spec("gpuopt") is None:
    sys.path.insert(0, os.path.join(ROOT, "python"))

import triton  # noqa: E402
import triton.language as tl  # noqa: E402

# The module (gpuopt.triton exports its function `fuse` under the same name).
F = importlib.import_module("gpuopt.triton.fuse")

STRATEGIES = ["auto", "measured", "thread", "interleave", "dynamic"]


# ---------------------------------------------------------------------------
# Kernels (the Triton tutorials' add, softmax, layer norm forward, matmul)
# ---------------------------------------------------------------------------

@triton.jit
def add_kernel(x_ptr, y_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=m) + tl.load(y_ptr + offs, mask=m),
             mask=m)


@triton.jit
def softmax_kernel(out_ptr, in_ptr, in_stride, out_stride, n_cols, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    m = cols < n_cols
    x = tl.load(in_ptr + row * in_stride + cols, mask=m, other=-float("inf"))
    x = x - tl.max(x, 0)
    e = tl.exp(x)
    tl.store(out_ptr + row * out_stride + cols, e / tl.sum(e, 0), mask=m)


@triton.jit
def layernorm_kernel(X, Y, W, B, Mean, Rstd, stride, N, eps, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    Y += row * stride
    X += row * stride
    _mean = tl.zeros([BLOCK], dtype=tl.float32)
    for off in range(0, N, BLOCK):
        cols = off + tl.arange(0, BLOCK)
        _mean += tl.load(X + cols, mask=cols < N, other=0.).to(tl.float32)
    mean = tl.sum(_mean, axis=0) / N
    _var = tl.zeros([BLOCK], dtype=tl.float32)
    for off in range(0, N, BLOCK):
        cols = off + tl.arange(0, BLOCK)
        x = tl.load(X + cols, mask=cols < N, other=0.).to(tl.float32)
        x = tl.where(cols < N, x - mean, 0.)
        _var += x * x
    var = tl.sum(_var, axis=0) / N
    rstd = 1 / tl.sqrt(var + eps)
    tl.store(Mean + row, mean)
    tl.store(Rstd + row, rstd)
    for off in range(0, N, BLOCK):
        cols = off + tl.arange(0, BLOCK)
        mask = cols < N
        w = tl.load(W + cols, mask=mask)
        b = tl.load(B + cols, mask=mask)
        x = tl.load(X + cols, mask=mask, other=0.).to(tl.float32)
        tl.store(Y + cols, (x - mean) * rstd * w + b, mask=mask)


@triton.jit
def matmul_kernel(a_ptr, b_ptr, c_ptr, M, N, K, stride_am, stride_ak, stride_bk, stride_bn,
                  stride_cm, stride_cn, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr,
                  BLOCK_K: tl.constexpr, GROUP_M: tl.constexpr):
    pid = tl.program_id(0)
    num_pid_m = tl.cdiv(M, BLOCK_M)
    num_pid_n = tl.cdiv(N, BLOCK_N)
    num_pid_in_group = GROUP_M * num_pid_n
    group_id = pid // num_pid_in_group
    first_pid_m = group_id * GROUP_M
    group_size_m = min(num_pid_m - first_pid_m, GROUP_M)
    pid_m = first_pid_m + ((pid % num_pid_in_group) % group_size_m)
    pid_n = (pid % num_pid_in_group) // group_size_m
    offs_am = (pid_m * BLOCK_M + tl.arange(0, BLOCK_M)) % M
    offs_bn = (pid_n * BLOCK_N + tl.arange(0, BLOCK_N)) % N
    offs_k = tl.arange(0, BLOCK_K)
    a_ptrs = a_ptr + (offs_am[:, None] * stride_am + offs_k[None, :] * stride_ak)
    b_ptrs = b_ptr + (offs_k[:, None] * stride_bk + offs_bn[None, :] * stride_bn)
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k in range(0, tl.cdiv(K, BLOCK_K)):
        a = tl.load(a_ptrs, mask=offs_k[None, :] < K - k * BLOCK_K, other=0.0)
        b = tl.load(b_ptrs, mask=offs_k[:, None] < K - k * BLOCK_K, other=0.0)
        acc = tl.dot(a, b, acc)
        a_ptrs += BLOCK_K * stride_ak
        b_ptrs += BLOCK_K * stride_bk
    c = acc.to(tl.float16)
    offs_cm = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_cn = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    c_ptrs = c_ptr + stride_cm * offs_cm[:, None] + stride_cn * offs_cn[None, :]
    tl.store(c_ptrs, c, mask=(offs_cm[:, None] < M) & (offs_cn[None, :] < N))


# ---------------------------------------------------------------------------
# Pairs: each builds its launches from an allocator (torch tensors on the GPU,
# placeholders in prepare), strides from the shapes (contiguous tensors).
# ---------------------------------------------------------------------------

class Buffers:
    """Tensors by name: `alloc(name, shape, dtype, init)`; `outputs` the
    names the kernels write."""

    def __init__(self, make):
        self.make = make
        self.tensors = {}
        self.outputs = []

    def __call__(self, name, shape, dtype, init="randn", output=False):
        t = self.make(shape, dtype, init)
        self.tensors[name] = t
        if output:
            self.outputs.append(name)
        return t


def add_launch(buf, tag, n):
    x = buf(f"{tag}.x", (n,), "float32")
    y = buf(f"{tag}.y", (n,), "float32")
    out = buf(f"{tag}.out", (n,), "float32", "empty", output=True)
    return F.call(add_kernel, (triton.cdiv(n, 1024),), x, y, out, n, BLOCK=1024)


def softmax_launch(buf, tag, rows, cols):
    x = buf(f"{tag}.in", (rows, cols), "float32")
    y = buf(f"{tag}.out", (rows, cols), "float32", "empty", output=True)
    return F.call(softmax_kernel, (rows,), y, x, cols, cols, cols,
                  BLOCK=triton.next_power_of_2(cols), num_warps=8)


def layernorm_launch(buf, tag, rows, cols):
    x = buf(f"{tag}.x", (rows, cols), "float32")
    y = buf(f"{tag}.y", (rows, cols), "float32", "empty", output=True)
    w = buf(f"{tag}.w", (cols,), "float32")
    b = buf(f"{tag}.b", (cols,), "float32")
    mean = buf(f"{tag}.mean", (rows,), "float32", "empty", output=True)
    rstd = buf(f"{tag}.rstd", (rows,), "float32", "empty", output=True)
    return F.call(layernorm_kernel, (rows,), x, y, w, b, mean, rstd, cols, cols, 1e-5,
                  BLOCK=1024, num_warps=8)


def matmul_launch(buf, tag, m, n, k):
    a = buf(f"{tag}.a", (m, k), "float16")
    b = buf(f"{tag}.b", (k, n), "float16")
    c = buf(f"{tag}.c", (m, n), "float16", "empty", output=True)
    grid = (triton.cdiv(m, 128) * triton.cdiv(n, 128),)
    return F.call(matmul_kernel, grid, a, b, c, m, n, k, k, 1, n, 1, n, 1,
                  BLOCK_M=128, BLOCK_N=128, BLOCK_K=64, GROUP_M=8, num_warps=8, num_stages=3)


PAIRS = {
    "add+softmax": lambda buf: [add_launch(buf, "add", 1 << 26),
                                softmax_launch(buf, "softmax", 32768, 1024)],
    "softmax+layernorm": lambda buf: [softmax_launch(buf, "softmax", 32768, 1024),
                                      layernorm_launch(buf, "layernorm", 32768, 1024)],
    "matmul+add": lambda buf: [matmul_launch(buf, "matmul", 4096, 4096, 4096),
                               add_launch(buf, "add", 1 << 24)],
}


def placeholder_buffers():
    state = {"next": 1 << 32}

    def make(shape, dtype, init):
        size = 4 if dtype == "float32" else 2
        for s in shape:
            size *= s
        ptr = state["next"]
        state["next"] += (size + 4095) // 4096 * 4096
        return F.placeholder(dtype, ptr)
    return Buffers(make)


def torch_buffers(seed):
    import torch
    gen = torch.Generator(device="cuda").manual_seed(seed)

    def make(shape, dtype, init):
        dt = getattr(torch, dtype)
        if init == "empty":
            return torch.zeros(shape, dtype=dt, device="cuda")
        return torch.randn(shape, dtype=dt, device="cuda", generator=gen)
    return Buffers(make)


# ---------------------------------------------------------------------------
# prepare
# ---------------------------------------------------------------------------

def prepare(args):
    cache = os.path.join(args.out, "cache")
    os.makedirs(cache, exist_ok=True)
    rows = []
    with F.offline_target(args.capability):
        for pair, make in PAIRS.items():
            for strategy in args.strategies:
                if strategy == "measured":  # built as "auto"
                    continue
                row = {"pair": pair, "strategy": strategy}
                try:
                    calls = make(placeholder_buffers())
                    fz = F.fuse(*[c.kernel for c in calls], strategy=strategy, cache_dir=cache)
                    launches = fz.capture(*calls)
                    row["kernels"] = [{"name": ln.name, "grid": ln.grid, "block": ln.block,
                                       "shared": ln.shared,
                                       "ptx_sha256": hashlib.sha256(
                                           F.normalize_ptx(ln.ptx).encode()).hexdigest()[:16]}
                                      for ln in launches]
                    b = fz.build(launches)
                    row.update({"key": b.key, "fused_strategy": b.strategy,
                                "declined": b.declined, "remarks": b.remarks})
                    row["status"] = "declined" if b.declined else "built"
                except Exception as e:  # recorded, the other rows go on
                    row.update({"status": "error", "error": f"{type(e).__name__}: {e}"})
                rows.append(row)
                print(f"{pair:18} {strategy:10} {row['status']:8} "
                      f"{row.get('fused_strategy') or row.get('declined') or row.get('error', '')}"[:300],
                      flush=True)
    with open(os.path.join(args.out, "prepare.json"), "w") as f:
        json.dump({"date": datetime.datetime.now(datetime.timezone.utc).isoformat(),
                   "triton": triton.__version__, "capability": args.capability, "rows": rows},
                  f, indent=1)
    return 0


# ---------------------------------------------------------------------------
# measure
# ---------------------------------------------------------------------------

def timed(fn, reps, warmup):
    """Median ms of fn() over reps, each between two events, all queued
    behind a GPU sleep so that the host's launch cost is hidden."""
    import torch
    for _ in range(warmup):
        fn()
    torch.cuda.synchronize()
    starts = [torch.cuda.Event(enable_timing=True) for _ in range(reps)]
    ends = [torch.cuda.Event(enable_timing=True) for _ in range(reps)]
    torch.cuda._sleep(50_000_000)
    for s, e in zip(starts, ends):
        s.record()
        fn()
        e.record()
    torch.cuda.synchronize()
    return statistics.median(s.elapsed_time(e) for s, e in zip(starts, ends))


def launch_apart(calls):
    for c in calls:
        c.kernel[c.grid](*c.args, **c.kwargs)


def measure_row(pair, strategy, cache, reps, warmup):
    import torch
    row = {"pair": pair, "strategy": strategy}
    ref = torch_buffers(1234)
    ref_calls = PAIRS[pair](ref)
    got = torch_buffers(1234)
    calls = PAIRS[pair](got)
    # "measured": the model's choice, kept only if it times faster than the
    # kernels back to back (measure=True, once per shape).
    measured = strategy == "measured"
    fz = F.fuse(*[c.kernel for c in calls], strategy="auto" if measured else strategy,
                cache_dir=cache, measure=measured)
    launch_apart(ref_calls)
    try:
        launches = fz.capture(*calls)
        row["kernels"] = [{"name": ln.name, "grid": ln.grid, "block": ln.block,
                           "shared": ln.shared,
                           "ptx_sha256": hashlib.sha256(
                               F.normalize_ptx(ln.ptx).encode()).hexdigest()[:16]}
                          for ln in launches]
        fz(*calls)  # first use: built or read from the cache, verified
    except F.VerificationError as e:
        row.update({"status": "mismatch", "error": str(e)})
        return row
    except F.FuseError as e:
        row.update({"status": "error", "error": str(e)})
        return row
    torch.cuda.synchronize()
    (decision,) = fz.decisions.values()
    row.update({"choice": decision["choice"], "fused_strategy": decision.get("strategy"),
                "why": decision.get("why")})
    same = {name: bool(torch.equal(ref.tensors[name], got.tensors[name]))
            for name in got.outputs}
    row["bit_identical"] = all(same.values())
    row["outputs"] = same
    if not row["bit_identical"]:
        row["status"] = "mismatch"
        return row
    times = {}
    for i, c in enumerate(calls):
        times[f"alone:{c.kernel.fn.__name__ if hasattr(c.kernel, 'fn') else i}"] = timed(
            lambda c=c: c.kernel[c.grid](*c.args, **c.kwargs), reps, warmup)
    times["serial"] = timed(lambda: launch_apart(calls), reps, warmup)
    streams = [torch.cuda.Stream() for _ in calls]

    def two_streams():
        main = torch.cuda.current_stream()
        done = []
        for s, c in zip(streams, calls):
            s.wait_stream(main)
            with torch.cuda.stream(s):
                c.kernel[c.grid](*c.args, **c.kwargs)
            done.append(s)
        for s in done:
            main.wait_stream(s)
    times["streams"] = timed(two_streams, reps, warmup)
    times["fused"] = timed(lambda: fz(*calls), reps, warmup)
    row["times_ms"] = times
    row["speedup_vs_serial"] = times["serial"] / times["fused"]
    row["speedup_vs_streams"] = times["streams"] / times["fused"]
    row["status"] = "ok" if decision["choice"] == "fused" else "apart"
    row["stats"] = dict(fz.stats)
    return row


def measure(args):
    import torch
    cache = os.path.join(args.out, "cache")
    rows = []
    for pair in PAIRS:
        for strategy in args.strategies:
            try:
                row = measure_row(pair, strategy, cache, args.reps, args.warmup)
            except Exception as e:
                row = {"pair": pair, "strategy": strategy, "status": "error",
                       "error": f"{type(e).__name__}: {e}", "trace": traceback.format_exc()}
            rows.append(row)
            t = row.get("times_ms", {})
            print(f"{pair:18} {strategy:10} {row['status']:8} "
                  + (f"serial {t['serial']:.4f} streams {t['streams']:.4f} fused {t['fused']:.4f}"
                     if t else row.get("error", "")[:300]), file=sys.stderr, flush=True)
            torch.cuda.empty_cache()
    result = {"date": datetime.datetime.now(datetime.timezone.utc).isoformat(),
              "gpu": torch.cuda.get_device_name(), "torch": torch.__version__,
              "triton": triton.__version__, "reps": args.reps, "warmup": args.warmup,
              "rows": rows}
    text = json.dumps(result, indent=1)
    print(text)
    if args.json:
        with open(args.json, "w") as f:
            f.write(text)
    return 0 if all(r["status"] in ("ok", "apart") for r in rows) else 1


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = p.add_subparsers(dest="cmd", required=True)
    for name in ("prepare", "measure"):
        s = sub.add_parser(name)
        s.add_argument("--out", default=os.path.join(ROOT, "build", "triton_fuse"))
        s.add_argument("--strategies", type=lambda v: v.split(","), default=STRATEGIES)
        if name == "prepare":
            s.add_argument("--capability", type=int, default=90)
        else:
            s.add_argument("--json")
            s.add_argument("--reps", type=int, default=30)
            s.add_argument("--warmup", type=int, default=5)
    args = p.parse_args(argv)
    return prepare(args) if args.cmd == "prepare" else measure(args)


if __name__ == "__main__":
    sys.exit(main())
