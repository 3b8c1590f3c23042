#!/usr/bin/env python3
"""evaluate: strategy=auto against exhaustive measurement, on the held-out set or the suite.

Issue 21's targets: measured auto is never below 0.99x the best way to run
the kernels apart (serial, two streams, a CUDA graph) on any pair; it
captures >= 90% of the gain an exhaustive search finds while measuring
<= 20% of the candidates; the model alone (no GPU, no profile) chooses a
loser (fuses, and the fused kernel is below 0.99x) on <= 10% of the held-out
pairs. gpu-opt runs where LLVM is, gpu-run where the GPU is, so the
evaluation goes in steps, each naming the same --out-dir:

  prepare          (no GPU) per pair: the gpu-run spec of the two kernels
                   (specs.py), the model's choice without a profile
                   (--hfuse-plan strategy=auto), and every candidate
                   `python -m gpuopt.hfuse_search prepare --exhaustive` builds,
                   plus the strategies gpu-opt accepts beyond them (sm_aware
                   ratios, units=), each built with its launch manifest
  measure          (GPU) profiles every kernel alone with its occupancy sweep
                   (gpuopt.profile: DIR/profile.json), checks every candidate
                   bit for bit against the kernels apart (one gpu-run process
                   per pair, --repeat 0; a process that fails is redone one
                   candidate at a time), then times the kernels apart and every
                   candidate that passed in interleaved rounds (gpu-run groups)
  prepare-profiled (no GPU) reruns the planner with each pair's profile: the
                   model's ranking with measured times, its top K (K = 20% of
                   the candidates), and builds any of those the exhaustive set
                   lacks (measure --extra then times them)
  report           (no GPU) per pair and in all: docs/results/heldout-h100.md
                   and .json beside it

Choices and the ratios reported are taken from different samples of the same
interleaved rounds: a candidate is chosen on the even-numbered samples and
judged on the odd-numbered ones, so noise that made it look fastest does not
also make it look good.

  E=benchmarks/heldout/evaluate.py      (paths relative to the repository root)
  python3 $E prepare --out-dir build/heldout-eval --pack build/heldout-eval.tar.xz
  python3 $E measure --out-dir build/heldout-eval --unpack build/heldout-eval.tar.xz \\
      --gpu-run build/bin/gpu-run --budget-s 450 --pack-results results.tar.xz   # GPU
  python3 $E unpack results.tar.xz
  python3 $E prepare-profiled --out-dir build/heldout-eval [--pack ...]
  python3 $E measure --extra ...        # GPU, only if prepare-profiled asks for it
  python3 $E report --out-dir build/heldout-eval --out docs/results/heldout-h100.md

measure goes on where it stopped when run again; the archives carry the
prepared candidates (PTX, manifests, and cubins ptxas assembled here, so the
GPU machine JIT-compiles none) and the measurements between the machines.

--suite DIR evaluates the pairs of `benchmarks/fusion/fuse_suite.py
search-specs` (one gpu-run spec per pair in DIR) instead of pairs.json.
"""

import argparse
import json
import math
import os
import re
import shutil
import statistics
import subprocess
import sys
import tarfile
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(ROOT, "python"))
sys.path.insert(0, HERE)

import specs  # noqa: E402
from gpuopt.launch_args import (MappingError, args_bytes, map_args,  # noqa: E402
                                pack_by_bytes, parse_arg)
from gpuopt import hfuse_search  # noqa: E402
from gpuopt.tools import find_tool, run_watchdog  # noqa: E402

TARGET_FLOOR = 0.99      # measured auto never below this x the best way apart
TARGET_CAPTURE = 0.90    # share of the exhaustive search's gain
TARGET_MEASURED = 0.20   # share of the candidates measured
TARGET_LOSERS = 0.10     # share of held-out pairs where the model alone loses
CHIP = "sm_90a"


def tool(name, explicit=None):
    """find_tool's search, with this checkout's build/bin/ before PATH."""
    default = os.path.join(ROOT, "build", "bin", name)
    if not explicit and not os.environ.get("GPUOPT_BIN_DIR") and os.access(default, os.X_OK):
        return default
    return find_tool(name, explicit)


def frozen_gpu_opt(explicit, out_dir, wait=600):
    """A copy of gpu-opt in OUT_DIR/bin, so that every candidate of a run is
    built by the same binary while the build tree changes (a rebuild leaves
    no gpu-opt for a while: wait for it)."""
    dest = os.path.join(out_dir, "bin", "gpu-opt")
    deadline = time.time() + wait
    while True:
        try:
            src = tool("gpu-opt", explicit)
            r = subprocess.run([src, "--version"], capture_output=True, timeout=60)
            if r.returncode == 0:
                os.makedirs(os.path.dirname(dest), exist_ok=True)
                shutil.copy2(src, dest + ".tmp")
                os.replace(dest + ".tmp", dest)
                return os.path.abspath(dest)
        except (OSError, subprocess.TimeoutExpired, Exception) as e:  # noqa: B902
            if time.time() > deadline:
                raise
            log(f"waiting for gpu-opt ({type(e).__name__}: {e})")
        if time.time() > deadline:
            raise RuntimeError("gpu-opt does not run")
        time.sleep(10)


def log(msg):
    print(f"evaluate: {msg}", flush=True)


def load_json(path):
    with open(path) as f:
        return json.load(f)


def dump_json(obj, path):
    os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
    with open(path, "w") as f:
        json.dump(obj, f, indent=1)


# ---------------------------------------------------------------------------
# Pairs
# ---------------------------------------------------------------------------

PAIRS_FILE = os.path.join("benchmarks", "heldout", "pairs.json")


def heldout_pairs(data_dir, pairs_file=None):
    """[{id, category, kernels: [run spec entries], check: {label: [arg]},
    setup: {label: text}, not_timeable: {label: text}}] of pairs.json, or of
    a dated addition (pairs-YYYY-MM-DD.json), which is prepared and reported
    apart (its own --out-dir)."""
    kernels = specs.load_kernels()
    pairs = load_json(os.path.join(ROOT, pairs_file or PAIRS_FILE))["pairs"]
    out = []
    for p in pairs:
        entries, check, setup, untimed, resets = [], {}, {}, {}, {}
        for k in p["kernels"]:
            spec = specs.kernel_spec(k["label"], data_dir, kernels)
            # The pair's launch is the set's word: pairs.json, not kernels.json.
            spec.update(module=os.path.relpath(os.path.join(ROOT, k["module"])),
                        kernel=k["entry"], grid=k["grid"], block=k["block"], smem=k["smem"])
            entries.append(spec)
            meta = specs.kernel_meta(k["label"], data_dir)
            check[k["label"]] = meta["check"]
            setup[k["label"]] = meta["setup"]
            resets[k["label"]] = meta["reset"]
            if meta["not_timeable"]:
                untimed[k["label"]] = meta["not_timeable"]
        out.append({"id": p["id"], "category": p["category"], "kernels": entries,
                    "check": check, "setup": setup, "not_timeable": untimed, "reset": resets})
    return out


def suite_pairs(suite_dir):
    """The pairs of `fuse_suite.py search-specs` (DIR/<a>__<b>.json): every
    buffer initialised as `out` or `zero` is checked."""
    out = []
    for name in sorted(os.listdir(suite_dir)):
        if not name.endswith(".json"):
            continue
        spec = load_json(os.path.join(suite_dir, name))
        kernels = spec["kernels"]
        for k in kernels:
            if not k.get("kernel"):
                from gpuopt.hfuse_search import only_entry
                k["kernel"] = only_entry(k["module"])
            k.setdefault("label", k["kernel"])
        check = {k["label"]: [i for i, a in enumerate(k["args"])
                              if parse_arg(a)["kind"] == "buf" and
                              parse_arg(a)["init"] in ("out", "zero")] for k in kernels}
        out.append({"id": name[:-5].replace("__", "+"), "category": "suite",
                    "kernels": kernels, "check": check, "setup": {}, "not_timeable": {},
                    "reset": {k["label"]: k.get("reset", []) for k in kernels}})
    return out


def set_dir(out_dir, suite):
    return os.path.join(out_dir, "suite" if suite else "heldout")


def pair_dir(out_dir, suite, pair_id):
    return os.path.join(set_dir(out_dir, suite), re.sub(r"[^\w.+-]", "_", pair_id))


# ---------------------------------------------------------------------------
# Candidates
# ---------------------------------------------------------------------------

def options_key(options):
    """A candidate's --hfuse options as a comparable key: name= and the
    defaults (maxnreg=0, units=1) left out, tokens sorted."""
    keep = []
    for tok in options.split():
        k, _, v = tok.partition("=")
        if k in ("name", "candidates-out", "profile", "chip") or \
                (k, v) in (("maxnreg", "0"), ("units", "1")):
            continue
        keep.append(tok)
    return " ".join(sorted(keep))


def run_gpu_opt(gpu_opt, kernels, options, out_ptx, timeout=600):
    """(manifest path or None, message) of one --hfuse build."""
    return hfuse_search.run_gpu_opt(gpu_opt, kernels, options, out_ptx, timeout)


def base_options(kernels, profile=None):
    """The --hfuse options every candidate of a pair shares, for this chip."""
    return hfuse_search.base_options(kernels, profile, CHIP)


def extra_strategies(gpu_opt, kernels, work):
    """Candidates beyond hfuse_search's exhaustive set, for the strategies and
    options this gpu-opt accepts (probed with a build of each): sm_aware at
    every ratio of the ladder, and units=2,4 for dynamic and sm_aware at 1:1."""
    ladder = [[1, 1]] + [[r, 1] for r in (64, 32, 16, 8, 4, 2)] + \
        [[1, r] for r in (2, 4, 8, 16, 32, 64)]
    probes = {
        "sm_aware": "strategy=sm_aware ratio=1,1",
        "units": "strategy=dynamic ratio=1,1 units=2",
    }
    accepted = {}
    for name, opts in probes.items():
        man, msg = run_gpu_opt(gpu_opt, kernels, base_options(kernels) + opts.split() +
                               [f"name=probe_{name}"], os.path.join(work, f"probe_{name}.ptx"))
        accepted[name] = man is not None
        if not accepted[name]:
            first = msg.splitlines()[0] if msg else ""
            log(f"  gpu-opt does not build {opts!r}: {first[:160]}")
    extra = []
    if accepted["sm_aware"]:
        extra += [f"strategy=sm_aware ratio={a},{b}" for a, b in ladder]
    if accepted["units"]:
        for s in (["dynamic"] + (["sm_aware"] if accepted["sm_aware"] else [])):
            extra += [f"strategy={s} ratio=1,1 units={u}" for u in (2, 4)]
    return extra, accepted


def build_candidate(gpu_opt, kernels, options, ptx, label, description, source):
    """One candidate built with gpu-opt: its record, with the fused kernel's
    gpu-run arguments and where[p][i] (fused index of original p's argument i)."""
    man, msg = run_gpu_opt(gpu_opt, kernels, base_options(kernels) + options.split() +
                           [f"name=hfuse_{label}"], ptx)
    rec = {"label": label, "description": description, "options": options, "source": source,
           "key": options_key(options)}
    if man is None:
        return {**rec, "status": "refused", "message": msg.splitlines()[0] if msg else ""}
    try:
        fused_args, notes, where = map_args(load_json(man), [k["kernel"] for k in kernels],
                                            [k["args"] for k in kernels])
    except MappingError as e:
        return {**rec, "status": "refused", "message": f"arguments: {e}"}
    m = load_json(man)["kernels"][0]
    return {**rec, "status": "built", "ptx": os.path.relpath(ptx),
            "manifest": os.path.relpath(man), "kernel": m["name"], "args": fused_args,
            "where": where, "notes": notes, "launch": m.get("launch", {})}


def describe(options):
    d = dict(tok.partition("=")[::2] for tok in options.split())
    s = d.get("strategy", "?")
    text = {"thread": "thread split", "sm_aware": "sm_aware"}.get(s, s)
    if s == "thread" and "threads" in d:
        text += " " + d["threads"].replace(",", "+")
    elif "ratio" in d:
        text += " " + d["ratio"].replace(",", ":")
    if d.get("maxnreg", "0") != "0":
        text += f", maxnreg {d['maxnreg']}"
    if d.get("units", "1") != "1":
        text += f", units {d['units']}"
    return text


def cmd_prepare(args):
    gpu_opt = frozen_gpu_opt(args.gpu_opt, args.out_dir)
    data_dir = os.path.relpath(os.path.join(args.out_dir, "data"))
    if args.suite:
        pairs = suite_pairs(args.suite)
    else:
        specs.write_data(data_dir)
        pairs = heldout_pairs(data_dir, args.pairs)
    if args.only:
        pairs = [p for p in pairs if any(o in p["id"] for o in args.only.split(","))]
    env = dict(os.environ, PYTHONPATH=os.path.join(ROOT, "python") + os.pathsep +
               os.environ.get("PYTHONPATH", ""))
    index = []
    for n, p in enumerate(pairs, 1):
        d = pair_dir(args.out_dir, args.suite, p["id"])
        if os.path.isdir(d):
            shutil.rmtree(d)
        os.makedirs(d)
        kernels = p["kernels"]
        spec_path = os.path.join(d, "pair.json")
        dump_json({"kernels": kernels}, spec_path)
        log(f"[{n}/{len(pairs)}] {p['id']}: {' + '.join(k['label'] for k in kernels)}")
        t0 = time.time()
        cmd = [sys.executable, "-m", "gpuopt.hfuse_search", "prepare", "--spec", spec_path,
               "--out-dir", d, "--exhaustive", "--gpu-opt", gpu_opt, "--chip", CHIP]
        r = subprocess.run(cmd, capture_output=True, text=True, env=env)
        search_path = os.path.join(d, "search.json")
        record = {"id": p["id"], "category": p["category"],
                  "labels": [k["label"] for k in kernels],
                  "entries": [k["kernel"] for k in kernels],
                  "check": p["check"], "setup": p["setup"], "not_timeable": p["not_timeable"],
                  "reset": p["reset"], "spec": os.path.relpath(spec_path)}
        if not os.path.exists(search_path):
            last = (r.stderr or r.stdout).strip().splitlines()
            log(f"  hfuse_search built nothing (exit {r.returncode}): "
                f"{last[-1] if last else ''}")
            record.update(candidates=[], model_alone={"declined": True, "label": None,
                                                      "reason": "no feasible candidate"},
                          hfuse_search_exit=r.returncode)
            dump_json(record, os.path.join(d, "eval.json"))
            index.append(p["id"])
            continue
        search = load_json(search_path)
        cands = []
        for c in search["candidates"]:
            rec = {"label": c["label"], "description": c["description"],
                   "options": c["options"], "source": c["source"], "rank": c.get("rank"),
                   "predicted": c.get("predicted"), "unit": c.get("unit"),
                   "key": options_key(c["options"]), "status": c["status"]}
            if c["status"] == "built":
                man = os.path.splitext(c["ptx"])[0] + ".json"
                try:
                    fused_args, notes, where = map_args(
                        load_json(man), [k["kernel"] for k in kernels],
                        [k["args"] for k in kernels])
                    m = load_json(man)["kernels"][0]
                    rec.update(ptx=os.path.relpath(c["ptx"]), manifest=os.path.relpath(man),
                               kernel=m["name"], args=fused_args, where=where, notes=notes,
                               launch=m.get("launch", {}))
                except (MappingError, OSError, KeyError) as e:
                    rec.update(status="refused", message=f"arguments: {e}")
            else:
                rec["message"] = c.get("message")
            cands.append(rec)
        # The same plan twice (the planner lists a cap twice) is measured once.
        seen = {}
        for c in cands:
            if c["status"] == "built" and c["key"] in seen:
                c["status"] = "duplicate"
                c["same_as"] = seen[c["key"]]
            elif c["status"] == "built":
                seen[c["key"]] = c["label"]
        extra, accepted = extra_strategies(gpu_opt, kernels, d)
        for opts in extra:
            if options_key(opts) in seen or options_key(opts + " maxnreg=0") in seen:
                continue
            label = f"cand{len(cands)}"
            c = build_candidate(gpu_opt, kernels, opts, os.path.join(d, f"{label}.ptx"),
                                label, describe(opts), "extra")
            cands.append(c)
            if c["status"] == "built":
                seen[c["key"]] = label
        ranked = [c for c in cands if c["source"] == "planner"]
        top = min(ranked, key=lambda c: c["rank"]) if ranked else None
        declined = bool(search.get("planner_declined"))
        record.update(
            candidates=cands, accepted=accepted,
            model_alone={"declined": declined or top is None,
                         "label": None if declined or top is None else
                         (top.get("same_as") or top["label"]),
                         "description": top["description"] if top else None,
                         "unit": top.get("unit") if top else None})
        if args.cubin:
            compile_cubins(cands, args.jobs)
        dump_json(record, os.path.join(d, "eval.json"))
        built = sum(c["status"] == "built" for c in cands)
        log(f"  {built} candidates built ({len(cands) - built} refused or duplicate) in "
            f"{time.time() - t0:.0f} s; model alone: "
            f"{'declines' if record['model_alone']['declined'] else record['model_alone']['description']}")
        index.append(p["id"])
    dump_json({"suite": bool(args.suite), "pairs": index, "data": data_dir,
               "pairs_file": None if args.suite else os.path.relpath(os.path.join(ROOT, args.pairs or PAIRS_FILE),
                                                                    ROOT),
               "created": time.strftime("%Y-%m-%d %H:%M:%S UTC", time.gmtime())},
              os.path.join(set_dir(args.out_dir, args.suite), "index.json"))
    total = sum(os.path.getsize(os.path.join(r, f)) for r, _, fs in os.walk(args.out_dir)
                for f in fs)
    log(f"prepared {len(index)} pairs in {args.out_dir} ({total / 2**20:.1f} MiB)")
    if args.pack:
        pack(args.out_dir, args.pack)
    return 0


def compile_cubins(cands, jobs):
    """Assembles each built candidate for sm_90a with ptxas (c["cubin"]), so
    that the GPU machine loads it without JIT-compiling its PTX: hundreds of
    fused kernels take minutes to JIT there, and ptxas here is the same
    compiler. A candidate ptxas refuses keeps its PTX only."""
    import concurrent.futures
    ptxas = find_tool("ptxas", os.environ.get("PTXAS") or (
        "/usr/local/cuda/bin/ptxas" if os.access("/usr/local/cuda/bin/ptxas", os.X_OK)
        else None))

    def one(c):
        cubin = os.path.splitext(c["ptx"])[0] + ".cubin"
        r = subprocess.run([ptxas, f"-arch={CHIP}", c["ptx"], "-o", cubin],
                           capture_output=True, text=True)
        return c, cubin if r.returncode == 0 else None, r.stderr.strip()

    built = [c for c in cands if c["status"] == "built"]
    with concurrent.futures.ThreadPoolExecutor(max_workers=jobs) as pool:
        for c, cubin, err in pool.map(one, built):
            if cubin:
                c["cubin"] = os.path.relpath(cubin)
            else:
                log(f"  ptxas refused {c['label']} (its PTX is used): {err[:200]}")


def module_of(c, use_cubin=True):
    """What gpu-run loads for a candidate: its cubin when there is one."""
    return c.get("cubin") if use_cubin and c.get("cubin") else c["ptx"]


def pack(out_dir, archive):
    """The prepare output as one compressed archive (PTX compresses ~10x),
    for carrying to the GPU machine; `measure --unpack` restores it."""
    with tarfile.open(archive, "w:xz") as tar:
        tar.add(out_dir, arcname=os.path.relpath(out_dir),
                filter=lambda t: None if t.name.endswith("/bin") else t)
    log(f"packed {out_dir} into {archive} ({os.path.getsize(archive) / 2**20:.1f} MiB)")


# ---------------------------------------------------------------------------
# Measurement (GPU)
# ---------------------------------------------------------------------------

def scratch_dir():
    for base in ("/dev/shm", None):
        try:
            if base and shutil.disk_usage(base).free < 16 << 30:
                continue
            return tempfile.mkdtemp(prefix="heldout-eval-", dir=base)
        except OSError:
            continue
    return tempfile.mkdtemp(prefix="heldout-eval-")


def same_bytes(a, b, chunk=1 << 24):
    """Whether two files hold the same bytes."""
    if os.path.getsize(a) != os.path.getsize(b):
        return False
    with open(a, "rb") as fa, open(b, "rb") as fb:
        while True:
            x, y = fa.read(chunk), fb.read(chunk)
            if x != y:
                return False
            if not x:
                return True


def verify_batch(gpu_run, record, kernels, cands, work, timeout, use_cubin=True):
    """Runs the kernels apart and `cands` once each (gpu-run --repeat 0, one
    process) and compares every checked output of the originals with the
    fused kernel's, bit for bit. Returns ({label: result}, process error or
    None); a result is {result: PASS|FAIL, detail}."""
    os.makedirs(work, exist_ok=True)
    entries = []
    ref = {}
    for p, k in enumerate(kernels):
        outs = {}
        for i in record["check"][k["label"]]:
            outs[str(i)] = os.path.join(work, f"orig{p}_{i}.bin")
            ref[(p, i)] = outs[str(i)]
        entries.append({**{x: v for x, v in k.items() if x != "out"}, "out": outs})
    got = {}
    for c in cands:
        outs = {}
        for p, k in enumerate(kernels):
            for i in record["check"][k["label"]]:
                fi = c["where"][p][i]
                outs[str(fi)] = os.path.join(work, f"{c['label']}_{fi}.bin")
                got[(c["label"], p, i)] = outs[str(fi)]
        entries.append({"label": c["label"], "module": module_of(c, use_cubin),
                        "manifest": c["manifest"], "kernel": c["kernel"], "args": c["args"],
                        "out": outs, "time_alone": False})
    spec_path = os.path.join(work, "verify.json")
    dump_json({"warmup": 0, "repeat": 0, "kernels": entries}, spec_path)
    r = run_watchdog([gpu_run, "--spec", spec_path, "--json",
                      os.path.join(work, "verify-report.json")], timeout)
    error = None
    if r.hung:
        error = f"hang (killed after {timeout} s)"
    elif r.rc != 0:
        error = f"gpu-run exit {r.rc}: {r.message()}"
    results = {}
    missing_ref = [path for path in ref.values() if not os.path.exists(path)]

    for c in cands:
        if missing_ref:
            results[c["label"]] = {"result": "ERROR", "detail": error or "no original output"}
            continue
        bad = []
        for p, k in enumerate(kernels):
            for i in record["check"][k["label"]]:
                path = got[(c["label"], p, i)]
                if not os.path.exists(path):
                    bad.append(f"{k['label']} arg {i}: no output")
                    continue
                if same_bytes(path, ref[(p, i)]):
                    continue
                from gpuopt.verify import compare_files
                ok, detail = compare_files(path, ref[(p, i)], parse_arg(k["args"][i])["type"])
                if not ok:
                    bad.append(f"{k['label']} arg {i}: {detail}")
        if bad and error and all("no output" in b for b in bad):
            results[c["label"]] = {"result": "ERROR", "detail": error}
        elif bad:
            results[c["label"]] = {"result": "FAIL", "detail": "; ".join(bad)}
        else:
            n = sum(len(record["check"][k["label"]]) for k in kernels)
            results[c["label"]] = {"result": "PASS", "detail": f"{n} outputs bit-identical"}
        for p, k in enumerate(kernels):
            for i in record["check"][k["label"]]:
                path = got[(c["label"], p, i)]
                if os.path.exists(path):
                    os.remove(path)
    return results, error


def verify_pair(gpu_run, record, kernels, cands, work, args):
    """verify_batch over every candidate in batches that fit --max-gib; a
    batch whose process fails is redone one candidate at a time."""
    budget = args.max_gib * (1 << 30) - sum(args_bytes(k["args"]) for k in kernels)
    batches = pack_by_bytes(cands, lambda c: args_bytes(c["args"]), budget) if cands else []
    results = {}
    for b, batch in enumerate(batches):
        res, error = verify_batch(gpu_run, record, kernels, batch, os.path.join(work, f"v{b}"),
                                  args.verify_timeout, args.use_cubin)
        shutil.rmtree(os.path.join(work, f"v{b}"), ignore_errors=True)
        if error is not None and args.use_cubin and any(c.get("cubin") for c in batch):
            log(f"  check with cubins failed ({error[:200]}): again with PTX, and PTX from "
                "here on")
            args.use_cubin = False
            res, error = verify_batch(gpu_run, record, kernels, batch,
                                      os.path.join(work, f"v{b}"), args.verify_timeout, False)
            shutil.rmtree(os.path.join(work, f"v{b}"), ignore_errors=True)
        if error is None:
            results.update(res)
            continue
        log(f"  verification process failed ({error[:200]}): one candidate at a time")
        _, orig_error = verify_batch(gpu_run, record, kernels, [], os.path.join(work, "v1"),
                                     args.single_timeout)
        shutil.rmtree(os.path.join(work, "v1"), ignore_errors=True)
        if orig_error:
            log(f"  the kernels apart fail alone: {orig_error[:300]}")
            for c in cands:
                results[c["label"]] = {"result": "ERROR",
                                       "detail": f"the kernels apart fail: {orig_error}"}
            return results
        for c in batch:
            one, err = verify_batch(gpu_run, record, kernels, [c], os.path.join(work, "v1"),
                                    args.single_timeout, args.use_cubin)
            shutil.rmtree(os.path.join(work, "v1"), ignore_errors=True)
            results.update(one)
            if err:
                results[c["label"]]["process"] = err
    return results


def fused_resets(record, kernels, cand):
    """{"reset": [fused argument indices]} of the originals' "reset" buffers
    (gpu-run zeroes them before every timed launch), or {}."""
    resets = sorted({cand["where"][p][i] for p, k in enumerate(kernels)
                     for i in (record.get("reset") or {}).get(k["label"], [])})
    return {"reset": resets} if resets else {}


def time_pair(gpu_run, record, kernels, cands, work, args):
    """Times the kernels apart (serial, concurrent, graph) and `cands` in
    interleaved rounds; returns {baselines: {mode: [samples]}, candidates:
    {label: [samples]}, device, errors}."""
    labels = [k["label"] for k in kernels]
    budget = args.max_gib * (1 << 30) - sum(args_bytes(k["args"]) for k in kernels)
    batches = pack_by_bytes(cands, lambda c: args_bytes(c["args"]), budget) if cands else [[]]
    out = {"baselines": {}, "candidates": {}, "alone": {}, "device": None, "errors": []}
    b = 0
    while batches:
        batch = batches.pop(0)
        b += 1
        entries = [{x: v for x, v in k.items() if x != "out"} for k in kernels]
        entries += [{"label": c["label"], "module": module_of(c, args.use_cubin),
                     "manifest": c["manifest"], "kernel": c["kernel"], "args": c["args"],
                     "time_alone": False, **fused_resets(record, kernels, c)}
                    for c in batch]
        spec_path = os.path.join(work, f"time{b}.json")
        report_path = os.path.join(work, f"time{b}-report.json")
        dump_json({"warmup": args.warmup, "repeat": args.repeat, "kernels": entries,
                   "groups": [{"name": "eval", "kernels": labels,
                               "modes": ["alone", "serial", "concurrent", "graph"],
                               "also": [c["label"] for c in batch]}]}, spec_path)
        r = run_watchdog([gpu_run, "--spec", spec_path, "--json", report_path],
                         args.time_timeout)
        if r.hung or r.rc != 0 or not os.path.exists(report_path):
            error = "hang" if r.hung else f"gpu-run exit {r.rc}: {r.message()}"
            if not r.hung and len(batch) > 1:
                # A candidate that fails when launched again (it passed its
                # check): halve the batch until it stands alone.
                log(f"  timing failed ({error[:200]}): again in halves")
                batches[:0] = [batch[:len(batch) // 2], batch[len(batch) // 2:]]
            else:
                out["errors"].append(f"{[c['label'] for c in batch]}: {error}")
            continue
        rep = load_json(report_path)
        out["device"] = (rep.get("device") or {}).get("name")
        g = next((g for g in rep.get("groups", []) if g.get("name") == "eval"), {})
        for m in ("serial", "concurrent", "graph"):
            if g.get(m):
                out["baselines"].setdefault(m, []).append(g[m].get("samples_ms") or [])
        for lab, t in (g.get("alone") or {}).items():
            out["alone"].setdefault(lab, []).append(t.get("samples_ms") or [])
        for lab, t in (g.get("also") or {}).items():
            out["candidates"][lab] = t.get("samples_ms") or []
    return out


def cmd_measure(args):
    if args.unpack:
        cmd_unpack(argparse.Namespace(archive=args.unpack))
    gpu_run = tool("gpu-run", args.gpu_run)
    # The driver's JIT cache keeps each candidate's compiled PTX from the
    # check to the timing process.
    os.environ.setdefault("CUDA_CACHE_MAXSIZE", str(4 << 30))
    index = load_json(os.path.join(set_dir(args.out_dir, args.suite), "index.json"))
    records = [load_json(os.path.join(pair_dir(args.out_dir, args.suite, pid), "eval.json"))
               for pid in index["pairs"]]
    if args.only:
        records = [r for r in records if any(o in r["id"] for o in args.only.split(","))]
    t_start = time.time()
    profile_path = os.path.join(set_dir(args.out_dir, args.suite), "profile.json")
    # Kernels the profile lacks (all with --force): a run that measured some
    # pairs only (--only) leaves the others' kernels for the next.
    have = set()
    if os.path.exists(profile_path) and not args.force:
        have = {e.get("label") for e in load_json(profile_path).get("kernels", [])}
    kernels, seen = [], set(have)
    for rec in records:
        for k in load_json(rec["spec"])["kernels"]:
            if k["label"] not in seen and k["label"] not in rec["not_timeable"]:
                seen.add(k["label"])
                kernels.append({x: v for x, v in k.items() if x != "out"})
    if not args.extra and not args.no_profile and kernels:
        from gpuopt.profile import profile, ProfileError
        log(f"profiling {len(kernels)} kernels alone with their occupancy sweeps")
        try:
            report = profile(gpu_run, kernels, args.profile_warmup, args.profile_repeat,
                             args.max_gib, args.time_timeout, log=log)
        except ProfileError as e:
            log(f"profile failed ({e}): one kernel at a time")
            report = None
            for k in kernels:
                try:
                    one = profile(gpu_run, [k], args.profile_warmup, args.profile_repeat,
                                  args.max_gib, args.single_timeout * 4, log=log)
                except ProfileError as e1:
                    log(f"  {k['label']}: {e1}")
                    continue
                if report is None:
                    report = one
                else:
                    report["kernels"].extend(one.get("kernels", []))
        if report:
            if have:
                old = load_json(profile_path)
                old["kernels"] = [e for e in old.get("kernels", [])
                                  if e.get("label") not in seen - have] + report["kernels"]
                report = old
            dump_json(report, profile_path)
        log(f"profile done in {time.time() - t_start:.0f} s")
    work = scratch_dir()
    try:
        for n, rec in enumerate(records, 1):
            d = pair_dir(args.out_dir, args.suite, rec["id"])
            kernels = load_json(rec["spec"])["kernels"]
            if args.extra:
                extra_path = os.path.join(d, "extra.json")
                if not os.path.exists(extra_path):
                    continue
                cands = [c for c in load_json(extra_path)["candidates"]
                         if c["status"] == "built"]
                result_path = os.path.join(d, "measured-extra.json")
            else:
                cands = [c for c in rec["candidates"] if c["status"] == "built"]
                result_path = os.path.join(d, "measured.json")
            if os.path.exists(result_path) and not args.force:
                log(f"[{n}/{len(records)}] {rec['id']}: measured before (--force to redo)")
                continue
            if args.budget_s and time.time() - t_start > args.budget_s:
                log(f"stopping before {rec['id']}: past --budget-s {args.budget_s}; run measure "
                    "again to go on")
                break
            t0 = time.time()
            log(f"[{n}/{len(records)}] {rec['id']}: verifying {len(cands)} candidates")
            verified = verify_pair(gpu_run, rec, kernels, cands, os.path.join(work, "v"), args)
            passed = [c for c in cands if verified.get(c["label"], {}).get("result") == "PASS"]
            counts = {}
            for v in verified.values():
                counts[v["result"]] = counts.get(v["result"], 0) + 1
            log(f"  verified in {time.time() - t0:.0f} s: {counts}")
            timing = {"baselines": {}, "candidates": {}, "alone": {}, "device": None,
                      "errors": []}
            if rec["not_timeable"]:
                log(f"  not timed: {'; '.join(rec['not_timeable'])}")
            else:
                t1 = time.time()
                timing = time_pair(gpu_run, rec, kernels, passed, work, args)
                log(f"  timed {len(timing['candidates'])} candidates in {time.time() - t1:.0f} s"
                    + (f"; errors: {timing['errors']}" if timing["errors"] else ""))
            dump_json({"id": rec["id"], "verify": verified, "timing": timing,
                       "warmup": args.warmup, "repeat": args.repeat,
                       "seconds": round(time.time() - t0, 1)}, result_path)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    log(f"measured {len(records)} pairs in {time.time() - t_start:.0f} s")
    if args.pack_results:
        sdir = set_dir(args.out_dir, args.suite)
        os.makedirs(os.path.dirname(os.path.abspath(args.pack_results)), exist_ok=True)
        with tarfile.open(args.pack_results, "w:xz") as tar:
            for root, _, files in os.walk(sdir):
                for f in files:
                    if f == "profile.json" and root == sdir or \
                            re.fullmatch(r"measured(-extra)?\.json", f):
                        path = os.path.join(root, f)
                        tar.add(path, arcname=os.path.relpath(path, ROOT))
        log(f"packed the measurements into {args.pack_results}")
    return 0


def cmd_unpack(args):
    """Extracts an archive of `prepare --pack` or `measure --pack-results`
    into the repository (its paths are relative to the root)."""
    with tarfile.open(args.archive) as tar:
        for m in tar.getmembers():
            if m.name.startswith("/") or ".." in m.name.split("/"):
                raise ValueError(f"{args.archive}: unsafe path {m.name}")
        tar.extractall(ROOT)
        log(f"unpacked {len(tar.getmembers())} files from {args.archive}")
    return 0


# ---------------------------------------------------------------------------
# The model with a profile (no GPU)
# ---------------------------------------------------------------------------

def k_for(n):
    """Candidates measured of n: at most 20% of them, at least one."""
    return max(1, int(math.floor(TARGET_MEASURED * n + 1e-9)))


def model_alone_choice(gpu_opt, kernels, d, by_key, extra):
    """The planner's choice without a profile, as prepare records it, mapped
    onto the exhaustive set (a choice outside it is built into `extra`)."""
    cand_path = os.path.join(d, "candidates-alone.json")
    if os.path.exists(cand_path):
        os.remove(cand_path)
    man, msg = run_gpu_opt(gpu_opt, kernels, base_options(kernels) +
                           ["strategy=auto", "require=true", "name=hfuse_auto_alone",
                            f"candidates-out={os.path.abspath(cand_path)}"],
                           os.path.join(d, "auto-alone.ptx"))
    ranked = [c for c in load_json(cand_path) if c.get("feasible")] \
        if os.path.exists(cand_path) else []
    if man is None or not ranked:
        return {"declined": True, "label": None, "description": None, "unit": None,
                "message": msg.splitlines()[0] if msg else ""}
    top = ranked[0]
    key = options_key(top["options"])
    if key in by_key:
        label = by_key[key]["label"]
    else:
        label = f"extra{len(extra)}"
        extra.append(build_candidate(gpu_opt, kernels, top["options"],
                                     os.path.join(d, f"{label}.ptx"), label,
                                     top["description"], "alone"))
    return {"declined": False, "label": label, "description": top["description"],
            "unit": top.get("unit")}


def cmd_prepare_profiled(args):
    # The binary that built the candidates, unless told otherwise.
    frozen = os.path.join(args.out_dir, "bin", "gpu-opt")
    gpu_opt = tool("gpu-opt", args.gpu_opt or (frozen if os.access(frozen, os.X_OK) else None))
    sdir = set_dir(args.out_dir, args.suite)
    profile = load_json(args.profile or os.path.join(sdir, "profile.json"))
    index = load_json(os.path.join(sdir, "index.json"))
    for pid in index["pairs"]:
        if args.only and not any(o in pid for o in args.only.split(",")):
            continue
        d = pair_dir(args.out_dir, args.suite, pid)
        rec = load_json(os.path.join(d, "eval.json"))
        if rec["not_timeable"] or not rec["candidates"]:
            rec["model_profiled"] = None
            dump_json(rec, os.path.join(d, "eval.json"))
            continue
        kernels = load_json(rec["spec"])["kernels"]
        # This pair's kernels only: two kernels of the set may share an entry
        # name (the decode-size launches), and the planner takes the first match.
        entries = [e for e in profile.get("kernels", []) if e.get("label") in rec["labels"]]
        missing = [lab for lab in rec["labels"] if lab not in {e.get("label") for e in entries}]
        if missing:
            log(f"{pid}: the profile has no time for {missing}: skipped")
            rec["model_profiled"] = {"error": f"no profile for {missing}"}
            dump_json(rec, os.path.join(d, "eval.json"))
            continue
        pair_profile = os.path.join(d, "profile.json")
        dump_json({**{x: v for x, v in profile.items() if x != "kernels"},
                   "kernels": entries}, pair_profile)
        cand_path = os.path.join(d, "candidates-profiled.json")
        if os.path.exists(cand_path):
            os.remove(cand_path)
        man, msg = run_gpu_opt(gpu_opt, kernels, base_options(kernels, pair_profile) +
                               ["strategy=auto", "require=true",
                                "name=hfuse_auto_profiled",
                                f"candidates-out={os.path.abspath(cand_path)}"],
                               os.path.join(d, "auto-profiled.ptx"))
        if not os.path.exists(cand_path):
            log(f"{pid}: the planner wrote no candidates: {msg.splitlines()[0] if msg else ''}")
            rec["model_profiled"] = {"error": msg.splitlines()[0] if msg else "no candidates"}
            dump_json(rec, os.path.join(d, "eval.json"))
            continue
        ranked = [c for c in load_json(cand_path) if c.get("feasible")]
        by_key = {c["key"]: c for c in rec["candidates"] if c["status"] == "built"}
        n = len(by_key)
        k = min(args.top, k_for(n)) if args.top else k_for(n)
        top, extra, seen = [], [], set()
        for c in ranked:
            key = options_key(c["options"])
            if key in seen:
                continue
            seen.add(key)
            if key in by_key:
                top.append({"label": by_key[key]["label"], "description": c["description"],
                            "predicted": c.get("predicted"), "unit": c.get("unit")})
            else:
                top.append({"label": None, "key": key, "options": c["options"],
                            "description": c["description"], "predicted": c.get("predicted"),
                            "unit": c.get("unit")})
            if len(top) == k:
                break
        # Top candidates the exhaustive set lacks: built for `measure --extra`.
        for t in top:
            if t["label"] is None:
                label = f"extra{len(extra)}"
                c = build_candidate(gpu_opt, kernels, t["options"],
                                    os.path.join(d, f"{label}.ptx"), label, t["description"],
                                    "profiled")
                extra.append(c)
                t["label"] = label
        if args.gpu_opt:
            # A newer gpu-opt than the one that built the candidates: its
            # model alone (no profile) is judged too, on the same measurements.
            rec["model_alone"] = model_alone_choice(gpu_opt, kernels, d, by_key, extra)
        if extra:
            compile_cubins(extra, 4)
            dump_json({"candidates": extra}, os.path.join(d, "extra.json"))
        rec["model_profiled"] = {
            "declined": man is None,
            "message": msg.splitlines()[0] if msg else "",
            "choice": top[0]["label"] if top and man is not None else None,
            "top": top, "k": k, "n": n, "extra": len(extra)}
        dump_json(rec, os.path.join(d, "eval.json"))
        log(f"{pid}: model with profile: "
            f"{'declines' if man is None else top[0]['description']}; top {k} of {n}: "
            + ", ".join(t["description"] for t in top)
            + (f" ({len(extra)} not in the exhaustive set: run measure --extra)" if extra else ""))
    if args.pack:
        pack(args.out_dir, args.pack)
    return 0


# ---------------------------------------------------------------------------
# Report (no GPU)
# ---------------------------------------------------------------------------

def half(samples, which):
    """Median of the even (0) or odd (1) samples; of all when fewer than 2."""
    s = [x for x in samples if x and x > 0]
    if len(s) < 2:
        return statistics.median(s) if s else None
    return statistics.median(s[which::2])


def baseline(timing, which):
    """(mode, ms) of the best way apart: per mode the median over processes of
    each process's half-median."""
    best = None
    for mode, runs in timing.get("baselines", {}).items():
        vals = [v for v in (half(r, which) for r in runs) if v]
        if vals:
            t = statistics.median(vals)
            if best is None or t < best[1]:
                best = (mode, t)
    return best


def summarize_pair(rec, measured, extra=None):
    """One row of the report."""
    row = {"id": rec["id"], "category": rec["category"], "kernels": rec["labels"],
           "setup": rec.get("setup", {}), "not_timeable": rec.get("not_timeable", {})}
    cands = {c["label"]: c for c in rec["candidates"] if c["status"] == "built"}
    row["candidates"] = len(cands)
    if measured is None:
        row["status"] = "not measured"
        return row
    verify = dict(measured.get("verify", {}))
    timing = measured.get("timing", {})
    samples = dict(timing.get("candidates", {}))
    if extra:
        for c in extra.get("candidates_rec", []):
            cands[c["label"]] = c
        verify.update(extra["measured"].get("verify", {}))
        # Timed in another process: scaled by the ratio of the two processes'
        # best ways apart, half by half.
        xt = extra["measured"].get("timing", {})
        scale = []
        for which in (0, 1):
            main_b, x_b = baseline(timing, which), baseline(xt, which)
            scale.append(main_b[1] / x_b[1] if main_b and x_b else None)
        if None not in scale:
            for lab, s in xt.get("candidates", {}).items():
                samples[lab] = [x * scale[i % 2] for i, x in enumerate(s)]
    row["verified"] = {r: sum(v["result"] == r for v in verify.values())
                       for r in ("PASS", "FAIL", "ERROR")}
    row["failed"] = {lab: v["detail"] for lab, v in verify.items() if v["result"] != "PASS"}
    row["device"] = timing.get("device")
    sel_base, ev_base = baseline(timing, 0), baseline(timing, 1)
    if not sel_base or not ev_base:
        row["status"] = "verified only" if rec.get("not_timeable") else "not timed"
        row["errors"] = timing.get("errors")
        return row
    row["status"] = "measured"
    row["best_baseline"] = {"mode": ev_base[0], "ms": ev_base[1]}
    sel = {lab: half(s, 0) for lab, s in samples.items() if verify.get(lab, {}).get(
        "result") == "PASS" and half(s, 0)}
    ev = {lab: half(s, 1) for lab, s in samples.items() if lab in sel and half(s, 1)}

    def ratio(label):
        return ev_base[1] / ev[label] if label in ev else None

    def choose(labels):
        """The fastest of `labels` on the selection samples, if it beats the
        kernels apart by 1% there; else None (do not fuse)."""
        timed = [lab for lab in labels if lab in sel and lab in ev]
        if not timed:
            return None
        best = min(timed, key=lambda lab: sel[lab])
        return best if sel[best] < TARGET_FLOOR * sel_base[1] else None

    exh = choose(list(ev))
    row["exhaustive"] = {"label": exh, "description": cands[exh]["description"] if exh else
                         "do not fuse", "ratio": ratio(exh) if exh else 1.0,
                         "measured": len(ev)}
    ma = rec.get("model_alone") or {}
    if ma.get("declined") or not ma.get("label"):
        row["model_alone"] = {"label": None, "description": "declines", "ratio": 1.0,
                              "loser": False}
    else:
        lab = ma["label"]
        v = verify.get(lab, {}).get("result")
        r = ratio(lab) if v == "PASS" else None
        known = {c["label"]: c for c in rec["candidates"]}
        row["model_alone"] = {"label": lab, "description": known.get(lab, {}).get(
                                  "description", lab),
                              "ratio": r, "verify": v or known.get(lab, {}).get("status"),
                              "loser": v != "PASS" or r is None or r < TARGET_FLOOR}
    # For reference: the same search over the top K of the ranking without a
    # profile (the planner's order in prepare).
    ranked = sorted((c for c in rec["candidates"] if c.get("source") == "planner" and
                     c["status"] == "built"), key=lambda c: c.get("rank") or 0)
    if ranked:
        top0 = [c["label"] for c in ranked[:k_for(len(cands))]]
        choice0 = choose(top0)
        row["search_no_profile"] = {"top": top0, "label": choice0,
                                    "ratio": ratio(choice0) if choice0 else 1.0}
    mp = rec.get("model_profiled")
    if mp and "top" in mp:
        top = [t["label"] for t in mp["top"]]
        choice = choose(top)
        r = ratio(choice) if choice else 1.0
        g_exh = row["exhaustive"]["ratio"] - 1.0
        g = r - 1.0
        row["measured_auto"] = {
            "top": [{"label": t["label"], "description": t["description"],
                     "ratio": ratio(t["label"]),
                     "verify": verify.get(t["label"], {}).get("result")} for t in mp["top"]],
            "label": choice, "description": cands[choice]["description"] if choice else
            "do not fuse", "ratio": r, "k": len(top), "allowed": mp["k"], "n": mp["n"],
            "measured_share": len(top) / mp["n"] if mp["n"] else None,
            "gain": g, "exhaustive_gain": g_exh,
            "captured": (g / g_exh) if g_exh > 0.01 else None,
            "model_choice": mp.get("choice"), "model_declined": mp.get("declined")}
    return row


def targets(rows_heldout, rows_suite):
    """Issue 21's targets over the measured rows."""
    rows = [r for r in rows_heldout + rows_suite if r.get("status") == "measured"]
    auto = [r for r in rows if "measured_auto" in r]
    floor = [r["measured_auto"]["ratio"] for r in auto]
    g = sum(max(0.0, r["measured_auto"]["gain"]) for r in auto)
    g_exh = sum(max(0.0, r["measured_auto"]["exhaustive_gain"]) for r in auto)
    shares = [r["measured_auto"]["measured_share"] for r in auto
              if r["measured_auto"]["measured_share"] is not None]
    held = [r for r in rows_heldout if r.get("status") == "measured"]
    losers = [r["id"] for r in held if r["model_alone"]["loser"]]
    np_rows = [r for r in rows if "search_no_profile" in r]
    np_gain = sum(max(0.0, r["search_no_profile"]["ratio"] - 1) for r in np_rows)
    np_exh = sum(max(0.0, r["exhaustive"]["ratio"] - 1) for r in np_rows)
    t = {
        "pairs_measured": len(rows), "pairs_with_measured_auto": len(auto),
        "floor": {"min_ratio": min(floor) if floor else None,
                  "below": [r["id"] for r in auto if r["measured_auto"]["ratio"] < TARGET_FLOOR],
                  "met": bool(floor) and min(floor) >= TARGET_FLOOR},
        "capture": {"gain": g, "exhaustive_gain": g_exh,
                    "share": g / g_exh if g_exh > 0 else None,
                    "max_measured_share": max(shares) if shares else None,
                    "met": (g_exh == 0 or g / g_exh >= TARGET_CAPTURE) and bool(shares) and
                    max(shares) <= TARGET_MEASURED + 1e-9},
        "model_alone": {"losers": losers, "pairs": len(held),
                        "share": len(losers) / len(held) if held else None,
                        "met": bool(held) and len(losers) / len(held) <= TARGET_LOSERS},
        "search_no_profile": {
            "min_ratio": min((r["search_no_profile"]["ratio"] for r in np_rows), default=None),
            "share": np_gain / np_exh if np_exh > 0 else None},
    }
    return t


def fmt(x, spec=".3f", none="-"):
    return none if x is None else format(x, spec)


def render(rows_heldout, rows_suite, t, command, pending, pairs_file=None):
    devices = sorted({r.get("device") for r in rows_heldout + rows_suite if r.get("device")})
    md = [f"# strategy=auto against exhaustive measurement on {', '.join(devices) or '?'}", ""]
    if pairs_file and os.path.basename(pairs_file) != "pairs.json":
        md += [f"- Held-out pairs: `{pairs_file}`, an addition reported apart from `pairs.json`.", ""]
    if command:
        md += [f"- Commands: {command}", ""]
    md += [
        "- Every candidate of each pair (`python -m gpuopt.hfuse_search prepare --exhaustive`: the "
        "planner's feasible candidates, interleave and dynamic at every ratio from 64:1 to 1:64, "
        "plus the strategies gpu-opt accepts beyond them) checked bit for bit against the kernels "
        "apart, then timed with the kernels apart (serial, two streams, a CUDA graph) in "
        "interleaved rounds of one gpu-run process. Candidates are chosen on the even-numbered "
        "samples and judged on the odd-numbered ones; ratio = best way apart / the choice "
        "(declining counts as 1.000).",
        "- **model alone**: `--hfuse-plan strategy=auto` without a profile (the kernels' waves "
        "stand in for their times); a loser fuses and is below 0.99x (or fails the check). "
        "**measured auto**: the planner with the measured profile (`gpuopt.profile`), its top K "
        "candidates (K = 20% of the candidates) measured, the fastest kept if it beats the "
        "kernels apart by 1%, else not fusing.",
        "- captured = (measured auto's ratio - 1) / (exhaustive best's ratio - 1), where the "
        "exhaustive search gains more than 1%.", "", "## Targets", ""]
    f, c, m = t["floor"], t["capture"], t["model_alone"]
    md += [
        "| target | result | met |", "| --- | --- | --- |",
        f"| measured auto >= 0.99x the best way apart on every pair | min "
        f"{fmt(f['min_ratio'])}x over {t['pairs_with_measured_auto']} pairs"
        f"{'; below: ' + ', '.join(f['below']) if f['below'] else ''} | "
        f"{'yes' if f['met'] else 'no'} |",
        f"| captures >= 90% of the exhaustive gain, measuring <= 20% | "
        f"{fmt(c['share'], '.1%')} of the gain (sum over pairs), at most "
        f"{fmt(c['max_measured_share'], '.0%')} measured | {'yes' if c['met'] else 'no'} |",
        f"| model alone loses on <= 10% of held-out pairs | {len(m['losers'])} of {m['pairs']}"
        f"{' (' + ', '.join(m['losers']) + ')' if m['losers'] else ''} | "
        f"{'yes' if m['met'] else 'no'} |", ""]
    snp = t.get("search_no_profile") or {}
    if snp.get("min_ratio") is not None:
        md += [f"For reference, the same search over the top 20% of the ranking without a "
               f"profile: min {fmt(snp['min_ratio'])}x, {fmt(snp['share'], '.1%')} of the "
               f"exhaustive gain.", ""]
    if pending:
        md += ["Not yet in these numbers: " + "; ".join(pending), ""]
    held_title = "Held-out set" + (f" ({os.path.basename(pairs_file)})" if pairs_file and
                                   os.path.basename(pairs_file) != "pairs.json" else "")
    for title, rows in ((held_title, rows_heldout), ("Suite", rows_suite)):
        if not rows:
            continue
        md += [f"## {title}", "",
               "| pair | cands | checked (pass/fail/err) | best apart (ms) | exhaustive best | "
               "ratio | model alone | ratio | measured auto (top K) | ratio | captured | "
               "measured |",
               "| --- | ---: | --- | ---: | --- | ---: | --- | ---: | --- | ---: | ---: | ---: |"]
        for r in rows:
            v = r.get("verified", {})
            checked = f"{v.get('PASS', 0)}/{v.get('FAIL', 0)}/{v.get('ERROR', 0)}" if v else "-"
            if r.get("status") != "measured":
                md.append(f"| {r['id']} | {r['candidates']} | {checked} | {r['status']} | | | | "
                          f"| | | | |")
                continue
            e, a, ma = r["exhaustive"], r["model_alone"], r.get("measured_auto")
            md.append(
                f"| {r['id']} | {r['candidates']} | {checked} | "
                f"{r['best_baseline']['ms']:.4f} ({r['best_baseline']['mode']}) | "
                f"{e['description']} | {fmt(e['ratio'])} | {a['description']} | "
                f"{fmt(a['ratio'])}{' **loser**' if a['loser'] else ''} | "
                f"{ma['description'] if ma else '-'} | {fmt(ma['ratio']) if ma else '-'} | "
                f"{fmt(ma['captured'], '.0%') if ma else '-'} | "
                f"{(str(ma['k']) + '/' + str(ma['n'])) if ma else '-'} |")
        md.append("")
        notes = []
        for r in rows:
            for lab, text in r.get("not_timeable", {}).items():
                notes.append(f"- {r['id']}: `{lab}` not timed: {text}.")
            for lab, text in r.get("setup", {}).items():
                if text and text != "none":
                    notes.append(f"- {r['id']}: `{lab}`: {text}.")
            for lab, text in (r.get("failed") or {}).items():
                notes.append(f"- {r['id']}: candidate {lab} failed the check: {text[:300]}")
        if notes:
            md += ["Notes:", ""] + sorted(set(notes), key=notes.index) + [""]
    return "\n".join(md) + "\n"


def collect(out_dir, suite):
    sdir = set_dir(out_dir, suite)
    if not os.path.exists(os.path.join(sdir, "index.json")):
        return [], []
    rows, pending = [], []
    for pid in load_json(os.path.join(sdir, "index.json"))["pairs"]:
        d = pair_dir(out_dir, suite, pid)
        rec = load_json(os.path.join(d, "eval.json"))
        mpath = os.path.join(d, "measured.json")
        measured = load_json(mpath) if os.path.exists(mpath) else None
        extra = None
        if os.path.exists(os.path.join(d, "extra.json")):
            xpath = os.path.join(d, "measured-extra.json")
            if os.path.exists(xpath):
                extra = {"candidates_rec": load_json(os.path.join(d, "extra.json"))["candidates"],
                         "measured": load_json(xpath)}
            else:
                pending.append(f"{pid}: top-K candidates outside the exhaustive set not measured "
                               "(measure --extra)")
        if rec.get("model_profiled") is None and not rec.get("not_timeable") and measured:
            pending.append(f"{pid}: no profiled ranking (prepare-profiled)")
        rows.append(summarize_pair(rec, measured, extra))
    return rows, pending


def cmd_report(args):
    held, p1 = collect(args.out_dir, False)
    suite, p2 = collect(args.out_dir, True)
    if not held and not suite:
        log(f"nothing prepared in {args.out_dir}")
        return 2
    t = targets(held, suite)
    index_path = os.path.join(set_dir(args.out_dir, False), "index.json")
    pairs_file = load_json(index_path).get("pairs_file") if os.path.exists(index_path) else None
    text = render(held, suite, t, args.command, p1 + p2, pairs_file)
    if args.out:
        os.makedirs(os.path.dirname(os.path.abspath(args.out)), exist_ok=True)
        with open(args.out, "w") as f:
            f.write(text)
        dump_json({"targets": t, "heldout": held, "suite": suite, "pending": p1 + p2},
                  os.path.splitext(args.out)[0] + ".json")
        log(f"wrote {args.out} and its .json")
    else:
        sys.stdout.write(text)
    return 0


def main(argv=None):
    ap = argparse.ArgumentParser(prog="evaluate.py", description=__doc__.splitlines()[0],
                                 epilog="\n".join(__doc__.splitlines()[2:]),
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest="cmd", required=True)
    ps = {name: sub.add_parser(name) for name in
          ("prepare", "measure", "prepare-profiled", "report")}
    for name, p in ps.items():
        p.add_argument("--out-dir", default="build/heldout-eval")
        if name != "report":
            p.add_argument("--suite", default=None, metavar="DIR",
                           help="pairs of `fuse_suite.py search-specs` (prepare) / the suite's "
                                "results (other steps: any value)")
            p.add_argument("--only", default=None, help="pairs whose id contains one of these "
                           "(comma-separated)")
    for name in ("prepare", "prepare-profiled"):
        ps[name].add_argument("--gpu-opt", default=None)
    for name in ("prepare", "prepare-profiled"):
        ps[name].add_argument("--pack", default=None, metavar="ARCHIVE.tar.xz",
                              help="also pack the output folder into one archive")
    ps["prepare"].add_argument("--pairs", default=None, metavar="FILE",
                               help="the held-out pairs (default benchmarks/heldout/pairs.json); a dated "
                                    "addition such as benchmarks/heldout/pairs-2026-11-28.json is prepared "
                                    "into an --out-dir of its own and reported apart")
    ps["prepare"].add_argument("--no-cubin", dest="cubin", action="store_false",
                               help="do not assemble the candidates here (the GPU machine "
                                    "then JIT-compiles their PTX)")
    ps["prepare"].add_argument("--jobs", type=int, default=4, help="ptxas processes")
    ps["prepare-profiled"].add_argument("--top", type=int, default=0,
                                        help="measure the top K (default and at most: 20%% "
                                             "of the candidates; gpu-opt's measure-top= is 3)")
    ps["prepare-profiled"].add_argument("--profile", default=None,
                                        help="default: OUT_DIR/<set>/profile.json")
    m = ps["measure"]
    m.add_argument("--gpu-run", default=None)
    m.add_argument("--unpack", default=None, metavar="ARCHIVE.tar.xz")
    m.add_argument("--extra", action="store_true",
                   help="measure only the top-K candidates prepare-profiled added")
    m.add_argument("--no-profile", action="store_true")
    m.add_argument("--ptx", dest="use_cubin", action="store_false",
                   help="load the candidates' PTX, not the cubins prepare assembled")
    m.add_argument("--pack-results", default=None, metavar="ARCHIVE.tar.xz",
                   help="also pack the profile and measurements into one archive "
                        "(`unpack` restores them where gpu-opt is)")
    m.add_argument("--force", action="store_true",
                   help="measure again what was measured (default: go on where it stopped)")
    m.add_argument("--budget-s", type=float, default=0,
                   help="start no pair after this many seconds (0: no limit)")
    m.add_argument("--warmup", type=int, default=5)
    m.add_argument("--repeat", type=int, default=40,
                   help="timed rounds (half choose, half judge)")
    m.add_argument("--profile-warmup", type=int, default=3)
    m.add_argument("--profile-repeat", type=int, default=10)
    m.add_argument("--max-gib", type=float, default=40.0)
    m.add_argument("--verify-timeout", type=int, default=120,
                   help="seconds for one pair's check of all candidates")
    m.add_argument("--single-timeout", type=int, default=20,
                   help="seconds for one candidate's check, when the batch failed")
    m.add_argument("--time-timeout", type=int, default=150,
                   help="seconds for one timing process")
    up = sub.add_parser("unpack", help="extract a --pack or --pack-results archive")
    up.add_argument("archive")
    ps["report"].add_argument("--out", default=None, help="markdown (and .json beside it)")
    ps["report"].add_argument("--command", default=None, help="commands to cite")
    args = ap.parse_args(argv)
    os.chdir(ROOT)
    return {"prepare": cmd_prepare, "measure": cmd_measure, "unpack": cmd_unpack,
            "prepare-profiled": cmd_prepare_profiled, "report": cmd_report}[args.cmd](args)


if __name__ == "__main__":
    sys.exit(main())
