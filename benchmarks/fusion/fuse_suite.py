#!/usr/bin/env python3
"""Horizontal fusion of the suite's kernel pairs: generate, check, benchmark.

Subcommands:
  generate  (no GPU) for every target pair (baselines.pairs(): 10 DL, 6
            crypto, 7 gemm_mma + memory-bound; and a few Triton pairs) and
            several variants of every strategy (thread, interleave, dynamic,
            sm_aware, auto), runs `gpu-opt A.ptx B.ptx --hfuse=... -o F.ptx --manifest
            F.json` and writes DIR/<pair>/<variant>.ptx + .json and
            DIR/variants.json (every variant with its options, command and
            status; a refusal is recorded with gpu-opt's message).
  check     (GPU) runs each original kernel and each fused variant once
            through gpu-run on the same seeded inputs and compares the output
            buffers byte for byte (reduce_shfl, whose float atomicAdd order
            varies: relative error 1e-5); every gpu-run call under a watchdog;
            optionally compute-sanitizer memcheck + synccheck on a sample.
            Writes DIR/check.json and DIR/check.md after every variant (a
            later run merges into them; --resume skips what they hold);
            exit status 1 on a FAIL, 3 when --stop-after left some unchecked.
  profile   (GPU) times each original kernel alone, also with fewer of its
            blocks per SM (gpu-run --occupancy-sweep): the profile= that
            `generate --profile` hands to the planner.
  bench     (GPU) times, in gpu-run --spec processes (one when the buffers
            fit in device memory), every original and every variant that
            passed the check: one group per pair with modes alone, serial,
            concurrent, graph and "also" = the pair's fused variants,
            interleaved round by round. Writes OUT_DIR/fusion-<gpu>.md, .csv,
            .json and .png (after every process; with --only, merged into
            what an earlier run on this GPU wrote, so the pairs can be timed
            in several calls). --from-json re-renders them without a GPU.

DIR defaults to build/fusion (ignored by git: carry it to a GPU machine).
Needs the gpuopt package (pip install ./python): check is gpuopt.verify,
profile gpuopt.profile, bench's timing gpuopt.bench; check needs numpy, bench
matplotlib for the plot (skipped without it). Tests: python3 -m pytest
benchmarks/fusion.

Grids are the launch sizes of kernel_specs() for --sm-count SMs (default 132,
an H100 SXM), recorded in variants.json; check and bench warn when the GPU
has another SM count (the kernels stay correct; the grid-stride kernels just
get a different number of blocks per SM than their headers intend).

usage: fuse_suite.py generate [--gpu-opt PATH] [--out-dir DIR] [--only SUBSTR]
                              [--sm-count N] [--profile REPORT.json] [--jobs N]
                              [--chip SM] [--no-smem] [--no-candidates]
       fuse_suite.py check [--gpu-run PATH] [--dir DIR] [--only SUBSTR]
                           [--timeout S] [--sanitizer PATH] [--sanitize-sample N]
                           [--sanitize-timeout S] [--workdir DIR] [--keep]
                           [--resume] [--stop-after S] [--fresh] [--jobs N]
       fuse_suite.py bench [--gpu-run PATH] [--dir DIR] [--out-dir DIR]
                           [--warmup N] [--repeat N] [--date YYYY-MM-DD]
                           [--only SUBSTR] [--fresh] [--max-gib G] [--timeout S]
       fuse_suite.py profile [--gpu-run PATH] [--dir DIR] [--out FILE]
       fuse_suite.py bench --from-json docs/results/fusion-<gpu>.json [--out-dir DIR]

This file is longer than the project's usual 1,000 lines because it is the
suite's one driver: what it keeps is the suite itself (which variants of
which pairs, their records in variants.json, resuming a GPU session, and the
report tables), while checking, profiling and timing are the gpuopt
package's verify, profile and bench.
"""

import argparse
import concurrent.futures
import csv
import datetime
import fractions
import hashlib
import importlib.util
import json
import math
import os
import re
import shlex
import shutil
import subprocess
import sys
import tempfile
import threading
import time

from gpuopt import bench as gbench
from gpuopt import profile as gprofile
from gpuopt.bench import merge_groups, overlap_efficiency
from gpuopt.launch_args import MappingError, args_bytes, fused_kernel, map_args, part_order
from gpuopt.tools import ToolNotFound, run_watchdog
from gpuopt.tools import find_tool as _find_tool
from gpuopt.verify import Verifier, transformed_spec

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))


def _load_sibling(name, path):
    """A script of benchmarks/ by its path (the scripts are not a package; the
    suite lists live in benchmarks/baselines.py)."""
    if name in sys.modules:
        return sys.modules[name]
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


baselines = _load_sibling("baselines", os.path.join(ROOT, "benchmarks", "baselines.py"))

SM_COUNT = 132  # An H100 SXM.
CHIP = "sm_90a"
STRATEGIES = ("thread", "interleave", "dynamic", "sm_aware", "auto")
# Kernels that work with any block size (grid-stride loops): the thread
# strategy may give them another number of threads than their block. Their
# shared arrays are indexed by thread, so gpu-opt cannot show it: the
# variants that resize them say resizable=.
RESIZABLE = {"histogram", "reduce_shfl"}
# Outputs that depend on the order of float atomics: relative tolerance.
TOLERANCE = {"reduce_shfl": 1e-5}  # reduce_sum_shfl: atomicAdd f32
TRITON_PAIRS = [("triton", "triton_softmax", "triton_layernorm"),
                ("triton", "triton_matmul", "triton_softmax"),
                ("triton", "triton_attention", "triton_layernorm")]
# Pairs of a memory-bound and a compute-bound kernel, and the long mixed ones.
MEMORY_COMPUTE = ([f"ethash_like+{b}" for b in ("blake2b", "sha256d", "blake256")] +
                  [f"gemm_mma+{b}" for b in baselines.MEMORY_BOUND])
LONG_MIXED = [f"ethash_like+{b}" for b in ("blake2b", "sha256d", "blake256")] + \
    ["gemm_mma+ethash_like"]
MAX_THREADS = 1024
REGS_PER_SM = 65536
THREADS_PER_SM = 2048


def log(*a):
    print(*a, flush=True)


def warn(msg):
    print(f"fuse_suite: warning: {msg}", file=sys.stderr, flush=True)


# Pairs and variants ----------------------------------------------------------

def suite_pairs():
    """(set, A, B) for every target pair: baselines.pairs() and Triton pairs."""
    return list(baselines.pairs()) + TRITON_PAIRS


def shape(dims):
    """[64, 64] -> '64x64', [256] -> '256' (trailing 1s dropped)."""
    dims = list(dims)
    while len(dims) > 1 and dims[-1] == 1:
        dims.pop()
    return "x".join(str(d) for d in dims)


def volume(dims):
    return math.prod(dims)


def ratio_of(x, y, cap=64):
    """x:y as small integers: exact below 4 with denominators up to 4 (3:2),
    else rounded to n:1 (1:n), n at most cap."""
    if x <= 0 or y <= 0:
        return (1, 1)
    flip = x < y
    r = y / x if flip else x / y
    if r < 4:
        f = fractions.Fraction(r).limit_denominator(4)
        n, d = f.numerator, f.denominator
    else:
        n, d = min(cap, int(r + 0.5)), 1
    return (d, n) if flip else (n, d)


def interleave_ratios(grid_a, grid_b, block_ms_a=None, block_ms_b=None, cap=64):
    """Three ratios (blocks of A : blocks of B per dispatch period): 1:1, the
    grid ratio (both finish together), and the ratio that balances time per
    period when per-block times are known (else twice the grid ratio's
    larger side)."""
    out = [(1, 1)]
    by_grid = ratio_of(grid_a, grid_b, cap)
    candidates = [by_grid]
    if block_ms_a and block_ms_b:
        candidates.append(ratio_of(block_ms_b, block_ms_a, cap))
    ra, rb = by_grid
    candidates += [(2 * ra, rb) if ra >= rb else (ra, 2 * rb), (2, 1), (1, 2)]
    for c in candidates:
        c = (min(c[0], cap), min(c[1], cap))
        g = math.gcd(*c)
        c = (c[0] // g, c[1] // g)
        if c not in out:
            out.append(c)
        if len(out) == 3:
            break
    return out


def blocks_per_sm(regs, threads):
    """Blocks of `threads` threads an SM holds when each thread has `regs`
    registers (allocated per warp in units of 256), also bounded by threads."""
    warps = -(-threads // 32)
    per_warp = -(-regs * 32 // 256) * 256
    by_regs = REGS_PER_SM // (per_warp * warps) if per_warp else 32
    return max(0, min(by_regs, THREADS_PER_SM // (warps * 32), 32))


def maxnreg_caps(regs, threads, caps=(128, 64)):
    """Register caps worth trying for a fused block of `threads` threads whose
    parts use at most `regs` registers (None: unknown): those under regs that
    let more blocks share an SM, or all that fit when regs is unknown."""
    out = []
    for cap in caps:
        if cap * threads > REGS_PER_SM:
            continue
        if regs is None or (cap < regs and
                            blocks_per_sm(cap, threads) > blocks_per_sm(regs, threads)):
            out.append(cap)
    return out


def resized_threads(default, partner, choices=(128, 512, 768, 384), count=3):
    """Other thread counts for a resizable part beside a partner of `partner`
    threads: multiples of 128, the fused block at most 1024 threads."""
    out = []
    for t in choices:
        if t != default and t + partner <= MAX_THREADS and len(out) < count:
            out.append(t)
    return out


def plan_variants(a, b, specs, profile=None):
    """The variants of pair (a, b): [{variant, strategy, options}], and notes
    (strategies skipped and why). profile: {label: {registers, median_ms}}."""
    profile = profile or {}
    sa, sb = specs[a], specs[b]
    ta, tb = volume(sa["block"]), volume(sb["block"])
    ga, gb = volume(sa["grid"]), volume(sb["grid"])
    variants, notes = [], []

    def add(variant, strategy, **options):
        variants.append({"variant": variant, "strategy": strategy, "options": options})

    if ta + tb > MAX_THREADS:
        notes.append(f"thread strategy skipped: {ta} + {tb} threads > {MAX_THREADS}")
        variants.append({"variant": "thread", "strategy": "thread", "options": {},
                         "skip": notes[-1]})
    else:
        add("thread", "thread")
        regs = [profile.get(k, {}).get("registers") for k in (a, b)]
        known = None if None in regs else max(regs)
        for cap in maxnreg_caps(known, ta + tb):
            add(f"thread-r{cap}", "thread", maxnreg=cap)
        if a in RESIZABLE and b in RESIZABLE:
            for x, y in ((128, 512), (512, 128), (384, 384)):
                add(f"thread-{x}-{y}", "thread", threads=[x, y],
                    resizable=[True, True])
        elif a in RESIZABLE:
            for t in resized_threads(ta, tb):
                add(f"thread-{t}-{tb}", "thread", threads=[t, tb],
                    resizable=[True, False])
        elif b in RESIZABLE:
            for t in resized_threads(tb, ta):
                add(f"thread-{ta}-{t}", "thread", threads=[ta, t],
                    resizable=[False, True])
    times = [profile.get(k, {}).get("median_ms") for k in (a, b)]
    per_block = (times[0] / ga, times[1] / gb) if None not in times else (None, None)
    for ratio in interleave_ratios(ga, gb, *per_block):
        add(f"interleave-{ratio[0]}-{ratio[1]}", "interleave", ratio=list(ratio))
    for ratio in interleave_ratios(ga, gb, *per_block):
        add(f"dynamic-{ratio[0]}-{ratio[1]}", "dynamic", ratio=list(ratio))
    for ratio in interleave_ratios(ga, gb, *per_block):
        add(f"sm_aware-{ratio[0]}-{ratio[1]}", "sm_aware", ratio=list(ratio))
    add("auto", "auto", profile=True)
    if profile:
        add("auto-static", "auto")
    return variants, notes


def fused_name(pair, variant):
    return "hfuse_" + re.sub(r"[^A-Za-z0-9_]", "_", f"{pair}_{variant}")


def hfuse_option(strategy, spec_a, spec_b, options, name=None, profile_path=None,
                 smem=True, candidates=None, chip=None):
    """The --hfuse option value for gpu-opt (smem: pass the launches' dynamic
    shared memory; candidates: where auto writes its ranked candidates)."""
    parts = [f"strategy={strategy}",
             f"blocks={shape(spec_a['block'])},{shape(spec_b['block'])}",
             f"grids={shape(spec_a['grid'])},{shape(spec_b['grid'])}"]
    if smem:
        parts.append(f"smem={spec_a.get('smem', 0)},{spec_b.get('smem', 0)}")
    if options.get("threads"):
        parts.append("threads={},{}".format(*options["threads"]))
    if options.get("resizable"):
        parts.append("resizable=" + ",".join(
            "true" if r else "false" for r in options["resizable"]))
    if options.get("ratio"):
        parts.append("ratio={},{}".format(*options["ratio"]))
    if options.get("maxnreg"):
        parts.append(f"maxnreg={options['maxnreg']}")
    if options.get("profile") and profile_path:
        parts.append(f"profile={profile_path}")
    if name:
        parts.append(f"name={name}")
    if strategy == "auto":
        # A decline fails (the suite records it) instead of writing the
        # kernels apart, which would pass for a fused variant.
        parts.append("require=true")
    if candidates and strategy == "auto":
        parts.append(f"candidates-out={candidates}")
    if chip and strategy == "auto":
        parts.append(f"chip={chip}")
    return " ".join(parts)


# Options a gpu-opt may not know yet: a variant it refuses for naming one of
# them as unknown is generated again without it.
OPTIONAL_KEYS = ("smem", "candidates-out", "chip", "require")


def unknown_option(message, hfuse):
    """The optional key of `hfuse` that gpu-opt's message calls unknown."""
    for key in OPTIONAL_KEYS:
        if f"{key}=" in hfuse and re.search(
                r"(unknown|no such|unrecognized|invalid|not a)[^\n]{0,60}?\b" +
                re.escape(key) + r"\b", message, re.I):
            return key
    return None


def drop_option(hfuse, key):
    return re.sub(r"\s*\b" + re.escape(key) + r"=\S+", "", hfuse)


# Paths -------------------------------------------------------------------------

def rel_to_root(path):
    """A path relative to the repository when inside it, else absolute."""
    path = os.path.abspath(path)
    rel = os.path.relpath(path, ROOT)
    return path if rel.startswith("..") else rel


def from_root(path):
    return path if os.path.isabs(path) else os.path.join(ROOT, path)


def portable(obj, extra=()):
    """The same data with repository paths made relative, other known folders
    named by a placeholder (extra: [(path, placeholder)])."""
    if isinstance(obj, str):
        for path, name in extra:
            obj = obj.replace(os.path.abspath(path), name)
        return obj.replace(ROOT + os.sep, "")
    if isinstance(obj, list):
        return [portable(x, extra) for x in obj]
    if isinstance(obj, dict):
        return {k: portable(v, extra) for k, v in obj.items()}
    return obj


def describe_command(sub, argv):
    """The command line as recorded in results, without machine paths."""
    out, it = [], iter(argv)
    for a in it:
        key, eq, val = a.partition("=")
        if key in ("--gpu-run", "--gpu-opt", "--dir", "--out-dir", "--sanitizer",
                   "--workdir", "--profile", "--from-json"):
            v = val if eq else next(it, "")
            if key in ("--gpu-run", "--gpu-opt", "--sanitizer"):
                v = os.path.basename(v)
            else:
                rel = os.path.relpath(os.path.abspath(v), ROOT)
                v = key.strip("-").upper().replace("-", "_") if rel.startswith("..") else rel
            out += [key, v]
        else:
            out.append(a)
    return " ".join(["python3", "benchmarks/fusion/fuse_suite.py", sub] + out)


def sha256_file(path):
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


# Arguments -----------------------------------------------------------------------

spec_bytes = args_bytes


# Generate --------------------------------------------------------------------------

def entry_names(ptx_path):
    with open(ptx_path, errors="replace") as f:
        return re.findall(r"\.entry\s+([A-Za-z_$][\w$]*)\s*\(", f.read())


def load_profile(path):
    """A gpu-run --json report (or a baselines-<gpu>.json holding one under
    "report") -> (report, {label: {registers, median_ms}})."""
    with open(path) as f:
        data = json.load(f)
    report = data.get("report", data)
    by_label = {}
    for k in report.get("kernels", []):
        by_label[k["label"]] = {"registers": k.get("registers"),
                                "median_ms": (k.get("time") or {}).get("median_ms")}
    return report, by_label


def summarize_manifest(manifest):
    k = fused_kernel(manifest)
    launch = k.get("launch", {})
    return {"kernel": k.get("name"), "block": launch.get("block"), "grid": launch.get("grid"),
            "dynamic_smem": launch.get("dynamic_smem"),
            "fusion_strategy": k.get("fusion_strategy"),
            "maxnreg": k.get("maxnreg", launch.get("maxnreg")),
            "registers": (k.get("resources") or {}).get("registers"),
            "parts": [{key: p.get(key) for key in ("kernel", "threads", "block", "grid",
                                                   "dynamic_smem", "ratio") if key in p}
                      for p in k.get("fused_from", [])]}


def generate_one(job, gpu_opt, out_dir, timeout, ptxas=None):
    """Runs gpu-opt for one variant; fills in status, message, files."""
    v = job["record"]
    ptx = os.path.join(out_dir, v["ptx"])
    man = os.path.join(out_dir, v["manifest"])
    cand = os.path.join(out_dir, v["candidates"]) if v.get("candidates") else None
    for p in (ptx, man, cand):
        if p and os.path.exists(p):
            os.remove(p)
    while True:
        cmd = [gpu_opt, job["a_module"], job["b_module"], "--hfuse=" + v["hfuse"],
               "-o", rel_to_root(ptx), "--manifest", rel_to_root(man)]
        v["command"] = portable(shlex.join(["gpu-opt"] + cmd[1:]), [(out_dir, "DIR")])
        try:
            r = run_watchdog(cmd, timeout, cwd=ROOT)
        except OSError as e:
            v.update(status="error", message=f"gpu-opt did not start: {e}")
            return v
        key = unknown_option(r.message(), v["hfuse"]) if r.rc == 1 else None
        if not key:
            break
        v["hfuse"] = drop_option(v["hfuse"], key)
        v.setdefault("dropped_options", []).append(key)
        v.setdefault("warnings", []).append(f"gpu-opt does not know {key}=: generated "
                                            "without it")
    if v.get("candidates") and "candidates-out=" not in v["hfuse"]:
        v["candidates"] = None
    v["gpu_opt_s"] = round(r.wall, 2)
    if r.hung:
        v.update(status="error", message=f"gpu-opt hung: killed after {timeout} s")
    elif r.rc < 0 or r.rc > 1:
        v.update(status="error", message=f"gpu-opt crashed (exit {r.rc}): {r.message()}")
    elif r.rc == 1:
        v.update(status="refused", message=r.message())
    elif not (os.path.exists(ptx) and os.path.exists(man)):
        hint = (" (it printed its usage: does this gpu-opt know --hfuse?)"
                if "USAGE:" in r.out else "")
        v.update(status="error", message="gpu-opt exited 0 but wrote no .ptx or .json" + hint)
    else:
        try:
            with open(man) as f:
                manifest = json.load(f)
            _, notes, _ = map_args(manifest, job["entries"], job["args"])
            v["fused"] = summarize_manifest(manifest)
            notes += smem_notes(manifest, job["entries"], job["smem"])
            v.update(status="ok", message="", warnings=v.get("warnings", []) + notes,
                     sha256=sha256_file(ptx))
            # A register cap below what an instruction needs is ptxas's
            # refusal, not a kernel to run: record it as such.
            if ptxas:
                pr = subprocess.run([ptxas, f"-arch={job.get('chip') or 'sm_90a'}", ptx,
                                     "-o", os.devnull], capture_output=True, text=True)
                if pr.returncode != 0:
                    v.update(status="refused",
                             message="ptxas: " + " / ".join(pr.stderr.strip().splitlines()))
            if cand and not os.path.exists(cand):
                v["candidates"] = None
        except (ValueError, KeyError, TypeError, MappingError) as e:
            v.update(status="bad-manifest", message=f"{type(e).__name__}: {e}")
    return v


def smem_notes(manifest, entries, smems):
    """Warnings when a part's dynamic shared memory is not the original's."""
    k = fused_kernel(manifest)
    order = part_order(k, entries)
    notes = []
    for p, want in enumerate(smems):
        got = k["fused_from"][order[p]].get("dynamic_smem", 0)
        if got != "runtime" and got < want:
            notes.append(f"part {order[p]} ({entries[p]}) has {got} bytes of dynamic "
                         f"shared memory, the original launch {want}")
    total = k.get("launch", {}).get("dynamic_smem")
    if isinstance(total, int) and total < max(smems):
        notes.append(f"launch.dynamic_smem {total} < {max(smems)}")
    return notes


def cmd_generate(args, argv):
    gpu_opt = os.path.abspath(args.gpu_opt)
    if not os.access(gpu_opt, os.X_OK):
        print(f"fuse_suite: error: {args.gpu_opt} is not an executable", file=sys.stderr)
        return 2
    out_dir = os.path.abspath(args.out_dir)
    os.makedirs(out_dir, exist_ok=True)
    specs = baselines.kernel_specs(args.sm_count)
    profile_report, profile = None, {}
    profile_rel = None
    if args.profile and os.path.exists(args.profile):
        profile_report, profile = load_profile(args.profile)
        path = os.path.join(out_dir, "profile.json")
        with open(path, "w") as f:
            json.dump(portable(profile_report), f, indent=1)
        profile_rel = rel_to_root(path)
        sms = profile_report.get("device", {}).get("multiprocessors")
        log(f"generate: profile {args.profile} ({profile_report.get('device', {}).get('name')}"
            f", {len(profile)} kernels) -> {profile_rel}")
        if sms and sms != args.sm_count:
            warn(f"the profile's GPU has {sms} SMs, the grids are for {args.sm_count}")
    elif args.profile:
        warn(f"profile {args.profile} not found: auto runs without one, no register "
             "counts for the maxnreg variants")

    chosen = [p for p in suite_pairs() if not args.only or args.only in f"{p[1]}+{p[2]}"]
    if not chosen:
        print("fuse_suite: error: no pair matches --only", file=sys.stderr)
        return 2
    kernels, entries = {}, {}
    for label in sorted({k for p in chosen for k in p[1:]}):
        kernels[label] = portable(specs[label])
        entries[label] = entry_names(specs[label]["module"])
    pairs, jobs, skipped = [], [], []
    for kind, a, b in chosen:
        name = f"{a}+{b}"
        variants, notes = plan_variants(a, b, specs, profile)
        for n in notes:
            log(f"generate: {name}: {n}")
        pairs.append({"name": name, "set": kind, "a": a, "b": b, "notes": notes})
        for v in variants:
            rec = {"id": f"{name}/{v['variant']}", "pair": name, "set": kind,
                   "kernels": [a, b], "variant": v["variant"], "strategy": v["strategy"],
                   "options": {**v["options"], **({"profile": profile_rel}
                                                  if v["options"].get("profile") else {})},
                   "ptx": f"{name}/{v['variant']}.ptx", "manifest": f"{name}/{v['variant']}.json",
                   "candidates": (f"{name}/{v['variant']}.candidates.json"
                                  if v["strategy"] == "auto" and args.candidates else None)}
            rec["hfuse"] = hfuse_option(
                v["strategy"], specs[a], specs[b], v["options"], fused_name(name, v["variant"]),
                profile_rel, smem=args.smem,
                candidates=rel_to_root(os.path.join(out_dir, rec["candidates"]))
                if rec["candidates"] else None, chip=args.chip)
            if v["strategy"] == "auto" and not profile_rel:
                rec["options"].pop("profile", None)
            if v.get("skip"):
                rec.update(status="skipped", message=v["skip"], command=None)
                skipped.append(rec)
                continue
            jobs.append({"record": rec, "a_module": rel_to_root(specs[a]["module"]),
                         "b_module": rel_to_root(specs[b]["module"]),
                         "entries": [entries[a][0] if entries[a] else a,
                                     entries[b][0] if entries[b] else b],
                         "args": [specs[a]["args"], specs[b]["args"]],
                         "smem": [specs[a].get("smem", 0), specs[b].get("smem", 0)]})
        os.makedirs(os.path.join(out_dir, name), exist_ok=True)

    log(f"generate: {len(jobs)} variants of {len(pairs)} pairs with {args.jobs} jobs "
        f"(grids for {args.sm_count} SMs) into {out_dir}")
    done, lock = [0], threading.Lock()

    def work(job):
        v = generate_one(job, gpu_opt, out_dir, args.timeout, args.ptxas)
        with lock:
            done[0] += 1
            extra = f": {v['message'][:160]}" if v.get("message") else ""
            if v.get("warnings"):
                extra += " (" + "; ".join(v["warnings"]) + ")"
            log(f"[{done[0]}/{len(jobs)}] {v['status']:<8} {v['id']}{extra}")
        return v

    with concurrent.futures.ThreadPoolExecutor(max_workers=max(1, args.jobs)) as ex:
        records = list(ex.map(work, jobs)) + skipped

    meta = {"version": 1, "date": datetime.date.today().isoformat(),
            "command": describe_command("generate", argv),
            "gpu_opt": os.path.basename(gpu_opt), "sm_count": args.sm_count,
            "sm_count_note": "grids of grid-stride kernels are 8 x this; the GPU scripts "
                             "warn when the device has another SM count",
            "chip": args.chip, "profile": profile_rel,
            "profile_device": (profile_report or {}).get("device", {}).get("name"),
            "kernels": kernels, "entries": entries, "kernel_profile": profile,
            "pairs": pairs, "variants": records}
    path = os.path.join(out_dir, "variants.json")
    if args.only and os.path.exists(path):
        meta = merge_variants(load_json(path), meta)
        log(f"generate: merged into the existing {path}")
    with open(path, "w") as f:
        json.dump(meta, f, indent=1)
    counts = {}
    for v in records:
        counts[v["status"]] = counts.get(v["status"], 0) + 1
    log("generate: " + ", ".join(f"{n} {s}" for s, n in sorted(counts.items())) +
        f"; wrote {path}")
    return 0


def merge_variants(old, new):
    """variants.json of an earlier run with the pairs of `new` replaced."""
    names = {p["name"] for p in new["pairs"]}
    merged = dict(new)
    merged["kernels"] = {**old.get("kernels", {}), **new["kernels"]}
    merged["entries"] = {**old.get("entries", {}), **new["entries"]}
    merged["pairs"] = [p for p in old.get("pairs", []) if p["name"] not in names] + new["pairs"]
    merged["variants"] = [v for v in old.get("variants", []) if v["pair"] not in names] + \
        new["variants"]
    if old.get("sm_count") != new["sm_count"]:
        warn(f"the earlier variants were for {old.get('sm_count')} SMs, these for "
             f"{new['sm_count']}")
    return merged


def load_json(path):
    with open(path) as f:
        return json.load(f)


# Check ---------------------------------------------------------------------------------

def tolerance_for(label):
    return TOLERANCE.get(label)


# Check ---------------------------------------------------------------------------------

class Checker:
    """The suite's variants through gpuopt.verify: the originals of
    variants.json (outputs kept until drop_original) against each variant's
    fused kernel."""

    def __init__(self, args, meta, workdir):
        self.args, self.meta, self.workdir = args, meta, workdir
        self.verifier = Verifier(os.path.abspath(args.gpu_run), workdir, args.timeout,
                                 log=log, describe=self.describe)
        self.warned = False

    @property
    def device(self):
        return self.verifier.device

    @device.setter
    def device(self, value):
        self.verifier.device = value

    def describe(self, cmd):
        return portable(shlex.join(["gpu-run"] + cmd[1:]),
                        [(self.workdir, "$WORK"), (self.args.dir, "DIR")])

    def originals(self, v):
        return [(k, {**self.meta["kernels"][k],
                     "module": from_root(self.meta["kernels"][k]["module"])})
                for k in v["kernels"]]

    def entries(self, v):
        e = self.meta.get("entries", {})
        return [(e.get(k) or [k])[0] for k in v["kernels"]]

    def fused_files(self, v):
        return (os.path.join(self.args.dir, v["ptx"]),
                os.path.join(self.args.dir, v["manifest"]))

    def drop_original(self, label):
        self.verifier.drop_original(label)

    def note_device(self):
        if self.device is None or self.warned:
            return
        self.warned = True
        sms = self.device.get("multiprocessors")
        log(f"check: device {self.device.get('name')} ({sms} SMs)")
        if sms and sms != self.meta.get("sm_count"):
            warn(f"the device has {sms} SMs; the variants' grids were generated for "
                 f"{self.meta.get('sm_count')} (correct still, but grid-stride kernels get "
                 "another number of blocks per SM)")

    def check_variant(self, v):
        """{result, detail, buffers, ...} for one generated variant."""
        entry = {"id": v["id"], "pair": v["pair"], "variant": v["variant"],
                 "strategy": v["strategy"], "sha256": v.get("sha256")}
        ptx, man = self.fused_files(v)
        res = self.verifier.verify(self.originals(v), ptx, man, entries=self.entries(v),
                                   tolerances={k: TOLERANCE[k] for k in v["kernels"]
                                               if k in TOLERANCE}, name="fused")
        self.note_device()
        return {**entry, **res}

    def sanitize(self, v, tool):
        """compute-sanitizer --tool TOOL on one fused launch (no --out)."""
        try:
            cmd, _, _, _ = self.verifier.transformed_command(self.originals(v),
                                                             *self.fused_files(v),
                                                             entries=self.entries(v))
        except (OSError, ValueError, KeyError, MappingError) as e:
            return {"result": "error", "detail": str(e)}
        cmd = [self.args.sanitizer, "--tool", tool, "--error-exitcode", "86",
               "--print-limit", "20"] + cmd + ["--repeat", "0"]
        r = run_watchdog(cmd, self.args.sanitize_timeout)
        text = r.out + r.err
        m = re.search(r"ERROR SUMMARY:\s*(\d+)\s+error", text)
        errors = int(m.group(1)) if m else None
        if r.hung:
            return {"result": "skipped", "detail": f"over {self.args.sanitize_timeout} s: "
                                                   "skipped (the sanitizer is slow)"}
        if r.rc == 86 or (errors or 0) > 0:
            lines = [ln for ln in text.splitlines() if "=========" in ln and ln.strip("= ")]
            return {"result": "errors", "detail": f"{errors} errors: " +
                    " / ".join(ln.strip("= ") for ln in lines[:4])}
        if r.rc != 0:
            return {"result": "error", "detail": f"exit {r.rc}: {r.message(3)}"}
        return {"result": "clean", "detail": f"0 errors ({r.wall:.0f} s)"}


def variant_cost(v, meta):
    """Rough work of a variant's pair: the originals' times alone from the
    profile, else their buffer bytes."""
    prof = meta.get("kernel_profile") or {}
    times = [(prof.get(k) or {}).get("median_ms") for k in v["kernels"]]
    if None not in times:
        return sum(times)
    return sum(spec_bytes(meta["kernels"][k]["args"]) for k in v["kernels"]) / 1e9


def sanitizer_sample(passed, meta, n):
    """n passing variants, cheapest first, covering each strategy early."""
    ordered = sorted(passed, key=lambda v: (variant_cost(v, meta), v["id"]))
    sample, seen = [], set()
    for v in ordered:
        if v["strategy"] not in seen and len(sample) < n:
            sample.append(v)
            seen.add(v["strategy"])
    for v in ordered:
        if len(sample) >= n:
            break
        if v not in sample:
            sample.append(v)
    return sorted(sample, key=lambda v: (variant_cost(v, meta), v["id"]))


def cmd_check(args, argv):
    args.dir = os.path.abspath(args.dir)
    meta = load_json(os.path.join(args.dir, "variants.json"))
    if not os.access(args.gpu_run, os.X_OK):
        print(f"fuse_suite: error: gpu-run {args.gpu_run} is not an executable",
              file=sys.stderr)
        return 2
    if args.sanitizer and not shutil.which(args.sanitizer):
        warn(f"sanitizer {args.sanitizer} not found: no sanitizer runs")
        args.sanitizer = None
    check_path = os.path.join(args.dir, "check.json")
    old = {}
    if os.path.exists(check_path) and not args.fresh:
        old = {e["id"]: e for e in load_json(check_path).get("variants", [])}
    variants = [v for v in meta["variants"] if not args.only or args.only in v["id"]]
    if not variants:
        print("fuse_suite: error: no variant matches --only", file=sys.stderr)
        return 2
    variants.sort(key=lambda v: (v["pair"], STRATEGIES.index(v["strategy"])
                                 if v["strategy"] in STRATEGIES else 9, v["variant"]))
    workdir = os.path.abspath(args.workdir or tempfile.mkdtemp(prefix="fuse-check-"))
    os.makedirs(workdir, exist_ok=True)
    log(f"check: {len(variants)} variants, gpu-run {args.gpu_run}, timeout {args.timeout} s, "
        f"files in {workdir}")
    ck = Checker(args, meta, workdir)
    results = {}
    start = time.time()
    order = {v["id"]: i for i, v in enumerate(meta["variants"])}
    command = describe_command("check", argv)
    check_md = os.path.join(args.dir, "check.md")
    earlier_device = (load_json(check_path).get("device") if os.path.exists(check_path)
                      else None)

    def write():
        """check.json and check.md with everything known so far."""
        merged = dict(results)
        for vid, e in old.items():
            if vid not in merged and vid in order:
                merged[vid] = e
        entries = sorted(merged.values(), key=lambda e: order.get(e["id"], 1 << 30))
        summary = {r: sum(e["result"] == r for e in entries) for r in ("PASS", "FAIL", "SKIP")}
        summary["unchecked"] = len(order) - len(entries)
        out = {"version": 1, "date": args.date, "command": command,
               "device": ck.device or earlier_device, "sm_count_generated": meta.get("sm_count"),
               "timeout_s": args.timeout, "summary": summary, "variants": entries}
        tmp = check_path + ".tmp"
        with open(tmp, "w") as f:
            json.dump(out, f, indent=1)
        os.replace(tmp, check_path)
        with open(check_md, "w") as f:
            f.write(render_check_md(out))

    def stub(v, result, detail):
        return {"id": v["id"], "pair": v["pair"], "variant": v["variant"],
                "strategy": v["strategy"], "result": result, "detail": detail}

    stopped = []
    lock = threading.Lock()
    checkers = [ck]
    todo = {}  # pair -> [(tag, variant)] to run through gpu-run
    for n, v in enumerate(variants, 1):
        prev = old.get(v["id"])
        tag = f"[{n}/{len(variants)}]"
        if (args.resume and prev and prev.get("result") in ("PASS", "FAIL") and
                prev.get("sha256") == v.get("sha256")):
            results[v["id"]] = prev
            log(f"{tag} {prev['result']} {v['id']} (earlier run)")
        elif v["status"] in ("refused", "skipped"):
            results[v["id"]] = stub(v, "SKIP", f"not generated ({v['status']}): "
                                               f"{v.get('message', '')}")
            log(f"{tag} SKIP {v['id']}: not generated ({v['status']})")
        elif v["status"] != "ok":
            results[v["id"]] = stub(v, "FAIL", f"gpu-opt {v['status']}: "
                                               f"{v.get('message', '')}")
            log(f"{tag} FAIL {v['id']}: {results[v['id']]['detail']}")
        else:
            todo.setdefault(v["pair"], []).append((tag, v))

    def check_pair(pair):
        """A pair's variants in order, with a checker (and originals) of its
        own, so that pairs can run side by side (--jobs)."""
        if args.jobs > 1:
            own = Checker(args, meta, os.path.join(workdir, re.sub(r"[^\w.+-]", "_", pair)))
            with lock:
                checkers.append(own)
        else:
            own = ck
        for tag, v in todo[pair]:
            if args.stop_after is not None and time.time() - start >= args.stop_after:
                with lock:
                    stopped.append(v["id"])
                continue
            log(f"{tag} {v['id']} ...")
            t0 = time.time()
            e = own.check_variant(v)
            e["check_s"] = round(time.time() - t0, 1)
            with lock:
                results[v["id"]] = e
                if ck.device is None:
                    ck.device = next((c.device for c in checkers if c.device), None)
                write()
            log(f"{tag} {e['result']} {v['id']}: {e['detail']} ({e['check_s']} s)")
        if not args.keep:
            for k in {k for _, v in todo[pair] for k in v["kernels"]}:
                own.drop_original(k)

    try:
        if todo:
            log(f"check: {sum(map(len, todo.values()))} variants of {len(todo)} pairs to run, "
                f"{args.jobs} pair(s) at a time")
        with concurrent.futures.ThreadPoolExecutor(max_workers=max(1, args.jobs)) as pool:
            for f in [pool.submit(check_pair, pair) for pair in todo]:
                f.result()
        if args.sanitizer:
            passed = [v for v in variants if v["id"] in results and
                      results[v["id"]]["result"] == "PASS" and
                      "sanitizer" not in results[v["id"]]]
            sample = sanitizer_sample(passed, meta, args.sanitize_sample)
            log(f"check: compute-sanitizer memcheck + synccheck on {len(sample)} variants "
                f"(at most {args.sanitize_timeout} s each)")
            for v in sample:
                san = {}
                for tool in ("memcheck", "synccheck"):
                    san[tool] = ck.sanitize(v, tool)
                    log(f"    {tool:<9} {v['id']}: {san[tool]['result']}: "
                        f"{san[tool]['detail']}")
                e = results[v["id"]]
                e["sanitizer"] = san
                errs = [f"{t}: {s['detail']}" for t, s in san.items() if s["result"] == "errors"]
                if errs:
                    e["result"] = "FAIL"
                    e["detail"] = "; ".join(errs) + "; outputs: " + e["detail"]
                write()
    finally:
        write()
        if not args.keep and not args.workdir:
            shutil.rmtree(workdir, ignore_errors=True)

    this_run = [results[v["id"]] for v in variants if v["id"] in results]
    failed = [e for e in this_run if e["result"] == "FAIL"]
    log(f"check: {sum(e['result'] == 'PASS' for e in this_run)} PASS, {len(failed)} FAIL, "
        f"{sum(e['result'] == 'SKIP' for e in this_run)} SKIP of {len(variants)} in "
        f"{time.time() - start:.0f} s; wrote {check_path} and check.md")
    for e in failed:
        log(f"  FAIL {e['id']}: {e['detail']}")
    if stopped:
        log(f"check: stopped after {args.stop_after} s (--stop-after) with {len(stopped)} "
            "variants unchecked: run again with --resume to go on")
    return 1 if failed else 3 if stopped else 0


def md_cell(text):
    return str(text).replace("|", "/").replace("\n", " ")


def render_check_md(check):
    dev = check.get("device") or {}
    s = check["summary"]
    lines = [f"# Fused variants against their original kernels on {dev.get('name', '?')}", "",
             f"- Date: {check['date']}", f"- Command: `{check['command']}`",
             "- Method: each original kernel and each fused variant run once by gpu-run "
             "(`--repeat 0`) on the same seeded inputs; every buffer the originals write "
             "(`out`, poisoned with 0xFF first, and `zero`) compared byte for byte with the "
             "fused kernel's, except reduce_shfl (float atomicAdd order): relative error "
             f"1e-5. Each gpu-run call under a {check['timeout_s']} s watchdog.",
             f"- Result: {s['PASS']} PASS, {s['FAIL']} FAIL, {s['SKIP']} SKIP (not generated)" +
             (f", {s['unchecked']} not checked yet." if s.get("unchecked") else ".")]
    sms = dev.get("multiprocessors")
    if sms and sms != check.get("sm_count_generated"):
        lines.append(f"- Warning: the device has {sms} SMs, the grids were generated for "
                     f"{check.get('sm_count_generated')}.")
    lines += ["", "| pair | strategy | variant | result | detail |",
              "| --- | --- | --- | --- | --- |"]
    for e in check["variants"]:
        lines.append(f"| {e['pair']} | {e['strategy']} | {e['variant']} | {e['result']} | "
                     f"{md_cell(e.get('detail', ''))} |")
    san = [e for e in check["variants"] if e.get("sanitizer")]
    if san:
        lines += ["", "## compute-sanitizer", "",
                  "| variant | memcheck | synccheck |", "| --- | --- | --- |"]
        for e in san:
            cells = [f"{e['sanitizer'][t]['result']}: {md_cell(e['sanitizer'][t]['detail'])}"
                     for t in ("memcheck", "synccheck")]
            lines.append(f"| {e['id']} | {cells[0]} | {cells[1]} |")
    return "\n".join(lines) + "\n"


# Bench ---------------------------------------------------------------------------------

def bench_plan(meta, check, only=None):
    """(pairs, labels): the pairs to time, and for every fused variant that
    passed the check {label: variant record}; also the variants left out."""
    passed = {e["id"] for e in check.get("variants", []) if e["result"] == "PASS" and
              e.get("sha256") is not None}
    sha = {e["id"]: e.get("sha256") for e in check.get("variants", [])}
    pairs = [p for p in meta["pairs"] if not only or only in p["name"]]
    names = {p["name"] for p in pairs}
    fused, left_out = {}, []
    for v in meta["variants"]:
        if v["pair"] not in names:
            continue
        if v["id"] in passed and sha[v["id"]] == v.get("sha256"):
            fused[v["id"]] = v
        else:
            e = next((e for e in check.get("variants", []) if e["id"] == v["id"]), None)
            why = (f"{e['result']}: {e.get('detail', '')}" if e else "not checked")
            if e and e["result"] == "PASS":
                why = "checked on another build of the variant (sha256 differs)"
            left_out.append({"id": v["id"], "why": why})
    return pairs, fused, left_out


def fused_spec(v, meta, vdir):
    ents = [(meta.get("entries", {}).get(k) or [k])[0] for k in v["kernels"]]
    spec, _, _, _ = transformed_spec([(k, meta["kernels"][k]) for k in v["kernels"]],
                                     os.path.join(vdir, v["ptx"]),
                                     os.path.join(vdir, v["manifest"]), entries=ents)
    return {"label": v["id"], **spec}


def batch_groups(pairs, fused, kernel_bytes, budget):
    """gpuopt.bench.batch_groups over the pairs, each a group of its two
    kernels with its fused variants ({label: variant}) as "also". Returns
    [[(pair, [fused label, ...]), ...], ...]."""
    groups = [{"name": p["name"], "kernels": [p["a"], p["b"]], "pair": p,
               "also": [label for label, v in fused.items() if v["pair"] == p["name"]]}
              for p in pairs]
    return [[(g["pair"], also) for g, also in batch]
            for batch in gbench.batch_groups(groups, kernel_bytes, budget, warn)]


def estimate_s(pairs, fused, meta, rounds):
    """Rough GPU time of the timed part from the profile (None if unknown)."""
    prof = meta.get("kernel_profile") or {}
    total = 0.0
    for p in pairs:
        ts = [(prof.get(k) or {}).get("median_ms") for k in (p["a"], p["b"])]
        if None in ts:
            return None
        nf = sum(v["pair"] == p["name"] for v in fused.values())
        total += rounds * sum(ts) * (2 + 1 + 1 + 1 + 2 * nf)
    return total / 1000


def cmd_bench(args, argv):
    if args.from_json:
        saved = load_json(args.from_json)
        write_bench(saved, args.out_dir)
        return 0
    vdir = os.path.abspath(args.dir)
    meta = load_json(os.path.join(vdir, "variants.json"))
    check_path = os.path.join(vdir, "check.json")
    if not os.path.exists(check_path):
        print(f"fuse_suite: error: {check_path} not found: run `check` first",
              file=sys.stderr)
        return 2
    check = load_json(check_path)
    if not os.access(args.gpu_run, os.X_OK):
        print(f"fuse_suite: error: gpu-run {args.gpu_run} is not an executable",
              file=sys.stderr)
        return 2
    pairs, fused, left_out = bench_plan(meta, check, args.only)
    if not pairs:
        print("fuse_suite: error: no pair matches --only", file=sys.stderr)
        return 2
    for x in left_out:
        log(f"bench: leaving out {x['id']}: {x['why'][:160]}")
    kernels = {}
    for p in pairs:
        for k in (p["a"], p["b"]):
            kernels[k] = {**meta["kernels"][k], "module": from_root(meta["kernels"][k]["module"])}
    bad = []
    for label, v in list(fused.items()):
        try:
            kernels[label] = fused_spec(v, meta, vdir)
        except (OSError, ValueError, KeyError, MappingError) as e:
            bad.append(label)
            left_out.append({"id": label, "why": f"manifest unusable: {e}"})
    for label in bad:
        fused.pop(label)
    kernel_bytes = {l: spec_bytes(k["args"]) for l, k in kernels.items()}
    dev_mem = ((check.get("device") or {}).get("total_memory") or 80 * (1 << 30))
    budget = int(args.max_gib * (1 << 30)) if args.max_gib else int(0.7 * dev_mem)
    batches = batch_groups(pairs, fused, kernel_bytes, budget)
    total = sum(kernel_bytes.values())
    log(f"bench: {len(pairs)} pairs, {len(fused)} fused variants, {len(kernels)} kernels, "
        f"{total / (1 << 30):.1f} GiB of buffers -> {len(batches)} gpu-run process(es) of at "
        f"most {budget / (1 << 30):.1f} GiB each")
    est = estimate_s(pairs, fused, meta, args.warmup + args.repeat)
    if est is not None:
        log(f"bench: roughly {est:.0f} s of kernel time (from the profile's times), plus "
            "input initialisation")

    reports, processes, specs_run = [], [], []
    command = describe_command("bench", argv)

    earlier = {}

    def save(not_yet):
        """Writes the results measured so far (after every process); not_yet:
        pairs still (partly) to measure. With --only, merged into the results
        of earlier runs on this GPU."""
        report = {"device": reports[0]["device"], "warmup": args.warmup,
                  "repeat": args.repeat,
                  "kernels": [k for r in reports for k in r.get("kernels", [])],
                  "groups": merge_groups([g for r in reports for g in r.get("groups", [])])}
        measured = {g["name"] for g in report["groups"]}
        saved = {"version": 1, "command": command, "date": args.date,
                 "sm_count_generated": meta.get("sm_count"), "gpu_opt": meta.get("gpu_opt"),
                 "profile": meta.get("profile"), "warmup": args.warmup,
                 "repeat": args.repeat, "processes": processes, "pending": not_yet,
                 "pairs": [p for p in pairs if p["name"] in measured],
                 "variants": {l: {**{k: v.get(k) for k in ("pair", "variant", "strategy",
                                                           "options", "hfuse", "fused")},
                                  "candidates": load_candidates(vdir, v)}
                              for l, v in fused.items() if v["pair"] in measured},
                 "left_out": left_out, "declined": declined_pairs(meta, measured),
                 "specs": specs_run, "report": report}
        saved = portable(saved, [(vdir, "DIR")])
        if args.only and not args.fresh:
            if "old" not in earlier:
                path = os.path.join(args.out_dir, "fusion-" + baselines.gpu_slug(
                    report["device"]["name"]) + ".json")
                earlier["old"] = load_json(path) if os.path.exists(path) else None
                if earlier["old"]:
                    log(f"bench: merging into the earlier results in {path}")
            if earlier["old"]:
                saved = merge_saved(earlier["old"], saved)
        write_bench(saved, args.out_dir, quiet=bool(not_yet))

    with tempfile.TemporaryDirectory(prefix="fuse-bench-") as tmp:
        for n, batch in enumerate(batches, 1):
            spec = gbench.batch_spec(
                [({"name": p["name"], "kernels": [p["a"], p["b"]]}, also) for p, also in batch],
                kernels, ["alone", "serial", "concurrent", "graph"], args.warmup, args.repeat)
            labels = [k["label"] for k in spec["kernels"]]
            specs_run.append(spec)
            names = [p["name"] for p, _ in batch]
            log(f"bench: [{n}/{len(batches)}] gpu-run --spec ({len(labels)} kernels, "
                f"{sum(kernel_bytes[l] for l in labels) / (1 << 30):.1f} GiB): "
                f"{', '.join(names)}")
            rep, error, r = gbench.run_spec(args.gpu_run, spec, tmp, f"spec{n}", args.timeout)
            proc = {"pairs": names, "rc": r.rc, "wall_s": round(r.wall, 1)}
            if error:
                proc["error"] = error
                log(f"bench: [{n}/{len(batches)}] FAILED: {proc['error']}")
            else:
                reports.append(rep)
                log(f"bench: [{n}/{len(batches)}] done in {r.wall:.0f} s")
                sms = rep.get("device", {}).get("multiprocessors")
                if sms and sms != meta.get("sm_count") and len(reports) == 1:
                    warn(f"the device has {sms} SMs, the grids are for {meta.get('sm_count')}")
                missing = [x for x in names if x not in
                           {g["name"] for g in rep.get("groups", [])}]
                if missing:
                    proc["error"] = f"the report has no group {missing}"
            processes.append(proc)
            if reports:
                save(sorted({p["name"] for b in batches[n:] for p, _ in b}))
    if not reports:
        print("fuse_suite: error: no gpu-run process succeeded", file=sys.stderr)
        return 1
    return 1 if any("error" in p for p in processes) else 0


def cmd_profile(args, argv):
    """Each original kernel alone, and at fewer blocks per SM (gpu-run
    --occupancy-sweep), in as few gpu-run processes as device memory allows;
    the merged report is the profile= of gpu-opt's fusion planner."""
    vdir = os.path.abspath(args.dir)
    meta = load_json(os.path.join(vdir, "variants.json"))
    if not os.access(args.gpu_run, os.X_OK):
        print(f"fuse_suite: error: gpu-run {args.gpu_run} is not an executable",
              file=sys.stderr)
        return 2
    kernels = [{**meta["kernels"][label], "label": label,
                "module": from_root(meta["kernels"][label]["module"])}
               for label in sorted(meta["kernels"])]
    try:
        merged = gprofile.profile(args.gpu_run, kernels, args.warmup, args.repeat,
                                  args.max_gib, args.timeout, log=log)
    except gprofile.ProfileError as e:
        print(f"fuse_suite: error: {e}", file=sys.stderr)
        return 1
    merged["command"] = describe_command("profile", argv)
    os.makedirs(os.path.dirname(os.path.abspath(args.out)), exist_ok=True)
    with open(args.out, "w") as f:
        json.dump(portable(merged), f, indent=1)
    for line in gprofile.describe(merged):
        log(f"profile: {line}")
    log(f"profile: wrote {args.out}")
    return 0


def merge_saved(old, new):
    """Saved bench results of an earlier run with the pairs of `new` replaced
    (the same GPU model; both portable)."""
    names = {p["name"] for p in new["pairs"]} | set(new.get("pending", []))
    order = {f"{a}+{b}": i for i, (_, a, b) in enumerate(suite_pairs())}
    keep = [p for p in old.get("pairs", []) if p["name"] not in names]
    kept = {p["name"] for p in keep}
    new_labels = {k["label"] for k in new["report"]["kernels"]}
    report = dict(new["report"])
    report["kernels"] = [k for k in old["report"].get("kernels", [])
                         if k["label"] not in new_labels] + new["report"]["kernels"]
    report["groups"] = [g for g in old["report"].get("groups", []) if g["name"] in kept] + \
        new["report"]["groups"]
    merged = dict(new)
    merged.update(
        command=f"{old.get('command', '?')}; then {new['command']}",
        pairs=sorted(keep + new["pairs"], key=lambda p: (order.get(p["name"], 1 << 30),
                                                         p["name"])),
        variants={**{l: v for l, v in old.get("variants", {}).items() if v["pair"] in kept},
                  **new["variants"]},
        declined={**{k: v for k, v in (old.get("declined") or {}).items() if k in kept},
                  **(new.get("declined") or {})},
        left_out=[x for x in old.get("left_out", []) if x["id"].split("/")[0] in kept] +
        new.get("left_out", []),
        processes=[p for p in old.get("processes", [])
                   if set(p["pairs"]) & kept] + new.get("processes", []),
        specs=old.get("specs", []) + new.get("specs", []),
        merged_dates=sorted(set(old.get("merged_dates", [old.get("date")]) + [new["date"]])),
        report=report)
    return merged


def declined_pairs(meta, names):
    """{pair: gpu-opt's message} for the pairs whose auto variant gpu-opt
    refused because no candidate was predicted to beat running apart."""
    return {v["pair"]: v.get("message", "") for v in meta["variants"]
            if v["pair"] in names and v["variant"] == "auto" and v["status"] == "refused"
            and "not fusing" in v.get("message", "")}


def load_candidates(vdir, v):
    """auto's ranked candidates (gpu-opt's candidates-out), shortened; None
    when there are none."""
    if not v.get("candidates"):
        return None
    try:
        cands = load_json(os.path.join(vdir, v["candidates"]))
    except (OSError, ValueError):
        return None
    keys = ("strategy", "threads", "ratio", "maxnreg", "feasible", "predicted", "description")
    return [{k: c.get(k) for k in keys if k in c} for c in cands if isinstance(c, dict)]


def plan_key(strategy, threads, ratio, maxnreg):
    """What makes two plans the same: the strategy, the thread split (thread),
    the ratio (interleave, dynamic, sm_aware) and the register cap (0: none)."""
    return (strategy, tuple(threads or ()) if strategy == "thread" else (),
            tuple(ratio or ()) if strategy in ("interleave", "dynamic", "sm_aware")
            else (),
            int(maxnreg or 0))


def variant_plan_key(v):
    """plan_key of a generated variant, from its manifest summary."""
    f = v.get("fused") or {}
    parts = f.get("parts") or []
    threads = [p["threads"][1] - p["threads"][0] for p in parts
               if isinstance(p.get("threads"), list) and len(p["threads"]) == 2]
    ratio = [p.get("ratio") or 1 for p in parts]
    maxnreg = f.get("maxnreg")
    if maxnreg is None:
        maxnreg = (v.get("options") or {}).get("maxnreg", 0)
    return plan_key(f.get("fusion_strategy") or v["strategy"], threads, ratio, maxnreg)


def candidate_search(cands, measured, best_ms, tol=1.03):
    """Walking auto's ranked feasible candidates from the top, how many must be
    measured to reach a plan within tol of the best measured time. measured:
    {plan_key: ms}. Returns {candidates, matched, measure, share}; measure
    and share are None when no measured plan among them is that fast."""
    feasible = [c for c in cands if c.get("feasible", True)]
    keys = [plan_key(c.get("strategy"), c.get("threads"), c.get("ratio"), c.get("maxnreg"))
            for c in feasible]
    out = {"candidates": len(feasible), "matched": sum(k in measured for k in keys),
           "measure": None, "share": None}
    for i, k in enumerate(keys, 1):
        if k in measured and measured[k] <= tol * best_ms:
            out.update(measure=i, share=i / len(feasible))
            break
    return out


def geomean(xs):
    xs = [x for x in xs if x is not None and x > 0]
    return math.exp(sum(math.log(x) for x in xs) / len(xs)) if xs else None


def mean(xs):
    xs = [x for x in xs if x is not None]
    return sum(xs) / len(xs) if xs else None


def _median(d):
    return d.get("median_ms") if isinstance(d, dict) else None


def pick_auto(times):
    """The automatic choice's variant: "auto", else the first auto*."""
    if "auto" in times:
        return "auto"
    autos = sorted(v for v in times if v.startswith("auto"))
    return autos[0] if autos else None


def analyse(saved):
    """Per-pair rows and the summary from a saved bench result."""
    report = saved["report"]
    groups = {g["name"]: g for g in report.get("groups", [])}
    alone = {k["label"]: k.get("time") or {} for k in report.get("kernels", [])}
    by_pair = {}
    for label, v in saved["variants"].items():
        by_pair.setdefault(v["pair"], []).append((label, v))
    rows = []
    for p in saved["pairs"]:
        g = groups.get(p["name"])
        if g is None:
            continue
        a, b = p["a"], p["b"]
        ta, tb = _median(g.get("alone", {}).get(a)), _median(g.get("alone", {}).get(b))
        serial, streams = _median(g.get("serial")), _median(g.get("concurrent"))
        graph = _median(g.get("graph"))
        bases = {k: t for k, t in (("serial", serial), ("streams", streams),
                                    ("graph", graph)) if t is not None}
        best_base = min(bases.values()) if bases else None
        also = g.get("also") or {}
        variants = {}
        for label, v in by_pair.get(p["name"], []):
            src = also.get(label) or alone.get(label) or {}
            t = _median(src)
            if t is not None:
                variants[v["variant"]] = {
                    "label": label, "strategy": v["strategy"], "options": v.get("options"),
                    "time": {k: src.get(k) for k in ("median_ms", "min_ms", "max_ms", "spread")},
                    "from": "also" if label in also else "alone",
                    "chose": (v.get("fused") or {}).get("fusion_strategy")}
        times = {n: x["time"]["median_ms"] for n, x in variants.items()}
        per_strategy = {}
        for s in STRATEGIES:
            cands = [(t, n) for n, t in times.items() if variants[n]["strategy"] == s]
            if s == "auto":
                n = pick_auto(times)
                cands = [(times[n], n)] if n else []
            if cands:
                t, n = min(cands)
                per_strategy[s] = {"variant": n, "ms": t}
        best_fused = min(((t, n) for n, t in times.items()), default=None)
        auto = per_strategy.get("auto")
        mx = max(ta, tb) if None not in (ta, tb) else None
        row = {"set": p["set"], "pair": p["name"], "a": a, "b": b, "ta": ta, "tb": tb,
               "max": mx, "serial": serial, "streams": streams, "graph": graph,
               "best_baseline": best_base,
               "best_baseline_mode": min(bases, key=bases.get) if bases else None,
               "per_strategy": per_strategy, "variants": variants,
               "best_fused": ({"variant": best_fused[1], "ms": best_fused[0]}
                              if best_fused else None),
               "auto": auto,
               "auto_chose": variants[auto["variant"]]["chose"] if auto else None,
               "auto_declined": (saved.get("declined") or {}).get(p["name"]) if not auto
               else None}
        for key, t in (("auto", auto["ms"] if auto else None),
                       ("best", best_fused[0] if best_fused else None)):
            row[f"speedup_{key}"] = best_base / t if t and best_base else None
            row[f"overlap_{key}"] = overlap_efficiency(serial, t, ta, tb)
        # What a declined pair gets: the kernels run apart at the best baseline.
        row["overlap_apart"] = overlap_efficiency(serial, best_base, ta, tb)
        if auto and times:
            ranked = sorted(times.values())
            rank = 1 + sum(t < auto["ms"] for t in ranked)
            row["exhaustive"] = {"variants": len(times), "best_variant": best_fused[1],
                                 "best_ms": best_fused[0], "auto_ms": auto["ms"],
                                 "auto_over_best": auto["ms"] / best_fused[0],
                                 "within_3pct": auto["ms"] <= 1.03 * best_fused[0],
                                 "auto_rank": rank, "rank_share": rank / len(times),
                                 "search": None}
            cands = saved["variants"][variants[auto["variant"]]["label"]].get("candidates")
            if cands:
                measured = {}
                for label, v in by_pair.get(p["name"], []):
                    if v["variant"] in times:
                        k = variant_plan_key(v)
                        measured[k] = min(measured.get(k, math.inf), times[v["variant"]])
                row["exhaustive"]["search"] = candidate_search(cands, measured, best_fused[0])
        rows.append(row)
    return rows, summarize(rows)


def summarize(rows):
    autos = [r for r in rows if r["speedup_auto"] is not None]
    mc = [r for r in rows if r["pair"] in MEMORY_COMPUTE]
    lm = [r for r in rows if r["pair"] in LONG_MIXED]
    ex = [r["exhaustive"] for r in rows if r.get("exhaustive")]
    return {
        "pairs": len(rows), "pairs_with_auto": len(autos),
        "geomean_speedup_auto": geomean(r["speedup_auto"] for r in autos),
        "auto_declined": [r["pair"] for r in rows if r["auto_declined"] is not None],
        "geomean_speedup_auto_declined_as_1": geomean(
            [r["speedup_auto"] for r in autos] +
            [1.0 for r in rows if r["auto_declined"] is not None]),
        "geomean_speedup_best": geomean(r["speedup_best"] for r in rows),
        # Speedup below 0.99 (auto slower than the best baseline) / above 1.01.
        "auto_below_0_99": sum(r["speedup_auto"] < 0.99 for r in autos),
        "auto_above_1_01": sum(r["speedup_auto"] > 1.01 for r in autos),
        "memory_compute_pairs": [r["pair"] for r in mc],
        "mean_overlap_auto_memory_compute": mean(r["overlap_auto"] for r in mc),
        "mean_overlap_auto_or_apart_memory_compute": mean(
            r["overlap_auto"] if r["speedup_auto"] is not None else r["overlap_apart"]
            for r in mc),
        "mean_overlap_best_memory_compute": mean(r["overlap_best"] for r in mc),
        "long_mixed_pairs": [r["pair"] for r in lm],
        "long_mixed_auto_pairs": [r["pair"] for r in lm if r["speedup_auto"] is not None],
        "geomean_speedup_auto_long_mixed": geomean(r["speedup_auto"] for r in lm),
        "geomean_speedup_auto_long_mixed_declined_as_1": geomean(
            r["speedup_auto"] if r["speedup_auto"] is not None else 1.0 for r in lm),
        "geomean_speedup_best_long_mixed": geomean(r["speedup_best"] for r in lm),
        "exhaustive_pairs": len(ex),
        "auto_within_3pct": sum(e["within_3pct"] for e in ex),
        "mean_variants_per_pair": mean(e["variants"] for e in ex),
        "mean_auto_rank_share": mean(e["rank_share"] for e in ex),
        "pairs_with_candidates": sum(bool(e["search"]) for e in ex),
        "mean_candidates": mean(e["search"]["candidates"] for e in ex if e["search"]),
        "mean_search_share": mean(e["search"]["share"] for e in ex if e["search"]),
        "search_reached_best": sum(bool(e["search"] and e["search"]["measure"]) for e in ex),
    }


def f4(x):
    return "-" if x is None else f"{x:.4f}"


def f3(x):
    return "-" if x is None else f"{x:.3f}"


def f2(x):
    return "-" if x is None else f"{x:.2f}"


def render_bench_md(saved, rows, summary):
    dev = saved["report"]["device"]
    s = summary
    sms = dev.get("multiprocessors")
    gen_sms = saved.get("sm_count_generated")
    procs = saved.get("processes", [])
    md = [f"# Horizontal fusion on {dev['name']}", "",
          f"- GPU: {dev['name']} (compute capability {dev.get('compute_capability')}, "
          f"{sms} SMs, {dev.get('l2_bytes', 0) // (1 << 20)} MiB L2)",
          f"- Date: {', '.join(saved.get('merged_dates') or [saved['date']])}",
          f"- Command: `{saved['command']}` ({len(procs)} gpu-run --spec process"
          f"{'es' if len(procs) != 1 else ''}; buffers of all kernels of a process are "
          "allocated together, so the pairs are split by device memory)",
          f"- Fused kernels: gpu-opt --hfuse, grids for {gen_sms} SMs" +
          (f" (WARNING: this GPU has {sms})" if sms and gen_sms and sms != gen_sms else "") +
          (f"; auto with profile {saved.get('profile')}" if saved.get("profile") else ""),
          f"- Method: CUDA events, {saved['warmup']} warm-up and {saved['repeat']} timed "
          "repetitions; medians in ms. Per pair, in interleaved rounds: A and B alone, "
          "serial (one stream), 2 streams (released by one event), graph (a CUDA graph of "
          "two independent nodes), and every fused variant that passed `check` "
          "(gpu-run's \"also\").",
          "- best baseline = min(serial, 2 streams, graph); speedup = best baseline / "
          "fused; overlap efficiency = (serial - fused) / (serial - max(T_A, T_B)): 1 = "
          "as fast as the longer kernel alone, 0 = no better than serial.", ""]
    failed = [p for p in procs if p.get("error")]
    for p in failed:
        md.append(f"- NOT MEASURED: {', '.join(p['pairs'])}: gpu-run {md_cell(p['error'])}")
    if saved.get("pending"):
        md.append(f"- PARTIAL: not measured yet: {', '.join(saved['pending'])}")
    if failed or saved.get("pending"):
        md.append("")
    md += ["## Summary", "",
           f"- auto over the best baseline: geomean speedup {f3(s['geomean_speedup_auto'])} "
           f"over {s['pairs_with_auto']} fused pairs; speedup < 0.99 (auto slower than the "
           f"best baseline) in {s['auto_below_0_99']} pairs, > 1.01 in "
           f"{s['auto_above_1_01']} (best fused variant per pair, every pair: geomean "
           f"{f3(s['geomean_speedup_best'])})",
           f"- auto declined to fuse {len(s['auto_declined'])} pairs (every candidate "
           "predicted slower than running apart)" +
           (f": {', '.join(s['auto_declined'])}; counting those as 1.0 (the kernels run "
            f"apart), geomean {f3(s['geomean_speedup_auto_declined_as_1'])}"
            if s["auto_declined"] else ""),
           f"- memory + compute pairs ({len(s['memory_compute_pairs'])}): mean overlap "
           f"efficiency auto {f3(s['mean_overlap_auto_memory_compute'])} over the pairs it "
           f"fused, {f3(s['mean_overlap_auto_or_apart_memory_compute'])} over all (a declined "
           f"pair runs apart at its best baseline); best fused variant "
           f"{f3(s['mean_overlap_best_memory_compute'])}",
           f"- long mixed pairs ({', '.join(s['long_mixed_pairs']) or 'none'}): geomean "
           f"speedup auto {f3(s['geomean_speedup_auto_long_mixed'])} over the "
           f"{len(s['long_mixed_auto_pairs'])} it fused, "
           f"{f3(s['geomean_speedup_auto_long_mixed_declined_as_1'])} over all "
           f"{len(s['long_mixed_pairs'])} (declined as 1.0); best fused variant "
           f"{f3(s['geomean_speedup_best_long_mixed'])}",
           f"- exhaustive search: auto within 3% of the best of all variants in "
           f"{s['auto_within_3pct']} of {s['exhaustive_pairs']} pairs; an exhaustive search "
           f"measures {f2(s['mean_variants_per_pair'])} variants per pair on average, auto "
           f"none (it uses the kernels' times alone); auto's choice ranks on average at "
           f"{f3(s['mean_auto_rank_share'])} of the variants sorted by time (rank / variants)",
           f"- measuring auto's ranked candidates from the top (gpu-opt candidates-out, "
           f"{s['pairs_with_candidates']} pairs, {f2(s['mean_candidates'])} feasible candidates "
           f"on average) reaches a plan within 3% of the best measured variant in "
           f"{s['search_reached_best']} pairs, after measuring on average "
           f"{f3(s['mean_search_share'])} of the candidates", "",
           "## Pairs (ms)", "",
           "| set | pair | T_A | T_B | max | serial | 2 streams | graph | best baseline | "
           "thread | interleave | dynamic | sm_aware | auto | auto chose | speedup auto | "
           "speedup best | overlap auto | overlap best |",
           "| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: "
           "| ---: | ---: | --- | ---: | ---: | ---: | ---: |"]
    for r in rows:
        ps = r["per_strategy"]
        md.append(" | ".join([
            f"| {r['set']}", r["pair"], f4(r["ta"]), f4(r["tb"]), f4(r["max"]),
            f4(r["serial"]), f4(r["streams"]), f4(r["graph"]), f4(r["best_baseline"])] +
            [f4(ps.get(st, {}).get("ms")) for st in STRATEGIES] +
            ["declined" if r["auto_declined"] is not None else str(r["auto_chose"] or "-"),
             f3(r["speedup_auto"]), f3(r["speedup_best"]),
             f3(r["overlap_auto"]), f3(r["overlap_best"])]) + " |")
    md += ["", "## Best variant per strategy", "",
           "| pair | thread | interleave | dynamic | sm_aware | auto | best of all |",
           "| --- | --- | --- | --- | --- | --- | --- |"]
    for r in rows:
        ps = r["per_strategy"]
        cells = [f"{ps[st]['variant']} {f4(ps[st]['ms'])}" if st in ps else "-"
                 for st in STRATEGIES]
        best = r["best_fused"]
        md.append(f"| {r['pair']} | " + " | ".join(cells) +
                  f" | {best['variant'] + ' ' + f4(best['ms']) if best else '-'} |")
    md += ["", "## Exhaustive search against auto", "",
           "| pair | variants | best variant | best | auto | auto / best | within 3% | "
           "auto rank | rank / variants | candidates (measured) | measure top k | "
           "k / candidates |",
           "| --- | ---: | --- | ---: | ---: | ---: | --- | ---: | ---: | ---: | ---: | ---: |"]
    for r in rows:
        e = r.get("exhaustive")
        if e:
            c = e.get("search") or {}
            md.append(f"| {r['pair']} | {e['variants']} | {e['best_variant']} | "
                      f"{f4(e['best_ms'])} | {f4(e['auto_ms'])} | {f3(e['auto_over_best'])} | "
                      f"{'yes' if e['within_3pct'] else 'no'} | {e['auto_rank']} | "
                      f"{f2(e['rank_share'])} | " +
                      (f"{c['candidates']} ({c['matched']}) | {c['measure'] or 'not reached'} | "
                       f"{f2(c['share'])} |" if c else "- | - | - |"))
    md += ["", "measure top k: how many of auto's ranked feasible candidates, from the top, "
           "must be measured to reach a plan within 3% of the best measured variant (a "
           "candidate counts as measured when a generated variant has its strategy, split or "
           "ratio and register cap)."]
    md += ["", "## All variants", "",
           "| pair | variant | strategy | median | min | max | spread | / serial | "
           "speedup | overlap |",
           "| --- | --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |"]
    for r in rows:
        for n, v in sorted(r["variants"].items(), key=lambda x: x[1]["time"]["median_ms"]):
            t = v["time"]
            m = t["median_ms"]
            spread = "-" if t.get("spread") is None else f"{100 * t['spread']:.1f}%"
            md.append(f"| {r['pair']} | {n} | {v['strategy']} | {f4(m)} | {f4(t.get('min_ms'))} "
                      f"| {f4(t.get('max_ms'))} | {spread} | "
                      f"{f3(m / r['serial']) if r['serial'] else '-'} | "
                      f"{f3(r['best_baseline'] / m) if r['best_baseline'] else '-'} | "
                      f"{f3(overlap_efficiency(r['serial'], m, r['ta'], r['tb']))} |")
    if saved.get("left_out"):
        md += ["", "## Not measured", ""]
        md += [f"- {x['id']}: {md_cell(x['why'])[:300]}" for x in saved["left_out"]]
    return "\n".join(md) + "\n"


CSV_FIELDS = ["set", "pair", "what", "strategy", "variant", "median_ms", "min_ms", "max_ms",
              "spread", "over_serial", "speedup_vs_best_baseline", "overlap_efficiency"]


def csv_rows(rows):
    """Long format: one row per measurement of a pair."""
    out = []
    for r in rows:
        def add(what, t, strategy="", variant=""):
            t = t or {}
            m = t.get("median_ms")
            out.append({"set": r["set"], "pair": r["pair"], "what": what, "strategy": strategy,
                        "variant": variant, "median_ms": m, "min_ms": t.get("min_ms"),
                        "max_ms": t.get("max_ms"), "spread": t.get("spread"),
                        "over_serial": m / r["serial"] if m and r["serial"] else None,
                        "speedup_vs_best_baseline": r["best_baseline"] / m
                        if m and r["best_baseline"] and what not in ("alone_a", "alone_b")
                        else None,
                        "overlap_efficiency": overlap_efficiency(r["serial"], m, r["ta"], r["tb"])
                        if what not in ("alone_a", "alone_b") else None})
        add("alone_a", {"median_ms": r["ta"]}, variant=r["a"])
        add("alone_b", {"median_ms": r["tb"]}, variant=r["b"])
        for what, key in (("serial", "serial"), ("streams", "streams"), ("graph", "graph")):
            if r[key] is not None:
                add(what, {"median_ms": r[key]})
        for n, v in r["variants"].items():
            add("fused", v["time"], v["strategy"], n)
    return [{k: ("" if v is None else v) for k, v in row.items()} for row in out]


def plot(rows, path, title):
    """Grouped bars per pair, normalised to serial; a marker at max(T_A,T_B)."""
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        warn("matplotlib not installed: no plot")
        return False
    series = [("serial", lambda r: r["serial"]), ("2 streams", lambda r: r["streams"]),
              ("graph", lambda r: r["graph"])] + \
        [(s, (lambda s: lambda r: r["per_strategy"].get(s, {}).get("ms"))(s))
         for s in STRATEGIES]
    rows = [r for r in rows if r["serial"]]
    if not rows:
        return False
    width = 0.8 / len(series)
    fig, ax = plt.subplots(figsize=(max(8, 0.75 * len(rows) + 2), 5))
    top = 1.0
    for j, (name, get) in enumerate(series):
        xs = [i + (j - (len(series) - 1) / 2) * width for i in range(len(rows))]
        ys = [(get(r) or 0) / r["serial"] for r in rows]
        top = max([top] + ys)
        ax.bar(xs, ys, width, label=name)
    ax.scatter(range(len(rows)), [(r["max"] or 0) / r["serial"] for r in rows], marker="_",
               s=400, color="black", zorder=3, label="max(T_A, T_B)")
    ax.set_xticks(range(len(rows)))
    ax.set_xticklabels([r["pair"] for r in rows], rotation=60, ha="right", fontsize=8)
    ax.set_ylabel("time / serial")
    ax.set_title(title)
    ax.axhline(1.0, color="grey", linewidth=0.5)
    ax.set_ylim(0, top * 1.25)
    ax.legend(fontsize=7, ncol=8, loc="upper center")
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)
    return True


def write_bench(saved, out_dir, quiet=False):
    """OUT_DIR/fusion-<gpu>.md, .csv, .json and .png from a saved result
    (quiet: partial results, not printed)."""
    rows, summary = analyse(saved)
    dev = saved["report"]["device"]
    stem = os.path.join(out_dir, f"fusion-{baselines.gpu_slug(dev['name'])}")
    os.makedirs(out_dir, exist_ok=True)
    with open(stem + ".json", "w") as f:
        json.dump({**saved, "summary": summary}, f, indent=1)
    md = render_bench_md(saved, rows, summary)
    with open(stem + ".md", "w") as f:
        f.write(md)
    with open(stem + ".csv", "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=CSV_FIELDS)
        w.writeheader()
        w.writerows(csv_rows(rows))
    png = plot(rows, stem + ".png", f"Horizontal fusion on {dev['name']} (time / serial)")
    if not quiet:
        print(md)
    log(f"bench: wrote {stem}.md, .csv, .json" + (" and .png" if png else "") +
        (" (partial: more processes to come)" if quiet else ""))


# Command line ------------------------------------------------------------------------------

def find_tool(name):
    """The tool as gpuopt finds it ($GPUOPT_BIN_DIR, PATH), else this
    repository's build."""
    try:
        return _find_tool(name)
    except ToolNotFound:
        return os.path.join(ROOT, "build", "bin", name)


def cmd_search_specs(args):
    """DIR/<a>__<b>.json per pair: the two kernels as generate launched them,
    without their output files."""
    meta = load_json(os.path.join(args.dir, "variants.json"))
    os.makedirs(args.out_dir, exist_ok=True)
    for p in meta["pairs"]:
        if args.only and args.only not in p["name"]:
            continue
        kernels = [{k: v for k, v in meta["kernels"][label].items() if k != "out"}
                   for label in (p["a"], p["b"])]
        path = os.path.join(args.out_dir, f"{p['a']}__{p['b']}.json")
        with open(path, "w") as f:
            json.dump({"kernels": kernels}, f, indent=1)
        log(f"wrote {rel_to_root(path)}")
    return 0


def main(argv=None):
    argv = list(sys.argv[1:] if argv is None else argv)
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    g = sub.add_parser("generate", help="fuse every pair with gpu-opt (no GPU)")
    g.add_argument("--gpu-opt", default=os.path.join(ROOT, "build", "bin", "gpu-opt"))
    g.add_argument("--out-dir", default=os.path.join(ROOT, "build", "fusion"))
    g.add_argument("--only", default=None, help="only pairs whose name contains this")
    g.add_argument("--sm-count", type=int, default=SM_COUNT,
                   help="SMs the grids are sized for (default 132, an H100 SXM)")
    g.add_argument("--ptxas", default=find_tool("ptxas"),
                   help="assemble every variant with this ptxas and record a failure as a "
                        "refusal (\"\": do not)")
    g.add_argument("--chip", default=CHIP,
                   help="chip= for the auto strategy (ptxas's resource report)")
    g.add_argument("--profile", default=os.path.join(ROOT, "docs", "results",
                                                     "occupancy-h100.json"),
                   help="gpu-run report with the kernels' times alone (for auto and the "
                        "maxnreg choice), best with their occupancy sweep (`profile`); a "
                        "baselines-<gpu>.json works")
    g.add_argument("--no-smem", dest="smem", action="store_false",
                   help="leave smem= (each launch's dynamic shared memory) out of --hfuse")
    g.add_argument("--no-candidates", dest="candidates", action="store_false",
                   help="leave candidates-out= (auto's ranked candidates) out of --hfuse")
    g.add_argument("--jobs", type=int, default=os.cpu_count() or 4)
    g.add_argument("--timeout", type=int, default=300, help="seconds per gpu-opt call")

    c = sub.add_parser("check", help="compare fused variants with the originals (GPU)")
    c.add_argument("--gpu-run", default=find_tool("gpu-run"))
    c.add_argument("--dir", default=os.path.join(ROOT, "build", "fusion"))
    c.add_argument("--only", default=None, help="only variants whose id contains this")
    c.add_argument("--timeout", type=int, default=180, help="seconds per gpu-run call")
    c.add_argument("--sanitizer", default=None, help="compute-sanitizer binary (none: skip)")
    c.add_argument("--sanitize-sample", type=int, default=6)
    c.add_argument("--sanitize-timeout", type=int, default=60)
    c.add_argument("--workdir", default=None, help="for the output files (default: a "
                   "temporary folder, removed afterwards)")
    c.add_argument("--keep", action="store_true", help="keep the output files")
    c.add_argument("--resume", action="store_true",
                   help="skip variants check.json already has a PASS/FAIL for")
    c.add_argument("--stop-after", type=int, default=None, metavar="S",
                   help="start no new variant after S seconds (results so far are saved; "
                        "exit status 3; go on with --resume)")
    c.add_argument("--fresh", action="store_true",
                   help="discard the earlier check.json instead of merging into it")
    c.add_argument("--jobs", type=int, default=1, metavar="N",
                   help="check N pairs at a time (separate gpu-run processes on one GPU; "
                        "each pair's variants stay in order)")
    c.add_argument("--date", default=datetime.date.today().isoformat())

    b = sub.add_parser("bench", help="time baselines and fused variants (GPU)")
    b.add_argument("--gpu-run", default=find_tool("gpu-run"))
    b.add_argument("--dir", default=os.path.join(ROOT, "build", "fusion"))
    b.add_argument("--out-dir", default=os.path.join(ROOT, "docs", "results"))
    b.add_argument("--warmup", type=int, default=10)
    b.add_argument("--repeat", type=int, default=30)
    b.add_argument("--date", default=datetime.date.today().isoformat())
    b.add_argument("--only", default=None, help="only pairs whose name contains this")
    b.add_argument("--fresh", action="store_true",
                   help="with --only: overwrite the results instead of merging into them")
    b.add_argument("--max-gib", type=float, default=None,
                   help="buffer memory per gpu-run process (default: 70%% of the device's)")
    b.add_argument("--timeout", type=int, default=1800,
                   help="seconds per gpu-run process (results are saved after each)")
    b.add_argument("--from-json", default=None,
                   help="write the tables again from a fusion-<gpu>.json (no GPU)")
    pr = sub.add_parser("profile", help="time each original kernel alone, also at fewer "
                        "blocks per SM (GPU): the planner's profile=")
    pr.add_argument("--gpu-run", default=find_tool("gpu-run"))
    pr.add_argument("--dir", default=os.path.join(ROOT, "build", "fusion"))
    pr.add_argument("--out", default=os.path.join(ROOT, "build", "fusion", "occupancy.json"))
    pr.add_argument("--warmup", type=int, default=5)
    pr.add_argument("--repeat", type=int, default=15)
    pr.add_argument("--max-gib", type=float, default=40.0,
                    help="buffer memory per gpu-run process")
    pr.add_argument("--timeout", type=int, default=900)
    ss = sub.add_parser("search-specs", help="write each pair's two kernels as a gpu-run "
                        "spec, the input of python -m gpuopt.hfuse_search (no GPU)")
    ss.add_argument("--dir", default=os.path.join(ROOT, "build", "fusion"))
    ss.add_argument("--out-dir", default=os.path.join(ROOT, "build", "search-in"))
    ss.add_argument("--only", default=None, help="only pairs whose name contains this")
    args = ap.parse_args(argv)
    rest = argv[1:]
    if args.cmd == "search-specs":
        return cmd_search_specs(args)
    if args.cmd == "profile":
        return cmd_profile(args, rest)
    if args.cmd == "generate":
        return cmd_generate(args, rest)
    if args.cmd == "check":
        return cmd_check(args, rest)
    return cmd_bench(args, rest)


if __name__ == "__main__":
    sys.exit(main())
