#!/usr/bin/env python3
"""Serving workloads fused horizontally: build, check, time, report.

Subcommands:
  prepare  (no GPU) for every workload of workloads.py, writes its kernels'
           gpu-run run spec OUT/<workload>/kernels.json (inputs filled from
           fixed seeds: no data files) and runs gpu-opt --hfuse for every row
           of the variant
           table (thread split, interleave at several ratios, dynamic, auto,
           and the rows of options being added), each fused kernel checked by
           ptxas -v. Writes OUT/workloads.json (workloads, kernels, variants
           with their options, command, status, resources) and the fused
           PTX + manifests; a variant gpu-opt refuses is recorded with its
           message.
  measure  (GPU: gpu-run, numpy and the gpuopt package; no LLVM) checks every
           fused variant's outputs bit for bit against the kernels run apart
           (gpuopt.verify), then times, in interleaved rounds after warm-up
           (gpu-run --spec, as gpuopt.bench): each kernel alone, serial, two
           streams and a CUDA graph in the kernels' order and reversed, and
           every variant that passed. Prints per workload the times, the best
           baseline, the limit max(T_i), each variant's speedup over the best
           baseline and the share of the gap (best baseline - limit) it
           captures; writes --json.
  report   (no GPU) renders the markdown report from measure's JSON
           (docs/results/workloads-<gpu>.md by default).

  python3 benchmarks/workloads/run.py prepare --out build/workloads
  python3 benchmarks/workloads/run.py measure --out build/workloads --json results.json
  python3 benchmarks/workloads/run.py report --json results.json

Paths in the specs are relative to the repository root, where measure runs:
carry build/workloads (a few MiB), build/bin/gpu-run and the working tree.
"""

import argparse
import concurrent.futures
import datetime
import json
import math
import os
import re
import shlex
import shutil
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(ROOT, "python"))

import workloads as wl  # noqa: E402
from gpuopt.launch_args import MappingError, args_bytes, map_args, pack_by_bytes  # noqa: E402
from gpuopt.tools import ToolNotFound, find_tool, run_watchdog  # noqa: E402

BASE_MODES = ("serial", "concurrent", "graph")
MODE_NAMES = {"serial": "serial", "concurrent": "2 streams", "graph": "graph"}


def log(msg):
    print(msg, flush=True)


def rel(path):
    return os.path.relpath(os.path.abspath(path), ROOT)


def tool(name, explicit):
    """A tool: the given path, $GPUOPT_BIN_DIR, PATH, else build/bin."""
    try:
        return find_tool(name, explicit)
    except ToolNotFound:
        if explicit:
            raise
        path = os.path.join(ROOT, "build", "bin", name)
        if os.access(path, os.X_OK):
            return path
        raise


def safe(name):
    return re.sub(r"[^A-Za-z0-9_]", "_", name)


# Prepare ---------------------------------------------------------------------------


def expand(options, grids, threads=None, regs=None):
    """A variant's options with {ratio:KIND}, {replicas:KIND} and
    {setmaxnreg:KIND} expanded (workloads.py) for kernels of these grids
    (blocks), block sizes and registers; None when one does not apply."""
    out = options
    copies = None
    for key in ("ratio", "replicas", "setmaxnreg"):
        for kind in re.findall(r"\{%s:(\w+)\}" % key, options):
            if key == "ratio":
                r = wl.ratio(kind, grids)
            elif key == "replicas":
                r = copies = wl.replicas(kind, threads or [])
            else:
                r = wl.setmaxnreg(kind, threads or [], regs, copies)
            if r is None:
                return None
            out = out.replace("{%s:%s}" % (key, kind), ",".join(map(str, r)))
    return out


def variant_rows(extra=()):
    """The variant table: workloads.VARIANTS, EXTRA_VARIANTS and --variant
    NAME:STRATEGY:OPTIONS rows."""
    rows = list(wl.VARIANTS) + list(wl.EXTRA_VARIANTS)
    for item in extra:
        name, _, rest = item.partition(":")
        strategy, _, options = rest.partition(":")
        if not name or not strategy:
            raise ValueError(f"--variant {item!r}: expected NAME:STRATEGY[:OPTIONS]")
        rows.append((name, strategy, options))
    names = [r[0] for r in rows]
    dup = sorted({n for n in names if names.count(n) > 1})
    if dup:
        raise ValueError(f"variant names used twice: {', '.join(dup)}")
    return rows


def dims(v):
    v = list(v)
    while len(v) > 1 and v[-1] == 1:
        v.pop()
    return "x".join(map(str, v))


def hfuse_options(workload, strategy, options, name, profile=None):
    """gpu-opt's --hfuse value; auto also gets the chip, when given the
    kernels' measured profile, and require=true (a decline fails and is
    recorded, rather than writing the kernels apart)."""
    ks = workload["kernels"]
    auto = strategy == "auto"
    return " ".join(filter(None, [
        f"strategy={strategy}",
        "kernels=" + ",".join(k["kernel"] for k in ks),
        "blocks=" + ",".join(dims(k["block"]) for k in ks),
        "grids=" + ",".join(dims(k["grid"]) for k in ks),
        "smem=" + ",".join(str(k["smem"]) for k in ks),
        options, f"name={name}", f"chip={wl.SM90}" if auto else "",
        f"profile={profile}" if auto and profile else "",
        "require=true" if auto else ""]))


def load_profiles(path):
    """{workload: gpu-run report of its kernels alone with the occupancy
    sweep} from an earlier measure's JSON."""
    with open(path) as f:
        result = json.load(f)
    return {w["name"]: w["profile"] for w in result.get("workloads", []) if w.get("profile")}


def ptxas_resources(ptxas, ptx, timeout=120):
    """{registers, spill_stores, spill_loads, static_smem} of the PTX's entry
    from ptxas -v, or {"error": ...}."""
    with tempfile.TemporaryDirectory() as d:
        r = run_watchdog([ptxas, f"-arch={wl.SM90}", "-v", ptx, "-o",
                          os.path.join(d, "k.cubin")], timeout)
    if r.hung or r.rc != 0:
        return {"error": r.message()}
    text = r.err + r.out
    out = {}
    m = re.search(r"Used (\d+) registers", text)
    if m:
        out["registers"] = int(m.group(1))
    m = re.search(r"(\d+) bytes spill stores, (\d+) bytes spill loads", text)
    if m:
        out["spill_stores"], out["spill_loads"] = int(m.group(1)), int(m.group(2))
    m = re.search(r"(\d+) bytes smem", text)
    out["static_smem"] = int(m.group(1)) if m else 0
    return out


REGS_PER_SUBPARTITION = 16384  # an sm_90 SM: 4 x 16K registers
SMEM_PER_BLOCK = 227 * 1024


def launch_problem(regs, threads, smem):
    """Why a block of `threads` threads with `regs` registers each and `smem`
    bytes of shared memory cannot launch on an sm_90 SM, or None. Registers
    are allocated per warp in units of 256, a block's warps spread over the
    SM's four sub-partitions of 16K registers each (a cap from .maxnreg can
    exceed what the block may hold)."""
    warps = -(-threads // 32)
    per_warp = -(-regs * 32 // 256) * 256
    if -(-warps // 4) * per_warp > REGS_PER_SUBPARTITION:
        return (f"would not launch: {regs} registers x {threads} threads need "
                f"{-(-warps // 4) * per_warp} of a sub-partition's {REGS_PER_SUBPARTITION}")
    if smem > SMEM_PER_BLOCK:
        return f"would not launch: {smem} bytes of shared memory > {SMEM_PER_BLOCK}"
    return None


def check_params(k):
    """The kernel's .param count must match its arguments."""
    with open(os.path.join(ROOT, k["module"])) as f:
        text = f.read()
    m = re.search(r"\.entry\s+" + re.escape(k["kernel"]) + r"\s*\((.*?)\)", text, re.S)
    n = len(re.findall(r"\.param\b", m.group(1))) if m else -1
    if n != len(k["args"]):
        raise ValueError(f"{k['label']}: {k['kernel']} takes {n} parameters, the workload "
                         f"gives {len(k['args'])} arguments")


def build_variant(job, gpu_opt, ptxas, timeout):
    v = job["record"]
    w = job["workload"]
    ptx = os.path.join(ROOT, v["ptx"])
    man = os.path.join(ROOT, v["manifest"])
    for p in (ptx, man):
        if os.path.exists(p):
            os.remove(p)
    modules = []
    for k in w["kernels"]:
        if k["module"] not in modules:
            modules.append(k["module"])
    cmd = [gpu_opt, *modules, "--hfuse=" + v["hfuse"], "-o", v["ptx"], "--manifest",
           v["manifest"]]
    v["command"] = shlex.join(["gpu-opt"] + cmd[1:])
    try:
        r = run_watchdog(cmd, timeout, cwd=ROOT)
    except OSError as e:
        v.update(status="error", message=f"gpu-opt did not start: {e}")
        return v
    v["gpu_opt_s"] = round(r.wall, 2)
    remarks = [line.split("remark: ", 1)[1] for line in (r.err + r.out).splitlines()
               if "remark: " in line]
    v["remark"] = remarks[0] if remarks else None
    v["warnings"] = [line.split("warning: ", 1)[1] for line in r.err.splitlines()
                     if "warning: " in line]
    if r.hung:
        v.update(status="error", message=f"gpu-opt hung: killed after {timeout} s")
    elif r.rc != 0 or not (os.path.exists(ptx) and os.path.exists(man)):
        msg = "\n".join(line for line in r.err.strip().splitlines() if "error" in line) \
            or r.message()
        v.update(status="declined" if "not fusing" in msg else
                 "refused" if r.rc == 1 else "error", message=msg[:2000])
    else:
        try:
            with open(man) as f:
                manifest = json.load(f)
            fused = manifest["kernels"][0]
            args, notes, _ = map_args(manifest, [k["kernel"] for k in w["kernels"]],
                                      [k["args"] for k in w["kernels"]])
            launch = fused.get("launch", {})
            v.update(status="ok", message="", kernel=fused["name"], args=args, notes=notes,
                     strategy_built=fused.get("fusion_strategy"),
                     launch={k: launch.get(k) for k in ("block", "grid", "dynamic_smem")},
                     parts=[{x: p.get(x) for x in ("kernel", "threads", "ratio", "grid", "block")
                             if x in p} for p in fused.get("fused_from", [])])
            if ptxas:
                v["ptxas"] = ptxas_resources(ptxas, ptx)
                if "error" in v["ptxas"]:
                    v.update(status="refused", message="ptxas: " + v["ptxas"]["error"])
                elif "registers" in v["ptxas"] and isinstance(launch.get("block"), list):
                    smem = launch.get("dynamic_smem")
                    problem = launch_problem(
                        v["ptxas"]["registers"], math.prod(launch["block"]),
                        v["ptxas"]["static_smem"] + (smem if isinstance(smem, int) else 0))
                    if problem:
                        v.update(status="refused", message=problem)
        except (OSError, ValueError, KeyError, IndexError, MappingError) as e:
            v.update(status="error", message=f"unusable manifest: {type(e).__name__}: {e}")
    return v


def cmd_prepare(args):
    gpu_opt = tool("gpu-opt", args.gpu_opt)
    if args.compile_with:
        log(f"prepare: compiling the Triton kernels with {args.compile_with}")
        r = run_watchdog([args.compile_with, os.path.join(HERE, "compile.py")], 600, cwd=ROOT)
        if r.rc != 0:
            raise RuntimeError(f"compile.py failed: {r.message()}")
    ptxas = shutil.which(os.environ.get("PTXAS", "ptxas")) or (
        "/usr/local/cuda/bin/ptxas" if os.access("/usr/local/cuda/bin/ptxas", os.X_OK) else None)
    out = os.path.abspath(args.out)
    rows = [r for r in variant_rows(args.variant)
            if not args.rows or any(x in r[0] for x in args.rows)]
    if not rows:
        raise ValueError("no variant matches --rows")
    extra = []
    for item in args.attention:
        name, eq, sizes = item.partition("=")
        if not eq or not name or name in [w[0] for w in wl.WORKLOADS]:
            raise ValueError(f"--attention {item!r}: expected a new NAME=PREFILL:KV:DECODES:"
                             "DECODE_KV")
        extra.append(wl.attention_sizes(name, sizes))
    works = wl.build(small=args.small, only=args.only, extra=extra)
    if not works:
        raise ValueError("no workload matches --only")
    if os.path.isdir(out):
        for w in list(wl.WORKLOADS) + extra:
            shutil.rmtree(os.path.join(out, w[0]), ignore_errors=True)
    os.makedirs(out, exist_ok=True)
    profiles = load_profiles(args.profile) if args.profile else {}
    jobs = []
    for w in works:
        os.makedirs(os.path.join(out, w["name"]), exist_ok=True)
        profile = None
        if w["name"] in profiles:
            profile = rel(os.path.join(out, w["name"], "profile.json"))
            with open(os.path.join(ROOT, profile), "w") as f:
                json.dump(profiles[w["name"]], f, indent=1)
            w["profile"] = profile
        elif args.profile:
            log(f"prepare: {args.profile} has no profile of {w['name']}: auto without one")
        for k in w["kernels"] + w["tail"]:
            check_params(k)
            if ptxas:
                k["ptxas"] = ptxas_resources(ptxas, os.path.join(ROOT, k["module"]))
        # The kernels as a gpu-run run spec of their own (gpu-run --spec, or the
        # input of python3 -m gpuopt.hfuse_search), paths from the repository.
        w["spec"] = rel(os.path.join(out, w["name"], "kernels.json"))
        with open(os.path.join(ROOT, w["spec"]), "w") as f:
            json.dump({"warmup": 10, "repeat": 30, "kernels": [
                {x: k[x] for x in ("label", "module", "kernel", "grid", "block", "smem", "args")}
                for k in w["kernels"]], "groups": [
                {"name": w["name"], "kernels": [k["label"] for k in w["kernels"]],
                 "modes": ["alone", *BASE_MODES]}]}, f, indent=1)
        grids = [k["grid"][0] * k["grid"][1] * k["grid"][2] for k in w["kernels"]]
        w["variants"] = []
        for name, strategy, options in rows:
            v = {"name": name, "strategy": strategy, "options_template": options,
                 "label": f"f_{safe(name)}",
                 "ptx": rel(os.path.join(out, w["name"], f"{name}.ptx")),
                 "manifest": rel(os.path.join(out, w["name"], f"{name}.json"))}
            w["variants"].append(v)
            opts = expand(options, grids, [k["block"][0] for k in w["kernels"]],
                          [(k.get("ptxas") or {}).get("registers") for k in w["kernels"]])
            if opts is None:
                v.update(status="skipped", message=f"{options} does not apply to these "
                         f"{len(grids)} kernels")
                continue
            v["options"] = opts
            same = next((u for u in w["variants"][:-1] if u.get("options") == opts and
                         u["strategy"] == strategy), None)
            if same:
                v.update(status="skipped", message=f"the same as {same['name']} here")
                continue
            v["hfuse"] = hfuse_options(w, strategy, opts, safe(f"wl_{w['name']}_{name}"),
                                       profile)
            jobs.append({"record": v, "workload": w})
    log(f"prepare: {len(jobs)} variants of {len(works)} workloads with {args.jobs} jobs")
    done = [0]

    def work(job):
        v = build_variant(job, gpu_opt, ptxas, args.timeout)
        done[0] += 1
        extra = f": {v['message'].splitlines()[0][:150]}" if v.get("message") else ""
        regs = (v.get("ptxas") or {}).get("registers")
        log(f"[{done[0]}/{len(jobs)}] {v['status']:<8} {job['workload']['name']}/{v['name']}"
            + (f" ({regs} registers)" if regs else "") + extra)
        return v

    with concurrent.futures.ThreadPoolExecutor(max_workers=max(1, args.jobs)) as ex:
        list(ex.map(work, jobs))
    meta = {"version": 1, "date": datetime.date.today().isoformat(), "small": args.small,
            "chip": wl.SM90, "gpu_opt": os.path.basename(gpu_opt),
            "command": "python3 benchmarks/workloads/run.py prepare --out " + rel(out) +
            (" --small" if args.small else "") +
            "".join(f" --only {o}" for o in args.only or []) +
            "".join(f" --rows {o}" for o in args.rows or []) +
            "".join(f" --attention {a}" for a in args.attention) +
            (f" --profile {os.path.basename(args.profile)}" if args.profile else "") +
            "".join(f" --variant {shlex.quote(v)}" for v in args.variant),
            "variant_table": [list(r) for r in rows], "workloads": works}
    path = os.path.join(out, "workloads.json")
    with open(path, "w") as f:
        json.dump(meta, f, indent=1)
    counts = {}
    for w in works:
        for v in w["variants"]:
            counts[v["status"]] = counts.get(v["status"], 0) + 1
    size = sum(os.path.getsize(os.path.join(d, f)) for d, _, fs in os.walk(out) for f in fs)
    log("prepare: " + ", ".join(f"{n} {s}" for s, n in sorted(counts.items())) +
        f"; wrote {rel(path)} ({size / (1 << 20):.1f} MiB in {rel(out)})")
    return 0


# Measure ---------------------------------------------------------------------------


def pooled_median(times):
    samples = sorted(s for t in times if t for s in t.get("samples_ms") or [])
    if not samples:
        return None
    n = len(samples)
    return samples[n // 2] if n % 2 else (samples[n // 2 - 1] + samples[n // 2]) / 2


def fused_spec(w, v):
    """A built variant's gpu-run kernel spec, as gpuopt.verify runs it (a
    launch-agnostic kernel gets its parts' grids); prepare's arguments when
    the manifest cannot be read here."""
    from gpuopt.verify import VerifyError, transformed_spec
    try:
        spec, _, _, _ = transformed_spec([(k["label"], k) for k in w["kernels"]], v["ptx"],
                                         v["manifest"], entries=[k["kernel"] for k in w["kernels"]])
        return spec
    except (OSError, ValueError, KeyError, MappingError, VerifyError):
        return {"module": v["ptx"], "manifest": v["manifest"], "kernel": v["kernel"],
                "args": v["args"]}


def timing_specs(w, passed, warmup, repeat, budget):
    """gpu-run run specs for a workload: its kernels and as many passed
    variants as fit in `budget` bytes per process; groups "fwd" (the kernels'
    order: alone, serial, two streams, graph) and "rev" (reversed: serial,
    two streams, graph), each with the variants as "also"."""
    originals = [{k2: v for k2, v in k.items() if k2 in ("label", "module", "kernel", "grid",
                                                           "block", "smem", "args")}
                 for k in w["kernels"]]
    for k in originals:  # timed alone in the "fwd" group's rounds
        k["time_alone"] = False
    labels = [k["label"] for k in originals]
    # Kernels that depend on the others (split-KV stage 2): timed alone on
    # the side in the "fwd" rounds, in no configuration.
    tail = [{**{k2: v for k2, v in k.items() if k2 in ("label", "module", "kernel", "grid",
                                                       "block", "smem", "args")},
             "time_alone": False} for k in w.get("tail") or []]
    originals += tail
    base = sum(args_bytes(k["args"]) for k in originals)
    fused = [{**fused_spec(w, v), "label": v["label"], "time_alone": False} for v in passed]
    chunks = pack_by_bytes(fused, lambda k: args_bytes(k["args"]), budget, base) \
        if fused else [[]]
    specs = []
    for chunk in chunks:
        also = [k["label"] for k in chunk]
        specs.append({"warmup": warmup, "repeat": repeat, "kernels": originals + chunk,
                      "groups": [{"name": "fwd", "kernels": labels,
                                  "modes": ["alone", *BASE_MODES],
                                  "also": [k["label"] for k in tail] + also},
                                 {"name": "rev", "kernels": labels[::-1],
                                  "modes": list(BASE_MODES), "also": also}]})
    return specs


def profile_kernels(gpu_run, w, workdir, timeout):
    """(gpu-run report of the workload's kernels alone with
    --occupancy-sweep: the profile= of a later prepare, or None; error)."""
    spec = {"warmup": 5, "repeat": 20, "kernels": [
        {k2: v for k2, v in k.items() if k2 in ("label", "module", "kernel", "grid", "block",
                                                "smem", "args")} for k in w["kernels"]]}
    path = os.path.join(workdir, f"{w['name']}.profile-spec.json")
    report_path = os.path.join(workdir, f"{w['name']}.profile.json")
    with open(path, "w") as f:
        json.dump(spec, f, indent=1)
    log("  profile: each kernel alone with --occupancy-sweep")
    r = run_watchdog([gpu_run, "--spec", path, "--json", report_path, "--occupancy-sweep"],
                     timeout)
    if r.hung or r.rc != 0 or not os.path.exists(report_path):
        return None, f"gpu-run --occupancy-sweep failed: {'hung' if r.hung else r.message()}"
    with open(report_path) as f:
        return json.load(f), None


def summarize(w, groups, verify):
    """The workload's row of the results: every time a median in ms."""
    labels = [k["label"] for k in w["kernels"]]
    by = {"fwd": [g for g in groups if g["name"] == "fwd"],
          "rev": [g for g in groups if g["name"] == "rev"]}
    alone = {lab: pooled_median([(g.get("alone") or {}).get(lab) for g in by["fwd"]])
             for lab in labels}
    baselines = {}
    for order in ("fwd", "rev"):
        for m in BASE_MODES:
            t = pooled_median([g.get(m) for g in by[order]])
            if t is not None:
                baselines[m if order == "fwd" else f"{m}-rev"] = t
    best_mode = min(baselines, key=baselines.get) if baselines else None
    best = baselines.get(best_mode)
    limit = max(alone.values()) if alone and None not in alone.values() else None
    gap = best - limit if best is not None and limit is not None else None
    variants = []
    for v in w["variants"]:
        row = {k: v.get(k) for k in ("name", "strategy", "options", "status", "message",
                                     "remark", "launch", "parts", "ptxas", "warnings")}
        row["verify"] = verify.get(v["name"])
        t = pooled_median([(g.get("also") or {}).get(v["label"]) for g in groups])
        row["ms"] = t
        row["speedup"] = best / t if t and best else None
        row["gap_captured"] = (best - t) / gap if t and gap and gap > 0 else None
        variants.append(row)
    return {"name": w["name"], "group": w["group"], "description": w["description"],
            "kernels": [{"label": k["label"], "description": k["role"], "stem": k["stem"],
                         "grid": k["grid"], "block": k["block"], "smem": k["smem"],
                         "ptxas": k.get("ptxas"), "alone_ms": alone[k["label"]]}
                        for k in w["kernels"]],
            "tail": [{"label": k["label"], "description": k["role"], "stem": k["stem"],
                      "grid": k["grid"], "block": k["block"], "smem": k["smem"],
                      "ptxas": k.get("ptxas"),
                      "alone_ms": pooled_median([(g.get("also") or {}).get(k["label"])
                                                 for g in by["fwd"]])}
                     for k in w.get("tail") or []],
            "baselines_ms": baselines, "best_baseline": best_mode, "best_baseline_ms": best,
            "limit_ms": limit, "variants": variants}


def fmt(x, spec=".4f"):
    return "-" if x is None else format(x, spec)


def render_text(row):
    lines = [f"== {row['name']}: {row['description']}"]
    for k in row["kernels"]:
        lines.append(f"  {k['label']:<8} alone {fmt(k['alone_ms'])} ms  grid {dims(k['grid'])} "
                     f"block {k['block'][0]}  ({k['description']})")
    for k in row.get("tail") or []:
        lines.append(f"  {k['label']:<8} alone {fmt(k['alone_ms'])} ms  grid {dims(k['grid'])} "
                     f"block {k['block'][0]}  ({k['description']}; depends on the kernels "
                     "above: runs after them in every configuration, left out of every time "
                     "below, add it to each)")
    lines.append("  " + ", ".join(f"{m} {fmt(t)}" for m, t in row["baselines_ms"].items()))
    lines.append(f"  best baseline {row['best_baseline'] or '-'} {fmt(row['best_baseline_ms'])} "
                 f"ms; limit max(T_i) {fmt(row['limit_ms'])} ms")
    for v in row["variants"]:
        if v["ms"] is not None:
            lines.append(f"  {v['name']:<22} {fmt(v['ms'])} ms  {fmt(v['speedup'], '.3f')}x  "
                         f"gap captured {fmt(v['gap_captured'], '.2f')}")
        else:
            why = (v.get("verify") or {}).get("detail") or v.get("message") or v["status"]
            what = (v.get("verify") or {}).get("result") or v["status"]
            lines.append(f"  {v['name']:<22} {what}: {why.splitlines()[0][:110] if why else ''}")
    lines += [f"  error: {e}" for e in row.get("errors") or []]
    return "\n".join(lines)


def cmd_measure(args):
    from gpuopt.verify import Verifier  # numpy is needed from here on
    out = os.path.abspath(args.out)
    args.json = os.path.abspath(args.json)
    gpu_run = tool("gpu-run", args.gpu_run)
    os.chdir(ROOT)  # the specs' paths are relative to the repository
    with open(os.path.join(out, "workloads.json")) as f:
        meta = json.load(f)
    works = [w for w in meta["workloads"]
             if not args.only or any(o in w["name"] for o in args.only)]
    start = time.time()
    workdir = tempfile.mkdtemp(prefix="workloads-measure-")
    rows, reports, device = [], [], None
    try:
        for w in works:
            log(f"== {w['name']}: {w['description']}")
            originals = [(k["label"], k) for k in w["kernels"]]
            entries = [k["kernel"] for k in w["kernels"]]
            built = [v for v in w["variants"] if v["status"] == "ok"]
            verifier = Verifier(gpu_run, os.path.join(workdir, w["name"]), args.timeout,
                                log=log, describe=lambda cmd: shlex.join(
                                    [os.path.basename(cmd[0])] + cmd[1:]))
            for label, k in originals:
                verifier.run_original(label, k)

            def check(v):
                return v["name"], verifier.verify(originals, v["ptx"], v["manifest"],
                                                  entries=entries, name=v["label"])

            verify = {}
            with concurrent.futures.ThreadPoolExecutor(max_workers=max(1, args.jobs)) as ex:
                for name, r in ex.map(check, built):
                    verify[name] = {x: r.get(x) for x in ("result", "detail", "launch")}
                    log(f"  verify {name}: {r['result']}: {r['detail'][:160]}")
            device = device or verifier.device
            for label, _ in originals:
                verifier.drop_original(label)
            passed = [v for v in built if verify[v["name"]]["result"] == "PASS"]
            if args.time_failed:
                passed = built
            groups, errors = [], []
            specs = timing_specs(w, passed, args.warmup, args.repeat,
                                 int(args.max_gib * (1 << 30)))
            for n, spec in enumerate(specs):
                path = os.path.join(workdir, f"{w['name']}.spec{n}.json")
                report_path = os.path.join(workdir, f"{w['name']}.report{n}.json")
                with open(path, "w") as f:
                    json.dump(spec, f, indent=1)
                log(f"  timing [{n + 1}/{len(specs)}]: {len(spec['kernels'])} kernels, "
                    f"{args.warmup} + {args.repeat} rounds")
                r = run_watchdog([gpu_run, "--spec", path, "--json", report_path],
                                 args.timeout)
                if r.hung or r.rc != 0 or not os.path.exists(report_path):
                    labels = ", ".join(k["label"] for k in spec["kernels"])
                    errors.append(f"gpu-run --spec ({labels}) failed: "
                                  f"{'hung' if r.hung else r.message()}")
                    log(f"  error: {errors[-1]}")
                    continue
                with open(report_path) as f:
                    report = json.load(f)
                device = device or report.get("device")
                groups += report.get("groups", [])
                reports.append({"workload": w["name"], "spec": spec, "report": report})
            profile = None
            if not args.no_profile:
                profile, err = profile_kernels(gpu_run, w, workdir, args.timeout)
                if err:
                    errors.append(err)
                    log(f"  error: {err}")
            row = summarize(w, groups, verify)
            row["profile"] = profile
            row["errors"] = errors
            rows.append(row)
            log(render_text(row))
            log(f"  ({time.time() - start:.0f} s so far)")
            write_result(args, meta, out, device, rows, reports, start)
    finally:
        if args.keep:
            log(f"measure: files kept in {workdir}")
        else:
            shutil.rmtree(workdir, ignore_errors=True)
    write_result(args, meta, out, device, rows, reports, start)
    log(f"\n{(device or {}).get('name', '?')}: best baseline, limit max(T_i), best fused "
        "variant")
    for row in rows:
        timed = [v for v in row["variants"] if v.get("ms")]
        top = min(timed, key=lambda v: v["ms"]) if timed else None
        log(f"  {row['name']:<20} {fmt(row['best_baseline_ms'])} ms "
            f"({row['best_baseline'] or '-'}), limit {fmt(row['limit_ms'])} ms, " +
            (f"{top['name']} {fmt(top['ms'])} ms = {fmt(top['speedup'], '.3f')}x, "
             f"gap captured {fmt(top['gap_captured'], '.2f')}" if top else "no variant timed") +
            "".join(f"; + {k['label']} after, in every row: {fmt(k['alone_ms'])} ms"
                    for k in row.get("tail") or []))
    log(f"measure: wrote {args.json} ({time.time() - start:.0f} s)")
    return 1 if any(r.get("errors") for r in rows) else 0


def write_result(args, meta, out, device, rows, reports, start):
    """measure's JSON, rewritten after every workload."""
    result = {"version": 1, "date": datetime.date.today().isoformat(), "device": device,
              "prepare_command": meta.get("command"), "small": meta.get("small"),
              "measure_command": "python3 benchmarks/workloads/run.py measure --out " +
              rel(out) + f" --json {os.path.basename(args.json)}" +
              (f" --warmup {args.warmup} --repeat {args.repeat}"
               if (args.warmup, args.repeat) != (20, 100) else ""),
              "warmup": args.warmup, "repeat": args.repeat,
              "wall_s": round(time.time() - start, 1), "variant_table": meta["variant_table"],
              "workloads": rows, "reports": reports}
    with open(args.json, "w") as f:
        json.dump(result, f, indent=1)


# Report ----------------------------------------------------------------------------


def gpu_slug(name):
    m = re.search(r"\b([A-Z]{1,2}\d{2,4}[A-Z]?)\b", name or "")
    return (m.group(1) if m else re.sub(r"[^A-Za-z0-9]+", "-", name or "gpu")).lower()


def md_cell(text):
    return str(text).replace("|", "\\|").replace("\n", " ")


def render_md(result):
    dev = result.get("device") or {}
    name = dev.get("name", "unknown GPU")
    md = [f"# Serving workloads fused horizontally: {name}", ""]
    if result.get("fixture"):
        md += [f"> **Fixture:** {result['fixture']}", ""]
    md += [f"- Device: {name}" + (f", {dev['multiprocessors']} SMs"
                                  if dev.get("multiprocessors") else "") +
           f"; measured {result.get('date')}" +
           (" (small configuration)" if result.get("small") else ""),
           f"- Commands: `{result.get('prepare_command')}`, then "
           f"`{result.get('measure_command')}`",
           f"- gpu-run, CUDA events, medians of {result.get('repeat')} interleaved rounds after "
           f"{result.get('warmup')} warm-up rounds; each variant's outputs checked bit for bit "
           "against the kernels run apart before it is timed.",
           "- Baselines: serial (one stream), 2 streams and a CUDA graph of independent "
           "nodes, each in the kernels' order and reversed (-rev); best = the fastest. "
           "limit = max(T_i), each kernel alone: perfect overlap. speedup = best baseline "
           "/ fused; gap captured = (best - fused) / (best - limit).", "",
           "## Summary", "",
           "| workload | kernels alone (ms) | best baseline (ms) | limit (ms) | limit speedup | "
           "best variant | ms | speedup | gap captured |",
           "| --- | --- | --- | ---: | ---: | --- | ---: | ---: | ---: |"]
    for w in result["workloads"]:
        timed = [v for v in w["variants"] if v.get("ms")]
        top = min(timed, key=lambda v: v["ms"]) if timed else None
        best, limit = w["best_baseline_ms"], w["limit_ms"]
        md.append(
            f"| {w['name']} | " + ", ".join(f"{k['label']} {fmt(k['alone_ms'])}"
                                             for k in w["kernels"]) +
            f" | {fmt(w['best_baseline_ms'])} ({w['best_baseline'] or '-'}) | "
            f"{fmt(w['limit_ms'])} | "
            f"{fmt(best / limit if best and limit else None, '.3f')} | "
            f"{top['name'] if top else '-'} | "
            f"{fmt(top['ms'] if top else None)} | "
            f"{fmt(top['speedup'] if top else None, '.3f')} | "
            f"{fmt(top['gap_captured'] if top else None, '.2f')} |")
    for w in result["workloads"]:
        md += ["", f"## {w['name']}", "", w["description"] + ".", "",
               "| kernel | what | grid | block | dyn. smem | registers | alone (ms) |",
               "| --- | --- | --- | ---: | ---: | ---: | ---: |"]
        for k in w["kernels"]:
            md.append(f"| {k['label']} | {md_cell(k['description'])} | {dims(k['grid'])} | "
                      f"{k['block'][0]} | {k['smem']} | "
                      f"{(k.get('ptxas') or {}).get('registers', '-')} | {fmt(k['alone_ms'])} |")
        for k in w.get("tail") or []:
            md.append(f"| {k['label']} (after) | {md_cell(k['description'])} | "
                      f"{dims(k['grid'])} | {k['block'][0]} | {k['smem']} | "
                      f"{(k.get('ptxas') or {}).get('registers', '-')} | "
                      f"{fmt(k['alone_ms'])} |")
        if w.get("tail"):
            md += ["", ", ".join(k["label"] for k in w["tail"]) + " depends on the kernels "
                   "above and runs after them in every configuration, fused or not: it is "
                   "left out of every time below (add its time to each)."]
        md += ["", "| baseline | ms |", "| --- | ---: |"]
        for m, t in w["baselines_ms"].items():
            mark = " (best)" if m == w["best_baseline"] else ""
            md.append(f"| {MODE_NAMES.get(m.replace('-rev', ''), m)}"
                      f"{' reversed' if m.endswith('-rev') else ''}{mark} | {fmt(t)} |")
        md.append(f"| limit max(T_i) | {fmt(w['limit_ms'])} |")
        md += ["", "| variant | options | fused block, grid | registers (spills) | check | ms | "
               "speedup | gap captured |",
               "| --- | --- | --- | ---: | --- | ---: | ---: | ---: |"]
        for v in w["variants"]:
            launch = v.get("launch") or {}
            px = v.get("ptxas") or {}
            regs = "-" if "registers" not in px else (
                f"{px['registers']}" + (f" ({px['spill_stores']}/{px['spill_loads']} B)"
                                        if px.get("spill_stores") or px.get("spill_loads")
                                        else ""))
            check = (v.get("verify") or {}).get("result")
            if not check:
                msg = (v.get("message") or "").splitlines()
                check = f"{v['status']}: {md_cell(msg[0][:160]) if msg else ''}"
            elif check != "PASS":
                check = f"{check}: {md_cell((v['verify'].get('detail') or '')[:160])}"
            shape = (f"{dims(launch['block'])}, {dims(launch['grid'])}"
                     if launch.get("block") else "-")
            md.append(f"| {v['name']} | `{md_cell(v.get('options') or '')}` | {shape} | {regs} | "
                      f"{check} | {fmt(v.get('ms'))} | {fmt(v.get('speedup'), '.3f')} | "
                      f"{fmt(v.get('gap_captured'), '.2f')} |")
        md += [f"\n**Error:** {md_cell(e)}" for e in w.get("errors") or []]
        for v in w["variants"]:
            said = v.get("remark") or v.get("message")
            if v["strategy"] == "auto" and said:
                md += ["", f"{v['name']}: {md_cell(said.splitlines()[0])}"]
    return "\n".join(md) + "\n"


def load_results(paths):
    """measure's JSON; several (workloads measured in several calls on one
    GPU) as one, the first one's metadata, later workloads replacing earlier
    ones of the same name."""
    result = None
    for path in paths:
        with open(path) as f:
            r = json.load(f)
        if result is None:
            result = r
            continue
        names = {w["name"] for w in r["workloads"]}
        result["workloads"] = [w for w in result["workloads"] if w["name"] not in names] + \
            r["workloads"]
        result["reports"] = result.get("reports", []) + r.get("reports", [])
        if (r.get("device") or {}).get("name") != (result.get("device") or {}).get("name"):
            raise ValueError(f"{path}: measured on {(r.get('device') or {}).get('name')}, "
                             f"{paths[0]} on {(result.get('device') or {}).get('name')}")
    return result


def cmd_report(args):
    result = load_results(args.json)
    if args.merged:
        with open(args.merged, "w") as f:
            json.dump(result, f, indent=1)
    text = render_md(result)
    path = args.md or os.path.join(ROOT, "docs", "results", "workloads-" +
                                   gpu_slug((result.get("device") or {}).get("name")) + ".md")
    with open(path, "w") as f:
        f.write(text)
    log(f"report: wrote {rel(path)}")
    return 0


def main(argv=None):
    ap = argparse.ArgumentParser(prog="run.py", description=__doc__.splitlines()[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter,
                                 epilog="\n".join(__doc__.splitlines()[2:]))
    sub = ap.add_subparsers(dest="cmd", required=True)
    p = sub.add_parser("prepare", help="build the specs and every fused variant (no GPU)")
    p.add_argument("--out", default="build/workloads")
    p.add_argument("--gpu-opt", default=None)
    p.add_argument("--small", action="store_true", help="small sizes (tests, a quick check)")
    p.add_argument("--only", action="append", help="workloads whose name has this")
    p.add_argument("--rows", action="append", metavar="SUBSTR",
                   help="only the variants whose name has this (e.g. auto)")
    p.add_argument("--variant", action="append", default=[], metavar="NAME:STRATEGY:OPTIONS",
                   help="one more variant row, e.g. 'thread-r96:thread:maxnreg=96'")
    p.add_argument("--profile", default=None, metavar="RESULTS.json",
                   help="an earlier measure's JSON: each workload's kernels timed alone "
                        "with the occupancy sweep, for auto's model (profile=)")
    p.add_argument("--attention", action="append", default=[],
                   metavar="NAME=PREFILL:KV:DECODES:DECODE_KV",
                   help="one more attention workload at these sizes (e.g. "
                        "attn-bal2=2048:4096:24:4096 to balance the kernels' times)")
    p.add_argument("--compile-with", default=None, metavar="PYTHON",
                   help="first regenerate ptx/ with this Python's Triton (compile.py; the "
                        "committed PTX otherwise)")
    p.add_argument("--jobs", type=int, default=os.cpu_count() or 2)
    p.add_argument("--timeout", type=int, default=300, help="seconds per gpu-opt call")
    m = sub.add_parser("measure", help="check and time on the GPU")
    m.add_argument("--out", default="build/workloads")
    m.add_argument("--json", default="results.json")
    m.add_argument("--gpu-run", default=None)
    m.add_argument("--only", action="append", help="workloads whose name has this")
    m.add_argument("--warmup", type=int, default=20)
    m.add_argument("--repeat", type=int, default=100)
    m.add_argument("--jobs", type=int, default=3, help="gpu-run checks at a time")
    m.add_argument("--max-gib", type=float, default=48.0,
                   help="buffer memory per timing process")
    m.add_argument("--timeout", type=int, default=120,
                   help="seconds per gpu-run call (a fused kernel that hangs fails)")
    m.add_argument("--time-failed", action="store_true",
                   help="also time variants whose outputs differ")
    m.add_argument("--keep", action="store_true", help="keep the specs and reports")
    m.add_argument("--no-profile", action="store_true",
                   help="skip timing each kernel with the occupancy sweep (the profile a "
                        "later `prepare --profile` gives auto)")
    r = sub.add_parser("report", help="markdown from measure's JSON")
    r.add_argument("--json", action="append", required=True,
                   help="measure's JSON; repeat for workloads measured in several calls")
    r.add_argument("--merged", default=None, help="also write the JSONs merged here")
    r.add_argument("--md", default=None,
                   help="default: docs/results/workloads-<gpu>.md")
    args = ap.parse_args(argv)
    try:
        return {"prepare": cmd_prepare, "measure": cmd_measure, "report": cmd_report}[
            args.cmd](args)
    except (OSError, ValueError, RuntimeError, ToolNotFound) as e:
        print(f"run.py: error: {e}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
