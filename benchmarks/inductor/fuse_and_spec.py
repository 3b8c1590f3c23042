#!/usr/bin/env python3
"""Fuse each program's two Inductor kernels with gpu-opt and write the gpu-run
specs that time and check them (runs on the development machine, no GPU,
after dump_kernels.py's output directory was copied here).

For every program of DUMP_DIR (dump_kernels.py --out DUMP_DIR) whose combo-off
compile gave two independent kernels, in DUMP_DIR/<prog>/:

  gpu-opt separate_0.ptx separate_1.ptx
      --hfuse="strategy=S grids=G0,G1 smem=M0,M1 profile=profile.json"
      -o fused_S.ptx --manifest fused_S.json
  for S in thread, interleave, dynamic, auto (a refusal is recorded with
  gpu-opt's message in fused_S.log and fusion.json). grids are the launches'
  grids (1024, 64x128), smem their dynamic shared memory; profile.json holds
  each kernel's time alone as dump_kernels.py measured it (for strategy=auto;
  --no-profile leaves it out).

Then, in DUMP_DIR:

  timing_spec.json  gpu-run --spec: the two separate kernels, the combo kernel
                    and every fused variant (arguments mapped through the
                    manifest's fused_from[p].arg_map); one group per program
                    with kernels [k1, k2], modes alone, serial, concurrent and
                    graph, and "also": [combo, fused variants] (timed alone in
                    the same interleaved rounds).
  checks.json       the correctness list: per program a reference spec (the
                    separate kernels, writing their outputs with "out") and
                    per fused variant a spec writing the fused kernel's
                    outputs, with the pairs of files that must be
                    bit-identical; and, for information, the combo kernel's
                    outputs against the separate kernels' (within a
                    tolerance: different code).
  check/<prog>/*.spec.json   those specs (outputs go to check/<prog>/*.bin)
  fusion.json       what was fused, refused or skipped, with the commands.

All paths in the specs are relative to DUMP_DIR: report.py runs gpu-run there.

usage: fuse_and_spec.py --dump DIR [--gpu-opt PATH] [--strategies LIST]
                        [--programs LIST] [--warmup N] [--repeat N]
                        [--no-profile] [--force] [--timeout S]
"""

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import time

from gpuopt.capture.inductor import PROGRAM_NAMES, grid_text  # torch-free at import

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))

STRATEGIES = ["thread", "interleave", "dynamic", "auto"]
MODES = ["alone", "serial", "concurrent", "graph"]


def log(*a):
    print("[fuse]", *a, flush=True)


class SpecError(Exception):
    pass


# ---------------------------------------------------------------------------
# Pure helpers (tested by test_inductor_scripts.py)
# ---------------------------------------------------------------------------

def hfuse_option(strategy, grids, smems, profile=None):
    """The --hfuse pass options for two kernels."""
    opt = f"strategy={strategy} grids={','.join(grid_text(g) for g in grids)}"
    if any(smems):
        opt += f" smem={','.join(str(int(s)) for s in smems)}"
    if profile:
        opt += f" profile={profile}"
    if strategy == "auto":
        # A decline fails and is recorded, rather than writing the kernels
        # apart.
        opt += " require=true"
    return f"--hfuse={opt}"


def buf_type_count(spec):
    """(TYPE, COUNT) of a buf: spec, or None."""
    parts = spec.split(":")
    if parts[0] != "buf":
        return None
    count = 1
    for f in parts[2].split("*"):
        count *= int(f)
    return parts[1], count


def fused_kernel_of(manifest):
    """The manifest's fused kernel (the one with fused_from)."""
    fused = [k for k in manifest.get("kernels", []) if k.get("fused_from")]
    if len(fused) != 1:
        raise SpecError(f"the manifest has {len(fused)} kernels with fused_from, expected 1")
    return fused[0]


def match_parts(kernel, launches):
    """Launch index of each fused_from part: by kernel name, else in order."""
    parts = kernel["fused_from"]
    if len(parts) != len(launches):
        raise SpecError(f"the fused kernel has {len(parts)} parts, expected {len(launches)}")
    names = [L["kernel"] for L in launches]
    if len(set(names)) == len(names) and all(p["kernel"] in names for p in parts):
        order = [names.index(p["kernel"]) for p in parts]
    else:
        order = list(range(len(parts)))
    return order


def map_args(kernel, launches):
    """Fused kernel arguments from the original launches' arguments through
    fused_from[p].arg_map. Returns (args, mapping) where mapping[(launch,
    arg)] = fused parameter."""
    nparams = len(kernel["params"])
    args = [None] * nparams
    mapping = {}
    for part, li in zip(kernel["fused_from"], match_parts(kernel, launches)):
        orig = launches[li]["args"]
        amap = part["arg_map"]
        if len(amap) != len(orig):
            raise SpecError(f"part {part['kernel']}: arg_map has {len(amap)} entries, the "
                            f"launch has {len(orig)} arguments")
        for i, j in enumerate(amap):
            if not 0 <= j < nparams:
                raise SpecError(f"part {part['kernel']}: arg_map[{i}] = {j} is no parameter "
                                f"of the fused kernel ({nparams})")
            if args[j] is not None and (args[j] != orig[i] or args[j].endswith(":out")):
                # One parameter for two arguments: only for the same input.
                raise SpecError(f"fused parameter {j} receives both {args[j]!r} and {orig[i]!r}")
            args[j] = orig[i]
            mapping[(li, i)] = j
    missing = [j for j, a in enumerate(args) if a is None]
    for j in missing:  # a parameter no original argument feeds
        p = kernel["params"][j]
        if p.get("kind") == "pointer" or (p.get("size") == 8 and p.get("kind") != "bytes"):
            args[j] = "null"
        else:
            raise SpecError(f"fused parameter {j} ({p.get('name')}) receives no argument")
    return args, mapping


def fused_launch(kernel, launches):
    """grid, block, smem of the fused launch: the manifest's when fixed; a
    runtime grid is the larger of the parts' grids (docs/manifest.md)."""
    launch = kernel.get("launch", {})
    notes = []
    grid = launch.get("grid", "runtime")
    if grid == "runtime":
        grid = [max(L["grid"][d] for L in launches) for d in range(3)]
        notes.append("grid computed as the largest part's (the manifest says runtime)")
    block = launch.get("block", "runtime")
    if block == "runtime":
        raise SpecError("the fused kernel's block is not fixed by the manifest")
    smem = launch.get("dynamic_smem", "runtime")
    if smem == "runtime":
        smem = sum(int(L["dynamic_smem"]) for L in launches)
        notes.append("dynamic shared memory computed as the parts' sum (the manifest says runtime)")
    return list(grid), list(block), int(smem), notes


def kernel_spec(label, module, kernel, grid, block, smem, args, manifest=None, out=None):
    spec = {"label": label, "module": module, "kernel": kernel, "grid": list(grid),
            "block": list(block), "smem": int(smem), "args": list(args)}
    if manifest:
        spec["manifest"] = manifest
    if out:
        spec["out"] = {str(k): v for k, v in out.items()}
    return spec


def launch_spec(label, prog, L, out=None):
    return kernel_spec(label, f"{prog}/{L['ptx']}", L["kernel"], L["grid"], L["block"],
                       L["dynamic_smem"], L["args"], out=out)


def out_tag(p):
    """What a written buffer is, to match it across compiles: a program
    output or a mutated program input."""
    if p.get("input") is not None:
        return f"input {p['input']}"
    if p.get("output") is not None:
        return f"output {p['output']}"
    return None


def combo_pairs(combo, launches, combo_dir, ref_files):
    """Pairs (combo output file, separate output file) matched by out_tag, or
    None when some written buffer cannot be matched."""
    ref_by_tag = {}
    for li, L in enumerate(launches):
        for p in L["params"]:
            if p["index"] in L.get("out_params", []) and out_tag(p):
                ref_by_tag[out_tag(p)] = ref_files[(li, p["index"])]
    pairs, out = [], {}
    for p in combo["params"]:
        if p["index"] not in combo.get("out_params", []):
            continue
        tag = out_tag(p)
        if tag is None or tag not in ref_by_tag:
            return None, None
        path = f"{combo_dir}/combo_arg{p['index']}.bin"
        out[p["index"]] = path
        tc = buf_type_count(combo["args"][p["index"]])
        pairs.append({"fused": path, "ref": ref_by_tag[tag], "what": tag,
                      "type": tc[0], "count": tc[1], "param": p["index"]})
    return pairs, out


def usable(res, force=False):
    """(ok, why not) for a program's launches.json."""
    plain = res.get("variants", {}).get("plain", {}).get("launches", [])
    if len(plain) != 2:
        return False, f"combo off gave {len(plain)} kernels, not 2"
    if any("args" not in L for L in plain):
        return False, "the launches have no argument specs (dump failed)"
    if res.get("status") != "ok" and not force:
        return False, "dump_kernels.py reported errors: " + "; ".join(res.get("errors", []))
    return True, ""


# ---------------------------------------------------------------------------
# Running gpu-opt
# ---------------------------------------------------------------------------

OPTIONAL_KEYS = ("smem", "profile", "require")


def unknown_option(message, option):
    """The optional key of the --hfuse option that gpu-opt calls unknown."""
    for key in OPTIONAL_KEYS:
        if f" {key}=" in option and re.search(
                r"(unknown|no such|unrecognized|invalid|not a)[^\n]{0,60}?\b" + re.escape(key) + r"\b",
                message, re.I):
            return key
    return None


def drop_option(option, key):
    return re.sub(r"\s+" + re.escape(key) + r"=\S+", "", option)


def run_gpu_opt(gpu_opt, pdir, launches, strategy, profile, timeout):
    """Fuses the program's two kernels; returns a result dict (ok, status:
    fused, refused (gpu-opt exit 1), error; message)."""
    out_ptx, out_json, logf = f"fused_{strategy}.ptx", f"fused_{strategy}.json", f"fused_{strategy}.log"
    opt = hfuse_option(strategy, [L["grid"] for L in launches],
                       [L["dynamic_smem"] for L in launches], profile)
    res = {"strategy": strategy, "ptx": out_ptx, "manifest": out_json, "log": logf, "warnings": []}
    logtext = []
    while True:
        for f in (out_ptx, out_json):
            if os.path.exists(os.path.join(pdir, f)):
                os.remove(os.path.join(pdir, f))
        cmd = [gpu_opt] + [L["ptx"] for L in launches] + [opt, "-o", out_ptx, "--manifest", out_json]
        shown = " ".join(["gpu-opt"] + [f"'{c}'" if " " in c else c for c in cmd[1:]])
        res["command"] = shown
        t0 = time.time()
        try:
            proc = subprocess.run(cmd, cwd=pdir, capture_output=True, text=True, timeout=timeout)
        except subprocess.TimeoutExpired:
            res.update({"ok": False, "status": "error", "message": f"gpu-opt timed out after {timeout} s"})
            logtext.append(f"$ {shown}\ntimed out after {timeout} s")
            break
        except OSError as e:
            res.update({"ok": False, "status": "error", "message": f"gpu-opt did not start: {e}"})
            break
        res["seconds"] = round(time.time() - t0, 2)
        text = (proc.stdout or "") + (proc.stderr or "")
        logtext.append(f"$ {shown}\n(exit {proc.returncode}, {res['seconds']} s)\n{text}")
        res["rc"] = proc.returncode
        key = unknown_option(text, opt) if proc.returncode != 0 else None
        if key:
            opt = drop_option(opt, key)
            res["warnings"].append(f"gpu-opt does not know {key}=: fused without it")
            continue
        lines = [l for l in text.splitlines() if l.strip()]
        if "USAGE:" in text and ("Unknown command line argument" in text or "hfuse" not in text):
            res.update({"ok": False, "status": "error",
                        "message": "gpu-opt printed its usage: does it know --hfuse? "
                                   + " ".join(lines[-2:])})
        elif proc.returncode == 1:
            res.update({"ok": False, "status": "refused", "message": "\n".join(lines[-12:])})
        elif proc.returncode != 0:
            res.update({"ok": False, "status": "error",
                        "message": f"gpu-opt exited {proc.returncode}: " + "\n".join(lines[-12:])})
        elif not (os.path.exists(os.path.join(pdir, out_json)) and
                  os.path.exists(os.path.join(pdir, out_ptx))):
            res.update({"ok": False, "status": "error",
                        "message": "gpu-opt exited 0 but wrote no .ptx or manifest"})
        else:
            res.update({"ok": True, "status": "fused",
                        "remarks": "\n".join(l for l in lines if "remark" in l)[-4000:]})
        break
    with open(os.path.join(pdir, logf), "w") as f:
        f.write("\n".join(logtext))
    return res


def process_program(prog, res, args, dump):
    pdir = os.path.join(dump, prog)
    launches = res["variants"]["plain"]["launches"]
    combo_v = res["variants"].get("combo", {})
    combo = combo_v.get("launches", [])
    entry = {"program": prog, "status": "ok", "combo_mode": res.get("combo_mode"),
             "kernels": [L["kernel"] for L in launches],
             "combo_kernels": [L["kernel"] for L in combo], "strategies": {}, "notes": []}
    labels = {"k1": f"{prog}/k1", "k2": f"{prog}/k2", "combo": None, "fused": {}}
    kernels = [launch_spec(labels["k1"], prog, launches[0]), launch_spec(labels["k2"], prog, launches[1])]
    if len(combo) == 1 and "args" in combo[0]:
        labels["combo"] = f"{prog}/combo"
        kernels.append(launch_spec(labels["combo"], prog, combo[0]))
    else:
        entry["notes"].append(f"no single combo kernel ({len(combo)} kernels with combo on)")

    # profile.json for strategy=auto: each kernel's time alone.
    profile = None
    times = [L.get("time_ms", {}).get("median_ms") for L in launches]
    if not args.no_profile and all(t for t in times):
        profile = "profile.json"
        with open(os.path.join(pdir, profile), "w") as f:
            json.dump({"source": "dump_kernels.py (Triton launcher, CUDA events)",
                       "kernels": [{"label": L["kernel"], "kernel": L["kernel"],
                                    "time": {"median_ms": t}} for L, t in zip(launches, times)]},
                      f, indent=1)

    # Reference outputs of the separate kernels.
    cdir = f"check/{prog}"
    os.makedirs(os.path.join(dump, cdir), exist_ok=True)
    ref_files, ref_kernels = {}, []
    for li, L in enumerate(launches):
        out = {i: f"{cdir}/ref_k{li + 1}_arg{i}.bin" for i in L["out_params"]}
        ref_files.update({(li, i): p for i, p in out.items()})
        ref_kernels.append(launch_spec(labels[f"k{li + 1}"], prog, L, out=out))
    checks = {"reference": write_check_spec(dump, f"{cdir}/ref.spec.json", ref_kernels),
              "variants": {}, "combo": None}

    for s in args.strategies:
        log(f"{prog}: gpu-opt strategy={s} ...")
        r = run_gpu_opt(args.gpu_opt, pdir, launches, s, profile, args.timeout)
        entry["strategies"][s] = r
        if not r["ok"]:
            last = r["message"].strip().splitlines()[-1] if r["message"].strip() else ""
            log(f"{prog}: strategy={s}: {r['status']}: {last}")
            continue
        try:
            with open(os.path.join(pdir, r["manifest"])) as f:
                manifest = json.load(f)
            fk = fused_kernel_of(manifest)
            fargs, mapping = map_args(fk, launches)
            grid, block, smem, notes = fused_launch(fk, launches)
        except (SpecError, KeyError, ValueError) as e:
            r.update({"ok": False, "status": "error", "message": f"unusable manifest: {e}"})
            log(f"{prog}: strategy={s}: unusable manifest: {e}")
            continue
        r.update({"kernel": fk["name"], "grid": grid, "block": block, "smem": smem,
                  "params": len(fk["params"]), "notes": notes,
                  "parts": [{k: p.get(k) for k in ("kernel", "threads", "grid", "arg_map")}
                            for p in fk["fused_from"]]})
        label = f"{prog}/fused_{s}"
        labels["fused"][s] = label
        kernels.append(kernel_spec(label, f"{prog}/{r['ptx']}", fk["name"], grid, block, smem,
                                   fargs, manifest=f"{prog}/{r['manifest']}"))
        # Correctness: the fused kernel's outputs against the separate ones.
        out, pairs = {}, []
        for (li, i), ref in ref_files.items():
            j = mapping[(li, i)]
            path = f"{cdir}/{s}_arg{j}.bin"
            out[j] = path
            tc = buf_type_count(launches[li]["args"][i])
            pairs.append({"fused": path, "ref": ref, "type": tc[0], "count": tc[1],
                          "part": li, "arg": i, "param": j})
        spec = kernel_spec(label, f"{prog}/{r['ptx']}", fk["name"], grid, block, smem, fargs,
                           manifest=f"{prog}/{r['manifest']}", out=out)
        checks["variants"][s] = {"spec": write_check_spec(dump, f"{cdir}/{s}.spec.json", [spec]),
                                 "pairs": pairs, "exact": True}
        log(f"{prog}: strategy={s}: fused {fk['name']}, grid {grid_text(grid)}, block "
            f"{block[0]}, smem {smem}, {len(fk['params'])} parameters")

    if labels["combo"]:
        pairs, out = combo_pairs(combo[0], launches, cdir, ref_files)
        if pairs:
            spec = launch_spec(labels["combo"], prog, combo[0], out=out)
            checks["combo"] = {"spec": write_check_spec(dump, f"{cdir}/combo.spec.json", [spec]),
                               "pairs": pairs, "exact": False, "tolerance": 1e-5}
        else:
            entry["notes"].append("combo outputs not matched to the separate kernels' (no check)")
    group = {"name": prog, "kernels": [labels["k1"], labels["k2"]], "modes": list(MODES),
             "also": ([labels["combo"]] if labels["combo"] else [])
             + [labels["fused"][s] for s in args.strategies if s in labels["fused"]]}
    entry["labels"] = labels
    entry["shared_inputs"] = res.get("shared_inputs", [])
    return entry, kernels, group, checks


def write_check_spec(dump, rel, kernels):
    spec = {"warmup": 0, "repeat": 0, "kernels": kernels}
    with open(os.path.join(dump, rel), "w") as f:
        json.dump(spec, f, indent=1)
    return rel


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--dump", required=True, help="dump_kernels.py's output directory")
    ap.add_argument("--gpu-opt", default=shutil.which("gpu-opt") or
                    os.path.join(ROOT, "build", "bin", "gpu-opt"))
    ap.add_argument("--strategies", default=",".join(STRATEGIES))
    ap.add_argument("--programs", default=None, help="comma-separated subset")
    ap.add_argument("--warmup", type=int, default=10, help="gpu-run warm-up rounds")
    ap.add_argument("--repeat", type=int, default=50, help="gpu-run timed rounds")
    ap.add_argument("--no-profile", action="store_true",
                    help="do not pass dump_kernels.py's kernel times to strategy=auto")
    ap.add_argument("--force", action="store_true",
                    help="also fuse programs whose dump reported errors (when two kernels exist)")
    ap.add_argument("--timeout", type=int, default=300, help="seconds per gpu-opt run")
    args = ap.parse_args(argv)
    args.strategies = [s.strip() for s in args.strategies.split(",") if s.strip()]
    bad = [s for s in args.strategies if s not in STRATEGIES]
    if bad:
        ap.error(f"unknown strategies {bad}")
    dump = os.path.abspath(args.dump)
    if not os.path.isfile(args.gpu_opt):
        print(f"fuse_and_spec: error: no gpu-opt at {args.gpu_opt}", file=sys.stderr)
        return 2
    args.gpu_opt = os.path.abspath(args.gpu_opt)
    chosen = args.programs.split(",") if args.programs else PROGRAM_NAMES

    fusion = {"gpu_opt": os.path.relpath(args.gpu_opt, ROOT) if args.gpu_opt.startswith(ROOT)
              else "gpu-opt", "strategies": args.strategies, "programs": {}}
    all_kernels, groups, checks = [], [], {"programs": {}}
    for prog in chosen:
        path = os.path.join(dump, prog, "launches.json")
        if not os.path.exists(path):
            log(f"{prog}: no {prog}/launches.json, skipped")
            continue
        with open(path) as f:
            res = json.load(f)
        ok, why = usable(res, args.force)
        if not ok:
            log(f"{prog}: skipped: {why}")
            fusion["programs"][prog] = {"program": prog, "status": "skipped", "reason": why,
                                        "combo_mode": res.get("combo_mode")}
            continue
        log(f"=== {prog}: {', '.join(L['kernel'] for L in res['variants']['plain']['launches'])}")
        try:
            entry, kernels, group, chk = process_program(prog, res, args, dump)
        except (SpecError, KeyError, ValueError, OSError) as e:
            log(f"{prog}: FAILED: {type(e).__name__}: {e}")
            fusion["programs"][prog] = {"program": prog, "status": "error",
                                        "reason": f"{type(e).__name__}: {e}"}
            continue
        fusion["programs"][prog] = entry
        all_kernels += kernels
        groups.append(group)
        checks["programs"][prog] = chk

    spec = {"warmup": args.warmup, "repeat": args.repeat, "kernels": all_kernels, "groups": groups}
    for name, obj in (("timing_spec.json", spec), ("checks.json", checks), ("fusion.json", fusion)):
        with open(os.path.join(dump, name), "w") as f:
            json.dump(obj, f, indent=1)
    fused = sum(len(e.get("labels", {}).get("fused", {})) for e in fusion["programs"].values())
    log(f"{len(groups)} programs, {fused} fused kernels; wrote timing_spec.json, checks.json, "
        f"fusion.json in {args.dump}")
    for prog, e in fusion["programs"].items():
        st = e.get("strategies", {})
        log(f"  {prog}: " + (", ".join(f"{s} {r['status']}" for s, r in st.items())
                             or e.get("reason", "")))
    log(f"next, on the GPU machine: python3 benchmarks/inductor/report.py --dump {args.dump}")
    return 0 if groups else 1


if __name__ == "__main__":
    sys.exit(main())
