"""Capture the Triton kernels that PyTorch Inductor generates for six programs
of two independent ops, with and without combo kernels, for gpu-opt's
horizontal fusion (runs on the GPU machine).

For each program (softmax + layernorm, add + softmax, row-sum + layernorm,
max-pool + upsample, batch-norm statistics + histogram, ALU-heavy elementwise
+ add) it

  1. compiles the program with torch.compile twice, combo_kernels off
     ("plain") and on ("combo"), each with fresh Inductor/Triton caches and a
     dynamo reset, and records every Triton kernel launch of one call (after a
     first call that compiled and autotuned): kernel name, PTX (the
     CompiledKernel's asm["ptx"]), grid (x, y, z), num_warps (block =
     num_warps * 32), dynamic shared memory (metadata.shared) and the launch
     arguments (tensors: dtype, storage elements, which program input or
     output it is, read or written; scalars: type and value; Triton's
     constexpr arguments are not kernel parameters, the two trailing scratch
     pointers of Triton 3.6 entries are). Each recorded launch's argument
     count is checked against the PTX .entry's parameter list, and the block
     against .reqntid: any mismatch fails the program loudly.
  2. checks that Inductor made exactly two kernels without combo kernels and
     one with them (Triton launches recorded by the hook, GPU kernels seen by
     torch.profiler, kernel calls in Inductor's generated wrapper code).
     Inductor's default partition never combines a pointwise kernel with a
     reduction (add + softmax, histogram + batch-norm statistics): for those
     the combo compile is repeated with a partition that puts every node in
     one combo kernel ("forced"), and both are recorded (--combo-fallback).
  3. checks the compiled outputs against eager PyTorch.
  4. times, with CUDA events (median of --reps after --warmup): each captured
     kernel launched again through Triton's launcher with its recorded
     arguments; each program end to end, eager and compiled (combo off and
     on, compiled again with Inductor's default launcher), per call and as a
     replayed CUDA graph.

Output (--out DIR):
  DIR/summary.json                  versions, GPU, programs, errors
  DIR/<prog>/separate_<i>.ptx       the combo-off kernels, in launch order
  DIR/<prog>/combo.ptx              the combo kernel (combo_<i>.ptx if several)
  DIR/<prog>/combo_default_<i>.ptx  with a forced combo: the default's kernels
  DIR/<prog>/launches.json          launches with gpu-run argument specs
                                    (buf:TYPE:COUNT:random:SEED for inputs,
                                    buf:TYPE:COUNT:out for outputs, zero for
                                    inputs that are all zeros, scalar:TYPE:V,
                                    null for the scratch pointers), shared
                                    inputs, checks and times

Inputs shared by two kernels are one tensor in PyTorch; gpu-run buffers cannot
alias across kernel specs, so each input gets one seed (the same for every
kernel that reads it) and identical contents. Integer inputs (indices) get
gpu-run's random integers in the [min, max] range of the real tensor, so that
indirect indexing stays in bounds.

Hook: the class property triton.compiler.compiler.CompiledKernel.run is
wrapped, so that the launcher object which Inductor's generated launcher
calls as runner(grid_0, grid_1, grid_2, stream, function, metadata,
launch_metadata, enter_hook, exit_hook, *args) records its arguments. The
capture compiles set torch._inductor.config.use_static_cuda_launcher = False,
because the static launcher (Inductor's default) launches the cubin without
Triton's launcher; the end-to-end timings use Inductor's defaults.

usage: python -m gpuopt.capture.inductor [--out DIR] [--programs NAME,...]
           [--warmup N] [--reps N] [--combo-fallback forced|none] [--no-e2e]
           [--no-graph] [--no-profiler] [--list]
(needs torch and triton: pip install ./python[inductor]; the benchmark's
benchmarks/inductor/dump_kernels.py is this command)

Then, on the development machine: benchmarks/inductor/fuse_and_spec.py --dump
DIR, and on the GPU machine benchmarks/inductor/report.py --dump DIR.
"""

import contextlib
import datetime
import json
import math
import os
import platform
import re
import struct
import sys
import time
import traceback

from gpuopt.tools import command_parser

SCRIPT_VERSION = 1
SEED_BASE = 1000  # program p, input i: seed SEED_BASE * (p + 1) + i

# torch dtype name (str(dtype) without "torch.") -> gpu-run element type
GPU_RUN_TYPE = {
    "float32": "f32", "float16": "f16", "bfloat16": "bf16", "float64": "f64",
    "int64": "s64", "int32": "s32", "int16": "s16", "int8": "s8",
    "uint8": "u8", "uint16": "u16", "uint32": "u32", "uint64": "u64",
    "bool": "u8",
}
# Triton signature type -> gpu-run scalar type
TRITON_SCALAR = {
    "i1": "u8", "i8": "s8", "i16": "s16", "i32": "s32", "i64": "s64",
    "u1": "u8", "u8": "u8", "u16": "u16", "u32": "u32", "u64": "u64",
    "fp16": "f16", "bf16": "bf16", "fp32": "f32", "f32": "f32", "fp64": "f64",
}
TYPE_SIZE = {"u8": 1, "s8": 1, "b8": 1, "u16": 2, "s16": 2, "b16": 2, "f16": 2,
             "bf16": 2, "u32": 4, "s32": 4, "b32": 4, "f32": 4, "u64": 8,
             "s64": 8, "b64": 8, "f64": 8, "pred": 1}
FLOAT_TYPES = {"f16", "bf16", "f32", "f64"}
LEADING_RUNNER_ARGS = 9  # gridX, gridY, gridZ, stream, function, metadata,
#                          launch_metadata, launch_enter_hook, launch_exit_hook


def log(*a):
    print("[dump]", *a, flush=True)


# ---------------------------------------------------------------------------
# Pure helpers (no torch; tested without a GPU)
# ---------------------------------------------------------------------------

def parse_ptx_entries(ptx):
    """[{name, params: [ptx types], reqntid: [x, y, z] or None}] of a module."""
    out = []
    for m in re.finditer(r"\.entry\s+([\w$.]+)\s*\(([^)]*)\)", ptx):
        params = []
        for p in m.group(2).split(","):
            p = p.strip()
            if not p:
                continue
            t = re.search(r"\.param\s+(?:\.align\s+\d+\s+)?\.(\w+)", p)
            params.append(t.group(1) if t else "?")
        tail = ptx[m.end():m.end() + 400]
        body = tail.split("{", 1)[0]
        r = re.search(r"\.reqntid\s+(\d+)(?:\s*,\s*(\d+))?(?:\s*,\s*(\d+))?", body)
        reqntid = [int(r.group(i) or 1) for i in (1, 2, 3)] if r else None
        out.append({"name": m.group(1), "params": params, "reqntid": reqntid})
    return out


def f32_text(v):
    """A decimal that strtod + (float) turns into v rounded to float32."""
    f = struct.unpack("<f", struct.pack("<f", float(v)))[0]
    if math.isnan(f) or math.isinf(f):
        raise ValueError(f"scalar {v} is not finite")
    return repr(f)


def scalar_spec(sig_type, value, ptx_type=None):
    """gpu-run scalar spec for a Triton scalar argument. The PTX parameter
    type decides where the signature's type does not fit it (size or
    integer/float)."""
    t = TRITON_SCALAR.get(sig_type)
    if ptx_type and ptx_type in TYPE_SIZE:
        pt = {"b8": "u8", "b16": "u16", "b32": "u32", "b64": "u64", "pred": "u8"}.get(ptx_type, ptx_type)
        if t is None or TYPE_SIZE[t] != TYPE_SIZE[pt] or (t in FLOAT_TYPES) != (pt in FLOAT_TYPES):
            t = pt
    if t is None:
        raise ValueError(f"unsupported scalar type {sig_type!r}")
    if t in FLOAT_TYPES:
        text = f32_text(value) if t != "f64" else repr(float(value))
    else:
        if isinstance(value, bool):
            value = int(value)
        if isinstance(value, float):
            if value != int(value):
                raise ValueError(f"integer parameter got {value}")
            value = int(value)
        if t.startswith("u") and value < 0:  # two's complement into unsigned
            value &= (1 << (8 * TYPE_SIZE[t])) - 1
        text = str(int(value))
    return f"scalar:{t}:{text}"


def buffer_spec(gtype, count, init):
    """init: "out", "zero", ("random", seed) or ("random", seed, lo, hi)."""
    if count <= 0:
        raise ValueError("a buffer needs at least one element")
    if init in ("out", "zero"):
        return f"buf:{gtype}:{count}:{init}"
    if init[0] == "random":
        if len(init) == 2:
            return f"buf:{gtype}:{count}:random:{init[1]}"
        return f"buf:{gtype}:{count}:random:{init[1]}:{init[2]}:{init[3]}"
    raise ValueError(f"unknown init {init!r}")


def pointer_role(name):
    """Inductor names pointer arguments in_ptrN (read), out_ptrN (written)
    and in_out_ptrN (both); others (user kernels, workspaces) are unknown."""
    if name.startswith("in_out_ptr"):
        return "inout"
    if name.startswith("out_ptr"):
        return "out"
    if name.startswith("in_ptr"):
        return "in"
    return "unknown"


def input_init(info, seed):
    """gpu-run init of a program input from its summary (dtype, all_zero,
    min, max)."""
    if info.get("all_zero"):
        return "zero"
    if info["dtype"].startswith(("float", "bfloat")):
        return ("random", seed)
    lo, hi = int(info["min"]), int(info["max"]) + 1
    if info["dtype"] == "bool":
        lo, hi = 0, 2
    return ("random", seed, lo, hi)


def param_spec(p, inputs, seeds):
    """gpu-run spec of one recorded parameter (dict made by the hook)."""
    kind = p["kind"]
    if kind in ("null", "scratch_null"):
        return "null"
    if kind == "scratch":
        return buffer_spec("u8", p["bytes"], "zero")
    if kind == "scalar":
        return scalar_spec(p["sig_type"], p["value"], p.get("ptx_type"))
    if kind != "tensor":
        raise ValueError(f"unknown parameter kind {kind!r}")
    gtype = GPU_RUN_TYPE.get(p["dtype"])
    if gtype is None:
        raise ValueError(f"{p['name']}: dtype {p['dtype']} has no gpu-run type")
    if p.get("input") is not None:
        i = p["input"]
        return buffer_spec(gtype, p["count"], input_init(inputs[i], seeds[i]))
    if p["role"] in ("out", "inout"):
        return buffer_spec(gtype, p["count"], "out")
    # Read but produced outside this kernel: not an independent program.
    return buffer_spec(gtype, p["count"], ("random", p.get("seed", 999)))


def check_against_ptx(launch, entry):
    """Errors (strings) where a recorded launch does not fit its PTX entry."""
    errors = []
    if entry is None:
        return [f"no .entry {launch['kernel']} in its PTX"]
    n_rec, n_ptx = len(launch["params"]), len(entry["params"])
    if n_rec != n_ptx:
        errors.append(f"{launch['kernel']}: recorded {n_rec} arguments, the PTX "
                      f".entry has {n_ptx} parameters ({', '.join(entry['params'])})")
    for p, t in zip(launch["params"], entry["params"]):
        size = TYPE_SIZE.get(t)
        if p["kind"] in ("tensor", "null", "scratch", "scratch_null") and size != 8:
            errors.append(f"{launch['kernel']}: parameter {p['index']} ({p['name']}) "
                          f"is a pointer but the PTX parameter is .{t}")
        if p["kind"] == "scalar":
            spec = scalar_spec(p["sig_type"], p["value"], t)
            if TYPE_SIZE[spec.split(":")[1]] != size:
                errors.append(f"{launch['kernel']}: scalar {p['name']} does not fit .{t}")
    block = launch["block"]
    if entry.get("reqntid") and entry["reqntid"] != block:
        errors.append(f"{launch['kernel']}: block {block} but .reqntid {entry['reqntid']}")
    return errors


def shared_inputs(launches):
    """Program inputs read by more than one launch: [{input, uses: [{launch,
    param}]}]. In gpu-run they are separate buffers with the same seed."""
    uses = {}
    for li, L in enumerate(launches):
        for p in L["params"]:
            if p["kind"] == "tensor" and p.get("input") is not None:
                uses.setdefault(p["input"], []).append({"launch": li, "param": p["index"]})
    return [{"input": i, "uses": u} for i, u in sorted(uses.items())
            if len({x["launch"] for x in u}) > 1]


def dependencies(launches):
    """Buffers that one launch writes and another reads or writes (neither a
    program input nor ...): the kernels are then not independent."""
    found = []
    for a in range(len(launches)):
        for b in range(a + 1, len(launches)):
            pa = {p["buffer"]: p for p in launches[a]["params"] if p["kind"] == "tensor"}
            for q in launches[b]["params"]:
                if q["kind"] != "tensor" or q["buffer"] not in pa:
                    continue
                p = pa[q["buffer"]]
                if p["role"] == "in" and q["role"] == "in":
                    continue  # both read: a shared input
                found.append({"launches": [a, b], "params": [p["index"], q["index"]],
                              "buffer": p.get("input_name") or p.get("output_name") or "intermediate"})
    return found


def grid_text(grid):
    g = list(grid) + [1] * (3 - len(grid))
    if g[2] != 1:
        return f"{g[0]}x{g[1]}x{g[2]}"
    if g[1] != 1:
        return f"{g[0]}x{g[1]}"
    return str(g[0])


def stats(samples):
    s = sorted(samples)
    n = len(s)
    med = s[n // 2] if n % 2 else 0.5 * (s[n // 2 - 1] + s[n // 2])
    return {"median_ms": med, "min_ms": s[0], "max_ms": s[-1],
            "mean_ms": sum(s) / n, "spread": (s[-1] - s[0]) / med if med else 0.0, "n": n}


# ---------------------------------------------------------------------------
# Programs
# ---------------------------------------------------------------------------

class Program:
    def __init__(self, name, description, fn, make_inputs, input_names, sizes):
        self.name, self.description, self.fn = name, description, fn
        self.make_inputs, self.input_names, self.sizes = make_inputs, input_names, sizes


def programs():
    import torch
    import torch.nn.functional as F

    def randn(gen, *shape):
        return torch.randn(*shape, generator=gen, device="cuda", dtype=torch.float32)

    M, N = 8192, 4096
    P = []

    def softmax_layernorm(x, y, w, b):
        return torch.softmax(x, -1), F.layer_norm(y, (N,), w, b, 1e-5)

    P.append(Program(
        "softmax_layernorm", f"softmax(x, -1) and layer_norm(y) with weight and bias; "
        f"x, y: {M}x{N} fp32", softmax_layernorm,
        lambda g: [randn(g, M, N), randn(g, M, N), 1 + 0.1 * randn(g, N), 0.1 * randn(g, N)],
        ["x", "y", "weight", "bias"], {"M": M, "N": N}))

    def add_softmax(a, b, x):
        return a + b, torch.softmax(x, -1)

    P.append(Program(
        "add_softmax", f"a + b and softmax(x, -1); a, b, x: {M}x{N} fp32", add_softmax,
        lambda g: [randn(g, M, N), randn(g, M, N), randn(g, M, N)],
        ["a", "b", "x"], {"M": M, "N": N}))

    def rowsum_layernorm(x, y, w, b):
        return x.sum(-1), F.layer_norm(y, (N,), w, b, 1e-5)

    P.append(Program(
        "rowsum_layernorm", f"x.sum(-1) and layer_norm(y) with weight and bias; "
        f"x, y: {M}x{N} fp32", rowsum_layernorm,
        lambda g: [randn(g, M, N), randn(g, M, N), 1 + 0.1 * randn(g, N), 0.1 * randn(g, N)],
        ["x", "y", "weight", "bias"], {"M": M, "N": N}))

    n, c, h, w, ih = 32, 64, 112, 112, 64

    def maxpool_upsample(x, y):
        return (F.max_pool2d(x, kernel_size=3, stride=2, padding=1),
                F.interpolate(y, scale_factor=2, mode="bilinear", align_corners=False))

    P.append(Program(
        "maxpool_upsample", f"max_pool2d(x, 3, stride 2, padding 1), x: {n}x{c}x{h}x{w}; "
        f"bilinear 2x upsampling of y: {n}x{c}x{ih}x{ih}; fp32", maxpool_upsample,
        lambda g: [randn(g, n, c, h, w), randn(g, n, c, ih, ih)], ["x", "y"],
        {"N": n, "C": c, "H": h, "W": w, "IH": ih}))

    bn, bc, bhw, nidx, bins = 64, 512, 28, 1 << 22, 1024

    def bnstats_histogram(x, idx, hist):
        var, mean = torch.var_mean(x, dim=(0, 2, 3), correction=0)
        hist.index_put_((idx,), torch.ones_like(idx, dtype=hist.dtype), accumulate=True)
        return mean, var

    P.append(Program(
        "bnstats_histogram", f"batch-norm statistics var_mean(x, dim=(0, 2, 3)), x: "
        f"{bn}x{bc}x{bhw}x{bhw} fp32; histogram of {nidx} int64 indices into {bins} int32 "
        "bins, hist.index_put_((idx,), ones, accumulate=True) on an input (a Triton "
        "atomic-add kernel; torch.histc and bincount are not lowered to Triton)",
        bnstats_histogram,
        lambda g: [randn(g, bn, bc, bhw, bhw),
                   torch.randint(0, bins, (nidx,), generator=g, device="cuda", dtype=torch.int64),
                   torch.zeros(bins, device="cuda", dtype=torch.int32)],
        ["x", "idx", "hist"], {"N": bn, "C": bc, "HW": bhw * bhw, "indices": nidx, "bins": bins}))

    def alu_add(x, a, b):
        y = x
        for _ in range(8):
            y = torch.sin(y) * torch.exp(-y * y) + torch.tanh(y)
        return y, a + b

    P.append(Program(
        "alu_add", f"8 rounds of y = sin(y) * exp(-y*y) + tanh(y) on x, and a + b; "
        f"x, a, b: {M}x{N} fp32", alu_add,
        lambda g: [randn(g, M, N), randn(g, M, N), randn(g, M, N)],
        ["x", "a", "b"], {"M": M, "N": N}))
    return P


PROGRAM_NAMES = ["softmax_layernorm", "add_softmax", "rowsum_layernorm",
                 "maxpool_upsample", "bnstats_histogram", "alu_add"]


# ---------------------------------------------------------------------------
# The hook
# ---------------------------------------------------------------------------

class Recorder:
    """Wraps CompiledKernel.run; records launches while active."""

    def __init__(self):
        self.active = False
        self.launches = []
        self.wrapped = {}  # id(CompiledKernel) -> (kernel, runner, wrapper)
        self.installed = False

    def install(self):
        from triton.compiler import compiler as tc
        prop = tc.CompiledKernel.__dict__.get("run")
        if not isinstance(prop, property):
            raise RuntimeError("triton.compiler.compiler.CompiledKernel.run is not a property "
                               f"in this Triton ({type(prop)}): the hook needs updating")
        rec = self

        def fget(kernel):
            runner = prop.fget(kernel)
            entry = rec.wrapped.get(id(kernel))
            if entry is not None and entry[0] is kernel and entry[1] is runner:
                return entry[2]
            wrapper = rec._make_wrapper(kernel, runner)
            rec.wrapped[id(kernel)] = (kernel, runner, wrapper)
            return wrapper

        tc.CompiledKernel.run = property(fget, prop.fset, prop.fdel)
        self._orig_prop = prop
        self.installed = True

    def _make_wrapper(self, kernel, runner):
        rec = self

        def wrapper(*a, **kw):
            if rec.active:
                rec.record(kernel, runner, a, kw)
            return runner(*a, **kw)

        wrapper.__wrapped_runner__ = runner
        return wrapper

    def record(self, kernel, runner, a, kw):
        self.launches.append({"kernel_obj": kernel, "runner": runner, "args": a, "kwargs": kw})

    def start(self):
        self.launches = []
        self.active = True

    def stop(self):
        self.active = False
        out, self.launches = self.launches, []
        return out


def describe_launch(raw, inputs_by_storage, outputs_by_storage):
    """The recorded launch as a JSON-able dict (PTX apart)."""
    import torch
    kernel, a = raw["kernel_obj"], raw["args"]
    md = kernel.metadata
    src = kernel.src
    sig = dict(getattr(src, "signature", {}) or {})
    if not sig:
        raise RuntimeError(f"{kernel.name}: the CompiledKernel has no signature")
    names, types = list(sig.keys()), list(sig.values())
    extra = len(a) - len(types)
    if extra != LEADING_RUNNER_ARGS:
        raise RuntimeError(
            f"{kernel.name}: the launcher got {len(a)} positional arguments for a "
            f"signature of {len(types)} ({', '.join(names)}); expected "
            f"{LEADING_RUNNER_ARGS} leading launch arguments")
    grid = [int(a[0]), int(a[1]), int(a[2])]
    kargs = a[LEADING_RUNNER_ARGS:]
    num_warps = int(md.num_warps)
    num_ctas = int(getattr(md, "num_ctas", 1) or 1)
    params = []
    for name, ty, v in zip(names, types, kargs):
        if isinstance(ty, str) and ty == "constexpr":
            continue
        if not isinstance(ty, str):
            raise RuntimeError(f"{kernel.name}: tuple/aggregate parameter {name} ({ty}) "
                               "is not supported")
        p = {"index": len(params), "name": name, "sig_type": ty}
        if ty.startswith("*"):
            if v is None:
                p["kind"] = "null"
            elif isinstance(v, torch.Tensor):
                st = v.untyped_storage()
                esize = v.element_size()
                if v.data_ptr() != st.data_ptr():
                    raise RuntimeError(f"{kernel.name}: argument {name} is a view at storage "
                                       f"offset {v.storage_offset()}; gpu-run buffers start "
                                       "at their allocation")
                p.update({"kind": "tensor", "dtype": str(v.dtype).replace("torch.", ""),
                          "count": st.nbytes() // esize, "shape": list(v.shape),
                          "role": pointer_role(name), "buffer": st.data_ptr()})
                inp = inputs_by_storage.get(st.data_ptr())
                outp = outputs_by_storage.get(st.data_ptr())
                p["input"] = inp[0] if inp else None
                p["input_name"] = inp[1] if inp else None
                p["output"] = outp if outp is not None else None
                p["output_name"] = f"output {outp}" if outp is not None else None
            else:
                raise RuntimeError(f"{kernel.name}: pointer argument {name} is a "
                                   f"{type(v).__name__}, not a tensor")
        elif ty.startswith("tensordesc") or ty == "nvTmaDesc":
            raise RuntimeError(f"{kernel.name}: TMA descriptor argument {name} is not supported")
        else:
            if not isinstance(v, (int, float, bool)):
                raise RuntimeError(f"{kernel.name}: scalar {name} ({ty}) is a {type(v).__name__}")
            p.update({"kind": "scalar", "value": v})
        params.append(p)
    for sname in ("global_scratch", "profile_scratch"):
        size = int(getattr(md, f"{sname}_size", 0) or 0)
        p = {"index": len(params), "name": sname, "sig_type": "*i8"}
        if size > 0:
            p.update({"kind": "scratch", "bytes": grid[0] * grid[1] * grid[2] * num_ctas * size,
                      "align": int(getattr(md, f"{sname}_align", 1) or 1)})
        else:
            p["kind"] = "scratch_null"
        params.append(p)
    cluster = list(getattr(md, "cluster_dims", (1, 1, 1)) or (1, 1, 1))
    return {"kernel": kernel.name, "grid": grid, "block": [num_warps * 32, 1, 1],
            "num_warps": num_warps, "num_stages": int(getattr(md, "num_stages", 0) or 0),
            "num_ctas": num_ctas, "cluster_dims": cluster,
            "dynamic_smem": int(md.shared),
            "launch_pdl": bool(getattr(md, "launch_pdl", False)),
            "launch_cooperative_grid": bool(getattr(md, "launch_cooperative_grid", False)),
            "target": str(getattr(md, "target", "")), "hash": getattr(kernel, "hash", ""),
            "params": params}


# ---------------------------------------------------------------------------
# Compiling, capturing and timing
# ---------------------------------------------------------------------------

def summarize_input(t):
    import torch
    info = {"dtype": str(t.dtype).replace("torch.", ""), "shape": list(t.shape),
            "numel": t.numel(), "all_zero": bool((t == 0).all().item())}
    if not t.dtype.is_floating_point:
        wide = t.to(torch.int64) if t.dtype == torch.bool else t
        info["min"] = int(wide.min().item())
        info["max"] = int(wide.max().item())
    return info


def clone_inputs(inputs):
    return [t.clone() for t in inputs]


def as_tuple(out):
    if isinstance(out, (tuple, list)):
        return list(out)
    return [out]


def forced_partition(nodes, *rest):
    return [list(nodes)]


class InductorSettings:
    """config.patch for one compile, and the combo partition algorithm."""

    def __init__(self, combo, static_launcher, forced):
        self.combo, self.static_launcher, self.forced = combo, static_launcher, forced

    def __enter__(self):
        import torch._inductor.config as cfg
        from torch._inductor.codegen import triton_combo_kernel as tck
        patch = {"combo_kernels": self.combo}
        if self.static_launcher is not None and hasattr(cfg, "use_static_cuda_launcher"):
            patch["use_static_cuda_launcher"] = self.static_launcher
        self._patch = cfg.patch(patch)
        self._patch.__enter__()
        self._tck = tck
        self._old_algo = tck._custom_combo_kernel_horizontal_partition_algorithm
        if self.forced:
            tck.set_custom_combo_kernel_horizontal_partition(forced_partition)
        return self

    def __exit__(self, *exc):
        self._tck.set_custom_combo_kernel_horizontal_partition(self._old_algo)
        self._patch.__exit__(*exc)
        return False


def compile_fn(fn):
    import torch
    import torch._dynamo
    torch._dynamo.reset()
    return torch.compile(fn, fullgraph=True, dynamic=False)


def wrapper_kernel_calls(codes):
    """Kernel calls in Inductor's generated wrapper: Triton kernels
    (NAME.run(...)) and anything else that launches work (extern kernels,
    aten ops)."""
    triton_calls, other = [], []
    for code in codes:
        i = code.find("def call(")
        body = code[i:] if i >= 0 else code
        body = "\n".join(l for l in body.splitlines() if not l.strip().startswith("#"))
        triton_calls += re.findall(r"(\w+)\.run\(", body)
        other += re.findall(r"(extern_kernels\.\w+|aten\.\w+(?:\.\w+)?|torch\.ops\.\w+\.\w+)\(", body)
    return triton_calls, other


def profiler_kernels(fn, inputs):
    import torch
    from torch.profiler import ProfilerActivity, profile
    with profile(activities=[ProfilerActivity.CUDA]) as prof:
        fn(*inputs)
        torch.cuda.synchronize()
    names = []
    for e in prof.events():
        dt = str(getattr(e, "device_type", ""))
        if "CUDA" in dt and not e.name.startswith(("Memset", "Memcpy", "[memory]")):
            names.append(e.name)
    return names


def compare_outputs(pairs):
    """pairs: [(label, compiled tensor, eager tensor)]."""
    import torch
    result = {"ok": True, "outputs": []}
    for label, g, w in pairs:
        if g.shape != w.shape or g.dtype != w.dtype:
            result["outputs"].append({"what": label, "ok": False,
                                      "error": f"{g.dtype}{list(g.shape)} vs {w.dtype}{list(w.shape)}"})
            result["ok"] = False
            continue
        if g.dtype.is_floating_point:
            d = g.double() - w.double()
            rel = (d.norm() / w.double().norm().clamp_min(1e-30)).item()
            ok = bool(torch.allclose(g, w, rtol=1e-4, atol=1e-4)) or rel < 1e-5
            result["outputs"].append({"what": label, "max_abs": d.abs().max().item(),
                                      "rel_l2": rel, "ok": ok})
        else:
            ok = bool(torch.equal(g, w))
            result["outputs"].append({"what": label, "equal": ok, "ok": ok})
        result["ok"] &= ok
    return result


def time_calls(call, warmup, reps):
    import torch
    for _ in range(warmup):
        call()
    torch.cuda.synchronize()
    starts = [torch.cuda.Event(enable_timing=True) for _ in range(reps)]
    ends = [torch.cuda.Event(enable_timing=True) for _ in range(reps)]
    for i in range(reps):
        starts[i].record()
        call()
        ends[i].record()
    torch.cuda.synchronize()
    return stats([s.elapsed_time(e) for s, e in zip(starts, ends)])


def time_graph(fn, inputs, warmup, reps):
    import torch
    s = torch.cuda.Stream()
    s.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(s):
        for _ in range(3):
            fn(*inputs)
    torch.cuda.current_stream().wait_stream(s)
    torch.cuda.synchronize()
    g = torch.cuda.CUDAGraph()
    with torch.cuda.graph(g):
        fn(*inputs)
    torch.cuda.synchronize()
    return time_calls(g.replay, warmup, reps)


def capture(prog, pi, inputs, check_inputs, recorder, settings, args, tag):
    """Compile (fresh caches), run once to compile and autotune, run once
    recording, run once on check_inputs (for the comparison with eager);
    returns (launch dicts, raw records, extra info, outputs on check_inputs)."""
    import torch
    from torch._inductor.utils import fresh_cache, run_and_get_code
    info = {"settings": {"combo_kernels": settings.combo, "static_launcher": settings.static_launcher,
                         "forced_partition": settings.forced}}
    inputs_by_storage = {t.untyped_storage().data_ptr(): (i, prog.input_names[i])
                         for i, t in enumerate(inputs)}
    cache = fresh_cache()
    cache.__enter__()
    try:
        with settings:
            compiled = compile_fn(prog.fn)
            t0 = time.time()
            _, codes = run_and_get_code(compiled, *inputs)
            torch.cuda.synchronize()
            info["compile_s"] = round(time.time() - t0, 2)
            tk, other = wrapper_kernel_calls(codes)
            info["wrapper_triton_calls"], info["wrapper_other_calls"] = tk, other
            if not args.no_profiler:
                try:
                    info["profiler_kernels"] = profiler_kernels(compiled, inputs)
                except Exception as e:  # profiling is a cross-check only
                    info["profiler_error"] = f"{type(e).__name__}: {e}"
            recorder.start()
            try:
                out = as_tuple(compiled(*inputs))
                torch.cuda.synchronize()
            finally:
                raw = recorder.stop()
            outputs_by_storage = {t.untyped_storage().data_ptr(): i for i, t in enumerate(out)
                                  if isinstance(t, torch.Tensor)}
            launches = [describe_launch(r, inputs_by_storage, outputs_by_storage) for r in raw]
            for L, r in zip(launches, raw):
                L["ptx_text"] = r["kernel_obj"].asm.get("ptx") if hasattr(r["kernel_obj"].asm, "get") \
                    else r["kernel_obj"].asm["ptx"]
            info["codes"] = codes
            got = [t.clone() for t in as_tuple(compiled(*check_inputs))]
            torch.cuda.synchronize()
            return launches, raw, info, got
    finally:
        try:
            cache.__exit__(None, None, None)
        except Exception as e:
            log(f"{prog.name}/{tag}: cache cleanup: {e}")


def time_raw_launch(r, warmup, reps):
    runner, a, kw = r["runner"], r["args"], r["kwargs"]
    return time_calls(lambda: runner(*a, **kw), warmup, reps)


def ptx_file_name(stem, i, n):
    """separate_<i>.ptx, combo.ptx (combo_<i>.ptx if several), <stem>_<i>.ptx."""
    if stem == "combo" and n == 1:
        return "combo.ptx"
    return f"{stem}_{i}.ptx"


def finish_launches(launches, inputs_info, seeds, outdir, stem, errors):
    """Write the PTX files, check each launch against its PTX entry and add
    gpu-run argument specs."""
    for i, L in enumerate(launches):
        ptx = L.pop("ptx_text")
        fname = ptx_file_name(stem, i, len(launches))
        with open(os.path.join(outdir, fname), "w") as f:
            f.write(ptx)
        L["ptx"] = fname
        entries = {e["name"]: e for e in parse_ptx_entries(ptx)}
        entry = entries.get(L["kernel"])
        if entry is not None:
            L["ptx_params"] = entry["params"]
            L["reqntid"] = entry["reqntid"]
            for p, t in zip(L["params"], entry["params"]):
                p["ptx_type"] = t
        errs = check_against_ptx(L, entry)
        if errs:
            errors.extend(errs)
            raise RuntimeError("; ".join(errs))
        L["args"] = [param_spec(p, inputs_info, seeds) for p in L["params"]]
        L["out_params"] = [p["index"] for p in L["params"]
                           if p["kind"] == "tensor" and p["role"] in ("out", "inout")]
        for p in L["params"]:
            if p["kind"] == "tensor" and p["role"] == "unknown":
                errors.append(f"{L['kernel']}: cannot tell whether {p['name']} is read or written")
            if p["kind"] == "tensor" and p["role"] == "in" and p.get("input") is None:
                errors.append(f"{L['kernel']}: {p['name']} is read but is no program input "
                              "(written by another kernel or op?)")
        if L["launch_pdl"] or L["launch_cooperative_grid"] or L["num_ctas"] != 1:
            errors.append(f"{L['kernel']}: launch attributes (PDL, cooperative, clusters) "
                          "that gpu-run does not set")
    return launches


def strip_buffers(launches):
    for L in launches:
        for p in L["params"]:
            p.pop("buffer", None)


def new_result(prog):
    return {"program": prog.name, "description": prog.description, "sizes": prog.sizes,
            "input_names": prog.input_names, "status": "ok", "warnings": [], "errors": []}


def run_program(prog, pi, recorder, args, outroot, result):
    """Fills result (kept when an exception escapes: partial data)."""
    import torch
    outdir = os.path.join(outroot, prog.name)
    os.makedirs(outdir, exist_ok=True)
    warn, errs = result["warnings"], result["errors"]
    gen = torch.Generator(device="cuda")
    gen.manual_seed(1234 + pi)
    base_inputs = prog.make_inputs(gen)
    torch.cuda.synchronize()
    inputs_info = [summarize_input(t) for t in base_inputs]
    seeds = [SEED_BASE * (pi + 1) + i for i in range(len(base_inputs))]
    for i, info in enumerate(inputs_info):
        info.update({"index": i, "name": prog.input_names[i], "seed": seeds[i],
                     "init": list(input_init(info, seeds[i])) if input_init(info, seeds[i]) != "zero"
                     else "zero"})
    result["inputs"] = inputs_info

    # Eager reference (on clones: the program may mutate inputs).
    ref_in = clone_inputs(base_inputs)
    ref_out = [t.clone() for t in as_tuple(prog.fn(*ref_in))]
    torch.cuda.synchronize()

    variants = result["variants"] = {}
    raws = {}

    def do_variant(tag, combo, forced):
        log(f"{prog.name}: compiling {tag} (combo_kernels={combo}"
            f"{', forced partition' if forced else ''}, static launcher off) ...")
        inp = clone_inputs(base_inputs)
        chk_in = clone_inputs(base_inputs)  # fresh inputs for one call checked against eager
        launches, raw, info, got = capture(
            prog, pi, inp, chk_in, recorder, InductorSettings(combo, False, forced), args, tag)
        mut_got = {i: chk_in[i] for i in range(len(chk_in)) if not torch.equal(chk_in[i], base_inputs[i])}
        mut_want = {i: ref_in[i] for i in range(len(ref_in)) if not torch.equal(ref_in[i], base_inputs[i])}
        if set(mut_got) != set(mut_want):
            warn.append(f"{tag}: compiled code mutated inputs {sorted(mut_got)}, eager "
                        f"{sorted(mut_want)}")
        pairs = [(f"output {i}", g, w) for i, (g, w) in enumerate(zip(got, ref_out))]
        if len(got) != len(ref_out):
            warn.append(f"{tag}: {len(got)} outputs, eager {len(ref_out)}")
        pairs += [(f"mutated input {k}", mut_got[k], mut_want[k]) for k in sorted(mut_got)
                  if k in mut_want]
        info["check_vs_eager"] = compare_outputs(pairs)
        if not info["check_vs_eager"]["ok"]:
            warn.append(f"{tag}: compiled outputs differ from eager: {info['check_vs_eager']}")
        codes = info.pop("codes")
        with open(os.path.join(outdir, f"wrapper_{tag}.py"), "w") as f:
            f.write("\n\n# ----\n\n".join(codes))
        info["kernel_names"] = [L["kernel"] for L in launches]
        info["kernel_count"] = len(launches)
        if not launches:
            raise RuntimeError(
                f"{tag}: the hook recorded no Triton launch (Inductor's wrapper calls "
                f"{info['wrapper_triton_calls']}); is Inductor's static CUDA launcher in use "
                "after all? Try TORCHINDUCTOR_USE_STATIC_CUDA_LAUNCHER=0")
        log(f"{prog.name}: {tag}: {len(launches)} Triton launch(es): "
            f"{', '.join(info['kernel_names'])}; compile {info['compile_s']} s")
        pk = info.get("profiler_kernels")
        if pk is not None and len(pk) != len(launches):
            warn.append(f"{tag}: the profiler saw {len(pk)} GPU kernels ({pk}), the hook "
                        f"recorded {len(launches)} Triton launches")
        if info["wrapper_other_calls"]:
            warn.append(f"{tag}: Inductor's wrapper also calls {info['wrapper_other_calls']}")
        if len(info["wrapper_triton_calls"]) != len(launches):
            warn.append(f"{tag}: the wrapper has {len(info['wrapper_triton_calls'])} Triton "
                        f"kernel calls, the hook recorded {len(launches)} launches")
        variants[tag] = {"info": info, "launches": launches}
        raws[tag] = raw
        return launches

    plain = do_variant("plain", False, False)
    if len(plain) != 2:
        errs.append(f"combo off: Inductor launched {len(plain)} Triton kernels, expected 2")
    finish_launches(plain, inputs_info, seeds, outdir, "separate", errs)
    deps = dependencies(plain)
    if deps:
        errs.append(f"the two kernels are not independent: {deps}")
    result["shared_inputs"] = shared_inputs(plain)

    combo = do_variant("combo", True, False)
    combo_tag = "combo"
    if len(combo) != 1:
        msg = (f"combo on: Inductor launched {len(combo)} Triton kernels "
               f"({', '.join(variants['combo']['info']['kernel_names'])}), expected one combo kernel")
        if args.combo_fallback == "forced":
            warn.append(msg + "; compiled again with every node in one combo partition")
            variants["combo_default"] = variants.pop("combo")
            raws["combo_default"] = raws.pop("combo")
            finish_launches(variants["combo_default"]["launches"], inputs_info, seeds,
                            outdir, "combo_default", errs)
            forced = do_variant("combo", True, True)
            if len(forced) != 1:
                errs.append(f"combo with a forced partition: {len(forced)} kernels, expected 1")
            result["combo_mode"] = "forced"
        else:
            errs.append(msg)
            result["combo_mode"] = "default"
    else:
        result["combo_mode"] = "default"
    finish_launches(variants[combo_tag]["launches"], inputs_info, seeds, outdir, "combo", errs)

    # Kernel times through Triton's launcher with the recorded arguments.
    for tag, raw in raws.items():
        for L, r in zip(variants[tag]["launches"], raw):
            try:
                L["time_ms"] = time_raw_launch(r, args.warmup, args.reps)
            except Exception as e:
                warn.append(f"{tag}: timing {L['kernel']}: {type(e).__name__}: {e}")
        log(f"{prog.name}: {tag}: kernel times " + ", ".join(
            f"{L['kernel']} {L.get('time_ms', {}).get('median_ms', float('nan')):.4f} ms"
            for L in variants[tag]["launches"]))
    raws.clear()
    for v in variants.values():
        strip_buffers(v["launches"])
    result["separate"] = [L["ptx"] for L in plain]

    # End-to-end timings with Inductor's defaults (static launcher on).
    if not args.no_e2e:
        result["e2e"] = e2e_timings(prog, base_inputs, args, result.get("combo_mode"), warn)

    if errs:
        result["status"] = "error"
    return result


def e2e_timings(prog, base_inputs, args, combo_mode, warn):
    import torch
    from torch._inductor.utils import fresh_cache
    out = {}
    cases = [("eager", None, None), ("compiled_plain", False, False),
             ("compiled_combo", True, combo_mode == "forced")]
    if combo_mode == "forced":
        cases.append(("compiled_combo_default", True, False))
    for tag, combo, forced in cases:
        inp = clone_inputs(base_inputs)
        try:
            with contextlib.ExitStack() as stack:
                fn = prog.fn
                if combo is not None:
                    log(f"{prog.name}: e2e: compiling {tag} with Inductor's default launcher ...")
                    stack.enter_context(fresh_cache())
                    # Timed under the same settings, in case anything recompiles.
                    stack.enter_context(InductorSettings(combo, None, forced))
                    fn = compile_fn(prog.fn)
                    fn(*inp)
                    torch.cuda.synchronize()
                r = {"calls": time_calls(lambda: fn(*inp), args.warmup, args.reps)}
                if not args.no_graph:
                    try:
                        r["graph"] = time_graph(fn, inp, args.warmup, args.reps)
                    except Exception as e:
                        r["graph_error"] = f"{type(e).__name__}: {e}"
                        warn.append(f"e2e {tag}: CUDA graph: {r['graph_error']}")
                out[tag] = r
                log(f"{prog.name}: e2e {tag}: {r['calls']['median_ms']:.4f} ms per call"
                    + (f", graph {r['graph']['median_ms']:.4f} ms" if "graph" in r else ""))
        except Exception as e:
            out[tag] = {"error": f"{type(e).__name__}: {e}"}
            warn.append(f"e2e {tag}: {type(e).__name__}: {e}")
        torch.cuda.synchronize()
    return out


def environment():
    import torch
    import triton
    env = {"python": platform.python_version(), "torch": torch.__version__,
           "triton": triton.__version__, "cuda": torch.version.cuda,
           "date": datetime.date.today().isoformat(), "script_version": SCRIPT_VERSION}
    if torch.cuda.is_available():
        p = torch.cuda.get_device_properties(0)
        env.update({"gpu": p.name, "compute_capability": f"{p.major}.{p.minor}",
                    "multiprocessors": p.multi_processor_count})
    return env


def main(argv=None, prog="python -m gpuopt.capture.inductor"):
    """The command line; prog is how results record the command."""
    ap = command_parser(prog, __doc__)
    ap.add_argument("--out", default="inductor-dump", help="output directory (default %(default)s)")
    ap.add_argument("--programs", default=",".join(PROGRAM_NAMES),
                    help="comma-separated subset of: " + ", ".join(PROGRAM_NAMES))
    ap.add_argument("--warmup", type=int, default=10)
    ap.add_argument("--reps", type=int, default=100)
    ap.add_argument("--combo-fallback", choices=["forced", "none"], default="forced",
                    help="when the combo compile does not give one kernel: compile again "
                         "with every node in one partition (default), or only report it")
    ap.add_argument("--no-e2e", action="store_true", help="skip the end-to-end timings")
    ap.add_argument("--no-graph", action="store_true", help="skip the CUDA-graph timings")
    ap.add_argument("--no-profiler", action="store_true", help="skip the torch.profiler check")
    ap.add_argument("--list", action="store_true", help="list the programs and exit")
    args = ap.parse_args(argv)

    chosen = [p.strip() for p in args.programs.split(",") if p.strip()]
    unknown = [p for p in chosen if p not in PROGRAM_NAMES]
    if unknown:
        ap.error(f"unknown programs {unknown}; choose from {PROGRAM_NAMES}")
    try:
        import torch
    except ImportError:
        print("capture: error: needs PyTorch and Triton (pip install './python[inductor]')",
              file=sys.stderr)
        return 2
    if args.list:
        for p in programs():
            print(f"{p.name}: {p.description}")
        return 0
    if not torch.cuda.is_available():
        print("capture: error: no CUDA device", file=sys.stderr)
        return 2
    os.makedirs(args.out, exist_ok=True)
    env = environment()
    log(f"torch {env['torch']}, triton {env['triton']}, CUDA {env['cuda']}, GPU {env.get('gpu')}")
    recorder = Recorder()
    recorder.install()
    log("hook: triton.compiler.compiler.CompiledKernel.run wrapped")

    summary = {"environment": env, "programs": {}, "command": f"{prog} "
               + " ".join(a if not a.startswith("/") else "PATH" for a in (argv if argv is not None else sys.argv[1:])),
               "settings": {"warmup": args.warmup, "reps": args.reps,
                            "combo_fallback": args.combo_fallback}}
    status = 0
    t_all = time.time()
    for pi, prog in enumerate(programs()):
        if prog.name not in chosen:
            continue
        log(f"=== {prog.name}: {prog.description}")
        t0 = time.time()
        res = new_result(prog)
        try:
            run_program(prog, PROGRAM_NAMES.index(prog.name), recorder, args, args.out, res)
        except Exception as e:
            tb = traceback.format_exc()
            log(f"{prog.name}: FAILED: {type(e).__name__}: {e}\n{tb}")
            res["status"] = "error"
            res["errors"].append(f"{type(e).__name__}: {e}")
            res["traceback"] = tb
            recorder.stop()
            for v in res.get("variants", {}).values():
                for L in v.get("launches", []):
                    L.pop("ptx_text", None)
        res["environment"] = env
        res["wall_s"] = round(time.time() - t0, 1)
        os.makedirs(os.path.join(args.out, prog.name), exist_ok=True)
        with open(os.path.join(args.out, prog.name, "launches.json"), "w") as f:
            json.dump(res, f, indent=1, default=str)
        summary["programs"][prog.name] = {"status": res["status"], "errors": res["errors"],
                                          "warnings": res["warnings"],
                                          "combo_mode": res.get("combo_mode")}
        for w in res["warnings"]:
            log(f"{prog.name}: warning: {w}")
        for e in res["errors"]:
            log(f"{prog.name}: ERROR: {e}")
        if res["status"] != "ok":
            status = 1
        log(f"{prog.name}: {res['status']} in {res['wall_s']} s")
        try:
            torch._dynamo.reset()
            torch.cuda.empty_cache()
        except Exception:
            pass
    summary["wall_s"] = round(time.time() - t_all, 1)
    with open(os.path.join(args.out, "summary.json"), "w") as f:
        json.dump(summary, f, indent=1, default=str)
    log(f"done in {summary['wall_s']} s: " + ", ".join(
        f"{k} {v['status']}" for k, v in summary["programs"].items()))
    log(f"wrote {args.out}/summary.json and <program>/launches.json; next: "
        f"python3 benchmarks/inductor/fuse_and_spec.py --dump {args.out}")
    return status


if __name__ == "__main__":
    sys.exit(main())
