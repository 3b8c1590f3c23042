"""gpuopt.triton.fuse: the fused launch formula (the runtime's
computeFusedLaunch, on the cases of its unit test), argument packing, Triton
launches bound without a GPU (offline_target), fused kernels built from two
real Triton kernels (gpu-opt in process, else the gpu-opt command; ptxas
assembles them), the build cache, and on a GPU bit-identical fused launches
at several shapes."""

import ctypes
import json
import os
import shutil
import subprocess

import pytest

import importlib

# The module (gpuopt.triton exports its function `fuse` under the same name).
F = importlib.import_module("gpuopt.triton.fuse")

try:
    import triton
    import triton.language as tl
except ImportError:
    triton = None

needs_triton = pytest.mark.skipif(triton is None, reason="needs triton")

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


# ---------------------------------------------------------------------------
# The launch formula: the runtime's unit test (ManifestReaderTest.cpp,
# Version6ShapeParams), case by case, with its messages.
# ---------------------------------------------------------------------------

def v6_kernel():
    params = [{"name": n, "type": "u64", "size": 8, "align": 8, "offset": 8 * i,
               "kind": "pointer"} for i, n in enumerate(["a", "b"])]
    params += [{"name": n, "type": "u32", "size": 4, "align": 4, "offset": 16 + 4 * i,
                "kind": "scalar"}
               for i, n in enumerate(["g0x", "g0y", "g0z", "g1x", "g1y", "g1z", "s1"])]
    return {
        "name": "f", "params": params,
        "launch": {"block": [192], "grid": "runtime", "dynamic_smem": "runtime"},
        "fusion_strategy": "thread",
        "fused_from": [
            {"kernel": "k0", "threads": [0, 128], "block": [128, 1, 1], "grid": "runtime",
             "default_grid": [1000, 1, 1], "dynamic_smem_offset": 0, "dynamic_smem": 100,
             "arg_map": [0]},
            {"kernel": "k1", "threads": [128, 192], "block": [16, 4, 1], "grid": "runtime",
             "dynamic_smem_offset": 1024, "dynamic_smem": "runtime",
             "default_dynamic_smem": 64, "arg_map": [1]}],
        "shape_params": [
            {"param": 2, "part": 0, "value": "grid_x"}, {"param": 3, "part": 0, "value": "grid_y"},
            {"param": 4, "part": 0, "value": "grid_z"}, {"param": 5, "part": 1, "value": "grid_x"},
            {"param": 6, "part": 1, "value": "grid_y"}, {"param": 7, "part": 1, "value": "grid_z"},
            {"param": 8, "part": 1, "value": "dynamic_smem"}]}


def interleaved(k):
    k = json.loads(json.dumps(k))
    k["fusion_strategy"] = "interleave"
    for f in k["fused_from"]:
        f["threads"] = [0, f["threads"][1] - f["threads"][0]]
        f["dynamic_smem_offset"] = 0
    return k


def test_launch_formula_thread_split():
    k = v6_kernel()
    # The most blocks of any part; shared memory ends at part 1's offset plus size.
    assert F.compute_fused_launch(k, [None, (64, 64, 1)], [None, 4096]) == (
        (4096, 1, 1), 1024 + 4096, [1000, 1, 1, 64, 64, 1, 4096])
    # Part 0's default, part 1 smaller: part 0 decides; part 1's default size.
    assert F.compute_fused_launch(k, [None, (8, 4, 2)], []) == (
        (1000, 1, 1), 1024 + 64, [1000, 1, 1, 8, 4, 2, 64])
    # A 1-D grid as Triton gives it.
    assert F.compute_fused_launch(k, [(7,), (3, 2)], [])[0] == (7, 1, 1)


def test_launch_formula_block_level():
    i = interleaved(v6_kernel())
    grid, smem, values = F.compute_fused_launch(i, [(300, 1, 1), (16, 8, 1)], [None, 64])
    assert grid == (428, 1, 1) and smem == 100
    assert values == [300, 1, 1, 16, 8, 1, 64]
    # A fixed launch size wins over the parts'.
    i["launch"]["dynamic_smem"] = 2048
    assert F.compute_fused_launch(i, [(1,), (1,)], [None, 64])[1] == 2048


@pytest.mark.parametrize("change, grids, smem, message", [
    (None, [], [], "kernel 'f': part 1 (k1): its grid is taken at launch and the manifest has "
     "no default; give --part-grid 1=X[xY[xZ]]"),
    ("no-default-size", [None, (2, 2, 1)], [], "kernel 'f': part 1 (k1): its dynamic shared "
     "memory is taken at launch and the manifest has no default; give --part-smem 1=BYTES"),
    (None, [None, (2, 2, 1)], [8], "kernel 'f': part 0 (k0) has the fixed dynamic shared "
     "memory 100; --part-smem applies to sizes taken at launch"),
    (None, [None, (2, 70000, 1)], [], "kernel 'f': part 1 (k1): grid 2,70000,1: dimension y "
     "must be between 1 and 65535"),
    ("interleave", [(2147483647, 1, 1), (2, 1, 1)], [], "kernel 'f': the parts' grids add up "
     "to 2147483649 fused blocks, more than 2147483647"),
    (None, [None, None, (1, 1, 1)], [], "kernel 'f' has 2 parts (0 to 1)"),
    ("fixed-grid", [(5,), (1,)], [], "kernel 'f': part 0 (k0) has the fixed grid 9,1,1; "
     "--part-grid applies to grids taken at launch"),
    ("not-agnostic", [], [], "kernel 'f' is not a launch-agnostic fused kernel (no "
     "shape_params)"),
])
def test_launch_formula_errors(change, grids, smem, message):
    k = v6_kernel()
    if change == "no-default-size":
        del k["fused_from"][1]["default_dynamic_smem"]
    elif change == "interleave":
        k = interleaved(k)
    elif change == "fixed-grid":
        k["fused_from"][0]["grid"] = [9, 1, 1]
    elif change == "not-agnostic":
        k["shape_params"] = []
    with pytest.raises(F.FuseError) as e:
        F.compute_fused_launch(k, grids, smem)
    assert str(e.value) == message


def test_fused_arguments_follow_arg_map():
    k = v6_kernel()
    values = F.fused_arguments(k, [[("ptr", 0x1000)], [("ptr", 0x2000)]],
                               [1000, 1, 1, 8, 4, 2, 64])
    assert [v.value for v in values] == [0x1000, 0x2000, 1000, 1, 1, 8, 4, 2, 64]
    assert [ctypes.sizeof(v) for v in values] == [8, 8] + [4] * 7
    with pytest.raises(F.FuseError, match="parameter 0 .* takes 8 bytes, part 0's argument 0 "
                       "is i32"):
        F.fused_arguments(k, [[("i32", 1)], [("ptr", 0)]], [1] * 7)
    with pytest.raises(F.FuseError, match="part 1 .* has 1 parameters, the launch 2"):
        F.fused_arguments(k, [[("ptr", 0)], [("ptr", 0), ("ptr", 0)]], [1] * 7)


def test_scalars_packed_as_triton_packs_them():
    assert F.pack_scalar("fp32", 0.5).value == 0x3F000000
    assert F.pack_scalar("fp32", 1e300).value == 0x7F800000  # (float) of a huge double
    assert F.pack_scalar("fp16", 1.0).value == 0x3C00
    assert F.pack_scalar("fp16", 1.0 + 2 ** -11).value == 0x3C00  # ties to even
    assert F.pack_scalar("bf16", 1.0 + 2 ** -8).value == 0x3F80  # truncated, as Triton does
    assert F.pack_scalar("fp64", 0.1).value == 0.1
    assert F.pack_scalar("i32", -1).value == -1 and ctypes.sizeof(F.pack_scalar("i32", -1)) == 4
    assert F.pack_scalar("i64", 1 << 40).value == 1 << 40
    assert F.pack_scalar("u8", 257).value == 1
    assert F.pack_scalar("ptr", 0xDEADBEEF00).value == 0xDEADBEEF00
    with pytest.raises(F.FuseError, match="'f8E4M3'"):
        F.pack_scalar("f8E4M3", 1.0)


def test_hfuse_text_spells_options_as_the_python_api():
    # The gpu-opt command fallback writes what Module.fuse would pass.
    assert F._hfuse_text({"blocks": [(256, 1, 1), 128], "smem": (0, 64),
                          "runtime-shapes": True}) == \
        "blocks=256x1x1,128 smem=0,64 runtime-shapes=true"


def test_normalize_ptx_ignores_debug_information():
    body = ".version 8.7\n.target sm_90a\n.visible .entry k(\n.param .u64 k_param_0\n)\n{\n" \
           "\t.loc\t1 4 0 // @PATH@:4:0\n\tret;\n}\n"
    tail = "\t.file\t1 \"@PATH@\"\n\t.section\t.debug_abbrev\n\t{\n.b8 1 // x\n\t}\n" \
           "\t.section\t.debug_info\n\t{\n.b8 47\n.b8 116\n\t}\n\t.section\t.debug_macinfo\t{\t}\n"
    a = (body + tail).replace("@PATH@", "/a/k.py")
    b = (body + tail).replace("@PATH@", "/elsewhere/k.py")
    assert F.normalize_ptx(a) == F.normalize_ptx(b)
    assert F.normalize_ptx(a).splitlines() == [
        ".version 8.7", ".target sm_90a", ".visible .entry k(", ".param .u64 k_param_0", ")",
        "{", "ret;", "}"]
    assert F.normalize_ptx(a) != F.normalize_ptx(a.replace("ret;", "exit;"))


def test_calls_must_match_the_kernels():
    k1, k2 = object(), object()
    fz = F.FusedTriton([k1, k2], cache_dir="none")
    with pytest.raises(F.FuseError, match="2 kernels fused, 1 launches given"):
        fz._calls([((1,), ())])
    with pytest.raises(F.FuseError, match="launch 0 is of"):
        fz._calls([F.call(k2, (1,)), F.call(k2, (1,))])
    calls = fz._calls([((4,), (1, 2)), ((5,), (3,), {"BLOCK": 8})])
    assert [(c.kernel, c.grid, c.args, c.kwargs) for c in calls] == [
        (k1, (4,), (1, 2), {}), (k2, (5,), (3,), {"BLOCK": 8})]
    with pytest.raises(F.FuseError, match="set by gpuopt.triton.fuse itself"):
        F.fuse(k1, k2, blocks=[1, 2])
    with pytest.raises(F.FuseError, match="two kernels or more"):
        F.fuse(k1)


# ---------------------------------------------------------------------------
# Triton kernels, bound without a GPU
# ---------------------------------------------------------------------------

if triton is not None:
    @triton.jit
    def add_kernel(x_ptr, y_ptr, out_ptr, n, BLOCK: tl.constexpr):
        offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
        m = offs < n
        tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=m) + tl.load(y_ptr + offs, mask=m),
                 mask=m)

    @triton.jit
    def softmax_kernel(out_ptr, in_ptr, in_stride, out_stride, n_cols, scale,
                       BLOCK: tl.constexpr):
        row = tl.program_id(0)
        cols = tl.arange(0, BLOCK)
        m = cols < n_cols
        x = tl.load(in_ptr + row * in_stride + cols, mask=m, other=-float("inf")) * scale
        x = x - tl.max(x, 0)
        e = tl.exp(x)
        tl.store(out_ptr + row * out_stride + cols, e / tl.sum(e, 0), mask=m)

    @triton.jit
    def row_sum_kernel(out_ptr, in_ptr, n_cols, BLOCK: tl.constexpr):
        row = tl.program_id(0)
        acc = tl.zeros([BLOCK], dtype=tl.float32)
        for start in range(0, n_cols, BLOCK):
            cols = start + tl.arange(0, BLOCK)
            acc += tl.load(in_ptr + row * n_cols + cols, mask=cols < n_cols, other=0.0)
        tl.store(out_ptr + row, tl.sum(acc, 0))


P = F.placeholder


def add_call(n=4000, grid=None, ptrs=(256, 512, 1024)):
    grid = grid or (lambda meta: (triton.cdiv(n, meta["BLOCK"]),))
    return F.call(add_kernel, grid, P("float32", ptrs[0]), P("float32", ptrs[1]),
                  P("float32", ptrs[2]), n, BLOCK=1024)


def softmax_call(rows=64, cols=1000):
    return F.call(softmax_kernel, (rows,), P("float32", 4096), P("float32", 8192), 1024, 1024,
                  cols, 0.5, BLOCK=1024, num_warps=8)


@needs_triton
def test_capture_binds_without_launching():
    from triton.compiler.compiler import CompiledKernel
    before = CompiledKernel.__dict__["run"]
    with F.offline_target(90):
        fz = F.fuse(add_kernel, softmax_kernel, cache_dir="none")
        add, sm = fz.capture(add_call(n=40000), softmax_call())
    assert CompiledKernel.__dict__["run"] is before  # the recorder is gone
    assert (add.name, add.grid, add.block, add.shared, add.num_warps) == (
        "add_kernel", (40, 1, 1), 128, 0, 4)
    assert add.params == [("ptr", 256), ("ptr", 512), ("ptr", 1024), ("i32", 40000)]
    assert add.arg_names() == ["x_ptr", "y_ptr", "out_ptr", "n"]
    assert (sm.name, sm.grid, sm.block) == ("softmax_kernel", (64, 1, 1), 256)
    assert sm.shared > 0  # the reduction's scratch, Triton's dynamic shared memory
    assert sm.params[-1] == ("fp32", 0.5) and len(sm.params) == 6
    # The PTX entry: the bound parameters and Triton's two scratch pointers.
    assert F.entry_params(sm.ptx, "softmax_kernel") == ["u64", "u64", "u32", "u32", "u32",
                                                        "f32", "u64", "u64"]


@needs_triton
def test_capture_refuses_what_cannot_be_fused():
    with F.offline_target(90):
        with pytest.raises(F.FuseError, match="not a Triton kernel"):
            F.capture(object(), (1,))


# ---------------------------------------------------------------------------
# Building fused kernels from real Triton PTX
# ---------------------------------------------------------------------------

def compiler_available():
    if F._compiler_api() is not None:
        return True
    return F_tool() is not None


def F_tool():
    for path in [os.path.join(os.environ.get("GPUOPT_BIN_DIR", ""), "gpu-opt"),
                 os.path.join(ROOT, "build", "bin", "gpu-opt"), shutil.which("gpu-opt") or ""]:
        if path and os.path.isfile(path) and os.access(path, os.X_OK):
            return path
    return None


needs_compiler = pytest.mark.skipif(not compiler_available(), reason="no gpu-opt")


@pytest.mark.parametrize("path", ["in process", "gpu-opt command"])
def test_compile_fused_declined(path, monkeypatch):
    # gpu-opt keeps the kernels apart (a remark, exit 0): compile_fused says
    # so with _Declined, by the remark's text, both in process and through the
    # command. The stand-in ptxas and a profile fix the model's choice.
    inputs = os.path.join(ROOT, "test", "Transforms", "HFuse", "Inputs")
    if path == "in process":
        if F._compiler_api() is None:
            pytest.skip("gpuopt's compiler extension is not built")
    else:
        tool = F_tool()
        if tool is None:
            pytest.skip("no gpu-opt command")
        monkeypatch.setenv("GPUOPT_TRITON_FUSE_TOOL", "1")
        monkeypatch.setenv("GPUOPT_BIN_DIR", os.path.dirname(tool))
    texts = [open(os.path.join(inputs, f)).read() for f in ("scale.ptx", "tile.ptx")]
    options = {"strategy": "auto", "blocks": [128, "16x4"], "grids": [8192, "64x64"],
               "smem": [0, 64], "profile": os.path.join(inputs, "profile.json"),
               "ptxas": os.path.join(inputs, "fake-ptxas.py"), "name": "st_fused"}
    with pytest.raises(F._Declined) as e:
        F.compile_fused(texts, ["scale.ptx", "tile.ptx"], options)
    why = str(e.value)
    # Unmeasured, the model only ranks.
    assert why.startswith("hfuse: not fusing: nothing measured the candidates"), why
    assert "pass strategy=thread threads=128,64 maxnreg=0 replicas=1,2" in why
    # With min_gain, its estimate decides, and the best is below 10%.
    with pytest.raises(F._Declined) as e:
        F.compile_fused(texts, ["scale.ptx", "tile.ptx"], dict(options, **{"min-gain": 0.10}))
    assert str(e.value).startswith("hfuse: not fusing: no candidate is predicted"), str(e.value)


@pytest.fixture
def compiler_env(monkeypatch):
    tool = F_tool()
    if tool and F._compiler_api() is None:
        monkeypatch.setenv("GPUOPT_BIN_DIR", os.path.dirname(tool))


def ptxas():
    path = shutil.which("ptxas") or "/usr/local/cuda/bin/ptxas"
    return path if os.path.exists(path) else None


@needs_triton
@needs_compiler
@pytest.mark.parametrize("strategy", ["thread", "interleave", "dynamic", "auto"])
def test_fused_from_two_triton_kernels(strategy, tmp_path, compiler_env):
    # Unmeasured and without kernel times the model only ranks: auto fuses
    # here because min_gain accepts its estimate.
    extra = {"min_gain": 0.10} if strategy == "auto" else {}
    with F.offline_target(90):
        fz = F.fuse(add_kernel, softmax_kernel, strategy=strategy, cache_dir=str(tmp_path),
                    **extra)
        launches = fz.capture(add_call(n=4000), softmax_call(rows=64))
        build = fz.build(launches)
    assert build.declined is None and build.ptx
    k = build.manifest
    assert k["name"] == build.options["name"]
    assert build.strategy == (k["fusion_strategy"])
    if strategy != "auto":
        assert build.strategy == strategy
    # The parts' parameters (with the scratch pointers), then the shapes.
    assert [len(f["arg_map"]) for f in k["fused_from"]] == [6, 8]
    assert {sp["value"] for sp in k["shape_params"]} >= {"grid_x", "grid_y", "grid_z"}
    grid, smem, values = F.compute_fused_launch(
        k, [ln.grid for ln in launches],
        [ln.shared if f["dynamic_smem"] == "runtime" else None
         for f, ln in zip(k["fused_from"], launches)])
    blocks = [4, 64]
    assert grid == ((max(blocks) if build.strategy == "thread" else sum(blocks)), 1, 1)
    assert smem >= launches[1].shared
    args = F.fused_arguments(k, [ln.params + [("ptr", 0), ("ptr", 0)] for ln in launches],
                             values)
    assert len(args) == len(k["params"])
    assert args[k["fused_from"][1]["arg_map"][5]].value == 0x3F000000  # softmax's scale
    if ptxas():
        path = tmp_path / "fused.ptx"
        path.write_text(build.ptx)
        r = subprocess.run([ptxas(), "-arch=sm_90a", str(path), "-o", str(tmp_path / "f.cubin")],
                           capture_output=True, text=True)
        assert r.returncode == 0, r.stderr


@needs_triton
@needs_compiler
def test_same_kernel_twice_and_three_parts(tmp_path, compiler_env):
    with F.offline_target(90):
        fz = F.fuse(add_kernel, add_kernel, softmax_kernel, strategy="interleave",
                    cache_dir=str(tmp_path))
        build = fz.prepare(add_call(n=4000), add_call(n=100000, ptrs=(2048, 4096, 8192)),
                           softmax_call())
    assert [f["kernel"] for f in build.manifest["fused_from"]] == [
        "add_kernel", "add_kernel", "softmax_kernel"]


@needs_triton
@needs_compiler
def test_builds_cached_per_kernels_and_auto_per_shape(tmp_path, compiler_env, monkeypatch):
    with F.offline_target(90):
        fz = F.fuse(add_kernel, softmax_kernel, strategy="interleave", cache_dir=str(tmp_path))
        b1 = fz.prepare(add_call(n=4000), softmax_call(rows=64))
        # Another grid: the same launch-agnostic kernel.
        assert fz.prepare(add_call(n=400000), softmax_call(rows=3)).key == b1.key
        auto = F.fuse(add_kernel, softmax_kernel, cache_dir=str(tmp_path))
        a1 = auto.prepare(add_call(n=4000), softmax_call(rows=64))
        a2 = auto.prepare(add_call(n=400000), softmax_call(rows=3))
        assert a1.key != a2.key  # the model's choice depends on the grids
        # A new process (no builds in memory) finds them in the cache directory,
        # without a compiler.
        F._BUILDS.clear()

        def no_compiler(*a, **k):
            raise AssertionError("compiled again")
        monkeypatch.setattr(F, "compile_fused", no_compiler)
        again = F.fuse(add_kernel, softmax_kernel, strategy="interleave", cache_dir=str(tmp_path))
        b2 = again.prepare(add_call(n=12352), softmax_call(rows=9))
    assert b2.key == b1.key and b2.ptx == b1.ptx and b2.manifest == b1.manifest
    assert (tmp_path / (b1.key + ".json")).exists()


@needs_triton
@needs_compiler
def test_model_declines_and_errors(tmp_path, compiler_env):
    with F.offline_target(90):
        fz = F.fuse(add_kernel, softmax_kernel, min_gain=0.9, cache_dir=str(tmp_path))
        b = fz.prepare(add_call(), softmax_call())
        assert b.declined and "not fusing" in b.declined and b.ptx is None
        bad = F.fuse(add_kernel, softmax_kernel, strategy="thread", threads=[64, 256],
                     cache_dir="none")
        with pytest.raises(F.FuseError, match="cannot be given 64 threads"):
            bad.prepare(add_call(), softmax_call())


# ---------------------------------------------------------------------------
# On a GPU. Where the GPU machine has no gpu-opt, the builds come from the
# cache directory $GPUOPT_TRITON_FUSE_CACHE, which test_prepare_gpu_builds
# fills where gpu-opt is (the same launches, bound for sm_90 without a GPU).
# ---------------------------------------------------------------------------

# Shapes that Triton specialises alike (sizes and strides multiples of 16):
# one launch-agnostic kernel per named strategy serves them all.
GPU_SHAPES = [(1_000_000, 512, 1008), (4096, 3, 96), (70_000, 1000, 1024)]
GPU_STRATEGIES = ["auto", "thread", "interleave", "dynamic"]


def gpu_case(alloc, n, rows, cols):
    """The three launches (add, softmax, row sum) and their outputs' names."""
    x, y, out = alloc("x", (n,)), alloc("y", (n,)), alloc("out", (n,))
    a, sm, rs = alloc("a", (rows, cols)), alloc("sm", (rows, cols)), alloc("rs", (rows,))
    return [F.call(add_kernel, (triton.cdiv(n, 1024),), x, y, out, n, BLOCK=1024),
            F.call(softmax_kernel, (rows,), sm, a, cols, cols, cols, 0.5, BLOCK=1024,
                   num_warps=8),
            F.call(row_sum_kernel, (rows,), rs, a, cols, BLOCK=256)]


def swap_case(alloc, n=100_000):
    x, y, o1, o2 = (alloc(k, (n,)) for k in ("x", "y", "o1", "o2"))
    grid = (triton.cdiv(n, 1024),)
    return [F.call(add_kernel, grid, x, y, o1, n, BLOCK=1024),
            F.call(add_kernel, grid, y, y, o2, n, BLOCK=1024)]


def placeholder_alloc():
    state = {"ptr": 1 << 32}

    def alloc(name, shape):
        state["ptr"] += 1 << 28
        return P("float32", state["ptr"])
    return alloc


@needs_triton
@needs_compiler
def test_prepare_gpu_builds(compiler_env, tmp_path):
    cache = os.environ.get(F.CACHE_ENV) or str(tmp_path)
    with F.offline_target(90):
        for strategy in GPU_STRATEGIES:
            fz = F.fuse(add_kernel, softmax_kernel, row_sum_kernel, strategy=strategy,
                        cache_dir=cache)
            keys = {fz.prepare(*gpu_case(placeholder_alloc(), *shape)).key
                    for shape in GPU_SHAPES}
            assert len(keys) == (len(GPU_SHAPES) if strategy == "auto" else 1)
        F.fuse(add_kernel, add_kernel, strategy="interleave", cache_dir=cache).prepare(
            *swap_case(placeholder_alloc()))


def gpu_available():
    if triton is None:
        return False
    try:
        import torch
    except ImportError:
        return False
    return torch.cuda.is_available()


needs_gpu = pytest.mark.skipif(not gpu_available(), reason="needs torch, triton and a CUDA GPU")


def torch_alloc(tensors):
    import torch

    def alloc(name, shape):
        tensors[name] = torch.randn(shape, device="cuda")
        return tensors[name]
    return alloc


@needs_gpu
@pytest.mark.parametrize("strategy", GPU_STRATEGIES)
def test_fused_add_and_row_kernels_bit_identical(strategy):
    import torch
    fz = F.fuse(add_kernel, softmax_kernel, row_sum_kernel, strategy=strategy)
    for shape in GPU_SHAPES:
        torch.manual_seed(0)
        want = {}
        calls = gpu_case(torch_alloc(want), *shape)
        for c in calls:
            c.kernel[c.grid](*c.args, **c.kwargs)
        torch.manual_seed(0)
        got = {}
        fz(*gpu_case(torch_alloc(got), *shape))
        torch.cuda.synchronize()
        for name in ("out", "sm", "rs"):
            assert torch.equal(got[name], want[name]), (shape, name)
    if strategy != "auto":
        # One launch-agnostic kernel for the three shapes, verified once.
        assert fz.stats == {"fused": 3, "serial": 0, "verified": 1}
        assert len({d["build"] for d in fz.decisions.values()}) == 1
    else:
        assert fz.stats["fused"] + fz.stats["serial"] == 3


@needs_gpu
def test_verification_catches_a_wrong_fused_kernel():
    import copy
    import torch
    fz = F.fuse(add_kernel, add_kernel, strategy="interleave")
    t = {}
    calls = swap_case(torch_alloc(t))
    build = fz.build(fz.capture(*calls))
    # Swap the parts' output pointers: the fused kernel writes each part's
    # sum into the other's output.
    wrong = copy.deepcopy(build)
    m0, m1 = (f["arg_map"] for f in wrong.manifest["fused_from"])
    m0[2], m1[2] = m1[2], m0[2]
    F._BUILDS[build.key] = wrong
    try:
        with pytest.raises(F.VerificationError, match=r"add_kernel\.out_ptr"):
            fz(*calls)
        torch.cuda.synchronize()
        # The kernels' own results.
        assert torch.equal(t["o1"], t["x"] + t["y"]) and torch.equal(t["o2"], t["y"] + t["y"])
        fz(*calls)  # apart from now on
        assert fz.stats["serial"] == 1
    finally:
        F._BUILDS[build.key] = build


# ---------------------------------------------------------------------------
# The callable's decisions, without a GPU: launches and the comparison
# replaced by recorders.
# ---------------------------------------------------------------------------

class Recorder:
    def __init__(self, monkeypatch, mismatch=False):
        self.events = []
        self.mismatch = mismatch
        rec = self
        monkeypatch.setattr(F, "_stream_handle", lambda stream: 7)
        monkeypatch.setattr(F, "_run_original",
                            lambda ln, stream, bound=None: rec.events.append(("apart", ln.name,
                                                                              ln.grid)))

        def launch_fused(fz, build, launches, stream, bound=None):
            rec.events.append(("fused", build.key, tuple(ln.grid for ln in launches)))

        def verify(fz, build, launches, stream):
            rec.events.append(("verify", build.key, tuple(ln.grid for ln in launches)))
            if rec.mismatch:
                fz._broken[build.key] = "out_ptr differs"
                raise F.VerificationError("out_ptr differs")
            fz.stats["verified"] += 1
        monkeypatch.setattr(F.FusedTriton, "_launch_fused", launch_fused)
        monkeypatch.setattr(F.FusedTriton, "_verify", verify)

    def kinds(self):
        return [e[0] for e in self.events]


@needs_triton
@needs_compiler
@pytest.mark.parametrize("verify", [True, "shape"])
def test_verified_once_then_fused(verify, monkeypatch, compiler_env, tmp_path):
    rec = Recorder(monkeypatch)
    with F.offline_target(90):
        fz = F.fuse(add_kernel, softmax_kernel, strategy="interleave", verify=verify,
                    cache_dir=str(tmp_path))
        for n, rows in [(4000, 64), (4000, 64), (400000, 3), (4000, 64)]:
            fz(add_call(n=n), softmax_call(rows=rows))
    # One launch-agnostic kernel for both shapes: verified on its first use
    # (verify=True) or on the first use of each shape ("shape"); the
    # verification's fused launch is that call's launch.
    want = (["verify", "fused", "fused", "fused"] if verify is True
            else ["verify", "fused", "verify", "fused"])
    assert rec.kinds() == want
    assert len({e[1] for e in rec.events}) == 1
    assert rec.events[2][2] == ((391, 1, 1), (3, 1, 1))
    assert fz.stats == {"fused": 4, "serial": 0, "verified": 1 if verify is True else 2}
    assert [d["choice"] for d in fz.decisions.values()] == ["fused", "fused"]


@needs_triton
@needs_compiler
def test_mismatch_launches_apart_from_then_on(monkeypatch, compiler_env, tmp_path):
    rec = Recorder(monkeypatch, mismatch=True)
    with F.offline_target(90):
        fz = F.fuse(add_kernel, softmax_kernel, strategy="thread", cache_dir=str(tmp_path))
        with pytest.raises(F.VerificationError):
            fz(add_call(), softmax_call())
        fz(add_call(), softmax_call())
        fz(add_call(n=400000), softmax_call())  # another shape of the same kernel
    assert rec.kinds() == ["verify", "apart", "apart", "apart", "apart"]
    assert fz.stats["serial"] == 2 and fz.stats["fused"] == 0
    assert all(d["choice"] == "serial" for d in fz.decisions.values())


@needs_triton
@needs_compiler
def test_declined_and_empty_grids_launch_apart(monkeypatch, compiler_env, tmp_path):
    rec = Recorder(monkeypatch)
    with F.offline_target(90):
        fz = F.fuse(add_kernel, softmax_kernel, min_gain=0.9, cache_dir=str(tmp_path))
        fz(add_call(), softmax_call())
        (d,) = fz.decisions.values()
        assert d["choice"] == "serial" and "not fusing" in d["why"]
        named = F.fuse(add_kernel, softmax_kernel, strategy="dynamic", cache_dir=str(tmp_path))
        named(add_call(n=0, grid=(0,)), softmax_call())
    assert rec.kinds() == ["apart"] * 4
    assert named.decisions == {} and named.stats["serial"] == 1
    # A kernel gpu-opt cannot fuse this way: an error, or apart with fallback=True.
    with F.offline_target(90):
        bad = F.fuse(add_kernel, softmax_kernel, strategy="thread", threads=[64, 256],
                     cache_dir="none")
        with pytest.raises(F.FuseError, match="cannot be given 64 threads"):
            bad(add_call(), softmax_call())
        lenient = F.fuse(add_kernel, softmax_kernel, strategy="thread", threads=[64, 256],
                         cache_dir="none", fallback=True)
        with pytest.warns(UserWarning, match="launching the kernels apart"):
            lenient(add_call(), softmax_call())
    assert rec.kinds()[-2:] == ["apart", "apart"]


# ---------------------------------------------------------------------------
# Measured by default where there is a GPU; the model ranks, measurement
# decides. The GPU's answer and the timings are stand-ins.
# ---------------------------------------------------------------------------

@pytest.mark.parametrize("gpu", [True, False])
def test_measured_by_default_where_there_is_a_gpu(monkeypatch, gpu):
    monkeypatch.setattr(F, "gpu_present", lambda: gpu)
    k = (object(), object())
    assert F.fuse(*k).measuring() is gpu
    assert F.fuse(*k, measure=False).measuring() is False
    assert F.fuse(*k, measure=True).measuring() is True
    # A named strategy has no candidates to choose from: measured on request.
    assert F.fuse(*k, strategy="thread").measuring() is False
    assert F.fuse(*k, strategy="thread", measure=True).measuring() is True
    with pytest.raises(F.FuseError, match="measure must be None"):
        F.fuse(*k, measure="yes")


def test_gpu_present_is_the_runtimes_answer(monkeypatch):
    api = pytest.importorskip("gpuopt.api")
    monkeypatch.setattr(api, "_GPUS", {0: (None, "no CUDA device: a test")})
    assert F.gpu_present() is False
    monkeypatch.setattr(api, "_GPUS", {0: ({"name": "Test GPU"}, None)})
    assert F.gpu_present() is True


def test_candidate_options_as_hfuse_options():
    assert F.candidate_options(
        "strategy=thread threads=128,64 maxnreg=0 replicas=1,2 resizable=true,false") == {
        "strategy": "thread", "threads": [128, 64], "maxnreg": 0, "replicas": [1, 2],
        "resizable": ["true", "false"]}
    assert F.candidate_options("strategy=dynamic ratio=1,8 maxnreg=-1 units=4") == {
        "strategy": "dynamic", "ratio": [1, 8], "maxnreg": -1, "units": 4}


def stand_in_measurement(monkeypatch, times):
    """FusedTriton._measure replaced: the kernels apart take 1 ms, the
    candidates `times` in rank order; returns the strategies measured, per
    call."""
    measured = []

    def measure(fz, builds, launches, stream):
        measured.append([b.strategy for b in builds])
        return 1.0, list(times[:len(builds)]), [None] * len(builds)
    monkeypatch.setattr(F.FusedTriton, "_measure", measure)
    # The placeholders stand for tensors that can be copied.
    monkeypatch.setattr(F, "_uncopyable", lambda launches: None)
    return measured


@needs_triton
@needs_compiler
def test_auto_build_keeps_the_models_ranking(compiler_env, tmp_path):
    with F.offline_target(90):
        auto = F.fuse(add_kernel, softmax_kernel, min_gain=0.9, cache_dir=str(tmp_path))
        b = auto.prepare(add_call(), softmax_call())
        assert b.declined and len(b.candidates) >= 3
        assert all(c["options"].startswith("strategy=") for c in b.candidates)
        entry = tmp_path / (b.key + ".json")
        assert json.loads(entry.read_text())["candidates"] == b.candidates
        # A cache entry from before rankings were kept is built again.
        old = json.loads(entry.read_text())
        del old["candidates"]
        entry.write_text(json.dumps(old))
        F._BUILDS.pop(b.key)
        assert auto.prepare(add_call(), softmax_call()).candidates == b.candidates


@needs_triton
@needs_compiler
@pytest.mark.parametrize("times, choice", [((1.2, 0.8, 0.995), "fused"),
                                           ((0.995, 1.2, 1.0), "serial")])
def test_model_decline_does_not_stop_measurement(monkeypatch, compiler_env, tmp_path, times,
                                                 choice):
    rec = Recorder(monkeypatch)
    measured = stand_in_measurement(monkeypatch, times)
    monkeypatch.setattr(F, "gpu_present", lambda: True)  # measured by default
    with F.offline_target(90):
        # min_gain=0.9: the model predicts that no candidate pays, and declines.
        fz = F.fuse(add_kernel, softmax_kernel, min_gain=0.9, cache_dir=str(tmp_path))
        fz(add_call(), softmax_call())
        fz(add_call(), softmax_call())
    (d,) = fz.decisions.values()
    assert d["model"].startswith("hfuse: not fusing")
    # Its top three candidates were built by their options and measured once.
    assert len(measured) == 1 and len(measured[0]) == 3 and None not in measured[0]
    assert [m["ms"] for m in d["measured"]] == list(times)
    assert all(m["options"].startswith("strategy=") for m in d["measured"])
    assert d["choice"] == choice and d["times_ms"]["serial"] == 1.0
    if choice == "fused":
        # The fastest, 0.8 ms, beats 1 ms by more than 1%; it was checked
        # while measured, so both calls launch it without another check.
        assert d["build"] == d["measured"][1]["build"]
        assert d["strategy"] == measured[0][1]
        assert "0.8000 ms vs 1.0000 ms apart (1.25x); 3 of" in d["why"]
        assert rec.kinds() == ["fused", "fused"]
        assert rec.events[0][1] == d["build"]
    else:
        # 0.995 ms is not 1% faster than 1 ms.
        assert d["why"].startswith("measured: no candidate is 1% faster than the kernels apart")
        assert rec.kinds() == ["apart"] * 4


@needs_triton
@needs_compiler
def test_unmeasured_without_a_gpu_or_with_measure_false(monkeypatch, compiler_env, tmp_path):
    Recorder(monkeypatch)
    measured = stand_in_measurement(monkeypatch, (0.5, 0.5, 0.5))
    for gpu, measure in [(False, None), (True, False)]:
        monkeypatch.setattr(F, "gpu_present", lambda: gpu)
        with F.offline_target(90):
            fz = F.fuse(add_kernel, softmax_kernel, min_gain=0.9, measure=measure,
                        cache_dir=str(tmp_path))
            fz(add_call(), softmax_call())
        (d,) = fz.decisions.values()
        # The model's decline stands, unmeasured.
        assert d["choice"] == "serial" and "not fusing" in d["why"] and "measured" not in d
    assert measured == []


@needs_triton
@needs_compiler
def test_inputs_that_cannot_be_copied_leave_the_models_choice(monkeypatch, compiler_env,
                                                              tmp_path):
    Recorder(monkeypatch)
    measured = []
    monkeypatch.setattr(F.FusedTriton, "_measure",
                        lambda *a: measured.append(a) or (1.0, [], []))
    with F.offline_target(90):
        # Placeholders are pointers, not tensors: nothing to copy.
        fz = F.fuse(add_kernel, softmax_kernel, min_gain=0.9, measure=True,
                    cache_dir=str(tmp_path))
        with pytest.warns(UserWarning, match="the model's choice stands, unmeasured: "
                                             "add_kernel: a pointer argument is not a tensor"):
            fz(add_call(), softmax_call())
    (d,) = fz.decisions.values()
    assert d["choice"] == "serial" and "cannot be copied" in d["unmeasured"]
    assert measured == []


@needs_gpu
def test_measured_on_a_gpu_by_default():
    import torch
    fz = F.fuse(add_kernel, softmax_kernel, row_sum_kernel, cache_dir="none")
    torch.manual_seed(0)
    want = {}
    for c in gpu_case(torch_alloc(want), *GPU_SHAPES[0]):
        c.kernel[c.grid](*c.args, **c.kwargs)
    torch.manual_seed(0)
    got = {}
    fz(*gpu_case(torch_alloc(got), *GPU_SHAPES[0]))
    torch.cuda.synchronize()
    for name in ("out", "sm", "rs"):
        assert torch.equal(got[name], want[name]), name
    (d,) = fz.decisions.values()
    assert d["times_ms"]["serial"] > 0 and d["measured"], d
    for m in d["measured"]:
        assert (m["ms"] or 0) > 0 or m["excluded"], m


# ---------------------------------------------------------------------------
# gpuopt.cuda on the runtime's stand-in driver (host memory, kernels chosen by
# name: fake_probe(buf, n, value) stores the u64 value at byte n of buf).
# ---------------------------------------------------------------------------

FAKE_DRIVER = os.path.join(ROOT, "build", "unittests", "Runtime", "libfakecuda_emulated.so")


@pytest.fixture
def fake_driver(monkeypatch, tmp_path):
    if not os.path.exists(FAKE_DRIVER):
        pytest.skip("no stand-in driver built")
    from gpuopt import cuda
    log = tmp_path / "driver.log"
    monkeypatch.setenv("GPUOPT_LIBCUDA", FAKE_DRIVER)
    monkeypatch.setenv("FAKE_CUDA_LOG", str(log))
    monkeypatch.setenv("FAKE_CUDA_LOG_MODULES", "1")
    monkeypatch.setenv("FAKE_CUDA_LOG_PARAMS", "1,2")
    monkeypatch.setattr(cuda, "_LIB", None)
    monkeypatch.setattr(cuda, "_MODULES", {})
    yield cuda, log
    cuda._LIB = None


def test_cuda_launch_packs_parameters(fake_driver):
    cuda, log = fake_driver
    ptx = (".version 8.0\n.target sm_90a\n.address_size 64\n.visible .entry fake_probe(\n"
           ".param .u64 b, .param .u32 n, .param .u64 v)\n{\nret;\n}\n")
    mod = cuda.load_module(ptx)
    assert cuda.load_module(ptx) is mod  # once per image and context
    fn = mod.function("fake_probe")
    lib = cuda._lib()
    buf = ctypes.c_uint64()
    lib.cuMemAlloc_v2.argtypes = [ctypes.POINTER(ctypes.c_uint64), ctypes.c_size_t]
    assert lib.cuMemAlloc_v2(ctypes.byref(buf), 64) == 0
    ctypes.memset(buf.value, 0, 64)
    cuda.launch(fn, grid=(2, 3), block=(64,), smem=0, stream=0,
                args=[ctypes.c_uint64(buf.value), ctypes.c_uint32(8),
                      ctypes.c_uint64(0x1122334455667788)])
    assert ctypes.string_at(buf.value + 8, 8) == (0x1122334455667788).to_bytes(8, "little")
    # More than 48 KiB of dynamic shared memory: opted in first.
    cuda.launch(fn, grid=(1,), block=(32, 2), smem=64 * 1024, args=[
        ctypes.c_uint64(buf.value), ctypes.c_uint32(16), ctypes.c_uint64(5)])
    lines = log.read_text().splitlines()
    assert "  grid 2,3,1 block 64,1,1 smem 0 1=8 2=1432778632" in lines
    assert "  grid 1,1,1 block 32,2,1 smem 65536 1=16 2=5" in lines
    assert sum(ln.startswith("module-load") for ln in lines) == 1
    with pytest.raises(cuda.CudaError, match=r"cuLaunchKernel\(fake_probe, grid 1x1x1, block "
                       r"2048x1x1, smem 0\) failed: CUDA_ERROR_INVALID_VALUE"):
        cuda.launch(fn, grid=(1,), block=(2048,), args=[ctypes.c_uint64(0), ctypes.c_uint32(0),
                                                         ctypes.c_uint64(0)])
    with pytest.raises(ValueError, match="1 to 3 positive dimensions"):
        cuda.launch(fn, grid=(0,), block=(1,))
