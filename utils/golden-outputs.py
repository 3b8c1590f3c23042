#!/usr/bin/env python3
"""Golden outputs of gpu-opt: generate them with one binary, compare two sets.

A change that should not alter what gpu-opt produces (a refactoring, a new
internal representation) is checked by generating every output with the
binary before the change and with the binary after it, then comparing the
two directories file by file:

  * every corpus file (test/corpus/{nvcc,nvptx,triton}/*.ptx) under every
    built-in probe (configs/probes/*.yaml): the probed PTX, its manifest and
    gpu-opt's messages;
  * every fusion suite pair under every strategy: the gpu-opt command lines
    in utils/golden/fusion-commands.txt (one per line, written by
    `fuse_suite.py generate`; DIR stands for the output directory, where the
    auto strategy finds utils/golden/profile.json), with
    their PTX, manifests, candidate lists and messages;
  * one fused kernel per strategy of every pair (thread, interleave-1-1,
    dynamic-1-1) under every built-in probe, read back with its manifest
    (`--manifest-in`): the probes' part fields.

    python3 utils/golden-outputs.py generate --gpu-opt OLD/gpu-opt --out /tmp/a
    python3 utils/golden-outputs.py generate --gpu-opt build/bin/gpu-opt --out /tmp/b
    python3 utils/golden-outputs.py compare /tmp/a /tmp/b

Messages (`*.err`) are compared apart from outputs, with the binary's path
and the output directory replaced by fixed names, so that an intended change
of wording is reported as such and does not hide a changed output. `compare`
exits 1 when any output or exit status differs, 2 when only messages do.
"""

import argparse
import concurrent.futures
import filecmp
import os
import shlex
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
CORPUS_DIRS = ["test/corpus/nvcc", "test/corpus/nvptx", "test/corpus/triton"]
FUSION_COMMANDS = os.path.join(ROOT, "utils", "golden", "fusion-commands.txt")


def builtin_probes():
    d = os.path.join(ROOT, "configs", "probes")
    return sorted(os.path.splitext(f)[0] for f in os.listdir(d) if f.endswith(".yaml"))


def corpus_files():
    files = []
    for d in CORPUS_DIRS:
        full = os.path.join(ROOT, d)
        files += [os.path.join(d, f) for f in sorted(os.listdir(full)) if f.endswith(".ptx")]
    return files


def probe_jobs(out):
    jobs = []
    for src in corpus_files():
        stem = os.path.join(out, "probes", os.path.splitext(src)[0].replace("test/corpus/", ""))
        for probe in builtin_probes():
            base = f"{stem}.{probe}"
            jobs.append((base, ["GPU_OPT", src, f"--probe={probe}", "-o", base + ".ptx",
                                "--manifest", base + ".json"]))
    return jobs


def fusion_jobs(out):
    # The auto strategy's profile, as fuse_suite.py generate copies it.
    os.makedirs(os.path.join(out, "fusion"), exist_ok=True)
    with open(os.path.join(ROOT, "utils", "golden", "profile.json")) as src, \
            open(os.path.join(out, "fusion", "profile.json"), "w") as dst:
        dst.write(src.read())
    jobs = []
    with open(FUSION_COMMANDS) as f:
        for line in f:
            line = line.strip()
            if not line or line.startswith("#"):
                continue
            argv = shlex.split(line.replace("DIR", os.path.join(out, "fusion")))
            if argv[0] != "gpu-opt":
                sys.exit(f"golden-outputs: {FUSION_COMMANDS}: not a gpu-opt command: {line}")
            ptx = argv[argv.index("-o") + 1]
            jobs.append((os.path.splitext(ptx)[0], ["GPU_OPT"] + argv[1:]))
    return jobs


FUSED_VARIANTS = ("thread", "interleave-1-1", "dynamic-1-1")


def fused_probe_jobs(out):
    jobs = []
    fusion = os.path.join(out, "fusion")
    for pair in sorted(os.listdir(fusion)) if os.path.isdir(fusion) else []:
        for variant in FUSED_VARIANTS:
            src = os.path.join(fusion, pair, variant)
            if not (os.path.exists(src + ".ptx") and os.path.exists(src + ".json")):
                continue
            for probe in builtin_probes():
                base = os.path.join(out, "fused-probes", pair, f"{variant}.{probe}")
                jobs.append((base, ["GPU_OPT", src + ".ptx", "--manifest-in", src + ".json",
                                    f"--probe={probe}", "-o", base + ".ptx",
                                    "--manifest", base + ".json"]))
    return jobs


def run_one(gpu_opt, out, base, argv):
    os.makedirs(os.path.dirname(base), exist_ok=True)
    argv = [gpu_opt if a == "GPU_OPT" else a for a in argv]
    r = subprocess.run(argv, cwd=ROOT, capture_output=True, text=True)
    msg = (r.stdout + r.stderr).replace(gpu_opt, "gpu-opt").replace(out, "OUT")
    with open(base + ".err", "w") as f:
        f.write(f"exit {r.returncode}\n{msg}")
    return r.returncode


def cmd_generate(args):
    gpu_opt = os.path.abspath(args.gpu_opt)
    out = os.path.abspath(args.out)
    if os.path.exists(out) and os.listdir(out):
        sys.exit(f"golden-outputs: {out} is not empty; give a new directory")
    jobs = []
    if args.set in ("all", "probes"):
        jobs += probe_jobs(out)
    if args.set in ("all", "fusion", "fused"):
        jobs += fusion_jobs(out)
    with concurrent.futures.ThreadPoolExecutor(max_workers=args.jobs) as ex:
        codes = list(ex.map(lambda j: run_one(gpu_opt, out, *j), jobs))
        if args.set in ("all", "fused"):
            # Needs the fused kernels of this binary, generated above.
            more = fused_probe_jobs(out)
            jobs += more
            codes += list(ex.map(lambda j: run_one(gpu_opt, out, *j), more))
    failed = sum(1 for c in codes if c)
    print(f"golden-outputs: {len(jobs)} gpu-opt runs ({failed} refused) into {out}")
    return 0


def walk(d):
    files = set()
    for root, _, names in os.walk(d):
        for n in names:
            files.add(os.path.relpath(os.path.join(root, n), d))
    return files


def first_exit_line(path):
    with open(path) as f:
        return f.readline().strip()


def cmd_compare(args):
    a, b = walk(args.a), walk(args.b)
    missing = sorted(a - b)
    extra = sorted(b - a)
    outputs, messages, statuses = [], [], []
    for rel in sorted(a & b):
        pa, pb = os.path.join(args.a, rel), os.path.join(args.b, rel)
        if filecmp.cmp(pa, pb, shallow=False):
            continue
        if rel.endswith(".err"):
            if first_exit_line(pa) != first_exit_line(pb):
                statuses.append(rel)
            else:
                messages.append(rel)
        else:
            outputs.append(rel)
    same = len(a & b) - len(outputs) - len(messages) - len(statuses)
    print(f"golden-outputs: {same} of {len(a | b)} files identical")
    for title, items in (("only in " + args.a, missing), ("only in " + args.b, extra),
                         ("outputs differ", outputs), ("exit status differs", statuses),
                         ("messages differ", messages)):
        if items:
            print(f"{title} ({len(items)}):")
            for rel in items[:args.limit]:
                print(f"  {rel}")
            if len(items) > args.limit:
                print(f"  ... {len(items) - args.limit} more")
    if missing or extra or outputs or statuses:
        return 1
    return 2 if messages else 0


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = p.add_subparsers(dest="cmd", required=True)
    g = sub.add_parser("generate", help="run one gpu-opt over every golden input")
    g.add_argument("--gpu-opt", required=True)
    g.add_argument("--out", required=True, help="a new directory")
    g.add_argument("--set", choices=["all", "probes", "fusion", "fused"], default="all")
    g.add_argument("--jobs", type=int, default=os.cpu_count() or 2)
    c = sub.add_parser("compare", help="compare two generated directories")
    c.add_argument("a")
    c.add_argument("b")
    c.add_argument("--limit", type=int, default=40, help="names listed per group")
    args = p.parse_args()
    return cmd_generate(args) if args.cmd == "generate" else cmd_compare(args)


if __name__ == "__main__":
    sys.exit(main())
