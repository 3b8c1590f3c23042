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
`Module.manifest`, `gpuopt.run(spec)`; failures raise `gpuopt.Error`.
"""

# gpuopt.api, loaded on first use, so that the command-line workflows do not
# load the compiler's LLVM and MLIR libraries.
_API = ("Error", "Diagnostic", "Module", "import_ptx", "load_ptx",
        "parse_mlir", "run")
__all__ = list(_API)


def __getattr__(name):
    if name in _API:
        from . import api
        return getattr(api, name)
    raise AttributeError(f"module 'gpuopt' has no attribute {name!r}")


def __dir__():
    return sorted(list(globals()) + list(_API))
