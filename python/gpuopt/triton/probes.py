"""Probe Triton kernels as Triton compiles and launches them.

Inside `with gpuopt.triton.probes("block_sched") as session:` every Triton
kernel compiled (and chosen by `kernels=`) gets gpu-opt's probes, and every
launch of a probed kernel is recorded with its records:

- the PTX is rewritten in process (gpuopt.import_ptx(...).probe(...,
  buffer="last-param")) by wrapping the "ptx" stage through Triton's
  `knobs.runtime.add_stages_inspection_hook`;
- the probe buffer is Triton's profile-scratch slot, the kernel's last
  parameter: the hook sets `metadata["profile_scratch_size"]` to the bytes
  the probes need per block, so Triton's launcher allocates grid x size
  bytes through the profile allocator (which this session provides, zeroed)
  and passes them; no parameter is added;
- compiled binaries go to a private Triton cache directory, and the
  session's `instrumentation_mode` (part of Triton's cache keys in memory
  and on disk) differs from the user's, so probed binaries never reach the
  user's cache and unprobed ones are never taken for probed ones;
- each launch of a probed kernel (kernel name, grid, block, stream, buffer)
  is recorded by wrapping `CompiledKernel.run`, the one call both Triton's
  JIT and Inductor's launchers go through.

Proton's intra-kernel instrumentation uses the same slot: a session refuses
to start while it is active.
"""

import contextlib
import hashlib
import json
import os
import shutil
import tempfile
import threading
import warnings

_ACTIVE = None
_LOCK = threading.Lock()


class ProbeError(Exception):
    """A session could not start, or a kernel could not be probed."""


def _triton():
    try:
        import triton  # noqa: F401
        from triton import knobs
        from triton.compiler.compiler import CompiledKernel
        from triton.runtime import _allocation
    except ImportError as e:
        raise ProbeError(f"gpuopt.triton needs Triton 3.6 ({e}); pip install triton") from e
    return knobs, CompiledKernel, _allocation


def _proton_active(knobs):
    mode = getattr(knobs.compilation, "instrumentation_mode", "")
    if mode and not str(mode).startswith("gpuopt:"):
        return f"Triton's instrumentation_mode is '{mode}'"
    try:
        from triton.backends.nvidia.compiler import CUDABackend
        if getattr(CUDABackend, "instrumentation", None):
            return "Proton's instrumentation is loaded into the CUDA backend"
    except ImportError:
        pass
    return None


class CompiledProbe:
    """What the session did to one compiled kernel."""

    def __init__(self, name, original_ptx, probed_ptx=None, manifest=None,
                 diagnostics=(), skipped=None):
        self.name = name
        self.original_ptx = original_ptx
        self.probed_ptx = probed_ptx
        self.manifest = manifest
        self.diagnostics = list(diagnostics)
        self.skipped = skipped

    @property
    def kernel_manifest(self):
        return next(k for k in self.manifest["kernels"] if k["name"] == self.name)

    def build_log(self):
        lines = [f"kernel {self.name}: " + ("skipped: " + self.skipped if self.skipped
                                             else "probed")]
        lines += [str(d) for d in self.diagnostics]
        return "\n".join(lines) + "\n"


class Launch:
    """One launch of a probed kernel: `name`, `grid` (blocks, x y z),
    `block` (threads), `stream`; `maps` {map: records (blocks, units,
    capacity)}, `counts`, `overflow`, read back on first use; `trace()` as a
    gpuopt.trace.Trace for the analyses; `save(dir)` in gpu-run's layout."""

    def __init__(self, index, probe, grid, block, stream, buffer, device):
        self.index = index
        self.probe = probe
        self.name = probe.name
        self.grid = tuple(grid)
        self.block = tuple(block)
        self.stream = stream
        self.device = device
        self._buffer = buffer
        self._trace = None

    def trace(self):
        if self._trace is None:
            from gpuopt import probe_buffer
            from gpuopt.trace import Trace
            raw = self._buffer.cpu().numpy().tobytes()
            decoded = probe_buffer.decode(self.probe.kernel_manifest, raw, self.grid,
                                          self.block)
            info = {"kernel": self.name, "module": f"{self.name}.ptx",
                    "grid": list(self.grid), "block": list(self.block),
                    "device": self.device, "launch": self.index,
                    "stream": self.stream}
            self._trace = Trace.from_records(info, decoded, self.probe.manifest)
            self._buffer = None
        return self._trace

    @property
    def maps(self):
        return self.trace().maps

    @property
    def counts(self):
        return self.trace().counts

    @property
    def overflow(self):
        return self.trace().overflow

    def save(self, path):
        self.trace().save(path)


class probes(contextlib.ContextDecorator):
    """`with gpuopt.triton.probes(spec, kernels=None) as session:` probe the
    Triton kernels compiled inside; `session.launches` lists the launches of
    probed kernels, `session.compiled` what was done to each kernel (the
    latest binary of each name; `session.binaries` every one: autotuning
    compiles a kernel once per configuration).

    spec: a built-in probe name (block_sched, warp_sched, gmem_bytes, ...),
      a YAML spec path, or a list of them.
    kernels: names (Triton's kernel names, as in the PTX) to probe; default
      every kernel.
    on_error: "raise" (default) makes a kernel that cannot be probed fail
      its compilation with gpu-opt's message; "skip" compiles it unprobed
      and records why in `session.compiled[name].skipped`.
    max_launches: launches recorded (later ones still run probed, counted
      in `session.dropped_launches`).
    cache_dir: the private Triton cache directory (default: a new temporary
      one, removed at exit unless keep_cache).
    """

    def __init__(self, spec="block_sched", kernels=None, on_error="raise",
                 max_launches=100000, cache_dir=None, keep_cache=False,
                 keep_occupancy=True, benchmark=False, benchmark_reps=20):
        self.specs = [spec] if isinstance(spec, str) else list(spec)
        if not self.specs:
            raise ProbeError("no probe spec given")
        self.kernels = None if kernels is None else (
            [kernels] if isinstance(kernels, str) else list(kernels))
        if on_error not in ("raise", "skip"):
            raise ProbeError(f"on_error must be 'raise' or 'skip', not {on_error!r}")
        self.on_error = on_error
        self.max_launches = max_launches
        self.keep_occupancy = keep_occupancy
        self._cache_dir_arg = cache_dir
        self.keep_cache = keep_cache or cache_dir is not None
        self.benchmark = benchmark
        self.benchmark_reps = benchmark_reps
        self.timings = {}
        self.compiled = {}
        self.binaries = []
        self._by_ptx = {}
        self._by_kernel = {}
        self._devices = {}
        self.launches = []
        self.dropped_launches = 0
        self.events = []
        self._pending = threading.local()
        self._saved = None

    # -- the session's key: part of Triton's cache keys ---------------------
    @property
    def mode(self):
        key = json.dumps([self.specs, self.kernels, self.keep_occupancy])
        return "gpuopt:" + hashlib.sha256(key.encode()).hexdigest()[:16]

    def __enter__(self):
        global _ACTIVE
        knobs, CompiledKernel, _allocation = _triton()
        with _LOCK:
            if _ACTIVE is not None:
                raise ProbeError("a gpuopt.triton.probes session is already active; "
                                 "give every probe to one session (spec=[a, b])")
            why = _proton_active(knobs)
            if why:
                raise ProbeError(f"cannot probe: {why}. Proton's instrumentation and "
                                 "gpu-opt's probes both use Triton's profile-scratch slot; "
                                 "finish the Proton session first")
            import gpuopt
            if not hasattr(gpuopt, "import_ptx"):
                raise ProbeError("the gpuopt package was installed without its compiler "
                                 "extension (gpuopt._core); reinstall it with "
                                 "`pip install ./python` after building gpu-opt")
            self._gpuopt = gpuopt
            cache_dir = self._cache_dir_arg or tempfile.mkdtemp(prefix="gpuopt-triton-")
            os.makedirs(cache_dir, exist_ok=True)
            self.cache_dir = cache_dir
            cache_dict = knobs.cache.__dict__
            self._saved = {
                "hook": knobs.runtime.add_stages_inspection_hook,
                "mode": knobs.compilation.instrumentation_mode,
                "cache_override": cache_dict.get("dir", _MISSING),
                "cache_env": os.environ.get("TRITON_CACHE_DIR"),
                "mode_env": os.environ.get("TRITON_INSTRUMENTATION_MODE"),
                "allocator": _allocation._profile_allocator.get(),
                "run": CompiledKernel.__dict__["run"],
            }
            prev_hook = self._saved["hook"]
            session = self

            def stages_hook(backend, stages, options, language, capability):
                if prev_hook is not None:
                    prev_hook(backend, stages, options, language, capability)
                make_ptx = stages.get("ptx")
                if make_ptx is None:
                    return

                def ptx_stage(src, metadata):
                    return session._rewrite(make_ptx(src, metadata), metadata)

                stages["ptx"] = ptx_stage

            original_run = self._saved["run"]

            def run(ck):
                launcher = original_run.fget(ck)
                probe_md = getattr(ck.metadata, "gpuopt_probe", None)
                if not probe_md or probe_md.get("mode") != session.mode:
                    return launcher

                def runner(gx, gy, gz, stream, *rest):
                    session._pending.buffer = None
                    launcher(gx, gy, gz, stream, *rest)
                    launch = session._record(ck, (gx, gy, gz), stream,
                                             session._pending.buffer)
                    if launch is not None and session.benchmark:
                        session._benchmark(ck, launch, launcher, (gx, gy, gz, stream), rest)

                return runner

            knobs.runtime.add_stages_inspection_hook = stages_hook
            knobs.compilation.instrumentation_mode = self.mode
            knobs.cache.dir = cache_dir
            _allocation.set_profile_allocator(self._allocate)
            CompiledKernel.run = property(run)
            _ACTIVE = self
            self.events.append({"event": "start", "specs": self.specs,
                                "kernels": self.kernels, "cache_dir": cache_dir})
        return self

    def __exit__(self, *exc):
        global _ACTIVE
        knobs, CompiledKernel, _allocation = _triton()
        with _LOCK:
            s = self._saved
            knobs.runtime.add_stages_inspection_hook = s["hook"]
            knobs.compilation.instrumentation_mode = s["mode"]
            if s["cache_override"] is _MISSING:
                knobs.cache.__dict__.pop("dir", None)
            else:
                knobs.cache.__dict__["dir"] = s["cache_override"]
            for var, old in (("TRITON_CACHE_DIR", s["cache_env"]),
                             ("TRITON_INSTRUMENTATION_MODE", s["mode_env"])):
                if old is None:
                    os.environ.pop(var, None)
                else:
                    os.environ[var] = old
            _allocation._profile_allocator.set(s["allocator"])
            CompiledKernel.run = s["run"]
            _ACTIVE = None
            self.events.append({"event": "stop", "launches": len(self.launches),
                                "dropped_launches": self.dropped_launches})
        if not self.keep_cache:
            shutil.rmtree(self.cache_dir, ignore_errors=True)
        return False

    # -- compile time ---------------------------------------------------------
    def _rewrite(self, ptx, metadata):
        name = metadata.get("name")
        if self.kernels is not None and name not in self.kernels:
            return ptx
        if metadata.get("profile_scratch_size"):
            return self._refuse(name, ptx, "the kernel already uses Triton's profile-scratch "
                                "slot (Proton instrumentation?)")
        try:
            module = self._gpuopt.import_ptx(ptx, filename=f"{name}.ptx")
            probed = module.probe(self.specs, kernels=[name], buffer="last-param",
                                  keep_occupancy=self.keep_occupancy,
                                  ptxas=_triton_ptxas())
            new_ptx = probed.to_ptx()
            manifest = probed.manifest
        except self._gpuopt.Error as e:
            return self._refuse(name, ptx, str(e))
        kernel = next(k for k in manifest["kernels"] if k["name"] == name)
        scratch = kernel["probe_scratch"]
        metadata["profile_scratch_size"] = scratch["bytes_per_block"]
        metadata["profile_scratch_align"] = max(int(metadata.get("profile_scratch_align") or 1),
                                                scratch["align"])
        # In the binary's metadata too: a later session of the same specs
        # takes the binary from Triton's in-memory cache without compiling.
        metadata["gpuopt_probe"] = {"mode": self.mode, "specs": self.specs,
                                    "manifest": manifest}
        probe = CompiledProbe(name, ptx, new_ptx, manifest, getattr(probed, "diagnostics", ()))
        self._add_binary(probe)
        self.events.append({"event": "compile", "kernel": name, "probed": True,
                            "bytes_per_block": scratch["bytes_per_block"]})
        return new_ptx

    def _refuse(self, name, ptx, why):
        self.events.append({"event": "compile", "kernel": name, "probed": False,
                            "reason": why})
        if self.on_error == "raise":
            raise ProbeError(f"cannot probe Triton kernel '{name}': {why}")
        warnings.warn(f"gpuopt: kernel '{name}' left unprobed: {why}")
        self._add_binary(CompiledProbe(name, ptx, skipped=why))
        return ptx

    def _add_binary(self, probe):
        """One compiled binary. Several may share a kernel name (autotuning
        compiles a kernel once per configuration); `compiled[name]` is the
        latest, `binaries` all, and a launch finds its own by its PTX."""
        self.binaries.append(probe)
        self.compiled[probe.name] = probe
        if probe.probed_ptx is not None:
            self._by_ptx[_digest(probe.probed_ptx)] = probe

    def _probe_of(self, ck):
        """The CompiledProbe of a launched binary; its PTX is hashed at its
        first launch only."""
        probe = self._by_kernel.get(ck)
        if probe is not None:
            return probe
        ptx = ck.asm.get("ptx")
        probe = self._by_ptx.get(_digest(ptx)) if ptx else None
        if probe is None:
            # Compiled by an earlier session of the same specs: Triton took
            # it from its cache, with the manifest in its metadata.
            probe = CompiledProbe(ck.name, None, ptx, ck.metadata.gpuopt_probe["manifest"])
            self._add_binary(probe)
        self._by_kernel[ck] = probe
        return probe

    def _device(self):
        """The current GPU as a trace's "device" (read once per device)."""
        import torch
        index = torch.cuda.current_device()
        if index not in self._devices:
            dev = torch.cuda.get_device_properties(index)
            self._devices[index] = {"name": dev.name,
                                    "multiprocessors": dev.multi_processor_count,
                                    "compute_capability": f"{dev.major}.{dev.minor}"}
        return self._devices[index]

    # -- launch time ----------------------------------------------------------
    def _allocate(self, size, align, stream):
        try:
            import torch
        except ImportError as e:
            raise ProbeError("gpuopt.triton.probes allocates probe buffers with "
                             "PyTorch; pip install torch") from e
        # Zeroed by a memset in the launch's stream order (the runtime's
        # contract: records that stay zero are not stored), not by a fill
        # kernel, which would show among the program's kernels.
        current = torch.cuda.current_stream()
        if stream in (None, 0) or stream == current.cuda_stream:
            buf = torch.empty(size, dtype=torch.uint8, device="cuda")
        else:
            with torch.cuda.stream(torch.cuda.ExternalStream(stream)):
                buf = torch.empty(size, dtype=torch.uint8, device="cuda")
        from gpuopt import cuda
        try:
            cuda.memset_async(buf.data_ptr(), 0, size, stream or current.cuda_stream)
        except cuda.CudaError:
            buf.zero_()
        if buf.data_ptr() % max(align, 1):
            raise ProbeError(f"probe buffer at {buf.data_ptr():#x} is not {align}-byte aligned")
        self._pending.buffer = buf
        return buf

    def _record(self, ck, grid, stream, buffer):
        probe = self._probe_of(ck)
        if len(self.launches) >= self.max_launches:
            self.dropped_launches += 1
            return
        num_ctas = getattr(ck.metadata, "num_ctas", 1) or 1
        gx, gy, gz = grid
        block = (ck.metadata.num_warps * 32, 1, 1)
        launch = Launch(len(self.launches), probe, (gx * num_ctas, gy, gz), block,
                        int(stream or 0), buffer, self._device())
        self.launches.append(launch)
        self.events.append({"event": "launch", "kernel": ck.name, "index": launch.index,
                            "grid": list(launch.grid), "block": list(block),
                            "stream": launch.stream})
        return launch

    def _benchmark(self, ck, launch, launcher, grid_stream, rest):
        """Times the probed kernel against its original at its first
        launch: both assembled by gpu-opt's ptxas call from the PTX before
        and after probing, launched through Triton's launcher on clones of
        the launch's tensors (the program's own tensors are not touched),
        CUDA events, warm-up, median."""
        if ck.name in self.timings or launch.probe.original_ptx is None:
            return
        import torch
        gx, gy, gz, stream = grid_stream
        packed, args = rest[1], rest[5:]
        chip = _ptx_target(launch.probe.probed_ptx)
        device = torch.cuda.current_device()
        from triton.runtime import driver
        functions = {}
        for which, ptx in (("original", launch.probe.original_ptx),
                           ("probed", launch.probe.probed_ptx)):
            cubin = self._gpuopt.import_ptx(ptx, filename=f"{ck.name}.{which}.ptx").to_cubin(chip)
            functions[which] = driver.active.utils.load_binary(
                ck.name, cubin, ck.metadata.shared, device)[1]
        clones = [a.clone() if torch.is_tensor(a) else a for a in args]
        saved_pending = getattr(self._pending, "buffer", None)
        s = torch.cuda.ExternalStream(stream) if stream else torch.cuda.default_stream()
        times = {k: [] for k in functions}
        for rep in range(3 + self.benchmark_reps):
            for which, fn in functions.items():
                start = torch.cuda.Event(enable_timing=True)
                end = torch.cuda.Event(enable_timing=True)
                start.record(s)
                launcher(gx, gy, gz, stream, fn, packed, None, None, None, *clones)
                end.record(s)
                end.synchronize()
                if rep >= 3:
                    times[which].append(start.elapsed_time(end))
        self._pending.buffer = saved_pending
        med = {k: sorted(v)[len(v) // 2] for k, v in times.items()}
        self.timings[ck.name] = {"kernel": ck.name, "grid": list(launch.grid),
                                 "original_ms": med["original"], "probed_ms": med["probed"],
                                 "overhead": med["probed"] / med["original"] - 1.0,
                                 "reps": self.benchmark_reps}

    def launches_of(self, name):
        return [launch for launch in self.launches if launch.name == name]


_MISSING = object()


def _digest(text):
    return hashlib.sha256(text.encode()).hexdigest()


def _ptx_target(ptx):
    import re
    m = re.search(r"^\s*\.target\s+(sm_\w+)", ptx or "", re.MULTILINE)
    return m.group(1) if m else "sm_90a"


def _triton_ptxas():
    """Triton's own ptxas (the one that assembles the probed PTX), for
    gpu-opt's occupancy checks; None lets gpu-opt find one."""
    try:
        from triton import knobs
        return knobs.nvidia.ptxas.path
    except Exception:
        return None


def instrument(kernel_or_fn, probe="block_sched", **options):
    """A probed version of a Triton kernel or of a function that launches
    Triton kernels.

    For a kernel (`@triton.jit`): `pk = instrument(kernel)`;
    `pk[grid](*args)` launches it probed; `pk.launches` holds every launch
    since. For a function: `pf = instrument(fn)`; `pf(*args)` calls it with
    its Triton kernels probed and returns its result; `pf.launches`,
    `pf.compiled` as a session's. Options as `probes`."""
    try:
        from triton.runtime.jit import JITFunction
    except ImportError as e:
        raise ProbeError(f"gpuopt.triton needs Triton ({e})") from e
    fn = getattr(kernel_or_fn, "fn", None) if not isinstance(kernel_or_fn, JITFunction) else None
    if isinstance(kernel_or_fn, JITFunction) or isinstance(fn, JITFunction):
        return InstrumentedKernel(kernel_or_fn, probe, options)
    if not callable(kernel_or_fn):
        raise ProbeError(f"instrument() takes a Triton kernel or a function, not "
                         f"{type(kernel_or_fn).__name__}")
    return InstrumentedFunction(kernel_or_fn, probe, options)


class _Instrumented:
    def __init__(self, probe, options):
        self.probe = probe
        self.options = options
        self.launches = []
        self.compiled = {}

    def _session(self, kernels=None):
        opts = dict(self.options)
        if kernels is not None and "kernels" not in opts:
            opts["kernels"] = kernels
        return probes(self.probe, **opts)

    def _collect(self, session):
        self.launches.extend(session.launches)
        self.compiled.update(session.compiled)


class InstrumentedKernel(_Instrumented):
    def __init__(self, kernel, probe, options):
        super().__init__(probe, options)
        self.kernel = kernel

    def __getitem__(self, grid):
        def launch(*args, **kwargs):
            session = self._session()
            with session:
                result = self.kernel[grid](*args, **kwargs)
            self._collect(session)
            return result
        return launch


class InstrumentedFunction(_Instrumented):
    def __init__(self, fn, probe, options):
        super().__init__(probe, options)
        self.fn = fn

    def __call__(self, *args, **kwargs):
        session = self._session()
        with session:
            result = self.fn(*args, **kwargs)
        self._collect(session)
        return result
