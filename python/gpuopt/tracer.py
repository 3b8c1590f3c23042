"""gpuopt-trace: run a Python program with its Triton kernels probed.

    gpuopt-trace -p block_sched [--kernel NAME] [--tracedir DIR] [--benchmark] \\
        python app.py [ARGS...]

runs the command with gpu-opt's probes on every Triton kernel it compiles
(Triton's JIT and PyTorch Inductor's, torch.compile) and writes one trace
directory per run, DIR/<time>-<pid>/:

    events.jsonl            the event log: start, each compile (probed or
                            skipped, why), each launch (kernel, grid, block,
                            stream), stop
    probe.json              the probe specs and options
    kernels/<name>/         original.ptx, probed.ptx, manifest.json, build.log
    launches/<i>-<name>/    each recorded launch as a gpu-run trace (trace.json,
                            manifest.json, MAP.npy): the analyses read it
                            (python3 -m gpuopt.block_sched DIR/launches/0-k)
    summary.json            command, exit status, GPU, kernels, launches,
                            each analysis's numbers, timings (--benchmark)
    plots/<i>-<name>.png    the analysis's plot of each kernel's first and
                            last launch (and <i>-<name>.perfetto.json for
                            block_sched and warp_sched: ui.perfetto.dev)

The program runs in a child process whose `sitecustomize` (this package's
gpuopt/_boot) opens a gpuopt.triton.probes session before the program
starts and writes the directory when it exits. Inductor is set to compile in
that process (TORCHINDUCTOR_COMPILE_THREADS=1) with fresh caches, so its
kernels are compiled, hence probed; Triton's cache for the run is private
(DIR/<run>/triton-cache). Kernels that gpu-opt cannot probe run unchanged
and are listed with the reason. PyTorch's eager kernels have no PTX and are
not seen.

A run that probes nothing (Triton not importable in the program's
Python, no Triton kernel compiled, every kernel refused) says why on stderr;
with --strict it exits with status 3 (unless the program itself failed).
-p names a built-in probe (block_sched, dmat, gmem_bytes, program_progress,
tensorop_count, warp_sched) or a YAML file, checked before the program starts.

--benchmark times each probed kernel against its original at its first
launch (both assembled from their PTX, launched through Triton's launcher on
copies of the launch's tensors, CUDA events, median of --reps).
"""

import argparse
import json
import os
import subprocess
import sys
import time

# Analyses with a uniform command line (TRACE [--plot PNG] --json J), by
# the probe map they read; those that also write a Perfetto trace.
PERFETTO = {"gpuopt.block_sched", "gpuopt.warp_sched"}
ANALYSES = {"block_sched": ("gpuopt.block_sched", True),
            "warp_sched": ("gpuopt.warp_sched", True),
            "dmat": ("gpuopt.dmat", True),
            "program_progress": ("gpuopt.progress", True),
            "gmem_bytes": ("gpuopt.totals", False),
            "tensorop_count": ("gpuopt.totals", False)}

CONFIG_VAR = "GPUOPT_TRACE_CONFIG"

# gpu-opt's built-in probes (configs/probes/*.yaml, compiled into gpu-opt):
# a -p that names none of them must be a YAML file.
BUILTIN_PROBES = ("block_sched", "dmat", "gmem_bytes", "program_progress",
                  "tensorop_count", "warp_sched")

# Exit status of --strict when nothing was probed (the program's own status
# wins when it failed).
NOTHING_PROBED = 3


def probe_specs(names):
    """Each -p as the traced process gets it: a built-in name, or a YAML
    file's absolute path. Raises ValueError naming the valid probes."""
    specs = []
    for p in names:
        if p in BUILTIN_PROBES:
            specs.append(p)
        elif os.path.isfile(p):
            specs.append(os.path.abspath(p))
        else:
            what = ("no such file" if p.endswith((".yaml", ".yml")) or os.sep in p
                    else "not a built-in probe nor a YAML file")
            raise ValueError(f"probe spec {p}: {what}; the built-in probes are "
                             f"{', '.join(BUILTIN_PROBES)}")
    return specs


def nothing_probed(summary, kernel_filter=None):
    """Why a run probed no kernel (lines for the terminal), or [] when it
    probed one."""
    if summary.get("error"):
        return [f"no probes: {summary['error']}"]
    kernels = summary.get("kernels", [])
    if any(k.get("probed") for k in kernels):
        return []
    if not kernels:
        which = (f"named by --kernel ({', '.join(kernel_filter)}) "
                 if kernel_filter else "")
        return [f"no Triton kernel {which}was compiled in the traced program "
                f"(a PyTorch eager kernel has no PTX and is not seen)"]
    return [f"kernel {k['kernel']} left unprobed: {k.get('reason')}" for k in kernels]


def boot_dir():
    return os.path.join(os.path.dirname(os.path.abspath(__file__)), "_boot")


def main(argv=None):
    ap = argparse.ArgumentParser(
        prog="gpuopt-trace", description=__doc__.splitlines()[0],
        usage="gpuopt-trace -p PROBE [options] COMMAND [ARGS...]")
    ap.add_argument("-p", "--probe", action="append", required=True,
                    help="probe spec: a built-in name (block_sched, warp_sched, gmem_bytes, "
                         "...) or a YAML file; repeat for several")
    ap.add_argument("-k", "--kernel", action="append", default=None,
                    help="probe only this Triton kernel (repeatable; default: every kernel)")
    ap.add_argument("--tracedir", default="gpuopt-traces",
                    help="where run directories go (default ./gpuopt-traces)")
    ap.add_argument("--benchmark", action="store_true",
                    help="time each probed kernel against its original")
    ap.add_argument("--reps", type=int, default=20, help="timed launches per kernel")
    ap.add_argument("--max-launches", type=int, default=10000,
                    help="launches recorded (later ones run probed, unrecorded)")
    ap.add_argument("--plots", type=int, default=2,
                    help="plots per kernel: its first and last launch (0: none)")
    ap.add_argument("--strict", action="store_true",
                    help="fail a kernel's compilation when it cannot be probed "
                         "(default: run it unprobed and log why), and exit with "
                         f"status {NOTHING_PROBED} when nothing was probed (no Triton, "
                         "no kernel compiled)")
    ap.add_argument("command", nargs=argparse.REMAINDER,
                    help="the program, e.g. python app.py")
    args = ap.parse_args(argv)
    if not args.command:
        ap.error("no command given (e.g. gpuopt-trace -p block_sched python app.py)")
    try:
        probes_ = probe_specs(args.probe)
    except ValueError as e:
        ap.error(str(e))
    run_dir = os.path.abspath(os.path.join(
        args.tracedir, time.strftime("%Y%m%d-%H%M%S") + f"-{os.getpid()}"))
    if os.path.exists(run_dir):
        ap.error(f"{run_dir} exists; a trace never overwrites files")
    os.makedirs(run_dir)
    config = {"probes": probes_, "kernels": args.kernel, "run_dir": run_dir,
              "benchmark": args.benchmark, "reps": args.reps,
              "max_launches": args.max_launches, "plots": args.plots,
              "on_error": "raise" if args.strict else "skip",
              "command": args.command}
    env = dict(os.environ)
    env[CONFIG_VAR] = json.dumps(config)
    env["PYTHONPATH"] = os.pathsep.join(
        [boot_dir()] + ([env["PYTHONPATH"]] if env.get("PYTHONPATH") else []))
    # Inductor: compile in the traced process, with caches of the run's own.
    env["TORCHINDUCTOR_COMPILE_THREADS"] = "1"
    env["TORCHINDUCTOR_FX_GRAPH_CACHE"] = "0"
    env["TORCHINDUCTOR_AUTOGRAD_CACHE"] = "0"
    env["TORCHINDUCTOR_CACHE_DIR"] = os.path.join(run_dir, "inductor-cache")
    env["TORCHINDUCTOR_USE_STATIC_CUDA_LAUNCHER"] = "0"
    env["PYTHONUNBUFFERED"] = "1"
    try:
        rc = subprocess.call(args.command, env=env)
    except OSError as e:
        print(f"gpuopt-trace: error: cannot run {args.command[0]}: {e}", file=sys.stderr)
        return 2
    summary_path = os.path.join(run_dir, "summary.json")
    if not os.path.exists(summary_path):
        print(f"gpuopt-trace: the program exited ({rc}) before its trace was written "
              f"(not a Python program, or it left through os._exit); see {run_dir}",
              file=sys.stderr)
        return rc or 2
    with open(summary_path) as f:
        summary = json.load(f)
    print(f"gpuopt-trace: {run_dir}: {len(summary['kernels'])} kernels "
          f"({sum(1 for k in summary['kernels'] if k['probed'])} probed), "
          f"{summary['launches']} launches recorded; the program's exit status {rc}")
    for t in summary.get("timings", []):
        print(f"  {t['kernel']}: original {t['original_ms'] * 1e3:.1f} us, probed "
              f"{t['probed_ms'] * 1e3:.1f} us ({100 * t['overhead']:+.1f}%)")
    why = nothing_probed(summary, args.kernel)
    for line in why:
        print(f"gpuopt-trace: {'error' if args.strict else 'warning'}: nothing probed: "
              f"{line}", file=sys.stderr)
    if why and args.strict and rc == 0:
        return NOTHING_PROBED
    return rc


# -- in the traced process ----------------------------------------------------

_SESSION = None


def start_from_env():
    """Called by gpuopt/_boot/sitecustomize.py in the traced process."""
    global _SESSION
    raw = os.environ.pop(CONFIG_VAR, None)  # not inherited by the program's children
    if not raw:
        return
    config = json.loads(raw)
    run_dir = config["run_dir"]
    log = open(os.path.join(run_dir, "events.jsonl"), "a")

    def event(**e):
        log.write(json.dumps({"time": time.time(), **e}) + "\n")
        log.flush()

    try:
        from gpuopt.triton.probes import probes
        session = probes(config["probes"], kernels=config["kernels"],
                         on_error=config["on_error"], max_launches=config["max_launches"],
                         cache_dir=os.path.join(run_dir, "triton-cache"),
                         benchmark=config["benchmark"], benchmark_reps=config["reps"])
        session.__enter__()
    except Exception as e:  # the program still runs, unprobed
        event(event="error", message=f"no probes: {e}")
        with open(os.path.join(run_dir, "summary.json"), "w") as f:
            json.dump({"command": config["command"], "error": str(e), "kernels": [],
                       "launches": 0}, f, indent=1)
        return
    _SESSION = session
    with open(os.path.join(run_dir, "probe.json"), "w") as f:
        json.dump({k: config[k] for k in ("probes", "kernels", "on_error", "benchmark")},
                  f, indent=1)
    import atexit
    atexit.register(finish, session, config, event, log)


def finish(session, config, event, log):
    run_dir = config["run_dir"]
    try:
        import torch
        if torch.cuda.is_initialized():
            torch.cuda.synchronize()
    except Exception:
        pass
    session.__exit__(None, None, None)
    for e in session.events:
        event(**e)
    kernels = []
    seen = {}
    for c in session.binaries:
        # Autotuning compiles a kernel once per configuration: NAME, NAME.1, ...
        n = seen.get(c.name, 0)
        seen[c.name] = n + 1
        name = c.name if n == 0 else f"{c.name}.{n}"
        kdir = os.path.join(run_dir, "kernels", name)
        os.makedirs(kdir, exist_ok=True)
        if c.original_ptx:
            _write(os.path.join(kdir, "original.ptx"), c.original_ptx)
        if c.probed_ptx:
            _write(os.path.join(kdir, "probed.ptx"), c.probed_ptx)
        if c.manifest:
            _write(os.path.join(kdir, "manifest.json"), json.dumps(c.manifest, indent=1))
        _write(os.path.join(kdir, "build.log"), c.build_log())
        kernels.append({"kernel": c.name, "binary": name, "probed": c.skipped is None,
                        "reason": c.skipped,
                        "launches": sum(1 for launch in session.launches if launch.probe is c)})
    launches = []
    by_kernel = {}
    for launch in session.launches:
        by_kernel.setdefault(launch.name, []).append(launch)
        ldir = os.path.join(run_dir, "launches", f"{launch.index}-{launch.name}")
        entry = {"index": launch.index, "kernel": launch.name, "grid": list(launch.grid),
                 "block": list(launch.block), "stream": launch.stream,
                 "trace": os.path.relpath(ldir, run_dir)}
        try:
            launch.save(ldir)
            entry["overflow"] = {k: v for k, v in launch.overflow.items()}
            entry["analyses"] = _analyse(ldir, launch, None)
        except Exception as e:
            entry["error"] = str(e)
        launches.append(entry)
    plots = []
    if config["plots"] > 0:
        os.makedirs(os.path.join(run_dir, "plots"), exist_ok=True)
        for name, ls in by_kernel.items():
            chosen = [ls[0]] + ([ls[-1]] if len(ls) > 1 and config["plots"] > 1 else [])
            for launch in chosen:
                ldir = os.path.join(run_dir, "launches", f"{launch.index}-{launch.name}")
                png = os.path.join(run_dir, "plots", f"{launch.index}-{launch.name}.png")
                try:
                    _analyse(ldir, launch, png)
                    if os.path.exists(png):
                        plots.append(os.path.relpath(png, run_dir))
                except Exception as e:
                    event(event="error", message=f"plot {png}: {e}")
    device = next((launch.device for launch in session.launches), None)
    summary = {"command": config["command"], "probes": config["probes"],
               "device": device, "kernels": kernels, "launches": len(session.launches),
               "dropped_launches": session.dropped_launches, "launch_list": launches,
               "plots": plots, "timings": list(session.timings.values())}
    _write(os.path.join(run_dir, "summary.json"), json.dumps(summary, indent=1))
    log.close()


def _analyse(trace_dir, launch, png):
    """Runs the analysis of each map the launch has; its numbers (JSON), and
    its plot when png is given and the analysis draws one."""
    import contextlib
    import importlib
    import io
    import tempfile
    out = {}
    modules = {}
    for name in launch.maps:
        if name in ANALYSES:
            modules.setdefault(ANALYSES[name], name)
    for (module, plots), name in modules.items():
        if png is not None and not plots:
            continue
        mod = importlib.import_module(module)
        with tempfile.TemporaryDirectory() as tmp:
            j = os.path.join(tmp, "a.json")
            argv = [trace_dir, "--json", j]
            if png is not None:
                argv += ["--plot", png]
                if module in PERFETTO:
                    argv += ["--perfetto", png[:-len(".png")] + ".perfetto.json"]
            with contextlib.redirect_stdout(io.StringIO()):
                rc = mod.main(argv)
            if rc == 0 and os.path.exists(j):
                with open(j) as f:
                    out[module.rsplit(".", 1)[1]] = json.load(f)
    return out


def _write(path, text):
    with open(path, "w") as f:
        f.write(text)


if __name__ == "__main__":
    sys.exit(main())
