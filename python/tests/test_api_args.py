"""gpuopt.api's Python side, without the compiler: arguments, pass option
spelling, the exceptions and the compiler's warnings, with a stand-in for
gpuopt._core that records the pipelines it is given. test_api.py runs the
real compiler."""

import importlib.metadata
import json
import os
import pathlib
import re
import subprocess
import sys
import warnings

import pytest

import gpuopt
from gpuopt import api, errors, tools

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
INCLUDE = os.path.join(ROOT, "include", "gpuopt", "Transforms")
PYPROJECT = os.path.join(ROOT, "python", "pyproject.toml")

GUESS = ("warning", "a.ptx", 3, 5, "hfuse: no profile: the model compares the kernels' "
         "numbers of waves instead of their times, so the choice is a guess")
CHOSE = ("remark", "a.ptx", 1, 1, "hfuse: interleave strategy chosen")


class FakeModule:
    """A gpuopt._core module: run_passes records the pipeline and returns a
    module with the diagnostics the stand-in was told to report."""

    def __init__(self, core, diagnostics=()):
        self.core = core
        self.diagnostics = list(diagnostics)
        self.kernels = ["a", "b"]
        self.modules = ["a", "b"]

    def run_passes(self, pipeline):
        self.core.pipelines.append(pipeline)
        return FakeModule(self.core, self.core.report)


class FakeCore:
    def __init__(self):
        self.pipelines = []
        self.imports = []
        self.report = []

    def import_ptx(self, texts, files):
        self.imports.append((texts, files))
        return FakeModule(self, self.report)

    def parse_mlir(self, text, filename):
        self.imports.append(([text], [filename]))
        return FakeModule(self, self.report)


@pytest.fixture
def core(monkeypatch):
    fake = FakeCore()
    monkeypatch.setattr(api, "_core", fake)
    return fake


@pytest.fixture(autouse=True)
def gpu(monkeypatch):
    """find_gpu's answer for device 0: none unless the test says
    gpu(True), so that what Module.fuse does by default is the same on any
    machine."""
    monkeypatch.setattr(api, "_GPUS", {})

    def set_gpu(present):
        api._GPUS[0] = (({"name": "Test GPU"}, None) if present
                        else (None, "no CUDA device: a test"))
    set_gpu(False)
    return set_gpu


# Pass option values ------------------------------------------------------------------

def test_dims_inside_a_list_are_one_value():
    assert api._option_value([(256, 1, 1), (128, 1, 1)]) == "256x1x1,128x1x1"
    assert api._option_value([[16, 4], 128, "8x8"]) == "16x4,128,8x8"
    # At the top, a list or tuple is the option's list: one value per kernel.
    assert api._option_value((256, 1, 1)) == "256,1,1"
    assert api._option_value([True, False]) == "true,false"
    assert api._option_value(pathlib.Path("/a b/p.json")) == '"/a b/p.json"'


def test_bad_dims_and_values():
    with pytest.raises(errors.OptionTypeError, match=r"integers .*not \(1\.5, 2\)"):
        api._option_value([(1.5, 2)])
    with pytest.raises(TypeError):
        api._option_value([[(1, 2)]])
    with pytest.raises(TypeError):
        api._option_value([()])
    with pytest.raises(gpuopt.OptionError, match="with a '\"'"):
        api._option_value('a"b')


def test_fuse_builds_the_hfuse_pipeline(core):
    m = gpuopt.import_ptx(["// a", "// b"], ["a.ptx", "b.ptx"])
    m.fuse(strategy="thread", blocks=[(256, 1, 1), (128, 1, 1)], grids=[4096, "8x4"],
           smem=(0, 64), runtime_shapes=True, min_gain=0.2, measure_top=2,
           profile=pathlib.Path("p.json"))
    assert core.pipelines == ["hfuse{strategy=thread blocks=256x1x1,128x1x1 "
                              "grids=4096,8x4 runtime-shapes=true smem=0,64 "
                              "profile=p.json min-gain=0.2 measure-top=2}"]
    m.fuse()
    assert core.pipelines[-1] == "hfuse"


def test_fuse_unknown_keyword_names_it_and_the_valid_ones(core):
    m = gpuopt.import_ptx("// a")
    with pytest.raises(TypeError) as e:
        m.fuse(foo=1)
    assert isinstance(e.value, gpuopt.Error) and isinstance(e.value, gpuopt.OptionTypeError)
    text = str(e.value)
    assert "unknown option 'foo'" in text
    assert "strategy, kernels, blocks, grids, runtime_shapes, smem" in text
    with pytest.raises(TypeError, match="'block'.*did you mean 'blocks'"):
        m.fuse(block=[256, 128])
    with pytest.raises(TypeError, match="did you mean 'runtime_shapes'"):
        m.fuse(**{"runtime-shapes": True})
    assert core.pipelines == []


@pytest.mark.parametrize("options, message", [
    (dict(measure=3), "measure must be a run spec (a path or a dict), True or False, not int"),
    (dict(measure_args="buf:u8:1:zero"), "measure_args is a list with each kernel's"),
    (dict(measure_args=[["buf:u8:1:zero", 1]]), "a kernel's measure_args are a list of"),
    (dict(runtime_shapes="yes"), "runtime_shapes must be True or False"),
    (dict(units=2.5), "units must be an integer"),
    (dict(min_gain="0.1"), "min_gain must be a number"),
    (dict(strategy=["thread"]), "strategy must be a string"),
    (dict(blocks={"a": 1}), "blocks must be a list"),
])
def test_fuse_option_of_the_wrong_kind(core, options, message):
    with pytest.raises(gpuopt.OptionTypeError, match=re.escape(message)):
        gpuopt.import_ptx("// a").fuse(**options)
    assert core.pipelines == []


def pass_options(header):
    """The option names of a pass pipeline's options struct."""
    with open(os.path.join(INCLUDE, header)) as f:
        return re.findall(r'\*this,\s*"([a-z-]+)"', f.read())


# Measuring strategy=auto by default -------------------------------------------------

ARGS = [["buf:f32:16:random:1", "scalar:u32:16"], "buf:u8:4:zero  scalar:u32:4"]
ARGS_TEXT = "measure-args={buf:f32:16:random:1 scalar:u32:16},{buf:u8:4:zero scalar:u32:4}"


def test_auto_is_measured_where_there_are_inputs_and_a_gpu(core, gpu):
    m = gpuopt.import_ptx(["// a", "// b"], ["a.ptx", "b.ptx"])
    gpu(True)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        fused = m.fuse(measure_args=ARGS)
    assert core.pipelines[-1] == "hfuse{" + ARGS_TEXT + "}"
    assert fused.unmeasured is None
    # A kernel without parameters has no arguments.
    m.fuse(measure_args=[[], "null"])
    assert core.pipelines[-1] == "hfuse{measure-args={},{null}}"
    # measure=False: never, and says so.
    fused = m.fuse(measure=False, measure_args=ARGS)
    assert core.pipelines[-1] == "hfuse" and fused.unmeasured == "measure=False"
    # Without a GPU the inputs still go to the compiler, which checks them and
    # says in its remark why nothing was measured; quietly here.
    gpu(False)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        fused = m.fuse(measure_args=ARGS)
    assert core.pipelines[-1] == "hfuse{" + ARGS_TEXT + "}"
    assert fused.unmeasured == "no GPU (no CUDA device: a test)"


def test_auto_without_inputs_falls_back_to_the_model_and_says_so(core, gpu):
    m = gpuopt.import_ptx(["// a", "// b"], ["a.ptx", "b.ptx"])
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no GPU: quietly
        fused = m.fuse()
    assert fused.unmeasured.startswith("no inputs to run the kernels on")
    gpu(True)
    with pytest.warns(gpuopt.CompilerWarning,
                      match=r"strategy=auto is not measured although there is a GPU "
                            r"\('Test GPU'\): no inputs") as caught:
        fused = m.fuse(strategy="auto")
    assert caught[0].filename == __file__
    assert core.pipelines[-1] == "hfuse{strategy=auto}"
    assert fused.unmeasured.startswith("no inputs to run the kernels on")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert m.fuse(measure=False).unmeasured == "measure=False"
        # A named strategy has nothing to measure.
        assert m.fuse(strategy="thread").unmeasured is None
    with pytest.raises(gpuopt.OptionError, match="measure=True needs the kernels' inputs"):
        m.fuse(measure=True)
    with pytest.raises(gpuopt.OptionError, match="no braces or quotes: '{null}'"):
        m.fuse(measure_args=["{null}", "null"])
    with pytest.raises(gpuopt.OptionError, match="measure_args is empty"):
        m.fuse(measure_args=[])


def test_measure_takes_a_run_spec_path_or_dict(core, gpu):
    m = gpuopt.import_ptx(["// a", "// b"], ["a.ptx", "b.ptx"])
    m.fuse(measure=pathlib.Path("run.json"))
    assert core.pipelines[-1] == "hfuse{measure=run.json}"
    seen = []
    spec = {"kernels": [{"args": ["null"]}, {"args": ["null"]}]}

    class ReadingModule(FakeModule):
        def run_passes(self, pipeline):
            found = re.search(r"measure=(\S+?)}", pipeline)
            if found:
                with open(found.group(1)) as f:
                    seen.append((found.group(1), json.load(f)))
            return super().run_passes(pipeline)
    core.import_ptx = lambda texts, files: ReadingModule(core)
    gpuopt.import_ptx("// a").fuse(measure=spec)
    ((path, written),) = seen
    assert written == spec and not os.path.exists(path)  # a file for the call only
    # measure=True with inputs is today's explicit measurement.
    gpuopt.import_ptx("// a").fuse(measure=True, measure_args=ARGS)
    assert core.pipelines[-1] == "hfuse{" + ARGS_TEXT + "}"


@pytest.mark.skipif(not os.path.isdir(INCLUDE), reason="no source tree")
def test_fuse_and_probe_take_the_pipelines_options():
    import inspect
    fuse = [p.replace("_", "-") for p in inspect.signature(gpuopt.Module.fuse).parameters][1:]
    assert sorted(fuse) == sorted(pass_options(os.path.join("HFuse", "HFusePipeline.h")))
    probe = [p.replace("_", "-") for p in inspect.signature(gpuopt.Module.probe).parameters][1:]
    expected = pass_options(os.path.join("Probe", "ProbePipeline.h"))
    assert sorted(probe) == sorted("spec" if o == "specs" else o for o in expected)


def test_probe_arguments(core, tmp_path):
    m = gpuopt.import_ptx("// a")
    m.probe(["block_sched", pathlib.Path("my.yaml")], kernels=["k"], buffer="last-param",
            keep_occupancy=False)
    assert core.pipelines == ["probe{specs=block_sched,my.yaml kernels=k "
                              "keep-occupancy=false buffer=last-param}"]
    with pytest.raises(gpuopt.OptionError, match="buffer must be 'new-params' or "
                                                 "'last-param', not 'last'"):
        m.probe("block_sched", buffer="last")
    with pytest.raises(gpuopt.OptionTypeError, match="not int"):
        m.probe(3)
    with pytest.raises(gpuopt.OptionTypeError, match="keep_occupancy must be True or False"):
        m.probe("block_sched", keep_occupancy="no")
    with pytest.raises(TypeError, match="unknown option 'keep_ocupancy'.*did you mean "
                                        "'keep_occupancy'.*spec, kernels, buffer"):
        m.probe("block_sched", keep_ocupancy=False)
    assert len(core.pipelines) == 1


# import_ptx -------------------------------------------------------------------------

def test_import_ptx_takes_bytes(core):
    gpuopt.import_ptx(b"// a\n", "a.ptx")
    gpuopt.import_ptx([b"// a", "// b"], ["a.ptx", pathlib.Path("b.ptx")])
    assert core.imports == [(["// a\n"], ["a.ptx"]), (["// a", "// b"], ["a.ptx", "b.ptx"])]


def test_import_ptx_bad_arguments(core):
    with pytest.raises(gpuopt.OptionError, match=r"x\.ptx: the PTX is not UTF-8 text "
                                                 r"\(byte 3: b'\\xff'\)") as e:
        gpuopt.import_ptx(b"// \xff", "x.ptx")
    assert isinstance(e.value, ValueError)
    with pytest.raises(TypeError, match="not int"):
        gpuopt.import_ptx(42)
    with pytest.raises(TypeError, match="a PTX text is str or bytes, not NoneType"):
        gpuopt.import_ptx(["// a", None], ["a.ptx", "b.ptx"])
    with pytest.raises(ValueError, match=r"one file name per PTX text \(2 texts, 1 file"):
        gpuopt.import_ptx(["// a", "// b"], "one.ptx")
    assert core.imports == []


def test_load_ptx_reads_utf8(core, tmp_path):
    (tmp_path / "a.ptx").write_bytes("// é\n".encode())
    gpuopt.load_ptx(tmp_path / "a.ptx")
    assert core.imports == [(["// é\n"], [str(tmp_path / "a.ptx")])]


# Compiler warnings -------------------------------------------------------------------

def test_compiler_warnings_are_issued_once_per_call(core):
    m = gpuopt.import_ptx(["// a", "// b"], ["a.ptx", "b.ptx"])
    core.report = [CHOSE, GUESS]
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        fused = m.fuse(strategy="auto")
        fused.diagnostics  # reading them again issues nothing
        fused.warnings
    assert [w.category for w in caught] == [gpuopt.CompilerWarning]
    (w,) = caught
    assert str(w.message) == "a.ptx:3:5: warning: " + GUESS[4]
    assert w.message.diagnostic == gpuopt.Diagnostic(*GUESS)
    assert w.filename == __file__  # the caller's line, not gpuopt's
    assert issubclass(gpuopt.CompilerWarning, UserWarning)
    assert fused.warnings == [gpuopt.Diagnostic(*GUESS)]
    assert fused.remarks == [gpuopt.Diagnostic(*CHOSE)]
    # A second call warns again.
    with pytest.warns(gpuopt.CompilerWarning, match="the choice is a guess"):
        m.fuse(strategy="auto")


def test_no_warning_without_warning_diagnostics(core):
    core.report = [CHOSE]
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        gpuopt.import_ptx("// a").fuse(strategy="thread")


# Exceptions --------------------------------------------------------------------------

def test_one_exception_hierarchy():
    for name in ("CompileError", "RunError", "ToolNotFound", "OptionError",
                 "OptionTypeError"):
        assert issubclass(getattr(gpuopt, name), gpuopt.Error), name
        assert name in gpuopt.__all__
    assert issubclass(gpuopt.OptionError, ValueError)
    assert issubclass(gpuopt.OptionTypeError, TypeError)
    assert tools.ToolNotFound is gpuopt.ToolNotFound
    assert api.Error is gpuopt.Error and api.Diagnostic is gpuopt.Diagnostic


def test_tool_not_found_is_a_gpuopt_error(tmp_path, monkeypatch):
    monkeypatch.delenv("GPUOPT_BIN_DIR", raising=False)
    monkeypatch.setenv("PATH", str(tmp_path))
    with pytest.raises(gpuopt.Error) as e:
        tools.find_tool("gpu-run")
    assert type(e.value) is gpuopt.ToolNotFound
    assert str(e.value).startswith("gpu-run not found: pass --gpu-run PATH")


def test_compiler_diagnostics_make_a_compile_error():
    # gpuopt._core raises gpuopt.api.Error.from_diagnostics(...).
    e = api.Error.from_diagnostics([
        ("error", "x.ptx", 2, 7, "unknown state space '.parm'"),
        ("note", "", 0, 0, "see the PTX ISA")])
    assert type(e) is gpuopt.CompileError
    assert (e.file, e.line, e.col, e.message) == ("x.ptx", 2, 7, "unknown state space '.parm'")
    assert str(e) == ("x.ptx:2:7: error: unknown state space '.parm'\n"
                      "note: see the PTX ISA")
    assert type(gpuopt.RunError.from_diagnostics([])) is gpuopt.RunError


def test_runtime_error_text_is_the_runtimes_message():
    e = gpuopt.RunError("CUDA driver libcuda.so.1 not found")
    assert str(e) == e.message == "CUDA driver libcuda.so.1 not found"


def test_run_spec_of_the_wrong_type():
    with pytest.raises(gpuopt.OptionTypeError, match="spec is a dict or JSON text, not list"):
        gpuopt.run([{"kernels": []}])


def test_errors_load_without_the_compiler():
    code = ("import sys, gpuopt\n"
            "assert issubclass(gpuopt.CompileError, gpuopt.Error)\n"
            "print('gpuopt.api' in sys.modules, '_core' in str(sorted(sys.modules)))\n")
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                       env=dict(os.environ, PYTHONPATH=os.pathsep.join(
                           [os.path.dirname(os.path.dirname(gpuopt.__file__))] +
                           [p for p in [os.environ.get("PYTHONPATH")] if p])))
    assert r.returncode == 0, r.stderr
    assert r.stdout.split() == ["False", "False"]


# Version -----------------------------------------------------------------------------

def pyproject_version():
    with open(PYPROJECT) as f:
        text = f.read()
    section = text[text.index("[project]"):]
    return re.search(r'^version = "([^"]+)"', section, re.M).group(1)


@pytest.mark.skipif(not os.path.exists(PYPROJECT), reason="no source tree")
def test_version(monkeypatch):
    try:
        installed = importlib.metadata.version("gpuopt")
    except importlib.metadata.PackageNotFoundError:
        installed = None
    assert gpuopt.__version__ == (installed or pyproject_version())
    assert "__version__" in gpuopt.__all__

    def not_installed(name):
        raise importlib.metadata.PackageNotFoundError(name)
    monkeypatch.setattr(importlib.metadata, "version", not_installed)
    if os.path.dirname(os.path.dirname(gpuopt.__file__)) == os.path.dirname(PYPROJECT):
        assert gpuopt._version() == pyproject_version() == "0.1.0"
