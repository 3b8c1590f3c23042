"""gpu-opt and gpu-run in process: import PTX, fuse, probe, export, run.

    import gpuopt
    m = gpuopt.import_ptx(open("kernels.ptx").read(), "kernels.ptx")
    fused = m.fuse(strategy="thread", kernels=["a", "b"], blocks=[256, 128])
    probed = fused.probe("block_sched", keep_occupancy=False)
    probed.write("fused.ptx", manifest="fused.json")
    report = gpuopt.run({"kernels": [...]})

`Module.fuse(**options)` runs gpu-opt's `--hfuse` pipeline with those
options, `Module.probe(...)` its `--probe` pipeline, `Module.run_passes`
any pipeline; each returns a new Module and leaves its own unchanged, also
when it fails. Failures raise `gpuopt.Error` with the first error's file,
line and column (a PTX input's or a probe spec's) and every diagnostic.

The compiler is the extension gpuopt._core, which links the LLVM and MLIR
libraries the package was built against; gpuopt.run is gpuopt._runtime,
which needs neither (a GPU machine without LLVM runs it). See
docs/python.md.
"""

import collections
import json
import os
import tempfile

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

Diagnostic = collections.namedtuple(
    "Diagnostic", ["severity", "file", "line", "col", "message"], module="gpuopt")
Diagnostic.__doc__ = """One diagnostic: severity ("error", "warning",
"remark" or "note"), file, line and col (None, None, None without a source
position) and message."""


def _diagnostic(d):
    severity, file, line, col, message = d
    if not file:
        file = line = col = None
    return Diagnostic(severity, file, line, col, message)


class Error(Exception):
    """A failed compile or run: `message`, and `file`, `line`, `col` of the
    first error (None where it has no position); `diagnostics`, every
    diagnostic of the call (Diagnostic tuples)."""

    def __init__(self, message, file=None, line=None, col=None,
                 diagnostics=()):
        self.message = message
        self.file = file
        self.line = line
        self.col = col
        self.diagnostics = list(diagnostics)
        super().__init__(message)

    @classmethod
    def from_diagnostics(cls, diagnostics):
        diagnostics = [_diagnostic(d) for d in diagnostics]
        first = next((d for d in diagnostics if d.severity == "error"),
                     diagnostics[0] if diagnostics else
                     Diagnostic("error", None, None, None, "failed"))
        return cls(first.message, first.file, first.line, first.col,
                   diagnostics)

    def __str__(self):
        lines = []
        for d in self.diagnostics or [Diagnostic("error", self.file,
                                                 self.line, self.col,
                                                 self.message)]:
            where = f"{d.file}:{d.line}:{d.col}: " if d.file else ""
            lines.append(f"{where}{d.severity}: {d.message}")
        return "\n".join(lines)


# Shown as the package's names (gpuopt re-exports them).
Error.__module__ = "gpuopt"


def _compiler():
    if _core is None:
        raise ImportError(
            "gpuopt's compiler (gpuopt._core) cannot be loaded; it links the "
            "LLVM/MLIR libraries of the machine the package was built on "
            f"(docs/python.md): {_core_error}") from _core_error
    return _core


def _option_value(value):
    """A pass option's value as pass pipelines spell it."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (list, tuple)):
        return ",".join(_option_value(v) for v in value)
    text = str(value)
    if any(c in text for c in " \t\n{}\"',="):
        if '"' in text:
            raise ValueError(f"pass option value with a '\"': {text!r}")
        return f'"{text}"'
    return text


def _pass(name, options):
    """`name{key=value ...}` from keyword options: underscores become dashes
    (runtime_shapes -> runtime-shapes), lists are joined by ',', booleans
    are true/false; None leaves an option out."""
    parts = [f"{key.replace('_', '-')}={_option_value(value)}"
             for key, value in options.items() if value is not None]
    return f"{name}{{{' '.join(parts)}}}" if parts else name


class Module:
    """A builtin module of ptx.modules (one per imported PTX text) in its
    own MLIR context. Every transformation returns a new Module."""

    def __init__(self, core_module):
        self._m = core_module

    # Transformations.

    def run_passes(self, pipeline):
        """Runs a pass pipeline (as gpu-opt's --pass-pipeline takes it, with
        or without builtin.module(...)) on a copy; returns the copy."""
        return Module(self._m.run_passes(pipeline))

    def fuse(self, **options):
        """gpu-opt --hfuse with these options (strategy, kernels, blocks,
        grids, smem, threads, ratio, runtime_shapes, config, name, ...):
        the module with the fused kernel."""
        return self.run_passes(_pass("hfuse", options))

    def probe(self, spec, kernels=None, buffer="new-params",
              keep_occupancy=True, chip=None, ptxas=None):
        """gpu-opt --probe: `spec` is a built-in probe name, a YAML spec
        file, YAML text (a string with a newline), or a list of them;
        `kernels` the kernels to probe (default: every .entry); `buffer`
        where the probe buffers go ("new-params", or "last-param": in the
        kernel's last .u64 parameter)."""
        specs = [spec] if isinstance(spec, str) else list(spec)
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
        """The PTX of one ptx.module (`module`, or the only one)."""
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
    def remarks(self):
        return [d for d in self.diagnostics if d.severity == "remark"]

    def __str__(self):
        return str(self._m)

    def __repr__(self):
        return f"<gpuopt.Module {', '.join(self.modules)}>"


Module.__module__ = "gpuopt"


def import_ptx(text, filename="<ptx>"):
    """A Module of PTX text, or of several (lists of texts and file names,
    one ptx.module each, as gpu-opt a.ptx b.ptx makes). `filename` names the
    text in errors and names its ptx.module (after its stem)."""
    texts = [text] if isinstance(text, str) else list(text)
    files = [filename] if isinstance(filename, str) else list(filename)
    if len(files) != len(texts):
        raise ValueError("import_ptx takes one file name per PTX text")
    return Module(_compiler().import_ptx(texts, files))


def load_ptx(*paths):
    """import_ptx of PTX files."""
    texts = []
    for p in paths:
        with open(p) as f:
            texts.append(f.read())
    return import_ptx(texts, [str(p) for p in paths])


def parse_mlir(text, filename="<mlir>"):
    """A Module of MLIR text (a builtin module of ptx.modules, as gpu-opt
    --emit=mlir writes it)."""
    return Module(_compiler().parse_mlir(text, filename))


_chdir_lock = None


def run(spec, workdir=None, device=0, occupancy_sweep=False, compare=None,
        tolerance=None):
    """Runs a gpu-run run spec (a dict, as `gpu-run --spec` reads it) in
    process and returns the report (as `gpu-run --json` writes it). Relative
    paths in the spec are relative to `workdir` (default: the current
    directory). A kernel with a "trace" also gets "trace_maps": its probe
    records as numpy structured arrays, by map name. Errors (no GPU or
    driver included) raise gpuopt.Error with the runtime's message."""
    global _chdir_lock
    if _runtime is None:
        raise ImportError(f"gpuopt._runtime cannot be loaded: {_runtime_error}"
                          ) from _runtime_error
    text = spec if isinstance(spec, str) else json.dumps(spec)
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
                raise Error(str(e)) from None
            for kernel in report.get("kernels", []):
                if kernel.get("trace"):
                    from . import trace
                    kernel["trace_maps"] = dict(trace.load(kernel["trace"]).maps)
        finally:
            os.chdir(old)
    return report
