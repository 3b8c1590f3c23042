"""Python side of gpu-opt: the workflows around gpu-opt and gpu-run.

- gpuopt.verify: run the original kernels and a fused or probed kernel on
  the same inputs through gpu-run and compare the outputs bit for bit;
- gpuopt.profile: the kernels' times alone and at fewer blocks per SM, the
  profile that `--hfuse` strategy=auto reads;
- gpuopt.bench: alone / serial / two streams / graph / fused timings and
  overlap efficiency;
- gpuopt.capture.inductor: the Triton kernels PyTorch Inductor launches;
- gpuopt.hfuse_search: measure the fusion planner's candidates;
- gpuopt.trace and the analyses of probe traces (block_sched, warp_sched,
  dmat, progress, totals).

Each has a command line: `python -m gpuopt.<name> --help`.

The compiler and the runtime are also here in process (gpuopt.api,
docs/python.md): `gpuopt.import_ptx(text).fuse(...).probe(...).to_ptx()`,
`Module.manifest`, `gpuopt.run(spec)`, `gpuopt.find_gpu()` (the GPU the
runtime runs on, or None); failures raise `gpuopt.Error`
(subclasses: CompileError, RunError, ToolNotFound, OptionError,
OptionTypeError; gpuopt.errors), compiler warnings are also issued as
`gpuopt.CompilerWarning`s. `gpuopt.__version__` is the package's version.
"""

# gpuopt.api, loaded on first use, so that the command-line workflows do not
# load the compiler's LLVM and MLIR libraries; the exceptions and warnings
# (gpuopt.errors) load nothing.
_ERRORS = ("Error", "CompileError", "RunError", "ToolNotFound", "OptionError",
           "OptionTypeError", "CompilerWarning", "Diagnostic")
_API = _ERRORS + ("Module", "import_ptx", "load_ptx", "parse_mlir", "run", "find_gpu")
__all__ = list(_API) + ["__version__"]


def _version():
    """The installed distribution's version, else (a source tree on
    PYTHONPATH) the one in python/pyproject.toml."""
    import importlib.metadata
    import os
    import re
    try:
        return importlib.metadata.version("gpuopt")
    except importlib.metadata.PackageNotFoundError:
        pass
    pyproject = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))),
                             "pyproject.toml")
    try:
        with open(pyproject) as f:
            text = f.read()
    except OSError:
        return "0+unknown"
    project = re.search(r"^\[project\]$(.*?)(?=^\[|\Z)", text, re.M | re.S)
    version = project and re.search(r'^version\s*=\s*"([^"]+)"', project.group(1), re.M)
    return version.group(1) if version else "0+unknown"


# gpu-opt looks for ptxas, when there is no CUDA toolkit, in the Python
# packages that bring one (Triton, NVIDIA's wheels): $GPUOPT_PYTHON_PATH
# tells it where they are, in this process and in the tools it starts.
from ._tools import export_python_path as _export_python_path  # noqa: E402

_export_python_path()


def __getattr__(name):
    if name in _ERRORS:
        from . import errors
        return getattr(errors, name)
    if name in _API:
        from . import api
        return getattr(api, name)
    if name == "__version__":
        global __version__
        __version__ = _version()
        return __version__
    raise AttributeError(f"module 'gpuopt' has no attribute {name!r}")


def __dir__():
    return sorted(list(globals()) + list(_API) + ["__version__"])
