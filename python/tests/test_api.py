"""gpuopt.api: the compiler in process (gpuopt._core). Outputs are compared
with the gpu-opt binary of the build ($GPUOPT_BIN_DIR, else build/bin, else
PATH) where there is one. gpuopt.run: test_run.py."""

import glob
import json
import os
import shutil
import subprocess
import sys

import pytest

import gpuopt

try:
    from gpuopt import _core  # noqa: F401
except ImportError:
    _core = None
pytestmark = pytest.mark.skipif(_core is None, reason="no gpuopt._core (no LLVM/MLIR here)")

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
CORPUS = os.path.join(ROOT, "test", "corpus")
HFUSE = os.path.join(ROOT, "test", "Transforms", "HFuse", "Inputs")
PROBE = os.path.join(ROOT, "test", "Transforms", "Probe", "Inputs")
BUILD = os.path.join(ROOT, "build")


def read(path):
    with open(path) as f:
        return f.read()


def find_gpu_opt():
    bin_dir = os.environ.get("GPUOPT_BIN_DIR")
    for path in ([os.path.join(bin_dir, "gpu-opt")] if bin_dir else []) + [
            os.path.join(BUILD, "bin", "gpu-opt"), shutil.which("gpu-opt") or ""]:
        if path and os.access(path, os.X_OK):
            return path
    return None


GPU_OPT = find_gpu_opt()
needs_gpu_opt = pytest.mark.skipif(GPU_OPT is None, reason="no gpu-opt binary")


def gpu_opt(tmp_path, inputs, *options, manifest=True):
    """gpu-opt's PTX output (and manifest) for `inputs` with `options`."""
    out, man = tmp_path / "out.ptx", tmp_path / "out.json"
    cmd = [GPU_OPT, *inputs, *options, "-o", str(out)]
    if manifest:
        cmd += ["--manifest", str(man)]
    subprocess.run(cmd, check=True, capture_output=True)
    return out.read_text(), json.loads(man.read_text()) if manifest else None


CORPUS_FILES = sorted(glob.glob(os.path.join(CORPUS, "*", "*.ptx")))


@needs_gpu_opt
@pytest.mark.parametrize("path", CORPUS_FILES, ids=os.path.basename)
def test_round_trip_matches_gpu_opt(tmp_path, path):
    m = gpuopt.import_ptx(read(path), path)
    ptx, _ = gpu_opt(tmp_path, [path], manifest=False)
    assert m.to_ptx() == ptx


def test_import_names_modules_and_kernels():
    path = os.path.join(CORPUS, "nvcc", "histogram.ptx")
    m = gpuopt.import_ptx(read(path), "histogram.ptx")
    assert m.modules == ["histogram"]
    assert m.kernels == ["histogram_shared"]
    assert "ptx.module @histogram" in str(m)
    # The MLIR text reads back into the same PTX.
    assert gpuopt.parse_mlir(str(m)).to_ptx() == m.to_ptx()


def test_import_several_texts_one_module_each():
    m = gpuopt.import_ptx([read(os.path.join(HFUSE, "scale.ptx")),
                           read(os.path.join(HFUSE, "tile.ptx"))], ["k0.ptx", "k1.ptx"])
    assert m.modules == ["k0", "k1"]
    assert m.kernels == ["scale", "tile"]
    # Without a name, the modules are linked into one PTX text, as gpu-opt
    # -o writes them; modules that cannot be linked are an error.
    linked = m.to_ptx()
    assert ".entry scale(" in linked and ".entry tile(" in linked
    assert [k["name"] for k in m.manifest["kernels"]] == ["scale", "tile"]
    same = gpuopt.import_ptx([read(os.path.join(HFUSE, "scale.ptx"))] * 2, ["k0.ptx", "k1.ptx"])
    with pytest.raises(gpuopt.Error, match="both define 'scale'.*--module"):
        same.to_ptx()
    assert m.to_ptx("k1") == gpuopt.import_ptx(read(os.path.join(HFUSE, "tile.ptx"))).to_ptx()
    with pytest.raises(ValueError):
        gpuopt.import_ptx(["a", "b"], "one.ptx")


FUSE = dict(strategy="thread", blocks=[128, "16x4"], grids=[1000, "8x4"], smem=[0, 64])


def test_fuse_two_kernels():
    paths = [os.path.join(HFUSE, "scale.ptx"), os.path.join(HFUSE, "tile.ptx")]
    m = gpuopt.load_ptx(*paths)
    fused = m.fuse(**FUSE)
    assert fused.kernels == ["scale_tile_fused"]
    assert m.kernels == ["scale", "tile"]  # the original is unchanged
    assert [r.message for r in fused.remarks] == ["hfuse: thread strategy as requested"]
    assert fused.remarks[0].file == paths[0]
    (kernel,) = fused.manifest["kernels"]
    assert [p["kernel"] for p in kernel["fused_from"]] == ["scale", "tile"]
    assert fused.manifest["module"]["path"] == "scale_tile_fused.ptx"


@needs_gpu_opt
def test_fuse_matches_gpu_opt(tmp_path):
    paths = [os.path.join(HFUSE, "scale.ptx"), os.path.join(HFUSE, "tile.ptx")]
    fused = gpuopt.load_ptx(*paths).fuse(**FUSE, name="st")
    ptx, manifest = gpu_opt(tmp_path, paths,
                            "--hfuse=strategy=thread blocks=128,16x4 grids=1000,8x4 "
                            "smem=0,64 name=st")
    assert fused.to_ptx() == ptx
    assert fused.get_manifest(module_path="out.ptx") == manifest
    # write() names the module as gpu-opt does.
    fused.write(str(tmp_path / "w.ptx"), manifest=str(tmp_path / "w.json"))
    assert (tmp_path / "w.ptx").read_text() == ptx
    assert json.loads((tmp_path / "w.json").read_text()) == dict(
        manifest, module=dict(manifest["module"], path="w.ptx"))


def test_runtime_shapes_option():
    m = gpuopt.load_ptx(os.path.join(HFUSE, "scale.ptx"), os.path.join(HFUSE, "tile.ptx"))
    fused = m.fuse(**FUSE, runtime_shapes=True)
    assert fused.manifest["kernels"][0]["shape_params"]


def test_fuse_takes_shapes_as_tuples():
    m = gpuopt.load_ptx(os.path.join(HFUSE, "scale.ptx"), os.path.join(HFUSE, "tile.ptx"))
    expected = m.fuse(**FUSE).to_ptx()
    tuples = dict(FUSE, blocks=[(128, 1, 1), (16, 4)], grids=[(1000,), [8, 4]])
    assert m.fuse(**tuples).to_ptx() == expected


def test_fuse_unknown_option_is_a_type_error():
    m = gpuopt.load_ptx(os.path.join(HFUSE, "scale.ptx"), os.path.join(HFUSE, "tile.ptx"))
    with pytest.raises(TypeError, match="unknown option 'foo'.*strategy, kernels"):
        m.fuse(**FUSE, foo=1)


def test_pipeline_option_errors_are_in_the_exception():
    # MLIR's option parser prints its reason to stderr; the exception carries
    # it, without the empty program name LLVM puts first.
    m = gpuopt.import_ptx(read(os.path.join(HFUSE, "scale.ptx")), "k0.ptx")
    with pytest.raises(gpuopt.Error) as info:
        m.run_passes("hfuse{foo=1}")
    assert "no such option foo" in str(info.value)
    assert "failed to add `hfuse`" in str(info.value)
    with pytest.raises(gpuopt.Error) as info:
        m.run_passes("hfuse{ratio=x}")
    assert "for the --ratio option: 'x' value invalid" in str(info.value)
    assert info.value.message.startswith("for the --ratio option"), info.value.message


def test_model_guess_is_a_compiler_warning():
    # strategy=auto without a profile, its estimate accepted (min_gain),
    # warns that the model's choice is a guess.
    import warnings
    m = gpuopt.load_ptx(os.path.join(HFUSE, "scale.ptx"), os.path.join(HFUSE, "tile.ptx"))
    options = dict(FUSE, strategy="auto", min_gain=0.0)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            fused = m.fuse(**options)
        except gpuopt.CompileError as e:  # declined, or no ptxas here
            pytest.skip(f"strategy=auto fails here: {e.message}")
    guesses = [w for w in caught if issubclass(w.category, gpuopt.CompilerWarning)
               and "the choice is a guess" in str(w.message)]
    assert len(guesses) == 1 and guesses[0].filename == __file__
    assert [d.message for d in fused.warnings] == [guesses[0].message.diagnostic.message]


# strategy=auto on scale + tile with the stand-in ptxas and a profile:
# unmeasured, the model only ranks; with min_gain=0.10 accepting its estimate,
# the best candidate is predicted 9% faster, under it.
AUTO = dict(strategy="auto", blocks=[128, "16x4"], grids=[8192, "64x64"], smem=[0, 64],
            profile=os.path.join(HFUSE, "profile.json"),
            ptxas=os.path.join(HFUSE, "fake-ptxas.py"))


def test_fuse_declined_keeps_the_kernels_apart():
    m = gpuopt.load_ptx(os.path.join(HFUSE, "scale.ptx"), os.path.join(HFUSE, "tile.ptx"))
    kept = m.fuse(**AUTO)
    assert kept.declined.startswith("hfuse: not fusing: nothing measured the candidates")
    assert "pass strategy=thread threads=128,64 maxnreg=0 replicas=1,2" in kept.declined
    kept = m.fuse(**AUTO, min_gain=0.10)
    assert kept.declined.startswith("hfuse: not fusing: no candidate is predicted to be 10%")
    assert "pass strategy=thread threads=128,64 maxnreg=0 replicas=1,2" in kept.declined
    assert [r.message for r in kept.remarks] == [kept.declined]
    assert kept.modules == ["scale", "tile"] and kept.kernels == ["scale", "tile"]
    assert "gpuopt.hfuse" not in str(kept)
    # One PTX text with both kernels, and their manifest.
    assert [k["name"] for k in kept.manifest["kernels"]] == ["scale", "tile"]
    assert ".entry scale(" in kept.to_ptx() and ".entry tile(" in kept.to_ptx()
    # A fused module is not declined; neither is one fuse() did not make.
    assert m.fuse(**dict(AUTO, min_gain=0.0)).declined is None
    assert m.declined is None
    # require=True: the decline is an error.
    with pytest.raises(gpuopt.CompileError, match="not fusing") as e:
        m.fuse(**AUTO, require=True)
    assert "without require=true the kernels stay apart instead" in e.value.message
    with pytest.raises(TypeError, match="require must be True or False"):
        m.fuse(**AUTO, require="yes")


FAKE_DRIVER = os.path.join(BUILD, "unittests", "Runtime", "libfakecuda_emulated.so")


@pytest.mark.skipif(not os.path.exists(FAKE_DRIVER), reason="no stand-in driver built")
def test_auto_measured_by_default_on_a_gpu(tmp_path):
    # The runtime's stand-in GPU (each timed launch 0.5 ms: no candidate is
    # faster) in a process of its own, since the driver is loaded once. The
    # model alone fuses (min_gain=0); with inputs measurement decides, and
    # declines; without inputs the model's choice stands, with a warning.
    code = f"""
import warnings
import gpuopt
warnings.simplefilter("error", gpuopt.CompilerWarning)
m = gpuopt.load_ptx({os.path.join(HFUSE, "scale.ptx")!r}, {os.path.join(HFUSE, "tile.ptx")!r})
opts = dict({AUTO!r}, min_gain=0.0, cache="none")
args = [["buf:f32:1048576:random:1", "scalar:u32:1048576"], ["buf:f32:262144:zero"]]
r = m.fuse(measure_args=args, **opts)
print(r.unmeasured, r.declined.split(";")[0])
print(r.declined.split("; ")[2])
r = m.fuse(measure=False, measure_args=args, **opts)
print(r.unmeasured, r.declined)
try:
    m.fuse(**opts)
except gpuopt.CompilerWarning as w:
    print(w)
"""
    result = subprocess.run([sys.executable, "-c", code],
                            env=dict(os.environ, GPUOPT_CUDA_DRIVER=FAKE_DRIVER),
                            capture_output=True, text=True)
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    assert lines[0] == ("None hfuse: not fusing: no candidate measured is 1% faster than "
                        "running the kernels apart (best apart: 0.500 ms, serial")
    assert lines[1].startswith("3 of ") and lines[1].endswith(" candidates measured on "
                                                              "'Fake GPU' (3 timed)")
    assert lines[2] == "measure=False None"
    assert lines[3].startswith("Module.fuse: strategy=auto is not measured although there is "
                               "a GPU ('Fake GPU'): no inputs to run the kernels on")


def test_import_ptx_bytes():
    path = os.path.join(CORPUS, "nvcc", "histogram.ptx")
    with open(path, "rb") as f:
        data = f.read()
    assert gpuopt.import_ptx(data, path).to_ptx() == gpuopt.import_ptx(read(path), path).to_ptx()
    with pytest.raises(gpuopt.OptionError, match="not UTF-8"):
        gpuopt.import_ptx(data + b"\xff", path)
    with pytest.raises(TypeError, match="not int"):
        gpuopt.import_ptx(7)


def test_failed_fuse_leaves_module_unchanged():
    m = gpuopt.load_ptx(os.path.join(HFUSE, "scale.ptx"), os.path.join(HFUSE, "tile.ptx"))
    before = str(m)
    with pytest.raises(gpuopt.CompileError) as e:
        m.fuse(strategy="thread", kernels=["scale", "nosuch"], blocks=[128, "16x4"],
               grids=[1000, "8x4"], smem=[0, 64])
    assert "nosuch" in e.value.message and "nosuch" in str(e.value)
    assert e.value.diagnostics[0].severity == "error"
    assert str(m) == before
    assert m.kernels == ["scale", "tile"]


def test_probe_block_sched():
    path = os.path.join(PROBE, "exits.ptx")
    m = gpuopt.import_ptx(read(path), path)
    probed = m.probe("block_sched", keep_occupancy=False)
    for kernel in probed.manifest["kernels"]:
        (probe,) = kernel["probes"]
        assert probe["probe"] == "block_sched"
        # A new last parameter receives the buffer.
        assert probe["param"] == len(kernel["params"]) - 1
    assert all("probes" not in k for k in m.manifest["kernels"])


@needs_gpu_opt
def test_probe_matches_gpu_opt(tmp_path):
    path = os.path.join(PROBE, "loop.ptx")
    probed = gpuopt.import_ptx(read(path), path).probe(["dmat", "program_progress"],
                                                       keep_occupancy=False)
    ptx, manifest = gpu_opt(tmp_path, [path],
                            "--probe=specs=dmat,program_progress keep-occupancy=false")
    assert probed.to_ptx() == ptx
    assert probed.get_manifest(module_path="out.ptx") == manifest


def test_probe_spec_as_yaml_text():
    m = gpuopt.import_ptx(read(os.path.join(PROBE, "exits.ptx")))
    probed = m.probe(read(os.path.join(PROBE, "good.yaml")), keep_occupancy=False)
    assert {p["name"] for k in probed.manifest["kernels"] for p in k["probes"]} == {"hits"}


def test_error_in_ptx_has_its_position():
    text = read(os.path.join(CORPUS, "nvcc", "histogram.ptx"))
    bad = text.replace("ld.param.u64", "ld.parm.u64", 1)
    offset = bad.index("ld.parm.u64")
    line = bad.count("\n", 0, offset) + 1
    with pytest.raises(gpuopt.Error) as e:
        gpuopt.import_ptx(bad, "bad.ptx")
    assert (e.value.file, e.value.line) == ("bad.ptx", line)
    # The column of the state space, in the instruction that starts after
    # the line's indentation.
    assert e.value.col == offset - bad.rindex("\n", 0, offset) + len("ld")
    assert "'.parm'" in e.value.message
    assert str(e.value).startswith(f"bad.ptx:{line}:{e.value.col}: error: ")


def test_not_ptx():
    with pytest.raises(gpuopt.Error, match="not PTX") as e:
        gpuopt.import_ptx("hello", "x.ptx")
    assert (e.value.file, e.value.line, e.value.col) == ("x.ptx", 1, 1)


def test_unknown_probe_spec():
    m = gpuopt.import_ptx(read(os.path.join(PROBE, "exits.ptx")))
    with pytest.raises(gpuopt.Error, match="cannot read probe spec 'nosuch'.*built-in"):
        m.probe("nosuch")


def test_error_in_probe_spec_has_its_position(tmp_path):
    spec = tmp_path / "bad.yaml"
    spec.write_text(read(os.path.join(PROBE, "good.yaml")).replace(
        "    level: thread", "    level: threads"))
    m = gpuopt.import_ptx(read(os.path.join(PROBE, "exits.ptx")))
    with pytest.raises(gpuopt.Error, match="'level' must be") as e:
        m.probe(str(spec), keep_occupancy=False)
    assert (e.value.file, e.value.line, e.value.col) == (str(spec), 4, 12)


def test_bad_pipeline():
    m = gpuopt.import_ptx(read(os.path.join(PROBE, "exits.ptx")))
    with pytest.raises(gpuopt.Error, match="no-such-pass"):
        m.run_passes("no-such-pass")
    # A registered pipeline, with the anchor spelled out.
    assert m.run_passes("builtin.module(symbol-dce)").to_ptx() == m.to_ptx()


def find_ptxas():
    for path in (os.environ.get("PTXAS"), shutil.which("ptxas"),
                 os.path.join(os.environ.get("CUDA_HOME", "/nonexistent"), "bin", "ptxas"),
                 "/usr/local/cuda/bin/ptxas"):
        if path and os.access(path, os.X_OK):
            return path
    return None


@pytest.mark.skipif(find_ptxas() is None, reason="no ptxas")
def test_to_cubin():
    m = gpuopt.import_ptx(read(os.path.join(CORPUS, "nvcc", "histogram.ptx")), "histogram.ptx")
    cubin = m.to_cubin("sm_90a", ptxas=find_ptxas())
    assert cubin[:4] == b"\x7fELF"
    assert m.get_manifest(format="cubin")["module"] == {
        "format": "cubin", "path": "histogram.cubin", "target": "sm_90a"}


def test_to_cubin_without_ptxas(tmp_path):
    m = gpuopt.import_ptx(read(os.path.join(CORPUS, "nvcc", "histogram.ptx")))
    with pytest.raises(gpuopt.Error):
        m.to_cubin("sm_90a", ptxas=str(tmp_path / "no-ptxas"))


@needs_gpu_opt
def test_probe_buffer_in_last_param(tmp_path):
    path = os.path.join(PROBE, "triton-scratch.ptx")
    m = gpuopt.import_ptx(read(path), path)
    probed = m.probe(["block_sched", "gmem_bytes"], keep_occupancy=False,
                     buffer="last-param")
    ptx, manifest = gpu_opt(tmp_path, [path], "--probe=specs=block_sched,gmem_bytes "
                            "keep-occupancy=false buffer=last-param")
    assert probed.to_ptx() == ptx
    assert probed.get_manifest(module_path="out.ptx") == manifest
    # No new parameter: the kernel keeps its parameters.
    assert [len(k["params"]) for k in probed.manifest["kernels"]] == \
        [len(k["params"]) for k in m.manifest["kernels"]]


def test_threads_share_a_module():
    # Modules of one import share a context, which the calls take in turn;
    # each releases the GIL while its passes run.
    import concurrent.futures
    m = gpuopt.load_ptx(os.path.join(HFUSE, "scale.ptx"), os.path.join(HFUSE, "tile.ptx"))
    other = gpuopt.load_ptx(os.path.join(HFUSE, "scale.ptx"), os.path.join(HFUSE, "tile.ptx"))
    expected = m.fuse(**FUSE).to_ptx()
    with concurrent.futures.ThreadPoolExecutor(4) as pool:
        jobs = [pool.submit(lambda mod: mod.fuse(**FUSE).probe("block_sched",
                                                                keep_occupancy=False),
                            mod) for mod in [m, other] * 8]
        results = [job.result() for job in jobs]
    assert len({r.to_ptx() for r in results}) == 1
    assert m.fuse(**FUSE).to_ptx() == expected
