"""gpu-opt and gpu-run in process: import PTX, fuse, probe, export, run.

    import gpuopt
    m = gpuopt.import_ptx(open("kernels.ptx").read(), "kernels.ptx")
    fused = m.fuse(strategy="thread", kernels=["a", "b"], blocks=[256, 128])
    probed = fused.probe("block_sched", keep_occupancy=False)
    probed.write("fused.ptx", manifest="fused.json")
    report = gpuopt.run({"kernels": [...]})

`Module.fuse(strategy=..., kernels=..., ...)` runs gpu-opt's `--hfuse`
pipeline with those options, `Module.probe(...)` its `--probe` pipeline,
`Module.run_passes` any pipeline; each returns a new Module and leaves its
own unchanged, also when it fails. Failures raise a `gpuopt.Error`
(gpuopt.errors): `CompileError` with the first error's file, line and
column (a PTX input's or a probe spec's) and every diagnostic, `RunError`
from gpuopt.run, `OptionError`/`OptionTypeError` for bad arguments. The
compiler's warnings are also issued as `gpuopt.CompilerWarning`s.

The compiler is the extension gpuopt._core, which links the LLVM and MLIR
libraries the package was built against; gpuopt.run is gpuopt._runtime,
which needs neither (a GPU machine without LLVM runs it). See
docs/python.md.
"""

from __future__ import annotations

import difflib
import functools
import inspect
import json
import numbers
import os
import sys
import tempfile
import warnings
from typing import Optional, Sequence, Union

from .errors import (CompileError, CompilerWarning, Diagnostic, Error,  # noqa: F401
                     OptionError, OptionTypeError, RunError, ToolNotFound,
                     _diagnostic, _diagnostic_text)

try:
    from . import _core
except ImportError as e:  # No LLVM/MLIR here, or the package was not built.
    _core = None
    _core_error = e

try:
    from . import _runtime
except ImportError as e:
    _runtime = None
    _runtime_error = e

# A launch shape (blocks=, grids=): 256, "16x4" or (16, 4).
Dims = Union[int, str, Sequence[int]]
PathLike = Union[str, "os.PathLike[str]"]


def _compiler():
    if _core is None:
        raise ImportError(
            "gpuopt's compiler (gpuopt._core) cannot be loaded; it links the "
            "LLVM/MLIR libraries of the machine the package was built on "
            f"(docs/python.md): {_core_error}") from _core_error
    return _core


# The remark of a strategy=auto fusion that keeps the kernels apart.
_DECLINE_PREFIX = "hfuse: not fusing:"


def _is_int(value):
    return isinstance(value, numbers.Integral) and not isinstance(value, bool)


def _scalar_text(value):
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, os.PathLike):
        value = os.fspath(value)
    text = str(value)
    if any(c in text for c in " \t\n{}\"',="):
        if '"' in text:
            raise OptionError(f"pass option value with a '\"': {text!r}")
        return f'"{text}"'
    return text


class _Verbatim(str):
    """A pass option's value already spelled as pass pipelines take it."""


def _option_value(value):
    """A pass option's value as pass pipelines spell it: booleans true/false;
    a list or tuple is the option's list (one value per kernel), joined by
    ','; inside it, a list or tuple of integers is one dims value, joined by
    'x' (blocks=[(256, 1, 1), (16, 4)] is `blocks=256x1x1,16x4`, as gpu-opt
    --hfuse spells shapes)."""
    if isinstance(value, _Verbatim):
        return str(value)
    if not isinstance(value, (list, tuple)):
        return _scalar_text(value)
    items = []
    for item in value:
        if isinstance(item, (list, tuple)):
            if not item or not all(_is_int(d) for d in item):
                raise OptionTypeError(
                    f"a dims value is a list or tuple of integers (256, 1, 1), "
                    f"not {item!r}")
            items.append("x".join(str(int(d)) for d in item))
        else:
            items.append(_scalar_text(item))
    return ",".join(items)


def _pass(name, options):
    """`name{key=value ...}` from keyword options: underscores become dashes
    (runtime_shapes -> runtime-shapes), lists are joined by ',' (_option_value),
    booleans are true/false; None leaves an option out."""
    parts = [f"{key.replace('_', '-')}={_option_value(value)}"
             for key, value in options.items() if value is not None]
    return f"{name}{{{' '.join(parts)}}}" if parts else name


# The kind of each keyword option of Module.fuse and Module.probe, checked
# before the pipeline is built: "str" (also a path), "int", "float",
# "bool", "list" (a list or tuple of values, one per kernel, or one value).
_KIND_CHECKS = {
    "str": (lambda v: isinstance(v, (str, os.PathLike)), "a string"),
    "int": (_is_int, "an integer"),
    "float": (lambda v: isinstance(v, numbers.Real) and not isinstance(v, bool),
              "a number"),
    "bool": (lambda v: isinstance(v, bool), "True or False"),
    "list": (lambda v: isinstance(v, (list, tuple, str, numbers.Real, os.PathLike)),
             "a list (one value per kernel)"),
}


def _check_options(call, kinds, options):
    for key, value in options.items():
        if value is None:
            continue
        ok, what = _KIND_CHECKS[kinds[key]]
        if not ok(value):
            raise OptionTypeError(f"{call}: {key} must be {what}, not "
                                  f"{type(value).__name__} ({value!r})")


def _keyword_options(method):
    """Makes an unknown keyword of `method` an OptionTypeError (a TypeError)
    that names it and the valid ones."""
    params = list(inspect.signature(method).parameters.values())[1:]
    valid = [p.name for p in params
             if p.kind in (p.KEYWORD_ONLY, p.POSITIONAL_OR_KEYWORD)]

    @functools.wraps(method)
    def checked(self, *args, **kwargs):
        unknown = [k for k in kwargs if k not in valid]
        if unknown:
            key = unknown[0]
            close = difflib.get_close_matches(key.replace("-", "_"), valid, 1)
            hint = f" (did you mean {close[0]!r}?)" if close else ""
            raise OptionTypeError(
                f"Module.{method.__name__}() got an unknown option {key!r}{hint}; "
                f"its options: {', '.join(valid)}")
        return method(self, *args, **kwargs)
    return checked


def _caller_level():
    """The stacklevel of the first caller outside this file, for
    warnings.warn called from here."""
    frame, level = sys._getframe(1), 1
    while frame is not None and frame.f_code.co_filename == __file__:
        frame, level = frame.f_back, level + 1
    return level


def _made(core_module):
    """The Module of a compiler call's result; the call's warnings go through
    Python's warnings module (CompilerWarning), once, pointing at the first
    caller outside this file."""
    module = Module(core_module)
    found = [d for d in module.diagnostics if d.severity == "warning"]
    if found:
        level = _caller_level()
        for d in found:
            warnings.warn(CompilerWarning(_diagnostic_text(d), d), stacklevel=level)
    return module


def _warn_here(text):
    """A CompilerWarning of the API itself (no diagnostic), at the caller."""
    warnings.warn(CompilerWarning(text), stacklevel=_caller_level())


def _measure_args_texts(value):
    """measure_args as --hfuse's measure-args takes it: one value per kernel
    in braces, its gpu-run --arg specs separated by spaces; None when not
    given."""
    if value is None:
        return None
    if not isinstance(value, (list, tuple)):
        raise OptionTypeError(f"Module.fuse: measure_args is a list with each kernel's "
                              f"gpu-run --arg specs, not {type(value).__name__} ({value!r})")
    if not value:
        raise OptionError("Module.fuse: measure_args is empty; give each kernel's gpu-run "
                          "--arg specs")
    texts = []
    for item in value:
        if isinstance(item, str):
            texts.append(" ".join(item.split()))
        elif isinstance(item, (list, tuple)) and all(isinstance(a, str) for a in item):
            texts.append(" ".join(item))
        else:
            raise OptionTypeError(f"Module.fuse: a kernel's measure_args are a list of "
                                  f"gpu-run --arg specs, or a string of them, not {item!r}")
        if any(c in texts[-1] for c in '{}"\''):
            raise OptionError(f"Module.fuse: a gpu-run --arg spec has no braces or quotes: "
                              f"{texts[-1]!r}")
    return _Verbatim(",".join("{" + t + "}" for t in texts))


def _one_or_list(value, types, whole_error, item_error):
    """`value` as a list: one item of `types`, or a list or tuple of them;
    OptionTypeError with whole_error(type name) or item_error(item)
    otherwise."""
    if isinstance(value, types):
        return [value]
    if not isinstance(value, (list, tuple)):
        raise OptionTypeError(whole_error(type(value).__name__))
    for item in value:
        if not isinstance(item, types):
            raise OptionTypeError(item_error(item))
    return list(value)


class Module:
    """A builtin module of ptx.modules (one per imported PTX text) in its
    own MLIR context. Every transformation returns a new Module."""

    def __init__(self, core_module):
        self._m = core_module
        self._declined = None
        self._unmeasured = None

    # Transformations.

    def run_passes(self, pipeline: str) -> "Module":
        """Runs a pass pipeline (as gpu-opt's --pass-pipeline takes it, with
        or without builtin.module(...)) on a copy; returns the copy. The
        pipeline's warnings are also issued as CompilerWarnings."""
        if not isinstance(pipeline, str):
            raise OptionTypeError(f"run_passes: the pipeline is a string, not "
                                  f"{type(pipeline).__name__}")
        return _made(self._m.run_passes(pipeline))

    _FUSE_OPTIONS = {
        "strategy": "str", "kernels": "list", "blocks": "list", "grids": "list",
        "runtime_shapes": "bool", "smem": "list", "threads": "list",
        "resizable": "list", "ratio": "list", "replicas": "list",
        "setmaxnreg": "list", "units": "int", "maxnreg": "int", "name": "str",
        "config": "str", "profile": "str", "min_gain": "float",
        "require": "bool", "candidates_out": "str", "measure_top": "int",
        "cache": "str", "chip": "str", "ptxas": "str"}

    @_keyword_options
    def fuse(self, *,
             strategy: Optional[str] = None,
             kernels: Optional[Sequence[str]] = None,
             blocks: Optional[Sequence[Dims]] = None,
             grids: Optional[Sequence[Dims]] = None,
             runtime_shapes: Optional[bool] = None,
             smem: Optional[Sequence[int]] = None,
             threads: Optional[Sequence[int]] = None,
             resizable: Optional[Sequence[bool]] = None,
             ratio: Optional[Sequence[int]] = None,
             replicas: Optional[Sequence[int]] = None,
             setmaxnreg: Optional[Sequence[int]] = None,
             units: Optional[int] = None,
             maxnreg: Optional[int] = None,
             name: Optional[str] = None,
             config: Optional[PathLike] = None,
             profile: Optional[PathLike] = None,
             min_gain: Optional[float] = None,
             require: Optional[bool] = None,
             candidates_out: Optional[PathLike] = None,
             measure: Union[None, bool, PathLike, dict] = None,
             measure_args: Optional[Sequence[Union[str, Sequence[str]]]] = None,
             measure_top: Optional[int] = None,
             cache: Optional[PathLike] = None,
             chip: Optional[str] = None,
             ptxas: Optional[PathLike] = None) -> "Module":
        """gpu-opt --hfuse: the module with the kernels fused into one.

        Each keyword is the --hfuse option of that name (docs/fusion.md,
        "Options"; underscores for dashes); None (the default) leaves it
        out, so gpu-opt's default applies. List options take one value per
        kernel, in the kernels' order; a shape is 256, "16x4" or a tuple
        (16, 4).

        strategy: "thread", "interleave", "dynamic", "sm_aware" or "auto"
            (gpu-opt's default: the fusion model chooses).
        kernels: the kernels to fuse, in order, each by its symbol, its
            function name or its base name, optionally "MODULE::NAME";
            default every .entry.
        blocks: each kernel's block shape; needed without .reqntid.
        grids: each kernel's grid (with runtime_shapes, only a default).
        runtime_shapes: launch-agnostic: the fused kernel takes each kernel's
            grid (and dynamic shared memory where the strategy allows) at
            launch.
        smem: each kernel's dynamic shared memory, in bytes.
        threads: thread split: each kernel's threads.
        resizable: each kernel: True if it is correct with any 1-D block
            size where gpu-opt cannot show it.
        ratio: interleave/dynamic/sm_aware: each kernel's blocks per period.
        replicas: thread split: blocks of each kernel per fused block.
        setmaxnreg: thread split on sm_90a: each kernel's registers per
            thread (0: none).
        units: dynamic/sm_aware: work units a fused block takes per ticket.
        maxnreg: register cap of the fused kernel (0: none; -1: choose).
        name: the fused .entry's name (and its ptx.module's).
        config: a YAML fusion config (configs/hfuse/*.yaml) giving the above.
        profile: a gpu-run --json report of each kernel's time alone, for the
            model (without one, strategy="auto" warns that its choice is a
            guess).
        min_gain: auto: the predicted gain needed to fuse (0.10).
        require: auto: True makes a decline (no candidate pays) a
            CompileError instead of leaving the kernels apart.
        candidates_out: auto: write every candidate, ranked, as JSON here.
        measure: auto: whether to measure the model's top candidates on the
            GPU (checked bit for bit against the kernels apart, timed with
            them in process; the fastest wins if 1% faster): a gpu-run run
            spec of the kernels (a path, or a dict) gives the inputs; True
            measures on measure_args; False never measures. None (the
            default): measured where there are inputs (a run spec or
            measure_args) and a GPU; with a GPU (find_gpu()) but no inputs
            the model's choice stands with a CompilerWarning that says so.
            The result's `unmeasured` says why a choice was not measured.
        measure_args: auto: the inputs without a run spec: each kernel's
            gpu-run --arg specs, a list per kernel (["buf:f32:1024:random:1",
            "scalar:u32:1024"]) or one string of them separated by spaces;
            the launch shapes are blocks=, grids= and smem='s.
        measure_top: auto with measure: how many candidates to measure (3).
        cache: auto with measure: the folder of measured decisions ("none":
            no cache).
        chip, ptxas: the chip and the ptxas for resource reports.

        The call's warnings are issued as CompilerWarnings, its remarks are
        in the result's `remarks`. When strategy="auto" declines (no
        candidate is predicted, or measured, to pay), the result holds the
        kernels apart, unchanged, and its `declined` says why (the remark's
        text, with the options that fuse anyway); with require=True that is
        a CompileError instead. Raises CompileError (a gpuopt.Error) when
        gpu-opt refuses, OptionTypeError (a TypeError) for an unknown keyword
        or a value of the wrong kind.
        """
        options = {k: v for k, v in locals().items() if k in self._FUSE_OPTIONS}
        _check_options("Module.fuse", self._FUSE_OPTIONS, options)
        texts = _measure_args_texts(measure_args)
        if not (measure is None or isinstance(measure, (bool, str, os.PathLike, dict))):
            raise OptionTypeError(
                f"Module.fuse: measure must be a run spec (a path or a dict), True or "
                f"False, not {type(measure).__name__} ({measure!r})")
        spec = None if isinstance(measure, bool) else measure
        # A config names its own strategy: auto for certain only without one.
        auto = strategy == "auto" or (strategy is None and config is None)
        unmeasured = None
        if measure is True and spec is None and texts is None:
            raise OptionError("Module.fuse: measure=True needs the kernels' inputs: "
                              "measure_args= (each kernel's gpu-run --arg specs) or "
                              "measure= a run spec")
        if measure is False:
            unmeasured = "measure=False" if auto else None
        elif spec is None and texts is None:
            if auto:
                unmeasured = ("no inputs to run the kernels on (measure= a run spec, "
                              "or measure_args=)")
                if find_gpu() is not None:
                    _warn_here(f"Module.fuse: strategy=auto is not measured although there "
                               f"is a GPU ('{find_gpu()['name']}'): {unmeasured}; the "
                               f"model's choice stands (measure=False: without this warning)")
        else:
            options["measure_args"] = texts
            if auto and find_gpu() is None:
                unmeasured = f"no GPU ({_probe_gpu(0)[1]})"
        with tempfile.TemporaryDirectory(prefix="gpuopt-measure-") as tmp:
            if isinstance(spec, dict):
                path = os.path.join(tmp, "run.json")
                with open(path, "w") as f:
                    json.dump(spec, f)
                spec = path
            if measure is not False and spec is not None:
                options["measure"] = spec
            result = self.run_passes(_pass("hfuse", options))
        result._declined = next((d.message for d in result.remarks
                                 if d.message.startswith(_DECLINE_PREFIX)), None)
        result._unmeasured = unmeasured
        return result

    _PROBE_BUFFERS = ("new-params", "last-param")

    @_keyword_options
    def probe(self, spec: Union[PathLike, Sequence[PathLike]],
              kernels: Optional[Sequence[str]] = None,
              buffer: str = "new-params",
              keep_occupancy: bool = True,
              chip: Optional[str] = None,
              ptxas: Optional[PathLike] = None) -> "Module":
        """gpu-opt --probe: the module with probes inserted.

        spec: a built-in probe name ("block_sched", "warp_sched",
            "gmem_bytes", ...; configs/probes), a YAML spec file, YAML text
            (a string with a newline; its errors then name a temporary
            file), or a list of them.
        kernels: the kernels to probe (default: every .entry), named as
            fuse's kernels.
        buffer: where the probe buffers go: "new-params" (one new parameter
            per map) or "last-param" (the kernel's last .u64 parameter,
            Triton's profile scratch).
        keep_occupancy: ask ptxas for each kernel's registers before and
            after probing, place the probes again where they cost registers,
            and cap a kernel whose blocks per SM would drop (--probe-keep-
            occupancy); False skips ptxas.
        chip, ptxas: the chip and the ptxas for keep_occupancy.

        Raises CompileError for an unknown probe or a bad spec (with the
        YAML line), OptionError/OptionTypeError for bad arguments.
        """
        specs = [os.fspath(s) for s in _one_or_list(
            spec, (str, os.PathLike),
            lambda t: f"Module.probe: spec is a probe name, a YAML file or text, or a "
                      f"list of them, not {t}",
            lambda s: f"Module.probe: a probe spec is a name, a path or YAML text, not "
                      f"{type(s).__name__} ({s!r})")]
        if not specs:
            raise OptionError("Module.probe: no probe spec given")
        if buffer not in self._PROBE_BUFFERS:
            raise OptionError(f"Module.probe: buffer must be 'new-params' or "
                              f"'last-param', not {buffer!r}")
        _check_options("Module.probe", {"kernels": "list", "keep_occupancy": "bool",
                                        "chip": "str", "ptxas": "str"},
                       {"kernels": kernels, "keep_occupancy": keep_occupancy,
                        "chip": chip, "ptxas": ptxas})
        with tempfile.TemporaryDirectory(prefix="gpuopt-probe-") as tmp:
            for i, s in enumerate(specs):
                if "\n" in s:
                    path = os.path.join(tmp, f"spec{i}.yaml")
                    with open(path, "w") as f:
                        f.write(s)
                    specs[i] = path
            options = {"specs": specs, "kernels": kernels,
                       "keep_occupancy": keep_occupancy, "chip": chip,
                       "ptxas": ptxas}
            if buffer != "new-params":
                options["buffer"] = buffer
            return self.run_passes(_pass("probe", options))

    # Output.

    def to_ptx(self, module=None):
        """The PTX of one ptx.module (`module`, or the only one; several are
        linked into one, as gpu-opt -o writes them, when they can be)."""
        return self._m.to_ptx(module or "")

    def to_cubin(self, chip=None, module=None, ptxas=None, ptxas_options=()):
        """A cubin of one ptx.module through ptxas (default: $PTXAS, PATH,
        the CUDA toolkit's) for `chip` (default: the module's .target)."""
        return self._m.to_cubin(chip or "", module or "", ptxas or "",
                                list(ptxas_options))

    def get_manifest(self, module=None, module_path=None, format="ptx"):
        """The launch manifest (docs/manifest.md) of one ptx.module, as
        gpu-opt --manifest writes it, for the module written to
        `module_path` (default: NAME.ptx or NAME.cubin) as `format`."""
        return json.loads(self._m.manifest(module or "", module_path or "",
                                           format))

    @property
    def manifest(self):
        """get_manifest() of the only (or named by to_ptx's rule) module."""
        return self.get_manifest()

    def write(self, path, manifest=None, module=None, chip=None):
        """Writes one ptx.module to `path` as PTX, or as a cubin when `path`
        ends in .cubin, and its manifest to `manifest` (naming the module
        relative to itself when both are in one folder, as gpu-opt does)."""
        path = os.fspath(path)
        manifest = os.fspath(manifest) if manifest is not None else None
        cubin = path.endswith(".cubin")
        data = self.to_cubin(chip, module) if cubin else self.to_ptx(module)
        text = None
        if manifest:
            here = os.path.dirname(os.path.abspath(path))
            there = os.path.dirname(os.path.abspath(manifest))
            module_path = (os.path.basename(path) if here == there
                           else os.path.abspath(path))
            text = self._m.manifest(module or "", module_path,
                                    "cubin" if cubin else "ptx")
        with open(path, "wb" if cubin else "w") as f:
            f.write(data)
        if text is not None:
            with open(manifest, "w") as f:
                f.write(text)

    # Contents.

    @property
    def kernels(self):
        """Every .entry's name, in order."""
        return self._m.kernels

    @property
    def modules(self):
        """The ptx.modules' names, in order."""
        return self._m.modules

    @property
    def diagnostics(self):
        """What the call that made this module reported (remarks, warnings),
        as Diagnostic tuples; a failing run_passes/fuse/probe on this module
        also leaves its diagnostics here."""
        return [_diagnostic(d) for d in self._m.diagnostics]

    @property
    def declined(self):
        """Why the fuse() call that made this module kept the kernels apart
        (its "hfuse: not fusing: ..." remark), or None: the module was not
        made by fuse(), or fuse() fused. A declined module exports its
        kernels linked into one PTX module (to_ptx(), write())."""
        return self._declined

    @property
    def unmeasured(self):
        """Why the strategy=auto fuse() call that made this module did not
        measure its candidates on the GPU: "measure=False", no inputs (no
        run spec, no measure_args), or no GPU (and the driver's reason); None
        when it measured them (or took a measured decision from the cache),
        or the module was not made by an auto fuse()."""
        return self._unmeasured

    @property
    def remarks(self):
        """The diagnostics of severity "remark" (what a pass chose, e.g.
        `hfuse: thread strategy as requested`)."""
        return [d for d in self.diagnostics if d.severity == "remark"]

    @property
    def warnings(self):
        """The diagnostics of severity "warning", which the call that made
        this module also issued as CompilerWarnings."""
        return [d for d in self.diagnostics if d.severity == "warning"]

    def __str__(self):
        return str(self._m)

    def __repr__(self):
        return f"<gpuopt.Module {', '.join(self.modules)}>"


Module.__module__ = "gpuopt"


def _ptx_text(text, filename):
    """One PTX text as str: bytes are decoded as UTF-8."""
    if isinstance(text, str):
        return text
    if isinstance(text, (bytes, bytearray, memoryview)):
        try:
            return bytes(text).decode("utf-8")
        except UnicodeDecodeError as e:
            raise OptionError(f"import_ptx: {filename}: the PTX is not UTF-8 text (byte "
                              f"{e.start}: {bytes(text)[e.start:e.start + 1]!r}); PTX is "
                              f"ASCII") from None
    raise OptionTypeError(f"import_ptx: a PTX text is str or bytes, not "
                          f"{type(text).__name__}")


def import_ptx(text: Union[str, bytes, Sequence[Union[str, bytes]]],
               filename: Union[PathLike, Sequence[PathLike]] = "<ptx>") -> Module:
    """A Module of PTX text, or of several (lists of texts and file names,
    one ptx.module each, as gpu-opt a.ptx b.ptx makes). A text is str, or
    bytes in UTF-8. `filename` names the text in errors and names its
    ptx.module (after its stem). Raises CompileError for PTX gpu-opt cannot
    read, OptionError/OptionTypeError for bad arguments."""
    if isinstance(text, (str, bytes, bytearray, memoryview)):
        texts = [text]
    elif isinstance(text, (list, tuple)):
        texts = list(text)
    else:
        raise OptionTypeError(f"import_ptx: text is str or bytes, or a list of them, "
                              f"not {type(text).__name__}")
    files = [os.fspath(f) for f in _one_or_list(
        filename, (str, os.PathLike),
        lambda t: f"import_ptx: filename is a string, or a list of them, not {t}",
        lambda f: f"import_ptx: a file name is a string, not {type(f).__name__}")]
    if len(files) != len(texts):
        raise OptionError(f"import_ptx takes one file name per PTX text ({len(texts)} "
                          f"texts, {len(files)} file names)")
    texts = [_ptx_text(t, f) for t, f in zip(texts, files)]
    return _made(_compiler().import_ptx(texts, files))


def load_ptx(*paths: PathLike) -> Module:
    """import_ptx of PTX files (read as UTF-8)."""
    texts = []
    for p in paths:
        with open(p, "rb") as f:
            texts.append(f.read())
    return import_ptx(texts, [os.fspath(p) for p in paths])


def parse_mlir(text: Union[str, bytes], filename: PathLike = "<mlir>") -> Module:
    """A Module of MLIR text (a builtin module of ptx.modules, as gpu-opt
    --emit=mlir writes it)."""
    if isinstance(text, (bytes, bytearray, memoryview)):
        try:
            text = bytes(text).decode("utf-8")
        except UnicodeDecodeError as e:
            raise OptionError(f"parse_mlir: {filename}: not UTF-8 text ({e})") from None
    if not isinstance(text, str):
        raise OptionTypeError(f"parse_mlir: text is str or bytes, not {type(text).__name__}")
    return _made(_compiler().parse_mlir(text, os.fspath(filename)))


# device ordinal -> (the GPU's description or None, why there is none).
_GPUS = {}


def _probe_gpu(device):
    """(find_gpu's answer, why there is none) for `device`, asked once per
    process: the runtime loads the driver once, too."""
    if device not in _GPUS:
        if _runtime is None:
            found = (None, f"gpuopt._runtime cannot be loaded: {_runtime_error}")
        else:
            try:
                found = (dict(_runtime.device(device)), None)
            except Exception as e:  # no driver, no device: quietly none
                found = (None, str(e))
        _GPUS[device] = found
    return _GPUS[device]


def find_gpu(device: int = 0) -> Optional[dict]:
    """The GPU the runtime runs kernels on (gpuopt.run, --hfuse's measure=):
    device `device` of the CUDA driver ($GPUOPT_CUDA_DRIVER, else
    libcuda.so.1, opened with dlopen; no context is made), as a dict with
    "name", "compute_capability", "multiprocessors", "l2_bytes",
    "total_memory", "driver_version" (gpu-run's report's "device"); None,
    without raising or printing anything, when there is none: no driver, no
    device, or no gpuopt._runtime. Asked once per process. Module.fuse and
    gpuopt.triton.fuse measure strategy="auto" by default where it is not
    None."""
    return _probe_gpu(int(device))[0]


_chdir_lock = None


def run(spec, workdir=None, device=0, occupancy_sweep=False, compare=None,
        tolerance=None):
    """Runs a gpu-run run spec (a dict, as `gpu-run --spec` reads it) in
    process and returns the report (as `gpu-run --json` writes it). Relative
    paths in the spec are relative to `workdir` (default: the current
    directory). A kernel with a "trace" also gets "trace_maps": its probe
    records as numpy structured arrays, by map name. Errors (a bad spec, no
    GPU or driver) raise RunError (a gpuopt.Error) with the runtime's
    message."""
    global _chdir_lock
    if isinstance(spec, str):
        text = spec
    elif isinstance(spec, dict):
        text = json.dumps(spec)
    else:
        raise OptionTypeError(f"run: spec is a dict or JSON text, not {type(spec).__name__}")
    if _runtime is None:
        raise ImportError(f"gpuopt._runtime cannot be loaded: {_runtime_error}"
                          ) from _runtime_error
    if _chdir_lock is None:
        import threading
        _chdir_lock = threading.Lock()
    with _chdir_lock:
        old = os.getcwd()
        try:
            if workdir is not None:
                os.chdir(workdir)
            try:
                report = json.loads(_runtime.run(
                    text, device, occupancy_sweep, compare or "", tolerance))
            except _runtime.RunError as e:
                raise RunError(str(e)) from None
            for kernel in report.get("kernels", []):
                if kernel.get("trace"):
                    from . import trace
                    kernel["trace_maps"] = dict(trace.load(kernel["trace"]).maps)
        finally:
            os.chdir(old)
    return report
