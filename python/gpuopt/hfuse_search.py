#!/usr/bin/env python3
"""hfuse-search: measure gpu-opt's fusion candidates on the GPU, keep the fastest.

gpu-opt's planner (`--hfuse strategy=auto`) ranks every way to fuse the
kernels with a model; this tool builds the top candidates, times them through
gpu-run next to the kernels run apart (serial, two streams, a CUDA graph) and
keeps the fastest, or says that none wins.

  prepare  (no GPU) runs the planner, builds the chosen candidates with gpu-opt
           (PTX + launch manifest each) and writes gpu-run specs: DIR/spec<N>.json
  measure  (GPU) runs that spec through gpu-run (its progress shows), ranks the
           candidates by their median time, checks the fastest with
           gpuopt.verify (its outputs bit for bit those of the kernels run
           apart; a candidate that fails is reported and left out, and the
           next one checked) and copies it to DIR/best.ptx + DIR/best.json;
           writes DIR/result.json
  run      both, where gpu-opt and the GPU are on one machine
  report   (no GPU) a markdown table over several measured searches: how the
           planner's ranking compares with every candidate measured

The input is a gpu-run run spec (gpu-run --help) holding the kernels to fuse,
in order, with their launch shapes and arguments:

  {"kernels": [{"label": "a", "module": "a.ptx", "kernel": "ka", "grid": [1024],
                "block": [256], "smem": 0, "args": ["buf:f32:1048576:random:1", ...]},
               {"label": "b", ...}]}

--top K measures the K best-ranked candidates (default 2); --exhaustive
measures every feasible candidate of the planner plus interleave and dynamic
ratios from 64:1 to 1:64 (powers of two), the anchor that shows how far the
ranking is from the best. Exit status: 0 a fused kernel won, 3 none beat the
kernels run apart (or the planner found none), 2 an error.
"""

import json
import math
import os
import re
import shutil
import subprocess
import sys
import tempfile

from gpuopt.launch_args import (MappingError, args_bytes, map_args,
                                pack_by_bytes)
from gpuopt.tools import ToolNotFound, add_tool_option, command_parser, find_tool
from gpuopt.verify import VerifyError, Verifier, parse_tolerances


def log(msg):
    print(f"hfuse-search: {msg}", flush=True)


class SearchError(Exception):
    pass


def dims(value):
    value = list(value) + [1] * (3 - len(value))
    return "x".join(str(int(v)) for v in value)


def load_kernels(spec_path):
    with open(spec_path) as f:
        spec = json.load(f)
    kernels = spec.get("kernels") or []
    if len(kernels) < 2:
        raise SearchError(f"{spec_path}: needs at least two kernels to fuse, has "
                          f"{len(kernels)}")
    # Relative paths are relative to the current directory, as gpu-run reads them.
    base = os.getcwd()
    for k in kernels:
        if "module" in k and "kernel" not in k:
            k["kernel"] = only_entry(k["module"] if os.path.isabs(k["module"])
                                     else os.path.join(base, k["module"]))
        for key in ("module", "kernel", "grid", "block", "args"):
            if key not in k:
                raise SearchError(f"{spec_path}: kernel {k.get('label', '?')!r} has no "
                                  f"{key!r}")
        k.setdefault("label", k["kernel"])
        if re.fullmatch(r"cand\d+", k["label"]):
            raise SearchError(f"{spec_path}: label {k['label']!r} is the name of a "
                              "candidate; label the kernel otherwise")
        if not os.path.isabs(k["module"]):
            k["module"] = os.path.normpath(os.path.join(base, k["module"]))
    return kernels


def only_entry(ptx_path):
    """The name of the one .entry of a PTX file (a spec may leave "kernel" out
    then, as gpu-run allows)."""
    with open(ptx_path, errors="replace") as f:
        names = re.findall(r"\.entry\s+([A-Za-z_$%][\w$%]*)", f.read())
    if len(names) != 1:
        raise SearchError(f"{ptx_path}: has {len(names)} .entry kernels; name one with "
                          "\"kernel\"")
    return names[0]


def base_options(kernels, profile=None, chip=None):
    """The --hfuse options every candidate shares: which kernels and how each
    is launched."""
    opts = ["kernels=" + ",".join(k["kernel"] for k in kernels),
            "blocks=" + ",".join(dims(k["block"]) for k in kernels),
            "grids=" + ",".join(dims(k["grid"]) for k in kernels),
            "smem=" + ",".join(str(int(k.get("smem", 0))) for k in kernels)]
    if profile:
        opts.append(f"profile={os.path.abspath(profile)}")
    if chip:
        opts.append(f"chip={chip}")
    return opts


def run_gpu_opt(gpu_opt, kernels, options, out_ptx, timeout):
    modules = []
    for k in kernels:
        if k["module"] not in modules:
            modules.append(k["module"])
    manifest = os.path.splitext(out_ptx)[0] + ".json"
    cmd = [gpu_opt, *modules, "--hfuse=" + " ".join(options), "-o", out_ptx,
           "--manifest", manifest]
    try:
        r = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        return None, f"gpu-opt took more than {timeout} s"
    if r.returncode != 0:
        return None, (r.stderr or r.stdout).strip()
    return manifest, (r.stderr or "").strip()


def plan_key(strategy, threads, ratio, maxnreg, units=1):
    if strategy == "thread":
        return ("thread", tuple(threads), int(maxnreg or 0))
    # dynamic and sm_aware blocks may take several work units per ticket.
    return (strategy, tuple(ratio), int(maxnreg or 0), int(units or 1))


def ratio_ladder(n_parts, strategies=("interleave", "dynamic")):
    """Candidates the planner may not list: each kernel's share from 64:1 to
    1:64 (two kernels; more kernels get 1:1:... only)."""
    steps = [64, 32, 16, 8, 4, 2]
    ratios = [[1] * n_parts]
    if n_parts == 2:
        ratios += [[r, 1] for r in steps] + [[1, r] for r in reversed(steps)]
    return [{"strategy": s, "ratio": r, "options": f"strategy={s} ratio=" +
             ",".join(map(str, r)) + " maxnreg=0", "description": f"{s} " +
             ":".join(map(str, r)), "feasible": True, "source": "ladder"}
            for s in strategies for r in ratios]


def cmd_prepare(args):
    kernels = load_kernels(args.spec)
    out = os.path.abspath(args.out_dir)
    os.makedirs(out, exist_ok=True)
    # What an earlier search left must not pass for this one's.
    for name in os.listdir(out):
        if re.fullmatch(r"(search|result|best|spec\d+|report\d+|cand\d+)\.(json|ptx)", name):
            os.remove(os.path.join(out, name))
    base = base_options(kernels, args.profile, args.chip)
    cand_path = os.path.join(out, "candidates.json")
    if os.path.exists(cand_path):
        os.remove(cand_path)
    log(f"planning {' + '.join(k['label'] for k in kernels)} with {args.gpu_opt}")
    # require=true: a decline fails (and says why) instead of writing the
    # kernels apart, which this tool would take for the planner's choice.
    manifest, message = run_gpu_opt(args.gpu_opt, kernels, base + [
        "strategy=auto", "require=true", "name=hfuse_auto", f"candidates-out={cand_path}"],
        os.path.join(out, "auto.ptx"), args.timeout)
    if not os.path.exists(cand_path):
        raise SearchError(f"the planner wrote no candidates: {message}")
    with open(cand_path) as f:
        ranked = json.load(f)
    auto_declined = manifest is None
    log(f"the planner {'declined to fuse' if auto_declined else 'chose'}: "
        f"{message.splitlines()[0] if message else ''}")
    feasible = [dict(c, source="planner", rank=i) for i, c in
                enumerate(c for c in ranked if c.get("feasible"))]
    for c in ranked:
        if not c.get("feasible"):
            log(f"  infeasible: {c['description']}: {c.get('reason', '')[:160]}")
    if args.exhaustive:
        chosen = list(feasible)
        seen = {plan_key(c["strategy"], c.get("threads", []), c.get("ratio", []),
                         c.get("maxnreg"), c.get("units")) for c in chosen}
        for c in ratio_ladder(len(kernels)):
            key = plan_key(c["strategy"], [], c["ratio"], 0)
            if key not in seen:
                seen.add(key)
                chosen.append(c)
    else:
        chosen = feasible[:args.top]
    if not chosen:
        log("the planner found no feasible candidate: nothing to measure")
        return 3
    log(f"building {len(chosen)} of {len(feasible)} ranked candidates"
        + (" plus the ratio ladder" if args.exhaustive else ""))
    # Paths relative to the current folder, so that the folder can move to the
    # GPU machine with the working tree (measure runs from the same place).
    spec_kernels = [{**{k2: v for k2, v in k.items() if k2 != "out"},
                     "module": os.path.relpath(k["module"])} for k in kernels]
    built = []
    for i, c in enumerate(chosen):
        name = f"hfuse_cand{i}"
        ptx = os.path.join(out, f"cand{i}.ptx")
        opts = base + c["options"].split() + [f"name={name}"]
        manifest, message = run_gpu_opt(args.gpu_opt, kernels, opts, ptx, args.timeout)
        status = "built"
        if manifest is None:
            status = "refused"
            log(f"  [{i + 1}/{len(chosen)}] {c['description']}: refused: "
                f"{message.splitlines()[0] if message else ''}")
        else:
            with open(manifest) as f:
                man = json.load(f)
            try:
                fused_args, notes, _ = map_args(man, [k["kernel"] for k in kernels],
                                                [k["args"] for k in kernels])
            except MappingError as e:
                raise SearchError(f"{manifest}: {e}")
            launch = man["kernels"][0].get("launch", {})
            label = f"cand{i}"
            spec_kernels.append({"label": label, "time_alone": False,
                                 "module": os.path.relpath(ptx),
                                 "manifest": os.path.relpath(manifest),
                                 "kernel": man["kernels"][0]["name"], "args": fused_args})
            log(f"  [{i + 1}/{len(chosen)}] {c['description']}: built, grid "
                f"{launch.get('grid')} block {launch.get('block')}")
        built.append({**c, "index": i, "label": f"cand{i}", "status": status,
                      "ptx": os.path.relpath(ptx) if status == "built" else None,
                      "message": message if status == "refused" else None})
    if not any(c["status"] == "built" for c in built):
        raise SearchError(f"gpu-opt built none of the {len(chosen)} candidates")
    # gpu-run gives every kernel its own buffers: as many candidates per
    # process as --max-gib holds, each process timing the kernels apart too.
    labels = [k["label"] for k in kernels]
    originals = spec_kernels[:len(kernels)]
    budget = args.max_gib * (1 << 30) - sum(args_bytes(k["args"]) for k in originals)
    candidates = spec_kernels[len(kernels):]
    batches = pack_by_bytes(candidates, lambda k: args_bytes(k["args"]), budget) \
        if candidates else []
    specs = []
    for n, batch in enumerate(batches):
        specs.append(f"spec{n}.json")
        with open(os.path.join(out, specs[-1]), "w") as f:
            json.dump({"warmup": args.warmup, "repeat": args.repeat,
                       "kernels": originals + batch,
                       "groups": [{"name": "search", "kernels": labels,
                                   "modes": ["serial", "concurrent", "graph"],
                                   "also": [k["label"] for k in batch]}]}, f, indent=1)
    with open(os.path.join(out, "search.json"), "w") as f:
        json.dump({"kernels": labels, "exhaustive": args.exhaustive, "specs": specs,
                   "planner_declined": auto_declined, "ranked": len(feasible),
                   "candidates": built}, f, indent=1)
    log(f"wrote {len(specs)} gpu-run spec(s) to {args.out_dir}: run `measure --out-dir "
        f"{args.out_dir}` where the GPU is")
    return 0


def median(t):
    return (t or {}).get("median_ms")


def cmd_measure(args):
    out = os.path.abspath(args.out_dir)
    with open(os.path.join(out, "search.json")) as f:
        search = json.load(f)
    for name in ("best.ptx", "best.json", "result.json"):
        if os.path.exists(os.path.join(out, name)):
            os.remove(os.path.join(out, name))
    built = [c for c in search["candidates"] if c["status"] == "built"]
    groups, device = [], "?"
    for n, spec in enumerate(search["specs"]):
        report_path = os.path.join(out, f"report{n}.json")
        cmd = [args.gpu_run, "--spec", os.path.relpath(os.path.join(out, spec)),
               "--json", report_path]
        log(f"[{n + 1}/{len(search['specs'])}] timing candidates next to the kernels "
            f"apart: {' '.join(cmd)}")
        r = subprocess.run(cmd, timeout=args.timeout)
        if r.returncode != 0 or not os.path.exists(report_path):
            raise SearchError(f"gpu-run failed (exit {r.returncode})")
        try:
            with open(report_path) as f:
                report = json.load(f)
            device = report.get("device", {}).get("name", device)
            groups.append(next(g for g in report.get("groups", [])
                               if g.get("name") == "search"))
        except (ValueError, StopIteration, AttributeError) as e:
            raise SearchError(f"{report_path}: not a gpu-run report with a \"search\" "
                              f"group ({type(e).__name__}: {e})")
    # The kernels apart were timed in every process: their median over them.
    baselines = {}
    for m in ("serial", "concurrent", "graph"):
        times = sorted(median(g.get(m)) for g in groups if median(g.get(m)))
        if times:
            baselines[m] = times[len(times) // 2]
    if not baselines:
        raise SearchError("gpu-run timed none of serial, concurrent and graph")
    best_base = min(baselines.values())
    also = {label: t for g in groups for label, t in g.get("also", {}).items()}
    rows = []
    for c in built:
        t = median(also.get(c["label"]))
        if t:
            rows.append({**c, "ms": t, "speedup": best_base / t})
    if not rows:
        raise SearchError("no candidate was timed")
    rows.sort(key=lambda c: c["ms"])
    excluded = verify_fastest(args, out, search, rows, best_base)
    print(f"\n{device}: kernels apart " + ", ".join(
        f"{m} {t:.4f} ms" for m, t in baselines.items()))
    for c in excluded:
        print(f"excluded: {c['description']} ({c['ms']:.4f} ms): its outputs differ from "
              f"the kernels run apart: {c['verify']['detail']}")
    if not rows:
        log("do not fuse: every candidate faster than running the kernels apart failed "
            "verification")
        with open(os.path.join(out, "result.json"), "w") as f:
            json.dump({"device": device, "baselines_ms": baselines,
                       "best_baseline_ms": best_base, "measured": 0,
                       "exhaustive": search.get("exhaustive"),
                       "planner_declined": search.get("planner_declined"), "fastest": None,
                       "planner_rank_within_3pct": None, "candidates": [],
                       "excluded": excluded, "fused_wins": False}, f, indent=1)
        return 3
    fastest = rows[0]
    print(f"{'rank':>4}  {'candidate':32s} {'predicted':>10s} {'measured':>10s} "
          f"{'vs apart':>8s}")
    for c in sorted(rows, key=lambda c: c["ms"]):
        pred = c.get("predicted")
        print(f"{c.get('rank', '-')!s:>4}  {c['description']:32s} "
              f"{(f'{pred:.4f}' if pred else '-'):>10s} {c['ms']:10.4f} "
              f"{c['speedup']:7.3f}x")
    # How far down the planner's ranking the best (within 3%) was.
    ranked = sorted((c for c in rows if c.get("source") == "planner"),
                    key=lambda c: c["rank"])
    reach = next((c["rank"] + 1 for c in ranked if c["ms"] <= fastest["ms"] * 1.03), None)
    result = {"device": device, "baselines_ms": baselines, "best_baseline_ms": best_base,
              "measured": len(rows), "exhaustive": search.get("exhaustive"),
              "planner_declined": search.get("planner_declined"),
              "fastest": {k: fastest[k] for k in ("description", "options", "ms", "speedup")},
              "planner_rank_within_3pct": reach,
              "candidates": rows, "excluded": excluded}
    wins = fastest["ms"] < best_base * 0.99
    if wins:
        shutil.copyfile(fastest["ptx"], os.path.join(out, "best.ptx"))
        shutil.copyfile(os.path.splitext(fastest["ptx"])[0] + ".json",
                        os.path.join(out, "best.json"))
        log(f"fastest: {fastest['description']}, {fastest['ms']:.4f} ms, "
            f"{fastest['speedup']:.3f}x the best way apart; wrote {out}/best.ptx and "
            "best.json")
    else:
        log(f"do not fuse: the fastest candidate ({fastest['description']}, "
            f"{fastest['ms']:.4f} ms) is not faster than running the kernels apart "
            f"({best_base:.4f} ms)")
    result["fused_wins"] = wins
    with open(os.path.join(out, "result.json"), "w") as f:
        json.dump(result, f, indent=1)
    return 0 if wins else 3


def verify_fastest(args, out, search, rows, best_base):
    """Verifies the candidates of `rows` (sorted by time) that would win, the
    fastest first, until one passes: each is run once against the kernels
    apart on the spec's inputs (gpuopt.verify). Removes the failing ones from
    `rows` and returns them."""
    excluded = []
    if not rows or rows[0]["ms"] >= best_base * 0.99:
        return excluded
    with open(os.path.join(out, search["specs"][0])) as f:
        spec = json.load(f)
    by_label = {k["label"]: k for k in spec["kernels"]}
    originals = [(label, by_label[label]) for label in search["kernels"]]
    tolerances = parse_tolerances(args.tolerance, search["kernels"])
    workdir = tempfile.mkdtemp(prefix="hfuse-verify-")
    try:
        verifier = Verifier(args.gpu_run, workdir, args.timeout, log=log)
        while rows and rows[0]["ms"] < best_base * 0.99:
            c = rows[0]
            log(f"verifying {c['description']} against the kernels apart")
            result = verifier.verify(originals, c["ptx"], os.path.splitext(c["ptx"])[0] +
                                     ".json", entries=[k["kernel"] for _, k in originals],
                                     tolerances=tolerances, name=c["label"])
            c["verify"] = {"result": result["result"], "detail": result["detail"]}
            if result["result"] == "PASS":
                log(f"  PASS: {result['detail']}")
                break
            log(f"  FAIL: {result['detail']}: left out")
            excluded.append(rows.pop(0))
    finally:
        shutil.rmtree(workdir, ignore_errors=True)
    return excluded


def summarize_search(out_dir):
    """One row of `report`: how the planner's ranking compares with every
    candidate measured in `out_dir`."""
    with open(os.path.join(out_dir, "search.json")) as f:
        search = json.load(f)
    with open(os.path.join(out_dir, "result.json")) as f:
        result = json.load(f)
    rows = result["candidates"]
    planner = sorted((c for c in rows if c.get("source") == "planner"),
                     key=lambda c: c["rank"])
    # None when every candidate that beat the kernels apart failed verification.
    fastest = result["fastest"] or {"description": "none verified", "ms": None,
                                    "speedup": None}
    top = planner[0] if planner else None
    reach = result.get("planner_rank_within_3pct")
    return {
        "pair": "+".join(search["kernels"]), "device": result["device"],
        "measured": result["measured"], "ranked": search["ranked"],
        "exhaustive": bool(search.get("exhaustive")),
        "planner_declined": bool(search.get("planner_declined")),
        "best_baseline_ms": result["best_baseline_ms"],
        "fastest": fastest["description"], "fastest_ms": fastest["ms"],
        "fastest_speedup": fastest["speedup"], "fused_wins": result["fused_wins"],
        "top": top["description"] if top else None,
        "top_ms": top["ms"] if top else None,
        "top_over_fastest": top["ms"] / fastest["ms"] if top and fastest["ms"] else None,
        "reach": reach,
        "reach_share": reach / result["measured"] if reach else None,
    }


def fmt(x, spec):
    return "-" if x is None else format(x, spec)


def cmd_report(args):
    rows = [summarize_search(d) for d in args.dirs]
    devices = sorted({r["device"] for r in rows})
    n = len(rows)
    top1 = sum(r["top_over_fastest"] is not None and r["top_over_fastest"] <= 1.03
               for r in rows)
    k = max((r["reach"] or math.inf) for r in rows) if rows else None
    decided = sum(r["planner_declined"] != r["fused_wins"] for r in rows)
    if rows and k != math.inf:
        shares = [k / r["measured"] for r in rows]
        reach_text = str(k)
        share_text = f"{min(shares):.1%} to {max(shares):.1%}"
    else:
        reach_text, share_text = "k (never in some pair)", "-"
    md = [f"# Fusion search against exhaustive measurement on {', '.join(devices)}", "",
          f"- Command: `{args.command}`" if args.command else "",
          "- Every candidate of each pair measured (`hfuse_search.py prepare --exhaustive`, "
          "then `measure`): the planner's ranked candidates (thread splits, register "
          "caps, interleave and dynamic at the fitted ratio and 1:1) and interleave and "
          "dynamic at every ratio from 64:1 to 1:64. gpu-run, CUDA events, medians; the "
          "kernels apart (serial, two streams, a CUDA graph) timed in every process and "
          "their median taken.",
          "- speedup = best way apart / fused; top = the planner's first candidate; "
          "reach = how many of the planner's candidates, from the top, must be measured "
          "to find one within 3% of the fastest of all.", "",
          "## Summary", "",
          f"- The planner's first candidate is within 3% of the exhaustive best in "
          f"{top1} of {n} pairs; measuring its top {reach_text} reaches within 3% of "
          f"the best in every pair ({share_text} of the candidates measured).",
          f"- The planner's fuse / do-not-fuse decision (min-gain 10%) matches the "
          f"measurement in {decided} of {n} pairs.", "",
          "| pair | candidates | planner | best apart (ms) | fastest of all | ms | speedup | "
          "planner's top | ms | top / fastest | reach |",
          "| --- | ---: | --- | ---: | --- | ---: | ---: | --- | ---: | ---: | ---: |"]
    for r in rows:
        md.append(
            f"| {r['pair']} | {r['measured']} | "
            f"{'declined' if r['planner_declined'] else 'fuses'} | "
            f"{r['best_baseline_ms']:.4f} | {r['fastest']} | {fmt(r['fastest_ms'], '.4f')} | "
            f"{fmt(r['fastest_speedup'], '.3f')} | {r['top'] or '-'} | "
            f"{fmt(r['top_ms'], '.4f')} | {fmt(r['top_over_fastest'], '.3f')} | "
            f"{r['reach'] or 'never'} |")
    text = "\n".join(line for line in md if line is not None) + "\n"
    if args.out:
        with open(args.out, "w") as f:
            f.write(text)
        with open(os.path.splitext(args.out)[0] + ".json", "w") as f:
            json.dump({"command": args.command, "pairs": rows}, f, indent=1)
        log(f"wrote {args.out}")
    else:
        sys.stdout.write(text)
    return 0


def main(argv=None):
    ap = command_parser("hfuse-search", __doc__)
    sub = ap.add_subparsers(dest="cmd", required=True)
    parsers = {}
    for name in ("prepare", "measure", "run"):
        p = sub.add_parser(name)
        p.add_argument("--out-dir", required=True)
        p.add_argument("--timeout", type=int, default=600, help="seconds per tool call")
        parsers[name] = p
    for name in ("prepare", "run"):
        p = parsers[name]
        p.add_argument("--spec", required=True, help="gpu-run spec of the kernels to fuse")
        add_tool_option(p, "gpu-opt")
        p.add_argument("--profile", default=None,
                       help="gpu-run --json --occupancy-sweep report of the kernels alone")
        p.add_argument("--chip", default=None, help="for ptxas's resource report (sm_90a)")
        group = p.add_mutually_exclusive_group()
        group.add_argument("--top", type=int, default=2)
        group.add_argument("--exhaustive", action="store_true")
        p.add_argument("--warmup", type=int, default=10)
        p.add_argument("--repeat", type=int, default=30)
        p.add_argument("--max-gib", type=float, default=40.0,
                       help="buffer memory per gpu-run process (each candidate has its own)")
    for name in ("measure", "run"):
        add_tool_option(parsers[name], "gpu-run")
        parsers[name].add_argument("--tolerance", action="append", default=[],
                                   metavar="[LABEL=]REL",
                                   help="relative error the winner's float outputs may "
                                        "have (outputs of float atomics); default: none, "
                                        "bit for bit")
    rp = sub.add_parser("report", help="compare the planner's ranking with every "
                        "candidate measured, over several searches (markdown)")
    rp.add_argument("dirs", nargs="+", help="folders of measured searches")
    rp.add_argument("--out", default=None, help="markdown file (and .json beside it)")
    rp.add_argument("--command", default=None, help="the command to cite in the report")
    args = ap.parse_args(argv)
    if args.cmd == "report":
        try:
            return cmd_report(args)
        except (OSError, KeyError, ValueError) as e:
            print(f"hfuse-search: error: {e}", file=sys.stderr)
            return 2
    try:
        if args.cmd in ("prepare", "run"):
            args.gpu_opt = find_tool("gpu-opt", args.gpu_opt)
        if args.cmd in ("measure", "run"):
            args.gpu_run = find_tool("gpu-run", args.gpu_run)
        if args.cmd in ("prepare", "run"):
            rc = cmd_prepare(args)
            if args.cmd == "prepare" or rc:
                return rc
        return cmd_measure(args)
    except (SearchError, ToolNotFound, VerifyError, OSError, ValueError,
            subprocess.TimeoutExpired) as e:
        print(f"hfuse-search: error: {e}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
