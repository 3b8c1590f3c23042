"""gpuopt.verify without a GPU: the comparison, and fused and probed kernels
against their originals through the stand-in gpu-run (conftest.py)."""

import json
import os
import subprocess
import sys

import numpy as np
import pytest

from gpuopt import verify as vf

A_ARGS = ["buf:f32:16:random:1", "scalar:s32:16", "buf:f32:16:out"]
B_ARGS = ["buf:u32:8:random:2", "scalar:u32:8", "buf:u32:8:zero"]


def write(tmp_path, name, arr):
    path = tmp_path / f"{name}.bin"
    arr.tofile(path)
    return str(path)


# Comparison ---------------------------------------------------------------------------

def test_compare_exact(tmp_path):
    ref = np.arange(1000, dtype=np.float32)
    got = ref.copy()
    ok, detail = vf.compare_files(write(tmp_path, "g", got), write(tmp_path, "r", ref), "f32")
    assert ok and detail == "bit-exact (1000 x f32)"
    got[700] = 1.5
    got[900:903].view(np.uint32)[:] = 0xFFFFFFFF  # never written
    ok, detail = vf.compare_files(write(tmp_path, "g", got), write(tmp_path, "r", ref), "f32",
                                  chunk=256)
    assert not ok
    assert detail == ("4 of 1000 elements differ (3 never written: 0xFF); first at 700: "
                      "got 1.5, expected 700.0")


def test_compare_exact_is_bitwise(tmp_path):
    ref = np.array([0.0, np.nan], dtype=np.float32)
    got = np.array([-0.0, np.nan], dtype=np.float32)
    ok, detail = vf.compare_files(write(tmp_path, "g", got), write(tmp_path, "r", ref), "f32")
    assert not ok and "1 of 2" in detail and "first at 0" in detail


def test_compare_integers_and_size(tmp_path):
    ref = np.array([1, 2, 3], dtype=np.int64)
    got = np.array([1, 2, -3], dtype=np.int64)
    ok, detail = vf.compare_files(write(tmp_path, "g", got), write(tmp_path, "r", ref), "s64")
    assert not ok and detail.endswith("first at 2: got -3, expected 3")
    ok, detail = vf.compare_files(write(tmp_path, "g", got[:2]), write(tmp_path, "r", ref),
                                  "s64")
    assert not ok and detail == "size: got 16 bytes, expected 24"
    ok, detail = vf.compare_arrays(got[:2], ref, "s64")
    assert not ok and detail == "size: got 2 elements, expected 3"


def test_compare_tolerance(tmp_path):
    ref = np.array([1000.0, 0.0, np.nan], dtype=np.float32)
    close = np.array([1000.004, 0.0, np.nan], dtype=np.float32)  # rel 4e-6
    ok, detail = vf.compare_files(write(tmp_path, "g", close), write(tmp_path, "r", ref),
                                  "f32", tol=1e-5)
    assert ok and detail.startswith("within rel 1e-05 (3 x f32, max rel err")
    far = np.array([1000.1, 0.0, np.nan], dtype=np.float32)  # rel 1e-4
    ok, detail = vf.compare_files(write(tmp_path, "g", far), write(tmp_path, "r", ref),
                                  "f32", tol=1e-5)
    assert not ok and detail.startswith("1 of 3 elements differ beyond rel 1e-05; first at 0")
    # a tolerance never applies to integers
    ok, _ = vf.compare_arrays(np.array([3], np.int32), np.array([4], np.int32), "s32", tol=1.0)
    assert not ok


def test_types_and_outputs():
    assert vf.gpu_run_type(np.float32) == "f32" and vf.gpu_run_type(np.int64) == "s64"
    assert vf.gpu_run_type(np.uint16) == "u16" and vf.gpu_run_type(np.bool_) == "u8"
    assert vf.output_args(A_ARGS) == [2] and vf.output_args(B_ARGS) == [2]
    assert vf.output_args(["null", "buf:u8:4:fill:1", "buf:u8:4:out"]) == [2]
    assert vf.kernel_command("gpu-run", {"module": "k.ptx", "kernel": "k", "grid": [8, 2],
                                         "block": [128], "args": A_ARGS[:2]}) == [
        "gpu-run", "k.ptx", "--kernel", "k", "--grid", "8,2", "--block", "128", "--smem", "0",
        "--arg", A_ARGS[0], "--arg", A_ARGS[1]]
    assert vf.kernel_command("gpu-run", {"module": "k.ptx", "args": []}, module="p.ptx",
                             manifest="p.json") == ["gpu-run", "p.ptx", "--manifest", "p.json"]
    assert vf.parse_tolerances(["a=1e-5"], ["a", "b"]) == {"a": 1e-5}
    assert vf.parse_tolerances(["0.5"], ["a", "b"]) == {"a": 0.5, "b": 0.5}
    with pytest.raises(vf.VerifyError, match="no original kernel labelled 'c'"):
        vf.parse_tolerances(["c=1"], ["a", "b"])


def test_entry_name(tmp_path):
    (tmp_path / "one.ptx").write_text(".visible .entry _Z3fooPf(\n.param .u64 p\n)\n{\n}\n")
    (tmp_path / "two.ptx").write_text(".entry a()\n{\n}\n.entry b()\n{\n}\n")
    assert vf.entry_name("x", {"kernel": "k", "module": "nowhere.ptx"}) == "k"
    assert vf.entry_name("x", {"module": str(tmp_path / "one.ptx")}) == "_Z3fooPf"
    assert vf.entry_name("x", {"module": str(tmp_path / "two.ptx")}) == "x"
    assert vf.entry_name("x", {"module": str(tmp_path / "missing.ptx")}) == "x"


# Fused and probed kernels -------------------------------------------------------------

def originals(tmp_path):
    (tmp_path / "a.ptx").write_text("// a\n")
    (tmp_path / "b.ptx").write_text("// b\n")
    return [("a", {"label": "a", "module": str(tmp_path / "a.ptx"), "kernel": "ka",
                   "grid": [4], "block": [256], "args": A_ARGS}),
            ("b", {"label": "b", "module": str(tmp_path / "b.ptx"), "kernel": "kb",
                   "grid": [2], "block": [128], "smem": 64, "args": B_ARGS})]


def fused_manifest(tmp_path, name, a_map, b_map, params=7, kernel="fused", ptx="// fused\n"):
    (tmp_path / f"{name}.ptx").write_text(ptx)
    path = tmp_path / f"{name}.json"
    path.write_text(json.dumps({"manifest_version": 2, "kernels": [{
        "name": kernel, "params": [{"name": f"p{i}", "type": "u64", "kind": "scalar"}
                                   for i in range(params)],
        "launch": {"grid": [6, 1, 1], "block": [384, 1, 1], "dynamic_smem": 64},
        "fused_from": [{"kernel": "kb", "arg_map": b_map},
                       {"kernel": "ka", "arg_map": a_map}]}]}))
    return str(tmp_path / f"{name}.ptx"), str(path)


def test_fused_pass(tmp_path, gpu_run):
    v = vf.Verifier(gpu_run.path, str(tmp_path / "work"), timeout=20)
    ptx, man = fused_manifest(tmp_path, "f", [3, 4, 5], [0, 1, 2], params=7)
    res = v.verify(originals(tmp_path), ptx, man)
    assert res["result"] == "PASS" and res["detail"] == "2 buffers bit-exact"
    assert [(b["kernel"], b["arg"], b["fused_arg"], b["type"]) for b in res["buffers"]] == [
        ("a", 2, 5, "f32"), ("b", 2, 2, "u32")]
    assert res["notes"] == ["fused parameter 6 (p6) receives no original argument: passing "
                            "buf:u32:1024:zero"]
    calls = gpu_run.calls()
    assert [c[0] for c in calls] == [str(tmp_path / "a.ptx"), str(tmp_path / "b.ptx"), ptx]
    a = calls[0]
    assert a[a.index("--grid") + 1] == "4" and a[a.index("--kernel") + 1] == "ka"
    assert a[a.index("--repeat") + 1] == "0"
    f = calls[2]
    assert f[f.index("--manifest") + 1] == man and f[f.index("--kernel") + 1] == "fused"
    assert "--grid" not in f  # the manifest's launch
    assert [f[i + 1] for i, x in enumerate(f) if x == "--arg"] == \
        B_ARGS + A_ARGS + ["buf:u32:1024:zero"]
    assert sorted(f[i + 1].split(":")[0] for i, x in enumerate(f) if x == "--out") == ["2", "5"]
    assert res["launch"]["registers"] == 32 and v.device["name"] == "Fake GPU"
    # the originals' outputs are kept for the next variant, and dropped on request
    assert os.path.exists(v.originals["a"]["outs"][2])
    res = v.verify(originals(tmp_path), ptx, man, name="again")
    assert res["result"] == "PASS" and len(gpu_run.calls()) == 4
    v.drop_original("a")
    assert "a" not in v.originals and not os.path.exists(tmp_path / "work" / "orig" / "a")


def test_fused_wrong_argument_map_fails(tmp_path, gpu_run):
    """A manifest whose arg_map is not what the fused kernel reads (A's first
    two parameters swapped): the kernel computes on other inputs, and the
    comparison names the buffer."""
    v = vf.Verifier(gpu_run.path, str(tmp_path / "work"), timeout=20)
    ptx, man = fused_manifest(tmp_path, "f", [4, 3, 5], [0, 1, 2], params=6,
                              ptx="// fused\n// true_map 1: 3,4,5\n")
    res = v.verify(originals(tmp_path), ptx, man)
    assert res["result"] == "FAIL"
    assert res["detail"].startswith("a arg 2 (fused 5): 16 of 16 elements differ")
    assert [b["ok"] for b in res["buffers"]] == [False, True]


def test_fused_corrupt_and_failures(tmp_path, gpu_run):
    v = vf.Verifier(gpu_run.path, str(tmp_path / "work"), timeout=1)
    ptx, man = fused_manifest(tmp_path, "bad", [3, 4, 5], [0, 1, 2], params=6)
    gpu_run.configure(corrupt=["bad.ptx"])
    res = v.verify(originals(tmp_path), ptx, man)
    assert res["result"] == "FAIL"
    assert "b arg 2 (fused 2): 1 of 8 elements differ; first at 4" in res["detail"]
    gpu_run.configure(fail=["bad.ptx"])
    res = v.verify(originals(tmp_path), ptx, man)
    assert res["detail"] == "gpu-run exit 2: gpu-run: error: " + ptx + ": cannot load"
    gpu_run.configure(hang=["bad.ptx"])
    assert v.verify(originals(tmp_path), ptx, man)["detail"] == "hang after 1 s"
    # a failing original fails the variant before it runs
    gpu_run.configure(fail=["b.ptx"])
    v2 = vf.Verifier(gpu_run.path, str(tmp_path / "work2"), timeout=20)
    res = v2.verify(originals(tmp_path), ptx, man)
    assert res["result"] == "FAIL" and res["detail"].startswith("original b: gpu-run exit 2")
    # two originals and a manifest without fused_from
    (tmp_path / "plain.json").write_text(json.dumps({"kernels": [{"name": "k"}]}))
    res = v.verify(originals(tmp_path), ptx, str(tmp_path / "plain.json"))
    assert res["result"] == "FAIL" and "manifest unusable" in res["detail"]
    assert "a kernel that is not fused has one original, not 2" in res["detail"]


def test_probed_kernel(tmp_path, gpu_run):
    """A probed kernel runs with its original's arguments and launch, the
    manifest adding the probe buffers; more options go to its run only."""
    (tmp_path / "k.probed.ptx").write_text("// probed\n")
    (tmp_path / "k.probed.json").write_text(json.dumps(
        {"kernels": [{"name": "ka", "probes": [{"map": "block_sched"}]}]}))
    v = vf.Verifier(gpu_run.path, str(tmp_path / "work"), timeout=20)
    orig = originals(tmp_path)[:1]
    trace = str(tmp_path / "trace")
    res = v.verify(orig, str(tmp_path / "k.probed.ptx"), str(tmp_path / "k.probed.json"),
                   extra_args=["--trace", trace], prefix=["env"])
    assert res["result"] == "PASS" and res["detail"] == "1 buffers bit-exact"
    probed = gpu_run.calls()[-1]
    assert probed[0] == str(tmp_path / "k.probed.ptx")
    assert probed[probed.index("--grid") + 1] == "4"
    assert probed[probed.index("--block") + 1] == "256"
    assert probed[probed.index("--trace") + 1] == trace and os.path.isdir(trace)
    assert res["command"].startswith("env " + gpu_run.path)
    assert "(132 SMs)" in v.last_run.out
    gpu_run.configure(corrupt=["probed"])
    res = v.verify(orig, str(tmp_path / "k.probed.ptx"), str(tmp_path / "k.probed.json"))
    assert res["result"] == "FAIL" and res["detail"].startswith("a arg 2: 1 of 16 elements")


# Command line ------------------------------------------------------------------------

def test_cli(tmp_path, gpu_run, monkeypatch, capsys):
    orig = originals(tmp_path)
    spec = tmp_path / "pair.json"
    spec.write_text(json.dumps({"kernels": [k for _, k in orig]}))
    ptx, man = fused_manifest(tmp_path, "f", [3, 4, 5], [0, 1, 2], params=6)
    argv = ["--spec", str(spec), "--module", ptx, "--manifest", man, "--gpu-run",
            gpu_run.path, "--json", str(tmp_path / "r.json")]
    assert vf.main(argv) == 0
    assert "PASS: 2 buffers bit-exact" in capsys.readouterr().out
    assert json.loads((tmp_path / "r.json").read_text())["result"] == "PASS"
    gpu_run.configure(corrupt=["f.ptx"])
    assert vf.main(argv) == 1
    assert "FAIL: a arg 2 (fused 5): 1 of 16 elements differ" in capsys.readouterr().out
    # the tool from $GPUOPT_BIN_DIR, or a message that says what to set
    monkeypatch.setenv("GPUOPT_BIN_DIR", str(tmp_path))
    assert vf.main(argv[:6]) == 1
    monkeypatch.delenv("GPUOPT_BIN_DIR")
    monkeypatch.setenv("PATH", str(tmp_path / "empty"))
    assert vf.main(argv[:6]) == 2
    err = capsys.readouterr().err
    assert "gpu-run not found: pass --gpu-run PATH, set $GPUOPT_BIN_DIR" in err


@pytest.mark.parametrize("field, value, message", [
    ("grid", 4096, "kernels[1].grid: expected an array of 1 to 3 positive integers"),
    ("grid", [], "kernels[1].grid: expected an array of 1 to 3 positive integers"),
    ("block", [128, "1"], "kernels[1].block[1]: expected an unsigned integer"),
    ("block", [0], "kernels[1].block: dimensions must be positive"),
    ("smem", -1, "kernels[1].smem: expected an unsigned integer"),
    ("args", "buf:u32:8:out", "kernels[1].args: expected an array of argument specs"),
    ("module", None, "kernels[1].module: missing"),
])
def test_cli_refuses_a_malformed_spec_as_gpu_run_does(tmp_path, gpu_run, capsys, field,
                                                      value, message):
    # gpuopt.run and gpu-run --spec refuse these with the same JSON path and
    # words (lib/Runtime/RunSpec.cpp); verify used to crash on "grid": 4096.
    orig = originals(tmp_path)
    kernels = [k for _, k in orig]
    if value is None:
        del kernels[1][field]
    else:
        kernels[1][field] = value
    spec = tmp_path / "pair.json"
    spec.write_text(json.dumps({"kernels": kernels}))
    ptx, man = fused_manifest(tmp_path, "f", [3, 4, 5], [0, 1, 2], params=6)
    assert vf.main(["--spec", str(spec), "--module", ptx, "--manifest", man,
                    "--gpu-run", gpu_run.path]) == 2
    assert capsys.readouterr().err == f"verify: error: {spec}: {message}\n"
    assert gpu_run.calls() == []


def test_module_help():
    r = subprocess.run([sys.executable, "-m", "gpuopt.verify", "--help"],
                       capture_output=True, text=True)
    assert r.returncode == 0
    assert "--manifest" in r.stdout and "fused_from" in r.stdout


# Launch-agnostic fused kernels (manifest "shape_params"): the parts' launches
# come from the originals' run specs ------------------------------------------------

def agnostic_manifest(tmp_path):
    params = [{"name": n, "type": t, "size": s, "align": s, "offset": o, "kind": "scalar"}
              for n, t, s, o in (("a_out", "u64", 8, 0), ("a_n", "u32", 4, 8),
                                 ("b_out", "u64", 8, 16), ("g0x", "u32", 4, 24),
                                 ("g0y", "u32", 4, 28), ("g0z", "u32", 4, 32),
                                 ("g1x", "u32", 4, 36), ("g1y", "u32", 4, 40),
                                 ("g1z", "u32", 4, 44), ("s1", "u32", 4, 48))]
    shapes = [{"param": 3 + 3 * p + i, "part": p, "value": f"grid_{'xyz'[i]}"}
              for p in range(2) for i in range(3)]
    shapes.append({"param": 9, "part": 1, "value": "dynamic_smem"})
    man = {"manifest_version": 6, "module": {"path": "f.ptx", "format": "ptx"},
           "kernels": [{"name": "f", "params": params,
                        "launch": {"block": [128, 1, 1], "grid": "runtime",
                                   "dynamic_smem": "runtime"},
                        "fusion_strategy": "interleave",
                        "fused_from": [
                            {"kernel": "tile", "threads": [0, 64], "grid": "runtime",
                             "dynamic_smem": "runtime", "arg_map": [2]},
                            {"kernel": "scale", "threads": [0, 128], "grid": "runtime",
                             "dynamic_smem": 0, "arg_map": [0, 1]}],
                        "shape_params": shapes}]}
    path = tmp_path / "f.json"
    path.write_text(json.dumps(man))
    return str(path)


ORIGINALS = [("scale", {"module": "scale.ptx", "kernel": "scale", "grid": [300],
                        "block": [128], "smem": 0,
                        "args": ["buf:u32:38400:out", "scalar:u32:38400"]}),
             ("tile", {"module": "tile.ptx", "kernel": "tile", "grid": [16, 8, 2],
                       "block": [16, 4], "smem": 256, "args": ["buf:u32:256:out"]})]


def test_launch_agnostic_kernel_takes_the_originals_shapes(tmp_path):
    manifest = agnostic_manifest(tmp_path)
    spec, notes, where, fused = vf.transformed_spec(ORIGINALS, "f.ptx", manifest)
    assert fused and notes == []
    # fused_from lists tile first: the parts are matched by name.
    assert spec["part_grids"] == {"1": [300], "0": [16, 8, 2]}
    # Only tile's size is taken at launch.
    assert spec["part_smem"] == {"0": 256}
    # The shape parameters take no --arg.
    assert spec["args"] == ["buf:u32:38400:out", "scalar:u32:38400", "buf:u32:256:out"]
    assert where == [[0, 1], [2]]
    cmd = vf.kernel_command("gpu-run", spec)
    assert "--grid" not in cmd and "--smem" not in cmd
    assert cmd[cmd.index("--part-grid") + 1] == "0=16x8x2"
    assert cmd[cmd.index("--part-grid", cmd.index("--part-grid") + 1) + 1] == "1=300"
    assert cmd[cmd.index("--part-smem") + 1] == "0=256"


def test_original_without_grid_leaves_the_default(tmp_path):
    manifest = agnostic_manifest(tmp_path)
    originals = [(label, {k: v for k, v in s.items() if k != "grid"})
                 for label, s in ORIGINALS]
    spec, _, _, _ = vf.transformed_spec(originals, "f.ptx", manifest)
    assert spec["part_grids"] == {}
    assert "--part-grid" not in vf.kernel_command("gpu-run", spec)
