"""Loaded by every Python process that gpuopt-trace starts (through
PYTHONPATH): the first one, the traced program, opens the probe session
(gpuopt.tracer.start_from_env); the configuration is removed from the
environment there, so the program's own children are left alone. A
sitecustomize of the environment that this one shadows is run after it."""

import os as _os
import sys as _sys


def _chain():
    here = _os.path.dirname(_os.path.abspath(__file__))
    import importlib.machinery
    import importlib.util
    path = [p for p in _sys.path if _os.path.abspath(p or ".") != here]
    spec = importlib.machinery.PathFinder.find_spec("sitecustomize", path)
    if spec is not None and spec.origin and _os.path.dirname(spec.origin) != here:
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)


if _os.environ.get("GPUOPT_TRACE_CONFIG"):
    try:
        from gpuopt.tracer import start_from_env
        start_from_env()
    except Exception as _e:  # never break the program
        print(f"gpuopt-trace: probes not started: {_e}", file=_sys.stderr)
_chain()
