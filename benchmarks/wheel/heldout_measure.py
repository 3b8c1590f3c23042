#!/usr/bin/env python3
"""strategy=auto with measure= on a held-out pair, with the installed gpuopt.

    python3 benchmarks/wheel/heldout_measure.py --out DIR [--pair sub-wave-1]

The pair's kernels (benchmarks/heldout/pairs.json: committed PTX) get the
gpu-run run spec of benchmarks/heldout/specs.py (DIR/run.json), and are fused
with `--hfuse` options strategy=auto measure=DIR/run.json measure-top=3 three
times, each with a decision cache of its own or shared:

1. in process: `gpuopt.load_ptx(...).fuse(..., measure=..., cache=DIR/cache-py)`;
2. the command: `gpu-opt A.ptx B.ptx --hfuse="... measure=... cache=DIR/cache-cli"`;
3. the command again on the same cache: it must apply the cached decision.

Each measured call either fuses by the fastest checked candidate ("chose ...:
measured X ms vs Y ms apart ..., outputs bit-identical to the kernels apart")
or declines ("not fusing: no candidate measured is 1% faster"): both are
measured decisions. A remark saying the choice is the model's, unmeasured
(no GPU seen), or any other error, fails. The decision and the measured
times (the cache entry) go to DIR/result.json and DIR/details.md.

ptxas: strategy=auto needs ptxas's resource report of each kernel; the
held-out Triton kernels are PTX ISA 8.8, so the first of Triton's bundled
ptxas binaries (ptxas, then ptxas-blackwell) that reads that version is
passed as ptxas= when it is not the one the tools find by themselves (Triton's
default ptxas); the report names the ptxas used.
"""

import argparse
import glob
import json
import os
import re
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
HELDOUT = os.path.join(ROOT, "benchmarks", "heldout")
sys.path.insert(0, HERE)
sys.path.insert(1, HELDOUT)

import wheelcheck  # noqa: E402

DEFAULT_PAIR = "sub-wave-1"
MEASURE_TOP = 3


def dims(d):
    d = list(d)
    while len(d) > 1 and d[-1] == 1:
        d.pop()
    return "x".join(str(int(x)) for x in d)


def load_pair(pair_id):
    with open(os.path.join(HELDOUT, "pairs.json")) as f:
        pairs = json.load(f)["pairs"]
    for p in pairs:
        if p["id"] == pair_id:
            return p
    raise SystemExit(f"no pair {pair_id!r} in pairs.json ({', '.join(p['id'] for p in pairs)})")


def run_spec(pair, data_dir):
    """The measure= run spec of a pair: one entry per kernel, in the fused
    order, with the pair's launch (as evaluate.py's heldout_pairs builds it)
    and absolute paths."""
    import specs
    kernels = specs.load_kernels()
    entries = []
    for k in pair["kernels"]:
        e = specs.kernel_spec(k["label"], data_dir, kernels)
        e.update(module=os.path.join(ROOT, k["module"]), kernel=k["entry"], grid=k["grid"],
                 block=k["block"], smem=k["smem"])
        entries.append(e)
    if any(a.startswith("buf:") and ":file:" in a for e in entries for a in e["args"]):
        specs.write_data(data_dir)
    return {"warmup": 10, "repeat": 30, "kernels": entries}


def modules_of(pair):
    out = []
    for k in pair["kernels"]:
        path = os.path.join(ROOT, k["module"])
        if path not in out:
            out.append(path)
    return out


def hfuse_options(pair, spec_path, cache, ptxas=None):
    opts = {"strategy": "auto",
            "kernels": [k["entry"] for k in pair["kernels"]],
            "blocks": [dims(k["block"]) for k in pair["kernels"]],
            "grids": [dims(k["grid"]) for k in pair["kernels"]],
            "smem": [int(k["smem"]) for k in pair["kernels"]],
            "measure": spec_path, "measure_top": MEASURE_TOP, "cache": cache}
    if ptxas:
        opts["ptxas"] = ptxas
    return opts


def hfuse_text(opts):
    def value(v):
        return ",".join(str(x) for x in v) if isinstance(v, (list, tuple)) else str(v)
    return " ".join(f"{k.replace('_', '-')}={value(v)}" for k, v in opts.items())


def classify(messages):
    """(decision, problem) from a call's remark/error texts: decision is
    "fuse: ...", "decline", "cached ..." or None."""
    text = "\n".join(messages)
    if "model's choice, unmeasured" in text or "unmeasured" in text:
        m = re.search(r"unmeasured: ([^\n]*)", text)
        return None, "not measured: " + (m.group(1) if m else "the model's choice stood")
    m = re.search(r"hfuse: chose (.+?)(?=: predicted|: measured|; |$)", text, re.MULTILINE)
    if m:
        if "cached decision" in text:
            return f"fuse: {m.group(1).strip()} (cached)", None
        if "bit-identical" not in text:
            return None, "a fusion without the measurement's bit-identity statement"
        return f"fuse: {m.group(1).strip()}", None
    if "no candidate measured is 1%" in text:
        return ("decline (cached)" if "cached decision" in text else "decline"), None
    errors = [line for line in text.splitlines() if "error:" in line]
    return None, (errors[0].strip() if errors else wheelcheck.first_line(text)) \
        or "no decision reported"


def cache_entries(cache):
    out = []
    for p in sorted(glob.glob(os.path.join(cache, "*.json"))):
        try:
            out.append(wheelcheck.load_json(p))
        except (OSError, ValueError) as e:
            out.append({"path": p, "error": str(e)})
    return out


def in_process(pair, opts, out):
    """Module.fuse(..., measure=...) in this process."""
    rec = {"how": "gpuopt.load_ptx(...).fuse(**options)", "options": opts}
    t0 = time.time()
    try:
        import gpuopt
        m = gpuopt.load_ptx(*modules_of(pair))
        fused = m.fuse(**opts)
        rec["messages"] = [f"{d.severity}: {d.message}" for d in fused.diagnostics]
        path = os.path.join(out, "py-fused.ptx")
        fused.write(path, manifest=os.path.join(out, "py-fused.json"))
        rec["fused_kernels"] = fused.kernels
    except Exception as e:  # noqa: BLE001 (gpuopt.Error, or anything: reported)
        diags = getattr(e, "diagnostics", None)
        rec["messages"] = ([f"{d.severity}: {d.message}" for d in diags] if diags
                           else [f"error: {type(e).__name__}: {e}"])
    rec["seconds"] = round(time.time() - t0, 2)
    rec["decision"], rec["problem"] = classify(rec["messages"])
    return rec


def with_tool(pair, opts, out, tag):
    import shutil
    gpu_opt = shutil.which("gpu-opt")
    rec = {"how": "gpu-opt", "options": opts}
    if gpu_opt is None:
        rec.update(messages=["error: gpu-opt is not on PATH"], decision=None,
                   problem="gpu-opt is not on PATH")
        return rec
    ptx, man = os.path.join(out, f"{tag}-fused.ptx"), os.path.join(out, f"{tag}-fused.json")
    cmd = [gpu_opt, *modules_of(pair), "--hfuse=" + hfuse_text(opts), "-o", ptx,
           "--manifest", man]
    rec["command"] = " ".join(cmd)
    t0 = time.time()
    try:
        r = subprocess.run(cmd, capture_output=True, text=True, timeout=240)
        rec["exit"] = r.returncode
        rec["messages"] = [ln for ln in (r.stderr + r.stdout).splitlines() if ln.strip()]
    except subprocess.TimeoutExpired:
        rec["exit"], rec["messages"] = None, ["error: gpu-opt took more than 240 s"]
    rec["seconds"] = round(time.time() - t0, 2)
    rec["decision"], rec["problem"] = classify(rec["messages"])
    if rec["decision"] and rec["decision"].startswith("fuse") and rec.get("exit") != 0:
        rec["problem"] = f"gpu-opt exited {rec.get('exit')} after fusing"
    return rec


def entry_table(entry):
    md = []
    b = entry.get("baselines_ms", {})
    md.append(f"- decision: **{entry.get('decision')}**"
              + (f" ({entry.get('description')})" if entry.get("description") else "")
              + f" on {entry.get('gpu')}; measured {entry.get('created')}")
    best = entry.get("best_baseline_ms")
    md.append("- apart: " + ", ".join(f"{k} {v:.4f} ms" for k, v in sorted(b.items()))
              + (f"; best {best:.4f} ms" if best else ""))
    if entry.get("fused_ms") and best:
        md.append(f"- fastest checked candidate: {entry['fused_ms']:.4f} ms "
                  f"({best / entry['fused_ms']:.3f}x the best way apart)")
    md += ["", "| model rank | candidate | checked bit for bit | median (ms) | left out |",
           "| ---: | --- | --- | ---: | --- |"]
    for c in entry.get("measured", []):
        ms = c.get("median_ms")
        md.append(f"| {c.get('rank', -1) + 1} | {c.get('description')} | "
                  f"{'yes' if c.get('verified') else 'no'} | "
                  f"{f'{ms:.4f}' if ms and ms > 0 else 'not timed'} | {c.get('excluded', '')} |")
    return md


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", required=True)
    ap.add_argument("--pair", default=DEFAULT_PAIR)
    ap.add_argument("--ptxas", help="ptxas to pass as ptxas= (default: none: the tools' own "
                    "lookup, Triton's bundled ptxas, given the PTX .version it takes)")
    ap.add_argument("--pick-ptxas", action="store_true",
                    help="pass as ptxas= the first bundled ptxas that reads the pair's PTX "
                    "ISA as it is")
    args = ap.parse_args(argv)
    out = os.path.abspath(args.out)
    os.makedirs(out, exist_ok=True)
    pair = load_pair(args.pair)
    spec = run_spec(pair, os.path.join(out, "data"))
    spec_path = os.path.join(out, "run.json")
    wheelcheck.dump_json(spec, spec_path)
    isa = max((wheelcheck.ptx_isa(m) or "0.0" for m in modules_of(pair)),
              key=lambda v: tuple(map(int, v.split("."))))
    notes = []
    ptxas = args.ptxas
    if not ptxas and args.pick_ptxas:
        with tempfile.TemporaryDirectory(prefix="gpuopt-ptxas-") as d:
            ptxas, notes = wheelcheck.pick_ptxas(isa, d)
    elif not ptxas:
        cands = wheelcheck.triton_ptxas_candidates()
        ptxas = os.environ.get("PTXAS") or (cands[0] if cands else None)
        notes = ["the tools' own lookup (an older ptxas gets the PTX .version it takes)"]
    for n in notes:
        print(f"ptxas: {n}", flush=True)
    # The tools find Triton's default ptxas themselves ($PTXAS, else its
    # package folder); ptxas= only where that one cannot read the pair's PTX.
    cands = wheelcheck.triton_ptxas_candidates()
    default = os.environ.get("PTXAS") or (cands[0] if cands else None)
    given = ptxas if args.ptxas or (ptxas and default and
                                    os.path.realpath(ptxas) != os.path.realpath(default)) else None
    ptxas_note = (f"ptxas= `{wheelcheck._rel_triton(given)}` ({wheelcheck.ptxas_version(given)}): "
                  f"the default one cannot read PTX ISA {isa}" if given else
                  f"the tools' own ptxas (Triton's `{wheelcheck._rel_triton(default)}`, "
                  f"{wheelcheck.ptxas_version(default) if default else '-'})")
    print(f"ptxas used: {ptxas_note}", flush=True)
    print(f"pair {pair['id']} ({pair['category']}): "
          + " + ".join(f"{k['label']} {dims(k['grid'])} x {dims(k['block'])}"
                       for k in pair["kernels"]) + f"; PTX ISA {isa}; ptxas {ptxas}", flush=True)

    calls = []
    opts = hfuse_options(pair, spec_path, os.path.join(out, "cache-py"), given)
    calls.append(("in process", in_process(pair, opts, out)))
    opts = hfuse_options(pair, spec_path, os.path.join(out, "cache-cli"), given)
    calls.append(("gpu-opt", with_tool(pair, opts, out, "cli")))
    calls.append(("gpu-opt, cached", with_tool(pair, opts, out, "cli-again")))
    for name, rec in calls:
        print(f"== {name} ({rec.get('seconds')} s): decision {rec['decision']}"
              + (f"; PROBLEM {rec['problem']}" if rec["problem"] else ""))
        for m in rec["messages"]:
            print(f"   {m}")

    problems = [f"{name}: {rec['problem']}" for name, rec in calls if rec["problem"]]
    cached = calls[2][1]
    if cached["decision"] and "cached" not in cached["decision"]:
        problems.append("gpu-opt, cached: the second run measured again instead of applying "
                        "the cached decision")
    if calls[1][1]["decision"] and calls[1][1]["decision"].startswith("fuse") and \
            cached["decision"] and cached["decision"].startswith("fuse"):
        a, b = (os.path.join(out, f"{t}-fused.ptx") for t in ("cli", "cli-again"))
        if not (os.path.exists(a) and os.path.exists(b) and open(a).read() == open(b).read()):
            problems.append("gpu-opt, cached: its PTX differs from the measured run's")
    entries = {"in process": cache_entries(os.path.join(out, "cache-py")),
               "gpu-opt": cache_entries(os.path.join(out, "cache-cli"))}
    for name, es in entries.items():
        if calls[0][1]["decision"] or calls[1][1]["decision"]:
            if not es:
                problems.append(f"{name}: no decision in its cache folder")
    if ptxas is None:
        problems.insert(0, f"no bundled ptxas reads PTX ISA {isa} ({'; '.join(notes)})")

    md = [f"Pair `{pair['id']}` ({pair['category']}) of `benchmarks/heldout/pairs.json`: "
          + " + ".join(f"`{k['label']}` (grid {dims(k['grid'])}, block {dims(k['block'])}, "
                       f"smem {k['smem']})" for k in pair["kernels"])
          + f"; run spec from `benchmarks/heldout/specs.py`; PTX ISA {isa}; {ptxas_note}.",
          "", f"Options: `--hfuse=\"{hfuse_text(hfuse_options(pair, 'run.json', 'DIR', given))}\"`",
          "",
          "| call | decision | seconds |", "| --- | --- | ---: |"]
    for name, rec in calls:
        md.append(f"| {name} | {rec['decision'] or 'FAILED: ' + str(rec['problem'])} | "
                  f"{rec.get('seconds')} |")
    for name, es in entries.items():
        for e in es:
            md += ["", f"Cache entry ({name}):", ""] + entry_table(e)
    remark = next((m for m in calls[0][1]["messages"] if "hfuse:" in m), None)
    if remark:
        md += ["", "In-process remark:", "", "```", remark, "```"]
    wheelcheck.write_text(os.path.join(out, "details.md"), "\n".join(md) + "\n")
    wheelcheck.dump_json({"pair": pair["id"], "isa": isa, "ptxas": ptxas, "ptxas_notes": notes,
                          "calls": {n: r for n, r in calls}, "cache_entries": entries,
                          "problems": problems}, os.path.join(out, "result.json"))
    if problems:
        return wheelcheck.result(False, "; ".join(problems))
    d_py, d_cli = calls[0][1]["decision"], calls[1][1]["decision"]
    e = (entries["in process"] or [{}])[0]
    times = ""
    if e.get("best_baseline_ms"):
        times = f" (apart {e['best_baseline_ms']:.4f} ms" + (
            f", fused {e['fused_ms']:.4f} ms" if e.get("fused_ms") else "") + ")"
    return wheelcheck.result(True, f"{pair['id']}: in process {d_py}{times}; gpu-opt {d_cli}; "
                             "a second gpu-opt applied the cached decision")


if __name__ == "__main__":
    sys.exit(main())
