"""gpuopt.capture.inductor without a GPU: argument specs, PTX entry parsing,
shared inputs; with torch and triton installed, the launch hook through
Inductor's launcher code (compiles one Triton kernel for sm_90, no GPU)."""

import os
import textwrap

import pytest

from gpuopt.capture import inductor as dk

PTX = """
.version 8.7
.target sm_90a
.address_size 64
.extern .shared .align 16 .b8 global_smem[];
.visible .entry triton_red_fused_sum_1(
	.param .u64 .ptr .global .align 1 triton_red_fused_sum_1_param_0,
	.param .u64 .ptr .global .align 1 triton_red_fused_sum_1_param_1,
	.param .u32 triton_red_fused_sum_1_param_2,
	.param .f32 triton_red_fused_sum_1_param_3,
	.param .u64 .ptr .global .align 1 triton_red_fused_sum_1_param_4,
	.param .u64 .ptr .global .align 1 triton_red_fused_sum_1_param_5
)
.reqntid 256
{
	ret;
}
"""


def tensor(index, name, role, dtype="float32", count=1024, input=None, output=None, buffer=None):
    return {"index": index, "name": name, "kind": "tensor", "sig_type": "*fp32", "dtype": dtype,
            "count": count, "role": role, "input": input, "output": output,
            "input_name": None if input is None else f"in{input}",
            "output_name": None if output is None else f"output {output}",
            "buffer": buffer if buffer is not None else 1000 + index}


def scratch(index, name):
    return {"index": index, "name": name, "kind": "scratch_null", "sig_type": "*i8"}


# Pure helpers ---------------------------------------------------------------

def test_parse_ptx_entries():
    (e,) = dk.parse_ptx_entries(PTX)
    assert e["name"] == "triton_red_fused_sum_1"
    assert e["params"] == ["u64", "u64", "u32", "f32", "u64", "u64"]
    assert e["reqntid"] == [256, 1, 1]


def test_scalar_specs():
    assert dk.scalar_spec("i32", 4096) == "scalar:s32:4096"
    assert dk.scalar_spec("i64", -3) == "scalar:s64:-3"
    assert dk.scalar_spec("fp32", 1e-5) == "scalar:f32:9.999999747378752e-06"
    assert float(dk.scalar_spec("fp32", 0.1).split(":")[2]) == pytest.approx(0.1, rel=1e-7)
    assert dk.scalar_spec("fp64", 0.1) == "scalar:f64:0.1"
    assert dk.scalar_spec("u32", -1) == "scalar:u32:4294967295"
    assert dk.scalar_spec("i1", True) == "scalar:u8:1"
    # The PTX type wins where the signature's does not fit it.
    assert dk.scalar_spec("i32", 7, "u64") == "scalar:u64:7"
    assert dk.scalar_spec("i32", 7, "u32") == "scalar:s32:7"
    with pytest.raises(ValueError):
        dk.scalar_spec("fp32", float("inf"))
    with pytest.raises(ValueError):
        dk.scalar_spec("i32", 1.5)


def test_buffer_and_input_specs():
    assert dk.buffer_spec("f32", 8, "out") == "buf:f32:8:out"
    assert dk.buffer_spec("s32", 8, "zero") == "buf:s32:8:zero"
    assert dk.buffer_spec("f32", 8, ("random", 7)) == "buf:f32:8:random:7"
    assert dk.buffer_spec("s64", 8, ("random", 7, 0, 1024)) == "buf:s64:8:random:7:0:1024"
    assert dk.input_init({"dtype": "float32", "all_zero": False}, 3) == ("random", 3)
    assert dk.input_init({"dtype": "int32", "all_zero": True}, 3) == "zero"
    assert dk.input_init({"dtype": "int64", "all_zero": False, "min": 0, "max": 1023}, 3) == \
        ("random", 3, 0, 1024)
    assert dk.input_init({"dtype": "bool", "all_zero": False, "min": 0, "max": 1}, 3) == \
        ("random", 3, 0, 2)
    assert dk.pointer_role("in_out_ptr0") == "inout"
    assert dk.pointer_role("out_ptr12") == "out"
    assert dk.pointer_role("in_ptr3") == "in"
    assert dk.pointer_role("ws_ptr") == "unknown"


def test_param_specs_and_ptx_check():
    inputs = [{"dtype": "float32", "all_zero": False}, {"dtype": "int32", "all_zero": True}]
    seeds = [1000, 1001]
    params = [tensor(0, "in_ptr0", "in", input=0), tensor(1, "out_ptr0", "out", output=0),
              {"index": 2, "name": "xnumel", "kind": "scalar", "sig_type": "i32", "value": 8192},
              {"index": 3, "name": "eps", "kind": "scalar", "sig_type": "fp32", "value": 0.5},
              scratch(4, "global_scratch"), scratch(5, "profile_scratch")]
    assert [dk.param_spec(p, inputs, seeds) for p in params] == [
        "buf:f32:1024:random:1000", "buf:f32:1024:out", "scalar:s32:8192", "scalar:f32:0.5",
        "null", "null"]
    # A mutated input keeps its initial contents (zero), with its input's type.
    hist = tensor(0, "out_ptr0", "out", dtype="int32", input=1)
    assert dk.param_spec(hist, inputs, seeds) == "buf:s32:1024:zero"
    sc = {"index": 0, "name": "global_scratch", "kind": "scratch", "bytes": 4096}
    assert dk.param_spec(sc, inputs, seeds) == "buf:u8:4096:zero"

    (entry,) = dk.parse_ptx_entries(PTX)
    launch = {"kernel": "triton_red_fused_sum_1", "block": [256, 1, 1], "params": params}
    assert dk.check_against_ptx(launch, entry) == []
    short = dict(launch, params=params[:4])  # the scratch pointers forgotten
    assert any("recorded 4 arguments" in e for e in dk.check_against_ptx(short, entry))
    wrong_block = dict(launch, block=[128, 1, 1])
    assert any(".reqntid" in e for e in dk.check_against_ptx(wrong_block, entry))
    swapped = dict(launch, params=[params[2], params[1], params[0]] + params[3:])
    assert dk.check_against_ptx(swapped, entry)
    assert dk.check_against_ptx(launch, None)


def test_shared_inputs_and_dependencies():
    k1 = {"params": [tensor(0, "in_ptr0", "in", input=0, buffer=1),
                     tensor(1, "out_ptr0", "out", output=0, buffer=2)]}
    k2 = {"params": [tensor(0, "in_ptr0", "in", input=0, buffer=1),
                     tensor(1, "in_ptr1", "in", input=1, buffer=3),
                     tensor(2, "out_ptr0", "out", output=1, buffer=4)]}
    assert dk.shared_inputs([k1, k2]) == [
        {"input": 0, "uses": [{"launch": 0, "param": 0}, {"launch": 1, "param": 0}]}]
    assert dk.dependencies([k1, k2]) == []
    k3 = {"params": [tensor(0, "in_ptr0", "in", buffer=2)]}  # reads k1's output
    assert dk.dependencies([k1, k3])


def test_small_helpers():
    assert dk.grid_text([1024, 1, 1]) == "1024"
    assert dk.grid_text([64, 128, 1]) == "64x128"
    assert dk.grid_text([2, 3, 4]) == "2x3x4"
    s = dk.stats([3.0, 1.0, 2.0, 4.0])
    assert s["median_ms"] == 2.5 and s["min_ms"] == 1.0 and s["spread"] == pytest.approx(1.2)
    assert dk.ptx_file_name("separate", 1, 2) == "separate_1.ptx"
    assert dk.ptx_file_name("combo", 0, 1) == "combo.ptx"
    assert dk.ptx_file_name("combo", 1, 2) == "combo_1.ptx"
    assert dk.ptx_file_name("combo_default", 0, 2) == "combo_default_0.ptx"
    assert set(dk.PROGRAM_NAMES) == {"softmax_layernorm", "add_softmax", "rowsum_layernorm",
                                     "maxpool_upsample", "bnstats_histogram", "alu_add"}



def test_hook_through_inductor_launcher():
    """The CompiledKernel.run hook records what Inductor's generated launcher
    passes (needs torch and triton; compiles one Triton kernel for sm_90
    without a GPU)."""
    torch = pytest.importorskip("torch")
    triton = pytest.importorskip("triton")
    from triton.backends.compiler import GPUTarget
    from triton.compiler import compiler as tc
    try:
        from torch._inductor.runtime.triton_heuristics import TritonCompileResult
    except ImportError:
        pytest.skip("no torch._inductor.runtime.triton_heuristics.TritonCompileResult")
    src_path = os.path.join(str(pytest.importorskip("tempfile").mkdtemp()), "kern.py")
    with open(src_path, "w") as f:
        f.write(textwrap.dedent("""\
            import triton, triton.language as tl
            @triton.jit
            def kern(in_ptr0, out_ptr0, xnumel, scale, XBLOCK: tl.constexpr):
                x = tl.program_id(0) * XBLOCK + tl.arange(0, XBLOCK)
                m = x < xnumel
                tl.store(out_ptr0 + x, tl.load(in_ptr0 + x, m) * scale, m)
            """))
    import importlib.util
    spec = importlib.util.spec_from_file_location("kern_mod", src_path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    sig = {"in_ptr0": "*fp32", "out_ptr0": "*fp32", "xnumel": "i32", "scale": "fp32",
           "XBLOCK": "constexpr"}
    try:
        ck = triton.compile(tc.ASTSource(fn=mod.kern, signature=sig, constexprs={"XBLOCK": 1024}),
                            target=GPUTarget("cuda", 90, 32), options={"num_warps": 4})
    except Exception as e:  # no ptxas or backend here
        pytest.skip(f"triton cannot compile for sm_90 here: {e}")
    saved_prop = tc.CompiledKernel.__dict__["run"]
    saved_init = tc.CompiledKernel._init_handles

    def fake_init(self):
        if self._run is None:
            self._run = lambda *a, **kw: None
            self.function, self.module = 1, 1
    tc.CompiledKernel._init_handles = fake_init
    try:
        rec = dk.Recorder()
        rec.install()
        cfg = triton.Config({"XBLOCK": 1024}, num_warps=4, num_stages=1)
        launcher = TritonCompileResult(
            ck, cfg, {"constants": {"XBLOCK": 1024}, "signature": sig, "device": 0,
                      "device_type": "cuda"},
            {"grid_type": "Grid1D", "kernel_name": "kern"}).make_launcher()
        x, y = torch.randn(4096), torch.empty(4096)
        rec.start()
        launcher(x, y, 4096, 0.5, stream=0)
        (raw,) = rec.stop()
        L = dk.describe_launch(raw, {x.untyped_storage().data_ptr(): (0, "x")},
                               {y.untyped_storage().data_ptr(): 0})
    finally:
        tc.CompiledKernel.run = saved_prop
        tc.CompiledKernel._init_handles = saved_init
    assert L["grid"] == [4, 1, 1] and L["block"] == [128, 1, 1]
    assert [p["kind"] for p in L["params"]] == ["tensor", "tensor", "scalar", "scalar",
                                                "scratch_null", "scratch_null"]
    L["ptx_text"] = ck.asm["ptx"]
    errors = []
    dk.finish_launches([L], [dk.summarize_input(x)], [1000], os.path.dirname(src_path),
                       "separate", errors)
    assert errors == []
    assert L["args"] == ["buf:f32:4096:random:1000", "buf:f32:4096:out", "scalar:s32:4096",
                         "scalar:f32:0.5", "null", "null"]
