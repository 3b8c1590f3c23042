"""gpu-opt's probes on PyTorch programs compiled by Inductor.

    traced = gpuopt.torch.trace(fn, probe="block_sched")
    out = traced(x)                    # torch.compile(fn)(x), Triton kernels probed
    traced.launches                    # gpuopt.triton.Launch per probed launch
    traced.skipped                     # GPU kernels that ran without PTX (eager, libraries)

    prog = gpuopt.torch.compile_fused(fn)  # independent Inductor kernels fused by gpu-opt
                                           # where measured faster (gpuopt/torch_fuse.py)

Inductor compiles its Triton kernels with triton.compile, so a
gpuopt.triton.probes session sees them; the call compiles in this process
(compile_threads=1: Inductor's compile workers would not run the session's
hook), with fresh Inductor and Triton caches (a kernel taken from a cache is
never compiled, so never probed) and Triton's launcher (Inductor's static
launcher does not allocate the profile-scratch slot). PyTorch's eager and
library kernels ship no PTX: they run unchanged and are listed in `skipped`
by the name torch.profiler gives them.
"""

import contextlib
import os
import tempfile

from gpuopt.triton.probes import ProbeError, probes


@contextlib.contextmanager
def inductor_settings(cache_dir):
    """Inductor configured to compile in process, uncached, through
    Triton's launcher; restored on exit."""
    import torch
    import torch._inductor.config as config
    saved_env = {k: os.environ.get(k) for k in ("TORCHINDUCTOR_CACHE_DIR",)}
    os.environ["TORCHINDUCTOR_CACHE_DIR"] = cache_dir
    patches = {"compile_threads": 1, "fx_graph_cache": False,
               "fx_graph_remote_cache": False, "autotune_local_cache": False,
               "use_static_cuda_launcher": False}
    patches = {k: v for k, v in patches.items() if hasattr(config, k)}
    torch._dynamo.reset()
    try:
        with config.patch(patches):
            yield
    finally:
        torch._dynamo.reset()
        for k, v in saved_env.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v


def gpu_kernels(prof):
    """Names of the GPU kernels a torch.profiler run saw, in order."""
    names = []
    for e in prof.events():
        if getattr(e, "device_type", None) is not None and "CUDA" in str(e.device_type):
            names.append(e.name)
    return names


class TracedFunction:
    """`trace(fn, ...)`'s result: call it as fn."""

    def __init__(self, fn, probe, kernels, compile_options, on_error):
        self.fn = fn
        self.probe = probe
        self.kernels = kernels
        self.compile_options = dict(compile_options or {})
        self.on_error = on_error
        self.launches = []
        self.compiled = {}
        self.skipped = []
        self.events = []

    def __call__(self, *args, **kwargs):
        import torch
        from torch.profiler import ProfilerActivity, profile
        work = tempfile.mkdtemp(prefix="gpuopt-inductor-")
        session = probes(self.probe, kernels=self.kernels, on_error=self.on_error,
                         cache_dir=os.path.join(work, "triton"))
        with inductor_settings(os.path.join(work, "inductor")), session:
            compiled = torch.compile(self.fn, **self.compile_options)
            with profile(activities=[ProfilerActivity.CUDA]) as prof:
                result = compiled(*args, **kwargs)
                torch.cuda.synchronize()
        self.launches.extend(session.launches)
        self.compiled.update(session.compiled)
        self.events.extend(session.events)
        probed = {launch.name for launch in session.launches}
        seen = set()
        for name in gpu_kernels(prof):
            if name in probed or name in seen or name in session.compiled:
                continue
            if name.startswith(("Memcpy", "Memset")):  # copies, not kernels
                continue
            seen.add(name)
            self.skipped.append({"kernel": name, "reason": "no PTX (PyTorch eager or "
                                 "library kernel): ran unchanged"})
        return result


def trace(fn, probe="block_sched", kernels=None, on_error="skip", **compile_options):
    """`fn` compiled with torch.compile (options as torch.compile's), its
    Inductor-generated Triton kernels probed with `probe` (a built-in name,
    a YAML spec, or a list); see TracedFunction."""
    try:
        import torch  # noqa: F401
    except ImportError as e:
        raise ProbeError("gpuopt.torch needs PyTorch") from e
    return TracedFunction(fn, probe, kernels, compile_options, on_error)


from gpuopt.torch_fuse import FusedProgram, FuseProgramError, compile_fused  # noqa: E402,F401
