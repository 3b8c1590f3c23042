"""Horizontal fusion of the Triton kernels of a torch.compile program.

    prog = gpuopt.torch.compile_fused(fn)     # options as torch.compile's
    out = prog(*args)                         # as torch.compile(fn)(*args)
    prog.report()                             # pairs found, decisions, times

An opt-in pass over the compiled graph as it runs, on Inductor's kernels
(combo kernels off):

1. plan (first call): the program runs once to compile and autotune, then
   once more, on copies of the inputs, with every Triton launch recorded (kernel, grid, stream, the
   tensors bound to each parameter) and torch.profiler's list of the GPU
   work in order. Two launches are a pair when they are adjacent on the GPU
   (no other kernel, copy or memset between them, which the recorder would
   not see), on one stream, and independent: neither writes storage the
   other reads or writes. What a kernel writes comes from Inductor's
   parameter names (`out_ptr*`, `in_out_ptr*` written, `in_ptr*` read); a
   pointer parameter named otherwise counts as written.
2. replace: while the program runs, the first launch of a pair is held
   back and, when the second arrives (the same kernels, at the same place
   in the launch sequence, still independent for the tensors of this
   call), both go to a gpuopt.triton.fuse fused kernel: built once from
   their PTX (launch-agnostic), checked bit for bit against the kernels
   apart on first use, and, measured (by default where the runtime finds a
   GPU; measure=False: not), kept only where it is faster than the two
   launches apart (per launch shape): under strategy="auto" the model's top
   candidates are measured whether or not it predicts a gain. The second call builds,
   checks and measures on copies of its inputs and returns what the
   unchanged program computes. Anything unexpected
   (another launch, a failed check) launches the held kernel as it was.
3. choose (compare_combo=True, plain functions): the program is also
   compiled with Inductor's combo kernels, and the three variants (combo
   kernels off, off with gpu-opt's fused kernels, on) are timed end to end
   on copies of the inputs; later calls run the fastest. So the pass never
   keeps a variant that measured slower than Inductor's best of combo on
   and off.

CUDA graph modes (mode="reduce-overhead", "max-autotune") replay recorded
launches and are refused.
"""

import contextlib
import re
import statistics
import threading

_TLS = threading.local()
_PATCH_LOCK = threading.RLock()

_PTR_NAME = re.compile(r"^(in_out_ptr|out_ptr|in_ptr)\d+$")


class FuseProgramError(Exception):
    pass


# ---------------------------------------------------------------------------
# Planning: pure functions over recorded launches (testable without a GPU)
# ---------------------------------------------------------------------------

class Recorded:
    """One recorded launch: kernel `name`, `key` (the binary's hash),
    `stream`, and `reads`/`writes`: [(storage address, bytes)]."""

    def __init__(self, name, key, stream, reads, writes):
        self.name, self.key, self.stream = name, key, stream
        self.reads, self.writes = list(reads), list(writes)


def _overlap(a, b):
    return any(p < q + m and q < p + n for p, n in a for q, m in b)


def independent(a, b):
    """Neither launch writes storage the other reads or writes."""
    return not (_overlap(a.writes, b.reads) or _overlap(a.writes, b.writes)
                or _overlap(b.writes, a.reads))


def adjacent_on_gpu(launch_names, gpu_ops):
    """For each i, whether launches i and i+1 ran back to back: walking the
    GPU work in order (`gpu_ops`: names of kernels, copies, memsets), launch
    i+1 is the next op after launch i. Launches the list does not show are
    never adjacent."""
    out = [False] * max(len(launch_names) - 1, 0)
    j = 0
    prev_matched_at = None
    for k, op in enumerate(gpu_ops):
        if j < len(launch_names) and op == launch_names[j]:
            if j > 0 and prev_matched_at is not None and prev_matched_at == k - 1:
                out[j - 1] = True
            prev_matched_at = k
            j += 1
    return out


def plan_pairs(recorded, gpu_ops):
    """Positions (i, i+1) of launches to fuse, greedily in launch order:
    adjacent on the GPU, one stream, independent. Returns (pairs, reasons)
    where reasons[i] says why launches i and i+1 are not a pair."""
    adj = adjacent_on_gpu([r.name for r in recorded], gpu_ops)
    pairs, reasons = [], {}
    i = 0
    while i + 1 < len(recorded):
        a, b = recorded[i], recorded[i + 1]
        why = None
        if not adj[i]:
            why = "other GPU work between them"
        elif a.stream != b.stream:
            why = "different streams"
        elif not independent(a, b):
            why = "dependent (one writes what the other reads or writes)"
        if why is None:
            pairs.append((i, i + 1))
            i += 2
        else:
            reasons[i] = why
            i += 1
    return pairs, reasons


# ---------------------------------------------------------------------------
# Launch interception
# ---------------------------------------------------------------------------

def _storage(t):
    s = t.untyped_storage()
    return (s.data_ptr(), max(s.nbytes(), 1))


def record_of(compiled, stream, bound):
    """A Recorded from a CompiledKernel's launch arguments."""
    import torch
    sig = getattr(compiled.src, "signature", None) or {}
    reads, writes = [], []
    names = [n for n, ty in sig.items() if ty != "constexpr"]
    values = [v for (n, ty), v in zip(sig.items(), bound) if ty != "constexpr"]
    for name, value in zip(names, values):
        if not isinstance(value, torch.Tensor):
            continue
        st = _storage(value)
        m = _PTR_NAME.match(name)
        if m is None or m.group(1) != "in_ptr":
            writes.append(st)
        if m is None or m.group(1) != "out_ptr":
            reads.append(st)
    return Recorded(compiled.name, compiled.hash, stream, reads, writes)


_INSTALLED = False


def install_dispatch():
    """Makes every Triton launch of this process pass through this module:
    CompiledKernel.run returns a runner that hands the launch to this
    thread's handler while one is set (`_intercepting`) and launches it
    otherwise. Inductor's launchers fetch `run` once, when they are made, so
    this must happen before the program is compiled; it stays for the
    process (one Python call per launch when no handler is set)."""
    global _INSTALLED
    from triton.compiler import compiler as tc
    with _PATCH_LOCK:
        if _INSTALLED:
            return
        run_prop = tc.CompiledKernel.__dict__["run"]

        def fget(ck):
            launcher = run_prop.fget(ck)

            def runner(*a, **kw):
                h = getattr(_TLS, "handler", None)
                if h is None or getattr(_TLS, "inside", False):
                    return launcher(*a, **kw)
                return h(ck, launcher, a, kw)
            return runner

        tc.CompiledKernel.run = property(fget)
        _INSTALLED = True


@contextlib.contextmanager
def _intercepting(handler):
    """While active, this thread's Triton launches go to
    handler(compiled, launcher, args, kwargs) (except those made from inside
    the handler's `_inside()`)."""
    install_dispatch()
    old = getattr(_TLS, "handler", None)
    _TLS.handler = handler
    try:
        yield
    finally:
        _TLS.handler = old


@contextlib.contextmanager
def _inside():
    old = getattr(_TLS, "inside", False)
    _TLS.inside = True
    try:
        yield
    finally:
        _TLS.inside = old


class Pair:
    def __init__(self, first, second, key_a, key_b, names, fuser):
        self.first, self.second = first, second
        self.key_a, self.key_b = key_a, key_b
        self.names = names
        self.fuser = fuser
        self.disabled = None
        self.fused = self.apart = 0


class _CallState:
    def __init__(self):
        self.pos = 0
        self.pending = None


# ---------------------------------------------------------------------------
# The compiled program
# ---------------------------------------------------------------------------

def clone_tensors(obj):
    """obj with every tensor in it (lists, tuples, dict values) cloned."""
    import torch
    if isinstance(obj, torch.Tensor):
        return obj.clone()
    if isinstance(obj, (list, tuple)):
        return type(obj)(clone_tensors(o) for o in obj)
    if isinstance(obj, dict):
        return {k: clone_tensors(v) for k, v in obj.items()}
    return obj


def _own_code(fn, suffix):
    """fn with a code object of its own, so that Dynamo compiles and caches
    it apart from fn (Dynamo keys its cache on the code object)."""
    import types
    code = fn.__code__.replace(co_name=fn.__code__.co_name + suffix)
    g = types.FunctionType(code, fn.__globals__, fn.__name__ + suffix, fn.__defaults__,
                           fn.__closure__)
    g.__kwdefaults__ = fn.__kwdefaults__
    return g


class FusedProgram:
    """`compile_fused(fn, ...)`'s result; call it as fn."""

    def __init__(self, fn, strategy="auto", measure=None, verify=True, compare_combo=True,
                 reps=20, warmup=3, **compile_options):
        import torch
        mode = compile_options.get("mode")
        if mode in ("reduce-overhead", "max-autotune"):
            raise FuseProgramError(f"mode={mode!r} replays CUDA graphs, whose launches cannot "
                                   "be replaced; use the default mode or "
                                   "max-autotune-no-cudagraphs")
        install_dispatch()  # before anything is compiled
        user = dict(compile_options.pop("options", None) or {})
        self.fn = fn
        self.strategy, self.measure, self.verify = strategy, measure, verify
        self.reps, self.warmup = reps, warmup
        # The fused variant: combo kernels off, and Triton's launcher
        # (Inductor's static launcher does not go through CompiledKernel.run).
        self.compiled = torch.compile(
            fn, options=dict(user, combo_kernels=False, use_static_cuda_launcher=False),
            **compile_options)
        # Inductor as it is, combo kernels off and on, each with a code
        # object of its own (Dynamo caches per code object).
        self.plain = self.combo = None
        if compare_combo and hasattr(fn, "__code__"):
            self.plain = torch.compile(_own_code(fn, "_plain"),
                                       options=dict(user, combo_kernels=False), **compile_options)
            self.combo = torch.compile(_own_code(fn, "_combo"),
                                       options=dict(user, combo_kernels=True), **compile_options)
        self.pairs = None
        self.reasons = {}
        self.launch_names = []
        self.choice = None
        self.times_ms = {}
        self.errors = []

    # -- planning ---------------------------------------------------------
    def _plan(self, args, kwargs):
        import torch
        from torch.profiler import ProfilerActivity, profile

        from gpuopt.triton.fuse import FusedTriton
        recorded, compiled = [], []

        def record(ck, launcher, a, kw):
            recorded.append(record_of(ck, a[3], a[9:]))
            compiled.append(ck)
            return launcher(*a, **kw)

        with profile(activities=[ProfilerActivity.CUDA]) as prof:
            with _intercepting(record):
                out = self.compiled(*args, **kwargs)
            torch.cuda.synchronize()
        events = sorted((e for e in prof.events()
                         if "CUDA" in str(getattr(e, "device_type", ""))),
                        key=lambda e: e.time_range.start)
        gpu_ops = [e.name for e in events]
        pairs, self.reasons = plan_pairs(recorded, gpu_ops)
        self.launch_names = [r.name for r in recorded]
        self.pairs = {}
        for i, j in pairs:
            fuser = FusedTriton([compiled[i], compiled[j]], strategy=self.strategy,
                                verify=self.verify, measure=self.measure, fallback=True,
                                reps=self.reps, warmup=self.warmup)
            self.pairs[i] = Pair(i, j, recorded[i].key, recorded[j].key,
                                 (recorded[i].name, recorded[j].name), fuser)
        return out

    # -- running with the pairs replaced ---------------------------------
    def _run_fused(self, args, kwargs):
        from gpuopt.triton.fuse import FuseError, KernelLaunch, VerificationError
        state = _CallState()

        def flush():
            if state.pending is not None:
                _, ck, launcher, a, kw = state.pending
                state.pending = None
                with _inside():
                    launcher(*a, **kw)

        def handler(ck, launcher, a, kw):
            pos = state.pos
            state.pos += 1
            if state.pending is not None:
                pair, ck_a, launcher_a, a_a, kw_a = state.pending
                launches = None
                if (pos == pair.second and ck.hash == pair.key_b and a[3] == a_a[3]
                        and independent(record_of(ck_a, a_a[3], a_a[9:]),
                                        record_of(ck, a[3], a[9:]))):
                    try:
                        launches = [KernelLaunch(None, ck_a, a_a[:3], a_a[3], a_a[9:]),
                                    KernelLaunch(None, ck, a[:3], a[3], a[9:])]
                    except FuseError as e:  # nothing launched yet: both apart
                        pair.disabled = str(e)
                        self.errors.append(str(e))
                if launches is not None:
                    state.pending = None
                    try:
                        with _inside():
                            before = pair.fuser.stats["fused"]
                            pair.fuser.launch(launches, a[3])
                        if pair.fuser.stats["fused"] > before:
                            pair.fused += 1
                        else:
                            pair.apart += 1
                    except VerificationError as e:
                        # The tensors hold the kernels' own results again.
                        pair.disabled = str(e)
                        self.errors.append(str(e))
                    return None
                flush()
            pair = self.pairs.get(pos)
            if pair is not None and pair.disabled is None and ck.hash == pair.key_a:
                state.pending = (pair, ck, launcher, a, kw)
                return None
            with _inside():
                return launcher(*a, **kw)

        try:
            with _intercepting(handler):
                out = self.compiled(*args, **kwargs)
        finally:
            flush()
        return out

    # -- choosing ------------------------------------------------------------
    def _time(self, fn, args, kwargs):
        import torch
        args, kwargs = clone_tensors(args), clone_tensors(kwargs)
        for _ in range(self.warmup):
            fn(*args, **kwargs)
        torch.cuda.synchronize()
        samples = []
        for _ in range(self.reps):
            s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            s.record()
            fn(*args, **kwargs)
            e.record()
            e.synchronize()
            samples.append(s.elapsed_time(e))
        return statistics.median(samples)

    def _choose(self, args, kwargs):
        variants = {"fused": lambda *a, **k: self._run_fused(a, k)}
        if self.plain is not None:
            variants.update(plain=self.plain, combo=self.combo)
        else:
            variants["unfused"] = self.compiled
        for name, fn in variants.items():  # compile and warm each
            fn(*clone_tensors(args), **clone_tensors(kwargs))
        # Interleaved rounds, so that clocks and caches treat them alike.
        samples = {k: [] for k in variants}
        for _ in range(3):
            for name, fn in variants.items():
                samples[name].append(self._time(fn, args, kwargs))
        self.times_ms = {k: statistics.median(v) for k, v in samples.items()}
        fused_any = any(p.fused for p in self.pairs.values())
        candidates = dict(self.times_ms)
        if not fused_any:
            candidates.pop("fused")
        self.choice = min(candidates, key=candidates.get)

    def __call__(self, *args, **kwargs):
        if self.pairs is None:
            out = self.compiled(*args, **kwargs)  # compiles and autotunes, as torch.compile
            # Planned on copies: a program may update its inputs in place.
            self._plan(clone_tensors(args), clone_tensors(kwargs))
            return out
        if self.choice is None:
            # Each pair is built, checked and measured on copies of the
            # inputs; this call's results come from the program unchanged.
            self._run_fused(clone_tensors(args), clone_tensors(kwargs))
            if self.pairs:
                self._choose(args, kwargs)
            else:
                self.choice = "plain" if self.plain is not None else "unfused"
            return self.compiled(*args, **kwargs)
        if self.choice == "fused":
            return self._run_fused(args, kwargs)
        if self.choice == "combo":
            return self.combo(*args, **kwargs)
        if self.choice == "plain":
            return self.plain(*args, **kwargs)
        return self.compiled(*args, **kwargs)

    def report(self):
        """The pairs found, each pair's decisions, the variants' end-to-end
        times and the choice."""
        pairs = []
        for p in (self.pairs or {}).values():
            pairs.append({"launches": [p.first, p.second], "kernels": list(p.names),
                          "fused_launches": p.fused, "apart_launches": p.apart,
                          "disabled": p.disabled,
                          "decisions": [{k: v for k, v in d.items() if k != "remarks"}
                                        for d in p.fuser.decisions.values()]})
        return {"launches": self.launch_names, "pairs": pairs,
                "not_paired": {str(k): v for k, v in self.reasons.items()},
                "times_ms": self.times_ms, "choice": self.choice, "errors": self.errors}


def compile_fused(fn, strategy="auto", measure=None, verify=True, compare_combo=True, **options):
    """`fn` compiled by torch.compile (options as its own) with independent
    adjacent Triton kernels replaced by gpu-opt fused kernels where that
    measures faster; see the module's description. `measure` is
    gpuopt.triton.fuse's: None (on where the runtime finds a GPU), True or
    False."""
    return FusedProgram(fn, strategy=strategy, measure=measure, verify=verify,
                        compare_combo=compare_combo, **options)
