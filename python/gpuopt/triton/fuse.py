"""Horizontal fusion of Triton kernels: `gpuopt.triton.fuse(k1, k2, ...)`.

    fused = gpuopt.triton.fuse(add_kernel, softmax_kernel)     # strategy="auto"
    fused(gpuopt.triton.call(add_kernel, (triton.cdiv(n, 1024),), x, y, out, n, BLOCK=1024),
          gpuopt.triton.call(softmax_kernel, (rows,), o, i, i.stride(0), o.stride(0), cols,
                             BLOCK=1024))

returns a callable that launches one fused kernel in place of the kernels,
with their arguments and grids as they are at call time. On each call:

1. Each kernel's launch is bound by Triton itself without launching it:
   `kernel.run(*args, grid=grid, warmup=False, **kwargs)` runs with
   `CompiledKernel.run` (the launcher both Triton's JIT and Inductor call
   as `runner(gx, gy, gz, stream, function, metadata, launch_metadata,
   enter_hook, exit_hook, *args)`) replaced, for this thread only and for the
   duration of the call, by a recorder. That yields the CompiledKernel
   (compiled on a cache miss as usual: specialisations, autotuned configs
   already chosen, heuristics applied), its PTX, num_warps, dynamic shared
   memory, the grid and the bound arguments. The kernel parameters are the
   non-constexpr arguments in signature order (tuples flattened, tensors as
   their data_ptr(), scalars packed as Triton's launcher packs them) and the
   two trailing scratch pointers of Triton 3.6 entries, allocated through
   Triton's allocators when the kernel asks for scratch (NULL otherwise).
2. The fused kernel is built once per set of kernels (their PTX without
   debug information, block sizes, dynamic shared memory, the strategy and
   options) with gpu-opt's `--hfuse` and `runtime-shapes=true`: a
   launch-agnostic fused kernel that takes each part's grid (and dynamic
   shared memory) in trailing `.u32` parameters. `strategy="auto"` lets
   gpu-opt's model choose from the grids of the call; its choice depends on
   them, so with auto a kernel is built per launch shape. Builds are kept in
   memory and in a cache directory (PTX + manifest), so that a process (or a
   machine without the compiler) finds them again.
3. The fused launch is computed from the parts' launches by the manifest's
   `shape_params` (`compute_fused_launch`, the same formula as the runtime's
   `computeFusedLaunch`), the arguments are placed by each part's `arg_map`,
   and the kernel is launched through `gpuopt.cuda` on the current stream
   (or `stream=`), in the context PyTorch made current.
4. On first use of each fused kernel (verify=True; verify="shape": first use
   of each launch shape) the kernels are first run apart, through Triton's
   launcher, on copies of every tensor argument (whole storages, so views
   and aliasing are kept), the fused kernel on the real arguments, and every
   storage is compared bit for bit. On a difference the real tensors get the
   kernels' results back, the fused kernel is never used again, and
   VerificationError names the argument, the kernel and the first byte that
   differ.
5. Measurement (measure=None, the default: on for strategy="auto" where
   the runtime finds a GPU, gpuopt.find_gpu(); measure=True: on; False:
   off) decides, once per launch shape, on copies of the tensors: under
   "auto" the model only ranks, and its top `measure_top` feasible
   candidates (gpu-opt's candidates-out, whether or not it predicts a gain)
   are built by their options, checked bit for bit against the kernels
   apart and timed with them (CUDA events, warm-up, median); the fastest
   fuses if it is at least 1% faster than the kernels launched back to
   back, as gpu-opt's measure= decides. A named strategy's kernel is timed
   against them and the faster kept. Where the tensors cannot be copied
   (a pointer argument that is not a tensor) the model's choice stands,
   with a warning and the reason in `decisions`.

Unmeasured, where gpu-opt's model declines to fuse ("not fusing: ..."), the
callable launches the kernels one after another (`decisions` says why).
Kernels that cannot be fused by this path raise FuseError: tensor
descriptors (host TMA), clusters (num_ctas > 1), cooperative or PDL
launches.

Without a GPU, `prepare(*calls)` does steps 1 and 2 only, inside
`offline_target()` (a stand-in Triton driver for a chosen GPU) with
`placeholder` tensors, to fill the cache for a machine that has no gpu-opt.
"""

import contextlib
import ctypes
import hashlib
import json
import os
import re
import statistics
import struct
import subprocess
import tempfile
import threading
import warnings

FORMAT_VERSION = 1
# gridX, gridY, gridZ, stream, function, metadata, launch_metadata,
# launch_enter_hook, launch_exit_hook, then the kernel's arguments.
LEADING_RUNNER_ARGS = 9
CACHE_ENV = "GPUOPT_TRITON_FUSE_CACHE"
# CUDA's grid limits (the runtime's computeFusedLaunch).
MAX_GRID = ((1 << 31) - 1, 65535, 65535)
UINT32_MAX = (1 << 32) - 1
# Measured auto: how many of the model's candidates are measured, and how
# much faster than the kernels apart the fastest must be (gpu-opt's
# measure-top= default and MeasureOptions::minSpeedup).
MEASURE_TOP = 3
MIN_SPEEDUP = 0.01
# Options of --hfuse that only strategy=auto reads, left out of the builds
# of its candidates by their own options.
_AUTO_ONLY = ("min-gain", "require", "candidates-out", "profile", "measure-top", "cache")


class FuseError(Exception):
    """Kernels that cannot be fused, or a fused launch that cannot be made."""


class VerificationError(FuseError):
    """The fused kernel wrote something else than the kernels apart."""


# ---------------------------------------------------------------------------
# Calls
# ---------------------------------------------------------------------------

class Call:
    """One kernel's launch as the user writes it: `kernel[grid](*args, **kwargs)`."""

    def __init__(self, kernel, grid, args=(), kwargs=None):
        self.kernel = kernel
        self.grid = grid
        self.args = tuple(args)
        self.kwargs = dict(kwargs or {})

    def __repr__(self):
        return f"call({_kernel_name(self.kernel)}, grid={self.grid!r}, {len(self.args)} args)"


def call(kernel, grid, *args, **kwargs):
    """The launch `kernel[grid](*args, **kwargs)`, for a fused kernel to make."""
    return Call(kernel, grid, args, kwargs)


def _kernel_name(kernel):
    fn = kernel
    while hasattr(fn, "fn") and not hasattr(fn, "_fn_name"):
        fn = fn.fn
    return getattr(fn, "_fn_name", None) or getattr(fn, "__name__", None) or repr(kernel)


# ---------------------------------------------------------------------------
# Capturing what Triton would launch
# ---------------------------------------------------------------------------

_TLS = threading.local()
_PATCH_LOCK = threading.RLock()


@contextlib.contextmanager
def _recording():
    """While active, Triton launches of this thread are recorded, not made."""
    from triton.compiler import compiler as tc
    with _PATCH_LOCK:
        run_prop = tc.CompiledKernel.__dict__.get("run")
        metadata_fn = tc.CompiledKernel.__dict__.get("launch_metadata")
        if not isinstance(run_prop, property) or metadata_fn is None:
            raise FuseError("triton.compiler.compiler.CompiledKernel.run is not a property in "
                            "this Triton: gpuopt.triton.fuse needs Triton 3.6")

        def fget(kernel):
            records = getattr(_TLS, "records", None)
            if records is None:
                return run_prop.fget(kernel)

            def record(*a, **kw):
                records.append((kernel, a, kw))
            return record

        def launch_metadata(self, *a, **kw):
            # Triton 3.6 loads the module here; a recorded launch needs none.
            if getattr(_TLS, "records", None) is not None:
                return None
            return metadata_fn(self, *a, **kw)

        tc.CompiledKernel.run = property(fget, run_prop.fset, run_prop.fdel)
        tc.CompiledKernel.launch_metadata = launch_metadata
        _TLS.records = []
        try:
            yield _TLS.records
        finally:
            _TLS.records = None
            tc.CompiledKernel.run = run_prop
            tc.CompiledKernel.launch_metadata = metadata_fn


class KernelLaunch:
    """One kernel's launch as Triton binds it: `compiled` (CompiledKernel),
    `grid` (x, y, z), `stream`, `bound` (the arguments its launcher takes),
    `params` [(Triton type, value)] of its PTX parameters but the scratch
    pointers, `ptx`, `name`, `block` (threads), `shared` (dynamic bytes)."""

    def __init__(self, kernel, compiled, grid, stream, bound):
        self.kernel = kernel
        self.compiled = compiled
        self.grid = tuple(int(g) for g in grid)
        self.stream = stream
        self.bound = tuple(bound)
        md = compiled.metadata
        self.name = compiled.name
        self.ptx = compiled.asm["ptx"]
        self.num_warps = int(md.num_warps)
        warp = getattr(getattr(md, "target", None), "warp_size", 32) or 32
        self.block = self.num_warps * int(warp)
        self.shared = int(md.shared)
        for what in ("launch_cooperative_grid", "launch_pdl"):
            if getattr(md, what, False):
                raise FuseError(f"{self.name}: {what} launches cannot be fused")
        if int(getattr(md, "num_ctas", 1) or 1) != 1:
            raise FuseError(f"{self.name}: num_ctas={md.num_ctas} (clusters) cannot be fused")
        self.params = flat_params(compiled, self.bound)
        key = (getattr(compiled, "hash", None) or id(compiled), self.name)
        ptx_params = _ENTRY_PARAMS.get(key)
        if ptx_params is None:  # a regex over the whole PTX: once per binary
            ptx_params = _ENTRY_PARAMS.setdefault(key, entry_params(self.ptx, self.name))
        if len(ptx_params) != len(self.params) + 2:
            raise FuseError(
                f"{self.name}: the PTX entry has {len(ptx_params)} parameters, Triton binds "
                f"{len(self.params)} arguments and two scratch pointers")

    @property
    def blocks(self):
        return self.grid[0] * self.grid[1] * self.grid[2]

    def arg_names(self):
        """The names of the kernel's parameters (flattened), for messages."""
        sig = getattr(self.compiled.src, "signature", {}) or {}
        out = []

        def walk(name, ty):
            if isinstance(ty, tuple):
                for i, t in enumerate(ty):
                    walk(f"{name}[{i}]", t)
            elif ty != "constexpr":
                out.append(name)
        for name, ty in sig.items():
            walk(name, ty)
        return out


def flat_params(compiled, bound):
    """[(Triton type, value)] of the kernel parameters Triton's launcher passes
    for `bound` (the launcher's arguments), but the two scratch pointers:
    constexprs dropped, tuples flattened, pointers as integers."""
    sig = list((getattr(compiled.src, "signature", None) or {}).values())
    if len(sig) != len(bound):
        raise FuseError(f"{compiled.name}: {len(bound)} arguments for a signature of {len(sig)}")
    out = []

    def walk(ty, value):
        if isinstance(ty, tuple):
            if not isinstance(value, (tuple, list)) or len(value) != len(ty):
                raise FuseError(f"{compiled.name}: a tuple argument of {len(ty)} got {value!r}")
            for t, v in zip(ty, value):
                walk(t, v)
        elif ty == "constexpr":
            return
        elif ty.startswith("tensordesc") or ty == "nvTmaDesc":
            raise FuseError(f"{compiled.name}: tensor descriptor arguments ({ty}) cannot be "
                            "fused")
        elif ty.startswith("*"):
            out.append(("ptr", _pointer(value)))
        else:
            out.append((ty, value))
    for ty, value in zip(sig, bound):
        walk(ty, value)
    return out


def _pointer(value):
    if value is None:
        return 0
    if isinstance(value, int):
        return value
    return int(value.data_ptr())


_ENTRY_PARAMS = {}


def entry_params(ptx, name):
    """The parameter types of entry `name` of a PTX text."""
    m = re.search(r"\.entry\s+" + re.escape(name) + r"\s*\(([^)]*)\)", ptx)
    if m is None:
        raise FuseError(f"no .entry {name} in the PTX")
    types = []
    for p in m.group(1).split(","):
        t = re.search(r"\.param\s+(?:\.align\s+\d+\s+)?\.(\w+)", p)
        if t:
            types.append(t.group(1))
    return types


def capture(kernel, grid, args=(), kwargs=None):
    """The KernelLaunch that `kernel[grid](*args, **kwargs)` would make, bound
    by Triton (compiling on a cache miss) but not launched."""
    kwargs = dict(kwargs or {})
    run = getattr(kernel, "run", None)
    if run is None:
        raise FuseError(f"{kernel!r} is not a Triton kernel (@triton.jit, autotune or heuristics)")
    with _recording() as records:
        run(*args, grid=grid, warmup=False, **kwargs)
        records = list(records)
    if len(records) != 1:
        raise FuseError(
            f"{_kernel_name(kernel)}: Triton launched it {len(records)} times while binding "
            "its arguments (an autotuner tuning this shape?); launch it once without gpuopt "
            "first, so that its configuration is chosen")
    compiled, a, _ = records[0]
    if len(a) < LEADING_RUNNER_ARGS:
        raise FuseError(f"{compiled.name}: unexpected launcher arguments (Triton 3.6 expected)")
    return KernelLaunch(kernel, compiled, a[:3], a[3], a[LEADING_RUNNER_ARGS:])


# ---------------------------------------------------------------------------
# Without a GPU: a stand-in Triton driver and tensors
# ---------------------------------------------------------------------------

class _OfflineDriver:
    """Enough of a Triton driver to compile and bind kernels for `target`."""

    def __init__(self, target):
        self.target = target

    def get_current_device(self):
        return 0

    def get_current_stream(self, device=None):
        return 0

    def get_current_target(self):
        return self.target

    def get_active_torch_device(self):
        raise FuseError("offline_target(): no device")

    def map_python_to_cpp_type(self, ty):
        return ty

    def is_active(self):
        return True


@contextlib.contextmanager
def offline_target(capability=90, warp_size=32):
    """Triton compiles and binds kernels for a CUDA GPU of `capability`
    without one (for `prepare` and tests); nothing can be launched inside."""
    from triton.backends.compiler import GPUTarget
    from triton.runtime import driver
    saved = getattr(driver, "_active", None)
    driver.set_active(_OfflineDriver(GPUTarget("cuda", capability, warp_size)))
    try:
        yield
    finally:
        # reset_active() would make the CUDA driver, which needs a GPU.
        driver._active = saved


class placeholder:
    """A stand-in tensor for binding without a GPU: `dtype` (a torch dtype or
    its name, "float32"), `ptr` (its address decides Triton's alignment
    specialisation: keep it a multiple of 16 as real allocations are)."""

    def __init__(self, dtype="float32", ptr=1 << 20):
        self.dtype = dtype
        self.ptr = int(ptr)

    def data_ptr(self):
        return self.ptr


# ---------------------------------------------------------------------------
# The launch formula of a launch-agnostic fused kernel
# ---------------------------------------------------------------------------

def _dim3(v):
    v = [int(x) for x in v]
    if not 1 <= len(v) <= 3:
        raise FuseError(f"grid {v}: 1 to 3 dimensions")
    return tuple(v + [1] * (3 - len(v)))


def _dim3_text(g):
    return f"{g[0]},{g[1]},{g[2]}"


def compute_fused_launch(kernel, part_grids=(), part_smem=(), grid_option="--part-grid",
                         smem_option="--part-smem"):
    """(grid, dynamic shared memory, shape values) of a launch-agnostic fused
    kernel (its manifest entry, a dict with "shape_params") from each part's
    grid and dynamic shared memory, by fused_from index (None or missing: the
    manifest's default). The runtime's computeFusedLaunch, with its messages:
    the fused grid is 1-D, under "thread" the most blocks of any part, else
    the sum; the dynamic shared memory is the fixed launch's, or under
    "thread" the largest offset plus size, else the largest part's."""
    parts = kernel.get("fused_from") or []
    n = len(parts)
    name = f"kernel '{kernel.get('name', '')}'"
    strategy = kernel.get("fusion_strategy")
    if not kernel.get("shape_params") or not strategy:
        raise FuseError(f"{name} is not a launch-agnostic fused kernel (no shape_params)")
    part_grids, part_smem = list(part_grids), list(part_smem)
    if len(part_grids) > n or len(part_smem) > n:
        raise FuseError(f"{name} has {n} parts (0 to {n - 1})")
    grids, smem = [], []
    for p, f in enumerate(parts):
        part = f"{name}: part {p} ({f.get('kernel', '')})"
        fixed_grid = f.get("grid", "runtime")
        fixed_grid = None if fixed_grid == "runtime" else _dim3(fixed_grid)
        g = part_grids[p] if p < len(part_grids) else None
        g = None if g is None else _dim3(g)
        if g is not None and fixed_grid is not None:
            raise FuseError(f"{part} has the fixed grid {_dim3_text(fixed_grid)}; {grid_option} "
                            "applies to grids taken at launch")
        if g is None:
            g = fixed_grid if fixed_grid is not None else (
                _dim3(f["default_grid"]) if "default_grid" in f else None)
        if g is None:
            raise FuseError(f"{part}: its grid is taken at launch and the manifest has no "
                            f"default; give {grid_option} {p}=X[xY[xZ]]")
        for d in range(3):
            if g[d] == 0 or g[d] > MAX_GRID[d] or g[d] < 0:
                raise FuseError(f"{part}: grid {_dim3_text(g)}: dimension {'xyz'[d]} must be "
                                f"between 1 and {MAX_GRID[d]}")
        blocks = g[0] * g[1] * g[2]
        if blocks > UINT32_MAX:
            raise FuseError(f"{part}: grid {_dim3_text(g)} has {blocks} blocks, more than a "
                            "u32 counts")
        grids.append(g)
        fixed_smem = f.get("dynamic_smem", 0)
        fixed_smem = None if fixed_smem == "runtime" else int(fixed_smem)
        s = part_smem[p] if p < len(part_smem) else None
        if s is not None and fixed_smem is not None:
            raise FuseError(f"{part} has the fixed dynamic shared memory {fixed_smem}; "
                            f"{smem_option} applies to sizes taken at launch")
        if s is None:
            s = fixed_smem if fixed_smem is not None else f.get("default_dynamic_smem")
        if s is None:
            raise FuseError(f"{part}: its dynamic shared memory is taken at launch and the "
                            f"manifest has no default; give {smem_option} {p}=BYTES")
        s = int(s)
        if s > UINT32_MAX:
            raise FuseError(f"{part}: {s} bytes of dynamic shared memory do not fit a u32")
        smem.append(s)
    thread = strategy == "thread"
    total, nbytes = 0, 0
    for p, f in enumerate(parts):
        count = grids[p][0] * grids[p][1] * grids[p][2]
        total = max(total, count) if thread else total + count
        nbytes = max(nbytes, int(f.get("dynamic_smem_offset", 0)) + smem[p] if thread else smem[p])
    if total > MAX_GRID[0]:
        raise FuseError(f"{name}: the parts' grids add up to {total} fused blocks, more than "
                        f"{MAX_GRID[0]}")
    launch_smem = (kernel.get("launch") or {}).get("dynamic_smem", "runtime")
    dynamic_smem = nbytes if launch_smem == "runtime" else int(launch_smem)
    field = {"grid_x": 0, "grid_y": 1, "grid_z": 2}
    values = []
    for sp in kernel["shape_params"]:
        if sp["value"] == "dynamic_smem":
            values.append(smem[sp["part"]])
        else:
            values.append(grids[sp["part"]][field[sp["value"]]])
    return (total, 1, 1), dynamic_smem, values


# ---------------------------------------------------------------------------
# Argument packing, as Triton's launcher packs them
# ---------------------------------------------------------------------------

_INT_TYPES = {
    "i1": ctypes.c_int8, "i8": ctypes.c_int8, "i16": ctypes.c_int16, "i32": ctypes.c_int32,
    "i64": ctypes.c_int64, "u1": ctypes.c_uint8, "u8": ctypes.c_uint8, "u16": ctypes.c_uint16,
    "u32": ctypes.c_uint32, "u64": ctypes.c_uint64,
}


def _f32_bits(value):
    try:
        return struct.unpack("<I", struct.pack("<f", float(value)))[0]
    except OverflowError:
        # C's (float) cast of a double out of range: an infinity.
        return 0x7F800000 if float(value) > 0 else 0xFF800000


def pack_scalar(ty, value):
    """The ctypes value Triton's launcher passes for a scalar of Triton type
    `ty` ("ptr" for pointers): integers truncated to the type, fp16 rounded
    (PyFloat_Pack2), bf16 the top half of the float32, fp32 the float32."""
    if ty == "ptr":
        return ctypes.c_uint64(int(value))
    if ty in _INT_TYPES:
        return _INT_TYPES[ty](int(value))
    if ty == "fp16":
        return ctypes.c_uint16(struct.unpack("<H", struct.pack("<e", float(value)))[0])
    if ty == "bf16":
        return ctypes.c_uint16(_f32_bits(value) >> 16)
    if ty in ("fp32", "f32"):
        return ctypes.c_uint32(_f32_bits(value))
    if ty == "fp64":
        return ctypes.c_double(float(value))
    raise FuseError(f"scalar argument of Triton type {ty!r} is not supported")


def fused_arguments(kernel, launches_params, shape_values):
    """The ctypes values of every parameter of fused `kernel` (its manifest
    entry): part p's parameter i (launches_params[p][i], as (Triton type,
    value), the scratch pointers included) at fused_from[p].arg_map[i], the
    shape values at their shape_params."""
    params = kernel["params"]
    values = [None] * len(params)
    for p, (f, plist) in enumerate(zip(kernel["fused_from"], launches_params)):
        amap = f["arg_map"]
        if len(amap) != len(plist):
            raise FuseError(f"fused kernel '{kernel['name']}': part {p} ({f['kernel']}) has "
                            f"{len(amap)} parameters, the launch {len(plist)}")
        for i, (ty, v) in enumerate(plist):
            j = amap[i]
            val = pack_scalar(ty, v)
            if ctypes.sizeof(val) != int(params[j]["size"]):
                raise FuseError(f"fused kernel '{kernel['name']}': parameter {j} "
                                f"({params[j]['name']}, {params[j]['type']}) takes "
                                f"{params[j]['size']} bytes, part {p}'s argument {i} is {ty}")
            values[j] = val
    for sp, v in zip(kernel["shape_params"], shape_values):
        values[sp["param"]] = ctypes.c_uint32(v)
    missing = [params[i]["name"] for i, v in enumerate(values) if v is None]
    if missing:
        raise FuseError(f"fused kernel '{kernel['name']}': nothing for parameters {missing}")
    return values


# ---------------------------------------------------------------------------
# Building fused kernels
# ---------------------------------------------------------------------------

def normalize_ptx(ptx):
    """The PTX without what does not change the code: comments, `.loc` and
    `.file` lines, and `.section` blocks (DWARF, which holds source paths)."""
    out, depth, in_section = [], 0, False
    for line in ptx.splitlines():
        code = line.split("//", 1)[0].rstrip()
        s = code.strip()
        if in_section:
            depth += s.count("{") - s.count("}")
            if depth <= 0:
                in_section = False
            continue
        if s.startswith(".section"):
            # The block opens on this line or the next; it may close here.
            depth = s.count("{") - s.count("}")
            in_section = depth > 0 or "{" not in s
            continue
        if not s or s.startswith(".loc") or s.startswith(".file"):
            continue
        out.append(s)
    return "\n".join(out)


def default_cache_dir():
    if os.environ.get(CACHE_ENV):
        return os.environ[CACHE_ENV]
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return os.path.join(base, "gpuopt", "triton-fuse")


class Build:
    """A fused kernel (or the model's refusal): `key`, `ptx`, `manifest` (the
    fused kernel's manifest entry), `remarks`, `declined` (why not fused),
    `candidates` (strategy="auto": the model's feasible candidates, ranked,
    as candidates-out= gives them: "options", "description", "predicted",
    "apart", "unit"; None when not known)."""

    def __init__(self, key, ptx=None, manifest=None, remarks=(), declined=None, options=None,
                 candidates=None):
        self.key = key
        self.ptx = ptx
        self.manifest = manifest
        self.remarks = list(remarks)
        self.declined = declined
        self.options = dict(options or {})
        self.candidates = candidates

    @property
    def strategy(self):
        return self.manifest.get("fusion_strategy") if self.manifest else None

    def to_json(self):
        return {"format": FORMAT_VERSION, "key": self.key, "ptx": self.ptx,
                "manifest": self.manifest, "remarks": self.remarks,
                "declined": self.declined, "options": self.options,
                "candidates": self.candidates}

    @classmethod
    def from_json(cls, d):
        return cls(d["key"], d.get("ptx"), d.get("manifest"), d.get("remarks", ()),
                   d.get("declined"), d.get("options"), d.get("candidates"))


def read_ranking(path):
    """The feasible candidates of a candidates-out= file, in the model's
    order, with what a measured choice reports of them; None without one."""
    if not path or not os.path.exists(path):
        return None
    with open(path) as f:
        ranked = json.load(f)
    keep = ("options", "description", "origin", "predicted", "apart", "unit")
    return [{k: c[k] for k in keep if k in c} for c in ranked if c.get("feasible")]


def candidate_options(text):
    """A candidate's --hfuse options (candidates-out's "options",
    `strategy=thread threads=128,64 maxnreg=0`) as a dict, lists split."""
    def typed(v):
        return int(v) if re.fullmatch(r"-?\d+", v) else v
    out = {}
    for word in text.split():
        key, _, value = word.partition("=")
        out[key] = [typed(v) for v in value.split(",")] if "," in value else typed(value)
    return out


class _Declined(Exception):
    pass


def _option_text(value, nested=False):
    """As gpuopt.api spells options: lists joined by ',', and inside a list
    a list or tuple of integers is one shape, joined by 'x' (256x1x1)."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (list, tuple)):
        if nested:
            return "x".join(str(int(v)) for v in value)
        return ",".join(_option_text(v, True) for v in value)
    return str(value)


def _hfuse_text(options):
    return " ".join(f"{k}={_option_text(v)}" for k, v in options.items())


def _compile_inprocess(api, ptxs, files, options):
    """gpu-opt's Python API: import the PTX texts as one module, fuse (never
    measured there: the callable measures on the launches' own tensors)."""
    module = api.import_ptx(list(ptxs), list(files))
    try:
        fused = module.fuse(measure=False,
                            **{k.replace("-", "_"): v for k, v in options.items()})
    except api.Error as e:
        text = str(e)
        if "not fusing" in text:  # a gpu-opt that fails its declines
            raise _Declined(e.message) from e
        raise FuseError("gpu-opt --hfuse=\"" + _hfuse_text(options) + "\" failed:\n" + text) from e
    if fused.declined:  # the kernels stay apart
        raise _Declined(fused.declined)
    remarks = [f"{d.severity}: {d.message}" for d in fused.diagnostics]
    return fused.to_ptx(), fused.manifest, remarks


def _compile_with_tool(ptxs, files, options):
    """The gpu-opt command (a development fallback when gpuopt's compiler
    extension is not built)."""
    from gpuopt.tools import find_tool
    tool = find_tool("gpu-opt")
    with tempfile.TemporaryDirectory(prefix="gpuopt-triton-fuse-") as d:
        paths = []
        for text, name in zip(ptxs, files):
            paths.append(os.path.join(d, name))
            with open(paths[-1], "w") as f:
                f.write(text)
        out, man = os.path.join(d, "fused.ptx"), os.path.join(d, "fused.json")
        cmd = [tool, *paths, f"--hfuse={_hfuse_text(options)}", "-o", out, "--manifest", man]
        r = subprocess.run(cmd, capture_output=True, text=True)
        # "FILE:LINE:COL: remark: ..." without the temporary file.
        lines = [re.sub(r"^.*?: (remark|warning|error): ", r"\1: ", ln)
                 for ln in r.stderr.splitlines() if re.search(r": (remark|warning|error): ", ln)]
        # A decline is a remark (exit 0, the kernels apart in the output), or
        # an error from a gpu-opt before that.
        declined = next((ln for ln in lines if re.match(r"(remark|error): hfuse: not fusing:", ln)),
                        None)
        if declined:
            raise _Declined(declined.split(": ", 1)[1])
        if r.returncode != 0:
            raise FuseError("gpu-opt --hfuse=\"" + _hfuse_text(options) + "\" failed:\n"
                            + r.stderr)
        with open(out) as f:
            ptx = f.read()
        with open(man) as f:
            manifest = json.load(f)
    return ptx, manifest, lines


def _compiler_api():
    """gpuopt.api when its compiler extension loads here, else None."""
    try:
        from gpuopt import api
    except ImportError:
        return None
    return api if getattr(api, "_core", None) is not None else None


def compile_fused(ptxs, files, options, candidates_out=None):
    """(PTX, the manifest's kernel entry, remarks) of the fused kernel: gpu-opt
    in process when its extension is built, else the gpu-opt command.
    Raises _Declined when the model declines to fuse. `candidates_out`:
    where strategy=auto writes its ranked candidates (also when it
    declines)."""
    from gpuopt.tools import ToolNotFound
    name = options["name"]
    if candidates_out:
        options = dict(options, **{"candidates-out": candidates_out})
    api = _compiler_api()
    if api is not None and os.environ.get("GPUOPT_TRITON_FUSE_TOOL") != "1":
        ptx, manifest, remarks = _compile_inprocess(api, ptxs, files, options)
    else:
        try:
            ptx, manifest, remarks = _compile_with_tool(ptxs, files, options)
        except ToolNotFound as e:
            raise FuseError("no fused kernel for these kernels in the cache, and no gpu-opt "
                            "here to build one (neither gpuopt's compiler extension nor the "
                            f"gpu-opt command: {e}); build it with prepare() where gpu-opt "
                            "is, into the same cache_dir") from e
    kernels = manifest.get("kernels", [manifest]) if isinstance(manifest, dict) else manifest
    entry = next((k for k in kernels if k.get("name") == name), None)
    if entry is None:
        raise FuseError(f"gpu-opt's manifest has no kernel {name}")
    if not entry.get("shape_params"):
        raise FuseError(f"fused kernel {name} has no shape_params (runtime shapes)")
    return ptx, entry, remarks


_BUILDS = {}  # key -> Build, for every fused callable of the process
_BUILDS_LOCK = threading.Lock()


# ---------------------------------------------------------------------------
# Torch helpers (the GPU side)
# ---------------------------------------------------------------------------

def _tensors(obj, out):
    if isinstance(obj, (tuple, list)):
        for x in obj:
            _tensors(x, out)
    elif isinstance(obj, dict):
        for x in obj.values():
            _tensors(x, out)
    elif hasattr(obj, "untyped_storage") and hasattr(obj, "data_ptr"):
        out.append(obj)
    return out


class _Snapshot:
    """Copies of the storages of tensors (each storage once), and views of
    the copies in place of the tensors."""

    def __init__(self, tensors):
        import torch
        self.storages = {}  # (device, storage ptr) -> (real u8, copy u8)
        self.views = {}     # id(tensor) -> view of the copy
        self.owners = {}    # (device, storage ptr) -> [tensor]
        for t in tensors:
            st = t.untyped_storage()
            key = (str(t.device), st.data_ptr())
            if key not in self.storages:
                real = torch.empty(0, dtype=torch.uint8, device=t.device).set_(
                    st, 0, (st.nbytes(),), (1,))
                self.storages[key] = (real, real.clone())
                self.owners[key] = []
            self.owners[key].append(t)
            copy = self.storages[key][1]
            self.views[id(t)] = torch.empty(0, dtype=t.dtype, device=t.device).set_(
                copy.untyped_storage(), t.storage_offset(), t.size(), t.stride())

    def substitute(self, obj):
        if isinstance(obj, tuple):
            return tuple(self.substitute(x) for x in obj)
        if isinstance(obj, list):
            return [self.substitute(x) for x in obj]
        return self.views.get(id(obj), obj)

    def differences(self):
        """[(storage key, first differing byte, bytes differing)] real vs copy."""
        import torch
        out = []
        for key, (real, copy) in self.storages.items():
            if not torch.equal(real, copy):
                ne = (real != copy).nonzero()
                out.append((key, int(ne[0]), int(ne.numel())))
        return out

    def compare(self, other):
        """[(storage key, first differing byte, bytes differing)] this
        snapshot's copies vs `other`'s (a snapshot of the same tensors)."""
        import torch
        out = []
        for key, (_, copy) in self.storages.items():
            theirs = other.storages[key][1]
            if not torch.equal(copy, theirs):
                ne = (copy != theirs).nonzero()
                out.append((key, int(ne[0]), int(ne.numel())))
        return out

    def restore(self):
        """The real storages take the copies' contents."""
        for real, copy in self.storages.values():
            real.copy_(copy)


def _stream_handle(stream):
    import torch
    if stream is None:
        return torch.cuda.current_stream().cuda_stream
    if isinstance(stream, int):
        return stream
    return stream.cuda_stream


@contextlib.contextmanager
def _on_stream(stream):
    """Triton and torch use `stream` (an int handle or a torch stream) inside."""
    if stream is None:
        yield
        return
    import torch
    s = torch.cuda.ExternalStream(stream) if isinstance(stream, int) else stream
    with torch.cuda.stream(s):
        yield


def _run_original(launch, stream, bound=None):
    """The launch through Triton's own launcher, as JITFunction.run makes it."""
    from triton import knobs
    ck = launch.compiled
    b = launch.bound if bound is None else bound
    gx, gy, gz = launch.grid
    if gx * gy * gz == 0:
        return
    md = ck.launch_metadata(launch.grid, stream, *b)
    ck.run(gx, gy, gz, stream, ck.function, ck.packed_metadata, md,
           knobs.runtime.launch_enter_hook, knobs.runtime.launch_exit_hook, *b)


def _scratch(launch, stream):
    """Triton's two scratch pointers for this launch, allocated as its
    launcher allocates them; returns (pointers, the allocations to keep)."""
    from triton.runtime import _allocation
    md = launch.compiled.metadata
    ptrs, keep = [], []
    for what, allocator in (("global", _allocation._allocator),
                            ("profile", _allocation._profile_allocator)):
        size = int(getattr(md, f"{what}_scratch_size", 0) or 0)
        if size > 0:
            align = int(getattr(md, f"{what}_scratch_align", 1) or 1)
            buf = allocator.get()(launch.blocks * size, align, stream)
            keep.append(buf)
            ptrs.append(("ptr", _pointer(buf)))
        else:
            ptrs.append(("ptr", 0))
    return ptrs, keep


def gpu_present():
    """Whether measurement is on by default: the runtime finds a GPU
    (gpuopt.find_gpu()); False, quietly, without one, without its driver or
    without gpuopt's extensions."""
    try:
        from gpuopt import api
    except ImportError:
        return False
    return api.find_gpu() is not None


def _median_ms(fn, reps, warmup):
    import torch
    for _ in range(warmup):
        fn()
    starts = [torch.cuda.Event(enable_timing=True) for _ in range(reps)]
    ends = [torch.cuda.Event(enable_timing=True) for _ in range(reps)]
    for s, e in zip(starts, ends):
        s.record()
        fn()
        e.record()
    torch.cuda.synchronize()
    return statistics.median(s.elapsed_time(e) for s, e in zip(starts, ends))


# ---------------------------------------------------------------------------
# The fused callable
# ---------------------------------------------------------------------------

class FusedTriton:
    """What `fuse` returns. Call it with one launch per kernel, in the
    kernels' order, each `gpuopt.triton.call(kernel, grid, *args, **kwargs)`
    or a tuple (grid, args) / (grid, args, kwargs); `stream=` an int CUstream
    handle or a torch stream (default: the current stream).

    Attributes: `kernels`; `decisions` {launch shape: {"choice": "fused" |
    "serial", "why", "strategy", "times_ms"; measured auto also "model" (the
    model's own verdict) and "measured" (each candidate's "options",
    "description", "predicted", "ms", "excluded"); "unmeasured": why not
    measured where it was to be}}; `builds` [Build]; `stats` {"fused",
    "serial", "verified"} launch counts."""

    def __init__(self, kernels, strategy="auto", verify=True, measure=None, cache_dir=None,
                 fallback=False, reps=20, warmup=5, measure_top=MEASURE_TOP, **options):
        if len(kernels) < 2:
            raise FuseError("fuse() takes two kernels or more")
        if verify not in (True, False, "shape"):
            raise FuseError(f"verify must be True, False or 'shape', not {verify!r}")
        self.kernels = list(kernels)
        self.strategy = strategy
        self.verify = verify
        if measure not in (None, True, False):
            raise FuseError(f"measure must be None (on with a GPU), True or False, not "
                            f"{measure!r}")
        self.measure = measure
        self.measure_top = int(measure_top)
        if self.measure_top < 1:
            raise FuseError(f"measure_top must be at least 1, not {measure_top!r}")
        self._measuring = None
        self.fallback = fallback
        self.reps, self.warmup = int(reps), int(warmup)
        self.cache_dir = default_cache_dir() if cache_dir is None else cache_dir
        for k in ("kernels", "blocks", "smem", "grids", "runtime_shapes", "runtime-shapes",
                  "name", "measure", "measure_args", "measure-args", "candidates_out",
                  "candidates-out"):
            if k in options:
                raise FuseError(f"option {k!r} is set by gpuopt.triton.fuse itself")
        self.options = {k.replace("_", "-"): list(v) if isinstance(v, tuple) else v
                        for k, v in options.items()}
        self.decisions = {}
        self.stats = {"fused": 0, "serial": 0, "verified": 0}
        self._verified = set()
        self._broken = {}
        self._functions = {}  # (build key, CUcontext) -> gpuopt.cuda.Function
        self._lock = threading.RLock()

    # -- launches -----------------------------------------------------------
    def _calls(self, calls):
        if len(calls) != len(self.kernels):
            raise FuseError(f"{len(self.kernels)} kernels fused, {len(calls)} launches given")
        out = []
        for i, (k, c) in enumerate(zip(self.kernels, calls)):
            if isinstance(c, Call):
                if c.kernel is not k:
                    raise FuseError(f"launch {i} is of {_kernel_name(c.kernel)}, the fused "
                                    f"kernel's part {i} is {_kernel_name(k)}")
                out.append(c)
            elif isinstance(c, (tuple, list)) and len(c) in (2, 3):
                out.append(Call(k, c[0], c[1], c[2] if len(c) == 3 else None))
            else:
                raise FuseError(f"launch {i}: give gpuopt.triton.call(kernel, grid, *args) or "
                                "(grid, args[, kwargs])")
        return out

    def capture(self, *calls):
        """The KernelLaunch of each call (bound by Triton, not launched)."""
        return [capture(c.kernel, c.grid, c.args, c.kwargs) for c in self._calls(calls)]

    # -- building -----------------------------------------------------------
    def _build_options(self, launches, candidate=None):
        """(key, --hfuse options) of the build for `launches`: by the
        callable's strategy, or by `candidate` (a candidate's options, as
        candidate_options gives them)."""
        strategy = candidate["strategy"] if candidate else self.strategy
        opts = {"strategy": strategy,
                "kernels": [f"k{i}::{ln.name}" for i, ln in enumerate(launches)],
                "blocks": [ln.block for ln in launches],
                "smem": [ln.shared for ln in launches],
                "runtime-shapes": True}
        if strategy == "auto":
            # The model's input; with a named strategy the grids would fix the
            # interleave ratio and tie the kernel to one shape.
            opts["grids"] = ["x".join(str(g) for g in ln.grid) for ln in launches]
        if candidate:
            opts.update({k: v for k, v in self.options.items() if k not in _AUTO_ONLY})
            opts.update({k: v for k, v in candidate.items() if k != "strategy"})
        else:
            opts.update(self.options)
        material = json.dumps({"format": FORMAT_VERSION,
                               "ptx": [hashlib.sha256(normalize_ptx(ln.ptx).encode()).hexdigest()
                                       for ln in launches],
                               "options": opts}, sort_keys=True)
        key = hashlib.sha256(material.encode()).hexdigest()[:24]
        opts["name"] = f"gpuopt_fused_{key[:12]}"
        return key, opts

    def build(self, launches, candidate=None):
        """The Build for these launches (by `candidate`'s options, when
        given): from memory, the cache directory, or gpu-opt (then kept in
        both). A strategy=auto build keeps the model's ranking."""
        key, opts = self._build_options(launches, candidate)
        ranked = opts["strategy"] == "auto"
        path = None
        if self.cache_dir and self.cache_dir != "none":
            path = os.path.join(self.cache_dir, key + ".json")
        with _BUILDS_LOCK:
            b = _BUILDS.get(key)
        if b is None and path and os.path.exists(path):
            with open(path) as f:
                b = Build.from_json(json.load(f))
            if ranked and b.candidates is None:
                b = None  # cached before the ranking was kept: build again
        fresh = b is None
        if b is None:
            files = [f"k{i}.ptx" for i in range(len(launches))]
            with tempfile.TemporaryDirectory(prefix="gpuopt-triton-fuse-") as tmp:
                out = os.path.join(tmp, "candidates.json") if ranked else None
                try:
                    ptx, entry, remarks = compile_fused([ln.ptx for ln in launches], files,
                                                        opts, out)
                    b = Build(key, ptx, entry, remarks, options=opts)
                except _Declined as e:
                    b = Build(key, declined=str(e), options=opts)
                b.candidates = read_ranking(out)
        if path and (fresh or not os.path.exists(path)):
            os.makedirs(self.cache_dir, exist_ok=True)
            fd, tmp = tempfile.mkstemp(dir=self.cache_dir, suffix=".tmp")
            with os.fdopen(fd, "w") as f:
                json.dump(b.to_json(), f)
            os.replace(tmp, path)
        with _BUILDS_LOCK:
            b = _BUILDS.setdefault(key, b)
        return b

    def prepare(self, *calls):
        """Captures and builds without launching (works inside
        offline_target()); returns the Build. Under strategy="auto" also
        builds the candidates a measurement would (the model's top
        `measure_top`), so that a cache filled here serves a GPU machine
        without gpu-opt."""
        launches = self.capture(*calls)
        build = self.build(launches)
        for c in (build.candidates or [])[:self.measure_top]:
            try:
                self.build(launches, candidate_options(c["options"]))
            except FuseError:
                pass  # measured, it is left out
        return build

    @property
    def builds(self):
        keys = {d.get("build") for d in self.decisions.values()}
        with _BUILDS_LOCK:
            return [_BUILDS[k] for k in keys if k in _BUILDS]

    # -- launching ----------------------------------------------------------
    def _launch_fused(self, build, launches, stream, bound=None):
        from gpuopt import cuda
        kernel = build.manifest
        smem = []
        for f, ln in zip(kernel["fused_from"], launches):
            smem.append(ln.shared if f.get("dynamic_smem") == "runtime" else None)
            if f.get("dynamic_smem") not in ("runtime", None) and int(f["dynamic_smem"]) != ln.shared:
                raise FuseError(f"{ln.name}: launched with {ln.shared} bytes of dynamic shared "
                                f"memory, the fused kernel has {f['dynamic_smem']} fixed")
        grid, dyn, shape_values = compute_fused_launch(kernel, [ln.grid for ln in launches], smem,
                                                       "the grid", "the dynamic shared memory")
        keep, plist = [], []
        for p, ln in enumerate(launches):
            params = ln.params if bound is None else flat_params(ln.compiled, bound[p])
            scratch, held = _scratch(ln, stream)
            keep += held
            plist.append(list(params) + scratch)
        args = fused_arguments(kernel, plist, shape_values)
        ctx = cuda.current_context()
        fn = self._functions.get((build.key, ctx))
        if fn is None:
            fn = cuda.load_module(build.ptx).function(kernel["name"])
            self._functions[(build.key, ctx)] = fn
        block = kernel["launch"]["block"]
        cuda.launch(fn, grid, block, dyn, stream, args)
        del keep

    def _serial(self, launches, stream, bound=None):
        for p, ln in enumerate(launches):
            _run_original(ln, stream, None if bound is None else bound[p])

    def _verify(self, build, launches, stream):
        tensors = []
        for ln in launches:
            _tensors(ln.bound, tensors)
        name = _non_tensor_pointer(launches, tensors)
        if name is not None:
            raise FuseError(f"{name}: a pointer argument is not a tensor and cannot "
                            "be copied for verification; give verify=False")
        snap = _Snapshot(tensors)
        self._serial(launches, stream, [snap.substitute(ln.bound) for ln in launches])
        self._launch_fused(build, launches, stream)
        diffs = snap.differences()
        if not diffs:
            self.stats["verified"] += 1
            return
        snap.restore()
        lines = []
        for key, first, count in diffs:
            who = []
            for t in snap.owners[key]:
                for ln in launches:
                    names = [n for n, b in zip(_bound_names(ln), ln.bound) if b is t]
                    who += [f"{ln.name}.{n}" for n in names]
            lines.append(f"  {', '.join(sorted(set(who))) or 'a tensor'}: {count} bytes differ, "
                         f"the first at byte {first} of its storage")
        why = ("the fused kernel (" + str(build.strategy) + ", " + build.options.get("name", "")
               + ") does not write what the kernels write apart:\n" + "\n".join(lines))
        self._broken[build.key] = why
        raise VerificationError(why + "\nthe tensors hold the kernels' own results; the fused "
                                "kernel is not used again")

    def _choose(self, build, launches, stream):
        tensors = []
        for ln in launches:
            _tensors(ln.bound, tensors)
        snap = _Snapshot(tensors)
        bound = [snap.substitute(ln.bound) for ln in launches]
        serial = _median_ms(lambda: self._serial(launches, stream, bound), self.reps, self.warmup)
        fused = _median_ms(lambda: self._launch_fused(build, launches, stream, bound), self.reps,
                           self.warmup)
        return ("fused" if fused < serial else "serial"), {"fused": fused, "serial": serial}

    def __call__(self, *calls, stream=None):
        with _on_stream(stream):
            handle = _stream_handle(stream)
            launches = [capture(c.kernel, c.grid, c.args, c.kwargs) for c in self._calls(calls)]
            self.launch(launches, handle)
        return None

    def launch(self, launches, handle):
        """Launches KernelLaunches bound elsewhere (e.g. recorded from a
        compiled program's launcher) fused, or apart as decided, on stream
        `handle`: the body of a call after its capture."""
        if any(ln.blocks == 0 for ln in launches):
            # Triton launches nothing for an empty grid; the others run apart.
            self._serial(launches, handle)
            self.stats["serial"] += 1
            return None
        shape = tuple((ln.name, ln.compiled.hash, ln.grid, ln.shared) for ln in launches)
        decision = self.decisions.get(shape)
        if decision is None:
            with self._lock:
                decision = self.decisions.get(shape) or self._decide(shape, launches, handle)
        build = None
        if decision["choice"] == "fused" and decision["build"] not in self._broken:
            with _BUILDS_LOCK:
                build = _BUILDS[decision["build"]]
        if build is None:
            self._serial(launches, handle)
            self.stats["serial"] += 1
            return None
        key = build.key if self.verify is True else (build.key, shape)
        if self.verify and key not in self._verified:
            # The verification's fused launch is this call's launch.
            try:
                self._verify(build, launches, handle)
            except VerificationError:
                for d in self.decisions.values():
                    if d.get("build") == build.key:
                        d["choice"], d["why"] = "serial", self._broken[build.key]
                raise
            self._verified.add(key)
        else:
            self._launch_fused(build, launches, handle)
        self.stats["fused"] += 1

    def _decide(self, shape, launches, handle):
        """Builds (or finds) the fused kernel for this shape and decides."""
        decision = {"choice": "serial", "why": None, "build": None, "strategy": None}
        try:
            build = self.build(launches)
        except FuseError as e:
            if not self.fallback:
                raise
            warnings.warn(f"gpuopt.triton.fuse: launching the kernels apart: {e}")
            decision["why"] = str(e)
            self.decisions[shape] = decision
            return decision
        decision["build"] = build.key
        decision["remarks"] = build.remarks
        if self.strategy == "auto" and self.measuring():
            unmeasured = _uncopyable(launches)
            if unmeasured is None:
                unmeasured = self._decide_measured(shape, decision, build, launches, handle)
                if unmeasured is None:
                    return decision
            warnings.warn(f"gpuopt.triton.fuse: the model's choice stands, unmeasured: "
                          f"{unmeasured}")
            decision["unmeasured"] = unmeasured
        if build.declined:
            decision["why"] = build.declined
        elif build.key in self._broken:
            decision["why"] = self._broken[build.key]
        else:
            decision["strategy"] = build.strategy
            decision["choice"] = "fused"
            decision["why"] = f"fused ({build.strategy})"
            if self.strategy != "auto" and self.measuring():
                choice, times = self._choose(build, launches, handle)
                decision["choice"], decision["times_ms"] = choice, times
                decision["why"] = (f"measured: fused ({build.strategy}) {times['fused']:.4f} ms, "
                                   f"apart {times['serial']:.4f} ms")
        self.decisions[shape] = decision
        return decision

    def measuring(self):
        """Whether decisions are measured: measure=True, or with measure=None
        (the default) strategy="auto" where the runtime finds a GPU."""
        if self._measuring is None:
            self._measuring = (self.strategy == "auto" and gpu_present()
                               if self.measure is None else bool(self.measure))
        return self._measuring

    def _decide_measured(self, shape, decision, build, launches, handle):
        """strategy="auto", measured: the model ranks and measurement
        decides. Its top `measure_top` feasible candidates, whether or not it
        predicts a gain, are built by their options, checked against the
        kernels apart and timed with them on copies of the tensors; the
        fastest fuses if it is MIN_SPEEDUP faster than the kernels apart.
        Returns None when it decided, else why nothing could be measured
        (the model's choice then stands)."""
        decision["model"] = build.declined or f"fused ({build.strategy})"
        ranked = build.candidates or []
        measured, builds = [], []
        for c in ranked[:self.measure_top]:
            entry = {k: c.get(k) for k in ("options", "description", "predicted", "apart",
                                           "unit")}
            entry.update(ms=None, excluded=None, build=None)
            try:
                cb = self.build(launches, candidate_options(c["options"]))
                if cb.declined:
                    raise FuseError(cb.declined)
                entry["build"] = cb.key
                builds.append((entry, cb))
            except FuseError as e:
                entry["excluded"] = f"not built: {e}"
            measured.append(entry)
        if not builds:
            if not ranked:
                return "the model ranked no candidate (none can be built)"
            return "no candidate was built: " + measured[0]["excluded"]
        decision["measured"] = measured
        serial, times, excluded = self._measure([cb for _, cb in builds], launches, handle)
        for (entry, _), ms, why in zip(builds, times, excluded):
            entry["ms"], entry["excluded"] = ms, why
        checked = [(entry, cb) for entry, cb in builds if entry["excluded"] is None]
        count = f"{len(builds)} of {len(ranked)} candidates measured"
        decision["times_ms"] = {"serial": serial}
        best = min(checked, key=lambda p: p[0]["ms"]) if checked else None
        if best is None:
            decision["why"] = (f"measured: no candidate is checked ({count}, each left out); "
                               f"the kernels apart {serial:.4f} ms")
        elif best[0]["ms"] > serial * (1 - MIN_SPEEDUP):
            entry = best[0]
            decision["times_ms"]["fused"] = entry["ms"]
            decision["why"] = (f"measured: no candidate is {MIN_SPEEDUP:.0%} faster than the "
                               f"kernels apart ({serial:.4f} ms; fastest checked: "
                               f"{entry['description']}, {entry['ms']:.4f} ms); {count}")
        else:
            entry, cb = best
            decision.update(choice="fused", build=cb.key, strategy=cb.strategy)
            decision["times_ms"]["fused"] = entry["ms"]
            decision["why"] = (f"measured: {entry['description']} ({cb.strategy}) "
                               f"{entry['ms']:.4f} ms vs {serial:.4f} ms apart "
                               f"({serial / entry['ms']:.2f}x); {count}")
            if self.verify:  # checked while measured: its first use needs no other check
                self._verified.add(cb.key if self.verify is True else (cb.key, shape))
        self.decisions[shape] = decision
        return None

    def _measure(self, builds, launches, stream):
        """(the kernels apart's time, each build's time or None, why each was
        left out or None): each build checked against the kernels apart
        (unless verify=False), then timed with them on one copy of the
        tensors (the real ones untouched)."""
        tensors = []
        for ln in launches:
            _tensors(ln.bound, tensors)
        excluded = [self._check(b, launches, stream, tensors) if self.verify else None
                    for b in builds]
        snap = _Snapshot(tensors)
        bound = [snap.substitute(ln.bound) for ln in launches]
        serial = _median_ms(lambda: self._serial(launches, stream, bound), self.reps,
                            self.warmup)
        times = []
        for b, why in zip(builds, excluded):
            times.append(None if why else _median_ms(
                lambda b=b: self._launch_fused(b, launches, stream, bound), self.reps,
                self.warmup))
        return serial, times, excluded

    def _check(self, build, launches, stream, tensors):
        """Whether `build` writes what the kernels write apart, each on its own
        copy of `tensors`: None, or what differs."""
        apart, fused = _Snapshot(tensors), _Snapshot(tensors)
        self._serial(launches, stream, [apart.substitute(ln.bound) for ln in launches])
        try:
            self._launch_fused(build, launches, stream,
                               [fused.substitute(ln.bound) for ln in launches])
        except (FuseError, RuntimeError) as e:
            return f"launch failed: {e}"
        diffs = apart.compare(fused)
        if not diffs:
            self.stats["verified"] += 1
            return None
        nbytes = sum(count for _, _, count in diffs)
        return (f"its outputs differ from the kernels' apart: {nbytes} bytes in "
                f"{len(diffs)} tensor storages")


def _non_tensor_pointer(launches, tensors):
    """The name of the first launch with a pointer argument that points into
    none of `tensors` (memory that cannot be copied), or None."""
    for ln in launches:
        for ty, v in ln.params:
            if ty == "ptr" and v and not any(t.data_ptr() == v for t in tensors):
                return ln.name
    return None


def _uncopyable(launches):
    """Why the launches' inputs cannot be copied to measure on (a pointer
    argument that is not a tensor), or None."""
    tensors = []
    for ln in launches:
        _tensors(ln.bound, tensors)
    name = _non_tensor_pointer(launches, tensors)
    if name is None:
        return None
    return (f"{name}: a pointer argument is not a tensor, so its memory "
            "cannot be copied to measure on")


def _bound_names(launch):
    sig = getattr(launch.compiled.src, "signature", {}) or {}
    return list(sig.keys())


def fuse(*kernels, strategy="auto", verify=True, measure=None, cache_dir=None, fallback=False,
         reps=20, warmup=5, measure_top=MEASURE_TOP, **options):
    """A callable that launches one fused kernel for launches of `kernels`
    (Triton kernels: @triton.jit functions, autotuned or heuristics-wrapped).

    strategy: gpu-opt's --hfuse strategy: "auto" (the model chooses, per
      launch shape), "thread", "interleave", "dynamic".
    verify: True: compare with the kernels apart on the first use of each
      fused kernel; "shape": on the first use of each launch shape; False.
    measure: None (default): measured where the runtime finds a GPU
      (gpuopt.find_gpu()) and strategy is "auto"; True: measured; False: not.
      Measured, once per launch shape on copies of the tensors: under "auto"
      the model's top `measure_top` candidates (also when it predicts no
      gain) are checked and timed against the kernels apart, and the fastest
      fuses if 1% faster; a named strategy's kernel is kept if faster.
    measure_top: how many of the model's candidates to measure (3).
    cache_dir: where builds are kept (default $GPUOPT_TRITON_FUSE_CACHE, else
      $XDG_CACHE_HOME/gpuopt/triton-fuse); "none": memory only.
    fallback: launch the kernels apart (with a warning) when gpu-opt cannot
      fuse them, instead of raising FuseError.
    options: more --hfuse options (ratio=[3, 1], maxnreg=128, min_gain=0.05,
      threads=..., setmaxnreg=...); lists are joined by ",".
    """
    if len(kernels) == 1 and isinstance(kernels[0], (list, tuple)):
        kernels = tuple(kernels[0])
    return FusedTriton(kernels, strategy=strategy, verify=verify, measure=measure,
                       cache_dir=cache_dir, fallback=fallback, reps=reps, warmup=warmup,
                       measure_top=measure_top, **options)
