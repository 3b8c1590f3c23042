#!/usr/bin/env python3
"""Probe every suite kernel: instrument, check on the GPU, measure overhead.

  generate (no GPU)  gpu-opt --probe=P for every suite kernel (CUDA and
                     Triton, the launches of benchmarks/baselines.py) and
                     probe; ptxas -v of the original and the probed kernel
                     (registers, spills) into DIR/probes.json
  check    (GPU)     each probed kernel through gpu-run against its original
                     on the same inputs (gpuopt.verify: bit-identical
                     outputs) with --trace, then the records checked where their
                     values can be known (block_sched: one record per warp,
                     SM ids in range, start <= end, no overflow)
  bench    (GPU)     original and probed kernel of every pair timed side by
                     side in interleaved rounds (one gpu-run process),
                     medians; a table with the slowdown and the extra
                     registers, and their geomean / mean
  registers (no GPU) the ptxas side of that table from generate's
                     probes.json: registers and spill bytes, original and
                     probed, per probe (docs/results/probes-registers.md)

Results go to --out-dir (docs/results/probes-<gpu>.md/.json). Needs the
gpuopt package (pip install ./python).
"""

import argparse
import datetime
import importlib.util
import json
import math
import os
import re
import shutil
import subprocess
import sys
import tempfile

from gpuopt import bench as gbench
from gpuopt.verify import Verifier

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))


def _load_sibling(name, path):
    """A script of benchmarks/ by its path (the scripts are not a package)."""
    if name in sys.modules:
        return sys.modules[name]
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


# The suite's kernel launches and tolerances, and the tools.
fs = _load_sibling("fuse_suite", os.path.join(ROOT, "benchmarks", "fusion", "fuse_suite.py"))

PROBES = ("block_sched", "gmem_bytes", "tensorop_count", "warp_sched", "dmat",
          "program_progress")
LIGHT = ("block_sched", "gmem_bytes", "tensorop_count")
# Totals the records must add up to, where they can be known: (field, value).
N = 1 << 26
EXPECTED = {
    # 8192^3 GEMM in mma.m16n8k16 (one per warp each), and in
    # wgmma.m64n128k16 (issued by the 4 warps of a warpgroup).
    ("tensorop_count", "gemm_mma"): ("mma", 8192 ** 3 // (16 * 8 * 16)),
    ("tensorop_count", "gemm_wgmma"): ("wgmma", 4 * 8192 ** 3 // (64 * 128 * 16)),
    # 2^26 floats read, one float atomic per block (1056 blocks).
    ("gmem_bytes", "reduce_shfl"): ("sync", 4 * N + 4 * 1056),
    # 8192^3 fp16 GEMM in 128x128 tiles: each of the 64^2 blocks copies a
    # 128x8192 slice of A and an 8192x128 slice of B into shared memory with
    # cp.async, once. The pipeline's copies past the last K tile read nothing
    # (src-size 0) and must not count.
    ("gmem_bytes", "triton_matmul"): ("async", 64 * 64 * 2 * (128 * 8192) * 2),
}


def warp_specialized_specs(sm_count):
    """FlashAttention-3-style warp-specialised kernels (setmaxnreg, named
    barriers only the consumers reach; test/corpus/cuda/warp_specialized.cu):
    probes must keep them running, within their register budgets."""
    specs = {}
    k_tiles, blocks = 32, 2 * sm_count
    for label, kernel, rows in (
            ("ws_softmax_fa3", "_Z14ws_softmax_fa3PKfPfi", 128),
            ("ws_softmax_1consumer", "_Z20ws_softmax_1consumerPKfPfi", 64)):
        specs[label] = {
            "label": label, "kernel": kernel,
            "module": os.path.join(ROOT, "test", "corpus", "nvcc", "warp_specialized.ptx"),
            "grid": [blocks], "block": [rows * 2 + 128], "smem": 0,
            "args": [f"buf:f32:{blocks * k_tiles * rows * 32}:random:31",
                     f"buf:f32:{blocks * rows * 32}:out", f"scalar:s32:{k_tiles}"]}
    return specs


def log(msg):
    print(f"probe_suite: {msg}", flush=True)


def rel(path):
    return os.path.relpath(path, ROOT)


def ptxas_resources(ptxas, ptx, entry):
    r = subprocess.run([ptxas, "-arch=sm_90a", "-v", ptx, "-o", os.devnull],
                       capture_output=True, text=True)
    if r.returncode:
        return {"error": (r.stderr or r.stdout).strip()[:500]}
    current, res = None, {}
    for line in (r.stderr + r.stdout).splitlines():
        # Each function's figures follow its own header; the probes' exit
        # function (a .func) has one too.
        m = (re.search(r"Compiling entry function '([^']+)'", line)
             or re.search(r"Function properties for (\S+)", line))
        if m:
            current = m.group(1)
        m = re.search(r"(\d+) bytes spill stores, (\d+) bytes spill loads", line)
        if m and current == entry:
            res["spill_bytes"] = int(m.group(1)) + int(m.group(2))
        m = re.search(r"Used (\d+) registers", line)
        if m and current == entry:
            res["registers"] = int(m.group(1))
    return res


def cmd_generate(args):
    specs = fs.baselines.kernel_specs(args.sm_count)
    specs.update(warp_specialized_specs(args.sm_count))
    out = os.path.abspath(args.out_dir)
    os.makedirs(out, exist_ok=True)
    ptxas = args.ptxas or fs.find_tool("ptxas")
    runs = []
    for label in sorted(specs):
        if args.only and args.only not in label:
            continue
        spec = specs[label]
        entry = spec.get("kernel") or fs.entry_names(spec["module"])[0]
        original = ptxas_resources(ptxas, spec["module"], entry)
        for probe in args.probes:
            ptx = os.path.join(out, probe, f"{label}.ptx")
            manifest = os.path.splitext(ptx)[0] + ".json"
            os.makedirs(os.path.dirname(ptx), exist_ok=True)
            cmd = [args.gpu_opt, spec["module"], f"--probe={probe}", "-o", ptx,
                   "--manifest", manifest]
            r = subprocess.run(cmd, capture_output=True, text=True)
            run = {"kernel": label, "probe": probe, "entry": entry,
                   "spec": fs.portable(spec), "ptx": rel(ptx), "manifest": rel(manifest),
                   "command": " ".join(rel(c) if os.path.isabs(c) else c for c in cmd),
                   "original": original}
            if r.returncode:
                run["error"] = r.stderr.strip()[:1000]
                log(f"{label} + {probe}: gpu-opt failed: {run['error'][:200]}")
            else:
                run["probed"] = ptxas_resources(ptxas, ptx, entry)
                log(f"{label} + {probe}: registers {original.get('registers')} -> "
                    f"{run['probed'].get('registers')}")
            runs.append(run)
    with open(os.path.join(out, "probes.json"), "w") as f:
        json.dump({"date": datetime.date.today().isoformat(), "sm_count": args.sm_count,
                   "runs": runs}, f, indent=1)
    log(f"wrote {len(runs)} probed kernels to {rel(out)}")
    return 0 if all("error" not in r for r in runs) else 1


def check_block_sched(trace_dir, sms):
    import numpy as np
    from gpuopt.trace import load  # numpy: only the GPU commands need it
    t = load(trace_dir)
    arr = t.maps["block_sched"][..., 0]
    problems = []
    if t.overflow.get("block_sched") != 0:
        problems.append(f"overflow {t.overflow.get('block_sched')}")
    unwritten = int((arr["end"] == 0).sum())
    if unwritten:
        problems.append(f"{unwritten} of {arr.size} warps wrote no record")
    w = arr[arr["end"] != 0]
    if (w["start"] > w["end"]).any():
        problems.append(f"{int((w['start'] > w['end']).sum())} records end before they start")
    if (w["sm"] >= sms).any():
        problems.append(f"SM ids up to {int(w['sm'].max())} on a {sms}-SM GPU")
    return problems, {"warps": int(arr.size), "sms_seen": int(np.unique(w["sm"]).size)}


def check_warp_sched(trace_dir, sms):
    import numpy as np
    from gpuopt.trace import load
    t = load(trace_dir)
    arr = t.maps["warp_sched"][..., 0]
    problems = []
    if t.overflow.get("warp_sched") != 0:
        problems.append(f"overflow {t.overflow.get('warp_sched')}")
    written = arr["gend"] != 0
    if (~written).any():
        problems.append(f"{int((~written).sum())} of {arr.size} warps wrote no record")
    w = arr[written]
    if (w["gstart"] > w["gend"]).any():
        problems.append(f"{int((w['gstart'] > w['gend']).sum())} records end before they start")
    if (w["sm"] >= sms).any():
        problems.append(f"SM ids up to {int(w['sm'].max())} on a {sms}-SM GPU")
    if (w["warp"] >= 64).any():
        problems.append(f"warp slots up to {int(w['warp'].max())} (at most 64 per SM)")
    span = int(w["gend"].max() - w["gstart"].min()) if w.size else 0
    return problems, {"warps": int(arr.size), "sms_seen": int(np.unique(w["sm"]).size),
                      "span_ns": span}


def check_dynamic(trace_dir, probe, spins=False):
    """A dynamic map: sized by the counting run, so nothing overflows; the
    records each slot kept are its count; dmat sizes and addresses sane.
    `spins`: the kernel waits in loops whose trip counts depend on timing
    (mbarrier try_wait), so the counts of the run may stay below the
    counting run's."""
    import numpy as np
    from gpuopt.trace import load
    t = load(trace_dir)
    arr, counts = t.maps[probe], t.counts.get(probe)
    problems = []
    if counts is None:
        return [f"{probe}: no slot counts in the trace"], {}
    if t.overflow.get(probe) != 0:
        problems.append(f"overflow {t.overflow.get(probe)} after the counting run")
    cap = arr.shape[2]
    if counts.size and (int(counts.max()) > cap or
                        (int(counts.max()) < cap and not spins)):
        problems.append(f"capacity {cap} but the largest count is {int(counts.max())}")
    valid = t.valid(probe)
    records = int(valid.sum())
    if records != int(np.minimum(counts, cap).sum()):
        problems.append("valid records do not match the slot counts")
    info = {"records": records, "capacity": cap, "slots": int(counts.size),
            "slots_with_records": int((counts > 0).sum())}
    if probe == "dmat" and records:
        v = arr[valid]
        size = v["info"] & 0x7FFFFFFF
        if (v["addr"] == 0).any():
            problems.append(f"{int((v['addr'] == 0).sum())} accesses at address 0")
        bad = ~np.isin(size, [1, 2, 4, 8, 16, 32])
        if bad.any():
            problems.append(f"{int(bad.sum())} accesses of odd sizes, e.g. {int(size[bad][0])}")
        store = (v["info"] >> 31) != 0
        info.update(loads=int((~store).sum()), stores=int(store.sum()),
                    load_bytes=int(size[~store].astype("u8").sum()),
                    store_bytes=int(size[store].astype("u8").sum()))
    if probe == "program_progress" and records:
        info["sites"] = int(np.unique(arr[valid]["site"]).size)
    return problems, info


def check_totals(trace_dir, probe, kernel):
    """Overflow, and each field's total against EXPECTED where known."""
    from gpuopt.trace import load  # numpy: only the GPU commands need it
    t = load(trace_dir)
    arr = t.maps[probe]
    problems = []
    if t.overflow.get(probe) != 0:
        problems.append(f"overflow {t.overflow.get(probe)}")
    totals = {f: int(arr[f].astype("u8").sum()) for f in arr.dtype.names if f}
    want = EXPECTED.get((probe, kernel))
    if want and totals.get(want[0]) != want[1]:
        problems.append(f"{want[0]} total {totals.get(want[0])}, expected {want[1]}")
    info = {"totals": totals, "expected": want}
    return problems, info


def cmd_check(args):
    out = os.path.abspath(args.dir)
    meta = fs.load_json(os.path.join(out, "probes.json"))
    results = []
    sms = None
    workdir = tempfile.mkdtemp(prefix="probe-check-")
    verifier = Verifier(os.path.abspath(args.gpu_run), workdir, args.timeout, log=log)
    previous = None
    try:
        for run in meta["runs"]:
            if run["probe"] not in args.probes or (
                    args.only and not any(o in run["kernel"] for o in args.only)):
                continue
            if "error" in run:
                results.append({**run, "result": "SKIP", "detail": run["error"][:200]})
                continue
            if previous and previous != run["kernel"]:
                verifier.drop_original(previous)  # its outputs can be GiBs
            previous = run["kernel"]
            module = os.path.join(ROOT, run["spec"]["module"]) if not os.path.isabs(
                run["spec"]["module"]) else run["spec"]["module"]
            trace = os.path.join(out, "traces", run["probe"], run["kernel"])
            shutil.rmtree(trace, ignore_errors=True)
            os.makedirs(os.path.dirname(trace), exist_ok=True)
            tol = fs.TOLERANCE.get(run["kernel"])
            # Every probe store is inside its buffer: under memcheck the
            # probed run fails with exit code 86 on any out-of-bounds access.
            prefix = ([args.sanitizer, "--tool", "memcheck", "--error-exitcode", "86"]
                      if args.sanitizer else [])
            v = verifier.verify(
                [(run["kernel"], {**run["spec"], "module": module, "kernel": run["entry"]})],
                os.path.join(ROOT, run["ptx"]), os.path.join(ROOT, run["manifest"]),
                kernel=run["entry"], tolerances={run["kernel"]: tol} if tol else None,
                extra_args=["--trace", trace], prefix=prefix,
                name=f"{run['probe']}-{run['kernel']}")
            res = {"kernel": run["kernel"], "probe": run["probe"]}
            if v["result"] != "PASS":
                res.update(result="FAIL", detail=v["detail"])
            else:
                r = verifier.last_run
                m = re.search(r"\((\d+) SMs", r.out)
                sms = int(m.group(1)) if m else (sms or 132)
                counting = re.findall(r"counting run: at most (\d+) records per slot, "
                                      r"buffer (\d+) bytes", r.out)
                if run["probe"] == "block_sched":
                    problems, info = check_block_sched(trace, sms)
                    what = f"{info.get('warps')} warp records on {info.get('sms_seen')} SMs"
                elif run["probe"] == "warp_sched":
                    problems, info = check_warp_sched(trace, sms)
                    what = (f"{info.get('warps')} warp records on {info.get('sms_seen')} SMs, "
                            f"span {info.get('span_ns')} ns")
                elif run["probe"] in ("dmat", "program_progress"):
                    with open(module) as f:
                        spins = "mbarrier.try_wait" in f.read()
                    problems, info = check_dynamic(trace, run["probe"], spins)
                    if counting:
                        info["buffer_bytes"] = int(counting[0][1])
                    what = ", ".join(f"{k} {v}" for k, v in info.items())
                else:
                    problems, info = check_totals(trace, run["probe"], run["kernel"])
                    what = "totals " + ", ".join(f"{k} {v}" for k, v in info["totals"].items())
                    if info["expected"]:
                        what += f" (expected {info['expected'][0]} {info['expected'][1]})"
                res.update(result="FAIL" if problems else "PASS",
                           detail="; ".join(problems) or
                           ("outputs " + ("within tolerance" if tol else "bit-identical") +
                            f"; {what}"), **info)
            if run["probe"] in ("dmat", "program_progress") and not args.keep_traces:
                shutil.rmtree(trace, ignore_errors=True)  # can be GiBs
            log(f"{run['kernel']} + {run['probe']}: {res['result']}: {res['detail'][:160]}")
            results.append(res)
    finally:
        shutil.rmtree(workdir, ignore_errors=True)
    with open(os.path.join(out, args.results), "w") as f:
        json.dump({"date": args.date, "results": results}, f, indent=1)
    passed = sum(r["result"] == "PASS" for r in results)
    log(f"check: {passed} PASS, {sum(r['result'] == 'FAIL' for r in results)} FAIL, "
        f"{sum(r['result'] == 'SKIP' for r in results)} SKIP")
    return 0 if passed == len(results) else 1


def cmd_bench(args):
    out = os.path.abspath(args.dir)
    meta = fs.load_json(os.path.join(out, "probes.json"))
    all_runs = [r for r in meta["runs"] if "error" not in r and r["probe"] in args.probes]
    # Dynamic maps whose counted buffer is too large to time next to the
    # others (check.json has the counting run's size).
    sizes = {}
    check_path = os.path.join(out, "check.json")
    if os.path.exists(check_path):
        for c in fs.load_json(check_path)["results"]:
            if "buffer_bytes" in c:
                sizes[(c["kernel"], c["probe"])] = c["buffer_bytes"]
    skipped = [r for r in all_runs
               if sizes.get((r["kernel"], r["probe"]), 0) > args.max_buffer_gib * 2 ** 30]
    for r in skipped:
        log(f"bench: {r['kernel']} + {r['probe']} left out: its buffer is "
            f"{sizes[(r['kernel'], r['probe'])] / 2 ** 30:.1f} GiB")
    all_runs = [r for r in all_runs if r not in skipped]
    rows, report = [], None
    # One gpu-run process per probe: each holds the originals and their
    # probed kernels, with their buffers.
    for probe in sorted({r["probe"] for r in all_runs}):
        runs = [r for r in all_runs if r["probe"] == probe]
        kernels, groups = [], []
        for run in runs:
            o, p = run["kernel"], f"{run['kernel']}+{run['probe']}"
            module = run["spec"]["module"]
            kernels.append({**{k: v for k, v in run["spec"].items() if k != "label"},
                            "label": o, "time_alone": False,
                            "module": module if os.path.isabs(module)
                            else os.path.join(ROOT, module)})
            kernels.append({"label": p, "module": os.path.join(ROOT, run["ptx"]),
                            "kernel": run["entry"],
                            "manifest": os.path.join(ROOT, run["manifest"]),
                            "grid": run["spec"]["grid"], "block": run["spec"]["block"],
                            "smem": run["spec"].get("smem", 0),
                            "args": run["spec"]["args"], "time_alone": False})
            groups.append({"name": p, "kernels": [o, p], "modes": ["alone"]})
        report, error, _ = gbench.run_spec(
            args.gpu_run, {"warmup": args.warmup, "repeat": args.repeat, "kernels": kernels,
                           "groups": groups}, out, f"bench-spec-{probe}", args.timeout,
            stream=True)
        if error:
            log(f"gpu-run failed for {probe} ({error})")
            return 2
        for run, g in zip(runs, report["groups"]):
            alone = g["alone"]
            to = alone[run["kernel"]]["median_ms"]
            tp = alone[f"{run['kernel']}+{run['probe']}"]["median_ms"]
            ro, rp = run["original"].get("registers"), run["probed"].get("registers")
            rows.append({"kernel": run["kernel"], "probe": run["probe"], "original_ms": to,
                         "probed_ms": tp, "slowdown": tp / to, "registers": ro,
                         "probed_registers": rp,
                         "extra_registers": (rp - ro) if None not in (ro, rp) else None,
                         "spill_bytes": run["probed"].get("spill_bytes", 0),
                         "original_spill_bytes": run["original"].get("spill_bytes", 0)})
    write_bench(report, rows, args)
    return 0


def write_bench(report, rows, args):
    dev = report["device"]
    gpu = re.sub(r"[^a-z0-9]+", "-", dev["name"].lower()).strip("-")
    short = "h100" if "h100" in gpu else "h200" if "h200" in gpu else gpu
    os.makedirs(args.out_dir, exist_ok=True)
    by_probe = {}
    for r in rows:
        by_probe.setdefault(r["probe"], []).append(r)
    md = [f"# Probe overhead on {dev['name']}", "",
          f"- Date: {args.date}; {dev.get('multiprocessors')} SMs",
          "- Command: `python3 benchmarks/probes/probe_suite.py generate && "
          "python3 benchmarks/probes/probe_suite.py check && "
          "python3 benchmarks/probes/probe_suite.py bench`",
          f"- Method: gpu-run, CUDA events, {args.warmup} warm-up and {args.repeat} timed "
          "rounds; each round runs the original and the probed kernel once each "
          "(interleaved), medians. Registers and spills from ptxas -v (sm_90a).", ""]
    for probe, rs in by_probe.items():
        geo = math.exp(sum(math.log(r["slowdown"]) for r in rs) / len(rs))
        extra = [r["extra_registers"] for r in rs if r["extra_registers"] is not None]
        new_spills = [r["kernel"] for r in rs if r["spill_bytes"] > r["original_spill_bytes"]]
        md += [f"## {probe}", "",
               f"- geomean slowdown {geo:.3f}x over {len(rs)} kernels; extra registers: "
               f"mean {sum(extra) / len(extra):+.1f}, max {max(extra):+d}; new spills: "
               f"{', '.join(new_spills) or 'none'}", "",
               "| kernel | original (ms) | probed (ms) | slowdown | registers | probed | extra |",
               "| --- | ---: | ---: | ---: | ---: | ---: | ---: |"]
        for r in rs:
            md.append(f"| {r['kernel']} | {r['original_ms']:.4f} | {r['probed_ms']:.4f} | "
                      f"{r['slowdown']:.3f} | {r['registers']} | {r['probed_registers']} | "
                      f"{r['extra_registers']:+d} |")
        md.append("")
    path = os.path.join(args.out_dir, f"{args.name}-{short}.md")
    with open(path, "w") as f:
        f.write("\n".join(md))
    with open(os.path.splitext(path)[0] + ".json", "w") as f:
        json.dump({"device": dev, "date": args.date, "rows": rows}, f, indent=1)
    log(f"wrote {path}")


def cmd_registers(args):
    meta = fs.load_json(os.path.join(os.path.abspath(args.dir), "probes.json"))
    runs = [r for r in meta["runs"] if "error" not in r and r["probe"] in args.probes]
    md = ["# Probe registers and spills (ptxas -v, sm_90a)", "",
          f"- Date: {args.date}",
          "- Command: `python3 benchmarks/probes/probe_suite.py generate && "
          "python3 benchmarks/probes/probe_suite.py registers`",
          "- What ptxas allocates for each suite kernel before and after probing "
          "(keep-occupancy on, as users run it); no GPU timing here.", ""]
    rows = []
    for probe in args.probes:
        rs = [r for r in runs if r["probe"] == probe]
        if not rs:
            continue
        md += [f"## {probe}", ""]
        table = ["| kernel | registers | probed | extra | spill bytes | probed |",
                 "| --- | ---: | ---: | ---: | ---: | ---: |"]
        extra, new_spills = [], []
        for r in rs:
            o, p = r["original"], r["probed"]
            ro, rp = o.get("registers"), p.get("registers")
            so, sp = o.get("spill_bytes", 0), p.get("spill_bytes", 0)
            if None in (ro, rp):
                continue
            extra.append(rp - ro)
            if sp > so:
                new_spills.append(r["kernel"])
            table.append(f"| {r['kernel']} | {ro} | {rp} | {rp - ro:+d} | {so} | {sp} |")
            rows.append({"kernel": r["kernel"], "probe": probe, "registers": ro,
                         "probed_registers": rp, "spill_bytes": so,
                         "probed_spill_bytes": sp})
        md += [f"- extra registers: mean {sum(extra) / len(extra):+.2f}, max "
               f"{max(extra):+d} over {len(extra)} kernels; new spills: "
               f"{', '.join(new_spills) or 'none'}", ""] + table + [""]
    os.makedirs(args.out_dir, exist_ok=True)
    path = os.path.join(args.out_dir, "probes-registers.md")
    with open(path, "w") as f:
        f.write("\n".join(md))
    with open(os.path.splitext(path)[0] + ".json", "w") as f:
        json.dump({"date": args.date, "rows": rows}, f, indent=1)
    log(f"wrote {path}")
    return 0


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    g = sub.add_parser("generate")
    g.add_argument("--gpu-opt", default=os.path.join(ROOT, "build", "bin", "gpu-opt"))
    g.add_argument("--ptxas", default=None)
    g.add_argument("--out-dir", default=os.path.join(ROOT, "build", "probes"))
    g.add_argument("--probes", nargs="+", default=list(PROBES))
    g.add_argument("--only", default=None)
    g.add_argument("--sm-count", type=int, default=fs.SM_COUNT)
    for name in ("check", "bench"):
        p = sub.add_parser(name)
        p.add_argument("--gpu-run", default=fs.find_tool("gpu-run"))
        p.add_argument("--dir", default=os.path.join(ROOT, "build", "probes"))
        p.add_argument("--timeout", type=int, default=600)
        p.add_argument("--date", default=datetime.date.today().isoformat())
    b = sub.choices["bench"]
    b.add_argument("--out-dir", default=os.path.join(ROOT, "docs", "results"))
    b.add_argument("--warmup", type=int, default=20)
    b.add_argument("--repeat", type=int, default=100)
    b.add_argument("--probes", nargs="+", default=list(PROBES))
    b.add_argument("--max-buffer-gib", type=float, default=4.0)
    b.add_argument("--name", default="probes",
                   help="results file stem: OUT_DIR/NAME-<gpu>.md and .json")
    r = sub.add_parser("registers")
    r.add_argument("--dir", default=os.path.join(ROOT, "build", "probes"))
    r.add_argument("--out-dir", default=os.path.join(ROOT, "docs", "results"))
    r.add_argument("--probes", nargs="+", default=list(PROBES))
    r.add_argument("--date", default=datetime.date.today().isoformat())
    c = sub.choices["check"]
    c.add_argument("--keep-traces", action="store_true")
    c.add_argument("--probes", nargs="+", default=list(PROBES))
    c.add_argument("--only", nargs="+", default=None,
                   help="kernels whose name contains one of these")
    c.add_argument("--sanitizer", default=None,
                   help="run each probed kernel under this compute-sanitizer (memcheck)")
    c.add_argument("--results", default="check.json", help="results file name in --dir")
    args = ap.parse_args(argv)
    return {"generate": cmd_generate, "check": cmd_check, "bench": cmd_bench,
            "registers": cmd_registers}[args.cmd](args)


if __name__ == "__main__":
    sys.exit(main())
