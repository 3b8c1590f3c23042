#!/usr/bin/env python3
"""What a block pays to learn its work: interleave vs dynamic vs sm_aware.

Fuses two pairs of real kernels (nvcc's maxpool and bilinear upsampling, from
test/corpus/nvcc): a tiny pair (about 800 + 1000 blocks, microseconds each)
and a short pair (6272 + 32768 blocks), each by interleave (no dispatch: the
block index is the ticket), dynamic dispatch and sm_aware dispatch, these two
with 1, 2 and 4 work units per ticket (`units=`), all at the ratio the
planner fits to the grids.

  prepare  (no GPU; needs gpu-opt) writes DIR/<pair>/<variant>.ptx + .json
           and DIR/plan.json (the kernels, their arguments, every variant
           with its fused grid and units).
  measure  (GPU; needs gpu-run and python3 only) for every pair:
           1. checks: runs each kernel alone and each variant twice in a row
              on one module instance (the second launch finds the counters
              the first one's last block reset), and compares every output
              of both launches byte for byte with the kernels alone;
           2. times, in one gpu-run process per pair, the kernels alone and
              serial and every variant, interleaved round by round (CUDA
              events, --warmup, median of --repeat);
           3. prints, per variant, its median, the difference to interleave,
              and the dispatch cost
                per block = (T - T_interleave) * SMs / fused blocks
                per unit  = (T - T_interleave) * SMs / work units
              in microseconds of SM time (a resident block adds its cost
              times the blocks resident on its SM to the critical path), and
              writes DIR/dispatch-cost.json with all of it.
           Exit status 1 when an output differs.

usage: dispatch_cost.py prepare [--gpu-opt PATH] [--dir DIR]
       dispatch_cost.py measure [--gpu-run PATH] [--dir DIR] [--warmup N]
                                [--repeat N] [--only PAIR]

DIR defaults to build/dispatch-cost (ignored by git; carry it to the GPU
machine with build/bin/gpu-run). Module paths in plan.json are relative to
DIR, so the folder may move.
"""

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
DEFAULT_DIR = os.path.join(ROOT, "build", "dispatch-cost")

VARIANTS = [("interleave", "interleave", 1)] + [
    (f"{strategy}_u{units}", strategy, units)
    for strategy in ("dynamic", "sm_aware") for units in (1, 2, 4)]


def cdiv(a, b):
    return -(-a // b)


def s32(v):
    return f"scalar:s32:{v}"


def maxpool(n):
    """maxpool2d_fwd, 3x3 window, stride 2, pad 1: N x 64 x 112 x 112."""
    c, h, ho = 64, 112, 56
    return {"module": "nvcc/maxpool.ptx", "block": 256, "grid": cdiv(n * c * ho * ho, 256),
            "args": [f"buf:f32:{n * c * h * h}:random:2"] +
                    [s32(v) for v in (n, c, h, h, ho, ho, 3, 3, 2, 2, 1, 1)] +
                    [f"buf:f32:{n * c * ho * ho}:out", f"buf:s64:{n * c * ho * ho}:out"]}


def upsample(n, c):
    """upsample_bilinear2d, 64 x 64 to 128 x 128."""
    ih, oh = 64, 128
    return {"module": "nvcc/upsample_bilinear.ptx", "block": 256,
            "grid": cdiv(n * c * oh * oh, 256),
            "args": [f"buf:f32:{n * c * ih * ih}:random:4"] +
                    [s32(v) for v in (n, c, ih, ih, oh, oh)] +
                    [f"buf:f32:{n * c * oh * oh}:out"]}


PAIRS = {
    "tiny": [("maxpool", maxpool(1)), ("upsample", upsample(1, 16))],
    "short": [("maxpool", maxpool(8)), ("upsample", upsample(8, 64))],
}


def out_indices(args):
    return [i for i, a in enumerate(args) if a.startswith("buf:") and a.endswith(":out")]


def prepare(opts):
    gpu_opt = opts.gpu_opt or shutil.which("gpu-opt") or os.path.join(ROOT, "build", "bin", "gpu-opt")
    os.makedirs(opts.dir, exist_ok=True)
    plan = {"pairs": {}}
    for pair, kernels in PAIRS.items():
        pdir = os.path.join(opts.dir, pair)
        os.makedirs(pdir, exist_ok=True)
        entry = {"kernels": [], "variants": []}
        for label, k in kernels:
            src = os.path.join(ROOT, "test", "corpus", k["module"])
            dst = os.path.join(pdir, label + ".ptx")
            shutil.copyfile(src, dst)
            entry["kernels"].append({"label": label, "module": os.path.relpath(dst, opts.dir),
                                     "grid": [k["grid"]], "block": [k["block"]],
                                     "args": k["args"]})
        for name, strategy, units in VARIANTS:
            ptx = os.path.join(pdir, name + ".ptx")
            manifest = os.path.join(pdir, name + ".json")
            options = (f"strategy={strategy} units={units} "
                       f"blocks={','.join(str(k['block']) for _, k in kernels)} "
                       f"grids={','.join(str(k['grid']) for _, k in kernels)}")
            cmd = [gpu_opt, *(os.path.join(pdir, label + ".ptx") for label, _ in kernels),
                   f"--hfuse={options}", "-o", ptx, "--manifest", manifest]
            r = subprocess.run(cmd, capture_output=True, text=True)
            if r.returncode != 0:
                sys.exit(f"dispatch_cost.py: {' '.join(cmd)}\n{r.stderr}")
            with open(manifest) as f:
                m = json.load(f)["kernels"][0]
            entry["variants"].append({
                "name": name, "strategy": strategy, "units": units, "options": options,
                "module": os.path.relpath(ptx, opts.dir),
                "manifest": os.path.relpath(manifest, opts.dir),
                "grid": m["launch"]["grid"][0],
                "ratio": [p.get("ratio") for p in m["fused_from"]]})
            print(f"prepare: {pair} {name}: grid {entry['variants'][-1]['grid']}")
        plan["pairs"][pair] = entry
    with open(os.path.join(opts.dir, "plan.json"), "w") as f:
        json.dump(plan, f, indent=1)
    print(f"prepare: wrote {os.path.join(opts.dir, 'plan.json')}")


def gpu_run_json(gpu_run, spec, workdir, name):
    spec_path = os.path.join(workdir, name + ".spec.json")
    report_path = os.path.join(workdir, name + ".report.json")
    with open(spec_path, "w") as f:
        json.dump(spec, f, indent=1)
    r = subprocess.run([gpu_run, "--spec", spec_path, "--json", report_path],
                       capture_output=True, text=True, timeout=1800)
    if r.returncode != 0:
        sys.exit(f"dispatch_cost.py: gpu-run --spec {spec_path} failed ({r.returncode}):\n"
                 f"{r.stdout[-2000:]}{r.stderr[-4000:]}")
    with open(report_path) as f:
        return json.load(f)


def check_pair(gpu_run, base, entry, workdir):
    """Every variant's two launches against the kernels alone; returns the
    failures."""
    kernels, refs, fused_args = [], [], []
    for k in entry["kernels"]:
        outs = {}
        for i in out_indices(k["args"]):
            outs[str(i)] = os.path.join(workdir, f"{k['label']}.{i}.ref")
            refs.append(outs[str(i)])
        kernels.append({"label": k["label"], "module": os.path.join(base, k["module"]),
                        "grid": k["grid"], "block": k["block"], "args": k["args"],
                        "out": outs})
        fused_args += k["args"]
    checks = []
    for v in entry["variants"]:
        for launch in (1, 2):
            outs = {str(i): os.path.join(workdir, f"{v['name']}.{launch}.{i}.bin")
                    for i in out_indices(fused_args)}
            kernels.append({"label": f"{v['name']}.{launch}",
                            "module": os.path.join(base, v["module"]),
                            "manifest": os.path.join(base, v["manifest"]),
                            "args": fused_args, "out": outs})
            checks.append((v["name"], launch, [outs[str(i)] for i in out_indices(fused_args)]))
    gpu_run_json(gpu_run, {"warmup": 0, "repeat": 0, "kernels": kernels, "groups": []},
                 workdir, "check")
    failures = []
    for name, launch, outs in checks:
        for ref, got in zip(refs, outs):
            with open(ref, "rb") as a, open(got, "rb") as b:
                if a.read() != b.read():
                    failures.append(f"{name} launch {launch}: {os.path.basename(got)} differs "
                                    f"from {os.path.basename(ref)}")
    return failures


def time_pair(gpu_run, base, entry, opts, workdir):
    kernels, fused_args = [], []
    for k in entry["kernels"]:
        kernels.append({"label": k["label"], "module": os.path.join(base, k["module"]),
                        "grid": k["grid"], "block": k["block"], "args": k["args"]})
        fused_args += k["args"]
    for v in entry["variants"]:
        kernels.append({"label": v["name"], "module": os.path.join(base, v["module"]),
                        "manifest": os.path.join(base, v["manifest"]), "args": fused_args,
                        "time_alone": False})
    spec = {"warmup": opts.warmup, "repeat": opts.repeat, "kernels": kernels,
            "groups": [{"name": "pair", "kernels": [k["label"] for k in entry["kernels"]],
                        "modes": ["alone", "serial"],
                        "also": [v["name"] for v in entry["variants"]]}]}
    return gpu_run_json(gpu_run, spec, workdir, "time")


def measure(opts):
    gpu_run = opts.gpu_run or shutil.which("gpu-run") or os.path.join(ROOT, "build", "bin", "gpu-run")
    with open(os.path.join(opts.dir, "plan.json")) as f:
        plan = json.load(f)
    base = os.path.abspath(opts.dir)
    results, failed = {"pairs": {}}, False
    for pair, entry in plan["pairs"].items():
        if opts.only and opts.only != pair:
            continue
        workdir = os.path.join(base, pair, "run")
        os.makedirs(workdir, exist_ok=True)
        failures = check_pair(gpu_run, base, entry, workdir)
        for f in failures:
            print(f"FAIL {pair}: {f}")
        failed |= bool(failures)
        print(f"check {pair}: {len(entry['variants'])} variants x 2 launches: "
              f"{'FAIL' if failures else 'bit-identical to the kernels alone'}")
        report = time_pair(gpu_run, base, entry, opts, workdir)
        sms = report["device"]["multiprocessors"]
        group = report["groups"][0]
        ms = {name: t["median_ms"] for name, t in group["also"].items()}
        alone = {name: t["median_ms"] for name, t in group["alone"].items()}
        units_total = sum(k["grid"][0] for k in entry["kernels"])
        t0 = ms["interleave"]
        rows = []
        print(f"\n{pair} ({report['device']['name']}, {sms} SMs): alone "
              + ", ".join(f"{k} {v * 1e3:.2f} us" for k, v in alone.items())
              + f", serial {group['serial']['median_ms'] * 1e3:.2f} us")
        print(f"  {'variant':<14}{'grid':>8}{'median us':>11}{'- interleave us':>17}"
              f"{'us/block':>10}{'us/unit':>9}")
        for v in entry["variants"]:
            t = ms[v["name"]]
            delta = t - t0
            per_block = delta * 1e3 * sms / v["grid"]
            per_unit = delta * 1e3 * sms / units_total
            rows.append({**v, "median_ms": t, "delta_ms": delta,
                         "cost_us_per_block": per_block, "cost_us_per_unit": per_unit,
                         "spread": group["also"][v["name"]].get("spread")})
            print(f"  {v['name']:<14}{v['grid']:>8}{t * 1e3:>11.2f}{delta * 1e3:>+17.2f}"
                  f"{per_block:>10.3f}{per_unit:>9.3f}")
        results["pairs"][pair] = {"device": report["device"], "alone_ms": alone,
                                  "serial_ms": group["serial"]["median_ms"],
                                  "work_units": units_total, "check_failures": failures,
                                  "variants": rows}
    results["warmup"], results["repeat"] = opts.warmup, opts.repeat
    out = os.path.join(base, "dispatch-cost.json")
    with open(out, "w") as f:
        json.dump(results, f, indent=1)
    print(f"\nwrote {out}")
    return 1 if failed else 0


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    sub = p.add_subparsers(dest="command", required=True)
    pp = sub.add_parser("prepare")
    pp.add_argument("--gpu-opt")
    pp.add_argument("--dir", default=DEFAULT_DIR)
    pm = sub.add_parser("measure")
    pm.add_argument("--gpu-run")
    pm.add_argument("--dir", default=DEFAULT_DIR)
    pm.add_argument("--warmup", type=int, default=20)
    pm.add_argument("--repeat", type=int, default=200)
    pm.add_argument("--only", choices=sorted(PAIRS))
    opts = p.parse_args(argv)
    if opts.command == "prepare":
        prepare(opts)
        return 0
    return measure(opts)


if __name__ == "__main__":
    sys.exit(main())
