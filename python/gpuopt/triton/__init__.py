"""gpu-opt inside Triton: probe the kernels Triton compiles and launches
(`probes`, `instrument`) and fuse Triton kernels (`fuse`), in process.

    with gpuopt.triton.probes("block_sched") as session:
        y = softmax(x)
    for launch in session.launches:
        print(launch.name, launch.grid, launch.maps["block_sched"].shape)

docs/triton.md has the details.
"""

from gpuopt.triton.probes import (CompiledProbe, InstrumentedFunction,  # noqa: F401
                                  InstrumentedKernel, Launch, ProbeError,
                                  instrument, probes)
from gpuopt.triton.fuse import (FusedTriton, FuseError, VerificationError,  # noqa: F401,E402
                                call, fuse, offline_target, placeholder)
