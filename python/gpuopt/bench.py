"""Time kernels alone, serial, on streams, as a CUDA graph, and fused.

Builds gpu-run run specs (gpu-run --help) with one group per set of kernels:
each kernel alone, the kernels back to back on one stream (serial), on one
stream each (concurrent), as a CUDA graph of independent nodes (graph), and
the group's fused kernels (gpu-run's "also"), all interleaved round by round
so that clock drift affects them alike. A group whose kernels do not fit in
device memory together with its fused kernels is split over several gpu-run
processes, each timing the baselines again.

speedup = best baseline (min of serial, concurrent, graph) / fused;
overlap efficiency = (serial - fused) / (serial - max(alone)): 1 when the
fused kernel takes as long as the longest kernel alone, 0 when as long as
serial.

  python -m gpuopt.bench --spec pair.json --fused fused.ptx:fused.json
"""

import json
import os
import subprocess
import sys
import tempfile
import time

from gpuopt.launch_args import MappingError, args_bytes, pack_by_bytes
from gpuopt.tools import (add_tool_option, command_parser, Run, ToolNotFound,
                           find_tool, run_watchdog)
from gpuopt.verify import VerifyError, load_spec, transformed_spec

MODES = ("alone", "serial", "concurrent", "graph")
BASELINES = ("serial", "concurrent", "graph")


def overlap_efficiency(serial, fused, *alone):
    """(serial - fused) / (serial - max(alone)): 1 when the group takes as
    long as its longest kernel, 0 when as long as serial; None when
    undefined."""
    if serial is None or fused is None or not alone or None in alone:
        return None
    denom = serial - max(alone)
    if denom <= 0:
        return None
    return (serial - fused) / denom


def median(t):
    return t.get("median_ms") if isinstance(t, dict) else None


def batch_groups(groups, kernel_bytes, budget, warn=None):
    """Splits groups ({name, kernels, also}) into gpu-run processes whose
    kernels' buffers fit in `budget` bytes (a kernel counted once per
    process). A group whose "also" kernels do not fit beside its kernels is
    split into several units, each with the group's kernels and some of its
    "also". Returns [[(group, [also label, ...]), ...], ...]."""
    units = []
    for g in groups:
        also = list(g.get("also") or [])
        base = sum(kernel_bytes[k] for k in g["kernels"])
        units += [(g, chunk) for chunk in
                  pack_by_bytes(also, kernel_bytes.__getitem__, budget, base)]
        if warn and base + max([kernel_bytes[label] for label in also] or [0]) > budget:
            warn(f"{g['name']}: its kernels and one fused kernel need more than "
                 f"{budget / (1 << 30):.1f} GiB")
    batches, cur, cur_kernels, cur_bytes = [], [], set(), 0
    for g, labels in units:
        need = set(g["kernels"]) | set(labels)
        add = sum(kernel_bytes[label] for label in need - cur_kernels)
        if cur and cur_bytes + add > budget:
            batches.append(cur)
            cur, cur_kernels, cur_bytes = [], set(), 0
            add = sum(kernel_bytes[label] for label in need)
        cur.append((g, labels))
        cur_kernels |= need
        cur_bytes += add
    if cur:
        batches.append(cur)
    return batches


def merge_groups(groups):
    """Groups of one name measured in several processes as one: the first
    one's baselines, every one's "also"; parts = how many were merged."""
    out = {}
    for g in groups:
        if g["name"] not in out:
            out[g["name"]] = {**g, "also": dict(g.get("also") or {}), "parts": 1}
        else:
            m = out[g["name"]]
            m["also"].update(g.get("also") or {})
            m["parts"] += 1
    return list(out.values())


def batch_spec(batch, kernels, modes=MODES, warmup=10, repeat=30):
    """The gpu-run run spec of one batch of batch_groups."""
    labels = []
    for g, also in batch:
        for label in list(g["kernels"]) + also:
            if label not in labels:
                labels.append(label)
    return {"warmup": warmup, "repeat": repeat,
            "kernels": [kernels[label] for label in labels],
            "groups": [{"name": g["name"], "kernels": list(g["kernels"]),
                        "modes": list(modes), "also": also} for g, also in batch]}


def run_spec(gpu_run, spec, workdir, name="spec", timeout=1800, extra=(), stream=False,
             log=None):
    """Runs one run spec through gpu-run --spec --json under a watchdog
    (stream: gpu-run's progress goes to this process's output). Returns
    (report or None, error or None, Run)."""
    spec_path = os.path.join(workdir, f"{name}.json")
    report_path = os.path.join(workdir, f"{name}.report.json")
    with open(spec_path, "w") as f:
        json.dump(spec, f, indent=1)
    cmd = [gpu_run, "--spec", spec_path, "--json", report_path, *extra]
    if log:
        log(" ".join(cmd))
    if stream:
        start = time.time()
        try:
            rc, hung = subprocess.run(cmd, timeout=timeout).returncode, False
        except subprocess.TimeoutExpired:
            rc, hung = None, True
        r = Run(rc, "", "", hung, time.time() - start)
    else:
        r = run_watchdog(cmd, timeout)
    if r.hung:
        return None, f"killed after {timeout} s", r
    if r.rc != 0 or not os.path.exists(report_path):
        return None, f"exit {r.rc}: {r.message()}", r
    try:
        with open(report_path) as f:
            return json.load(f), None, r
    except ValueError as e:
        return None, f"{report_path}: {e}", r


def summarize_group(group):
    """A measured group as {alone, serial, concurrent, graph, best_baseline,
    best_baseline_mode, fused: {label: {ms, speedup, overlap}}} (times:
    medians in ms, None where not measured)."""
    alone = {k: median((group.get("alone") or {}).get(k)) for k in group["kernels"]}
    row = {"name": group["name"], "alone": alone}
    bases = {}
    for m in BASELINES:
        row[m] = median(group.get(m))
        if row[m] is not None:
            bases[m] = row[m]
    row["best_baseline"] = min(bases.values()) if bases else None
    row["best_baseline_mode"] = min(bases, key=bases.get) if bases else None
    row["fused"] = {}
    for label, t in (group.get("also") or {}).items():
        ms = median(t)
        row["fused"][label] = {
            "ms": ms,
            "speedup": row["best_baseline"] / ms if ms and row["best_baseline"] else None,
            "overlap": overlap_efficiency(row["serial"], ms, *alone.values())}
    return row


def render(rows):
    """A plain-text table of summarize_group rows."""
    f = lambda x, spec=".4f": "-" if x is None else format(x, spec)  # noqa: E731
    lines = []
    for r in rows:
        lines.append(f"{r['name']}: " + ", ".join(f"{k} alone {f(t)}"
                                                  for k, t in r["alone"].items()))
        lines.append("  " + ", ".join(f"{m} {f(r[m])}" for m in BASELINES) +
                     f" ms; best baseline {r['best_baseline_mode'] or '-'}")
        for label, x in r["fused"].items():
            lines.append(f"  {label}: {f(x['ms'])} ms, speedup {f(x['speedup'], '.3f')}, "
                         f"overlap efficiency {f(x['overlap'], '.3f')}")
    return "\n".join(lines)


def main(argv=None):
    ap = command_parser("python -m gpuopt.bench", __doc__)
    ap.add_argument("--spec", required=True,
                    help="gpu-run run spec holding the kernels (one group of them all)")
    ap.add_argument("--fused", action="append", default=[], metavar="MODULE:MANIFEST",
                    help="a fused kernel of those kernels (gpu-opt --hfuse output), "
                         "timed in the group's rounds; repeatable")
    ap.add_argument("--modes", nargs="+", default=list(MODES), choices=MODES)
    add_tool_option(ap, "gpu-run")
    ap.add_argument("--warmup", type=int, default=10)
    ap.add_argument("--repeat", type=int, default=30)
    ap.add_argument("--max-gib", type=float, default=40.0,
                    help="buffer memory per gpu-run process")
    ap.add_argument("--timeout", type=int, default=1800, help="seconds per gpu-run process")
    ap.add_argument("--json", default=None, help="write the rows and gpu-run's reports here")
    args = ap.parse_args(argv)

    def error(msg):
        print(f"bench: error: {msg}", file=sys.stderr)
        return 2

    try:
        gpu_run = find_tool("gpu-run", args.gpu_run)
        originals = load_spec(args.spec)
    except (ToolNotFound, VerifyError, OSError, ValueError) as e:
        return error(e)
    kernels = {label: {**k, "label": label} for label, k in originals}
    also = []
    for n, item in enumerate(args.fused):
        module, _, manifest = item.rpartition(":")
        if not module:
            return error(f"--fused {item}: expected MODULE:MANIFEST")
        try:
            spec, notes, _, fused = transformed_spec(originals, module, manifest)
        except (OSError, ValueError, KeyError, MappingError, VerifyError) as e:
            return error(f"{manifest}: {e}")
        if not fused:
            return error(f"{manifest}: not a fused kernel (no fused_from)")
        label = f"fused{n}"
        kernels[label] = {**spec, "label": label, "time_alone": False}
        also.append(label)
        for note in notes:
            print(f"bench: {label}: {note}")
    group = {"name": "+".join(label for label, _ in originals),
             "kernels": [label for label, _ in originals], "also": also}
    sizes = {label: args_bytes(k["args"]) for label, k in kernels.items()}
    batches = batch_groups([group], sizes, int(args.max_gib * (1 << 30)),
                           warn=lambda m: print(f"bench: warning: {m}", file=sys.stderr))
    reports = []
    with tempfile.TemporaryDirectory(prefix="gpuopt-bench-") as tmp:
        for n, batch in enumerate(batches, 1):
            spec = batch_spec(batch, kernels, args.modes, args.warmup, args.repeat)
            print(f"bench: [{n}/{len(batches)}] gpu-run --spec ({len(spec['kernels'])} "
                  "kernels)", flush=True)
            report, err, _ = run_spec(gpu_run, spec, tmp, f"spec{n}", args.timeout)
            if err:
                return error(f"gpu-run: {err}")
            reports.append(report)
    groups = merge_groups([g for r in reports for g in r.get("groups", [])])
    rows = [summarize_group(g) for g in groups]
    device = (reports[0].get("device") or {}).get("name", "?") if reports else "?"
    print(f"{device}:\n{render(rows)}")
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"device": device, "rows": rows, "reports": reports}, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
