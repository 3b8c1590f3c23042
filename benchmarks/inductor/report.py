#!/usr/bin/env python3
"""Check and time gpu-opt's fused Inductor kernels against Inductor's combo
kernels, and write docs/results/inductor-<gpu>.md, .csv and .json (runs on
the GPU machine, or anywhere with --from-json).

Input: DUMP_DIR from dump_kernels.py (GPU machine) and fuse_and_spec.py
(development machine): timing_spec.json, checks.json, fusion.json and
<prog>/launches.json. gpu-run runs in DUMP_DIR (the specs' paths are relative
to it), each invocation under a timeout.

  1. Correctness: per program, the separate kernels write their outputs
     (reference), then each fused variant writes its outputs on the same
     seeded inputs; every output buffer must be bit-identical. A variant that
     crashes or times out is left out of the timing. For information, the
     combo kernel's outputs are compared with the separate kernels' within a
     relative L2 tolerance (different code; needs numpy).
  2. Timing: timing_spec.json, by default one gpu-run process per program
     (--single-process: one for all): the two kernels alone, serial, on two
     streams and in a CUDA graph, and "also" the combo kernel and each fused
     variant alone, interleaved round by round. With a gpu-run that does not
     know mode "graph" or the group key "also", the spec is run again without
     them and the combo and fused times are the kernels' own alone times.
  3. Results per program: T1, T2, max(T1, T2), serial, streams, graph, combo
     kernel, each fused strategy, auto (an auto that gpu-opt declined counts
     as unfused: the serial time), speedup of auto over combo (combo / auto),
     overlap efficiency (Tserial - Tfused) / (Tserial - max(T1, T2)), the
     geomean of auto over combo across programs (target >= 1.10), and
     dump_kernels.py's end-to-end times (eager, compiled with combo kernels
     off and on, per call and in a CUDA graph) for context.

usage: report.py --dump DIR [--gpu-run PATH] [--out-dir DIR] [--timeout S]
                 [--skip-checks] [--skip-timing] [--single-process]
                 [--keep-check-files] [--date YYYY-MM-DD]
       report.py --from-json docs/results/inductor-<gpu>.json [--out-dir DIR]
"""

import argparse
import csv
import datetime
import json
import math
import os
import re
import shutil
import subprocess
import sys
import time

from gpuopt import verify

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
STRATEGIES = ["thread", "interleave", "dynamic", "auto"]
ELEM_SIZE = {"u8": 1, "s8": 1, "u16": 2, "s16": 2, "f16": 2, "bf16": 2, "u32": 4,
             "s32": 4, "f32": 4, "u64": 8, "s64": 8, "f64": 8}
NP_TYPE = {"u8": "uint8", "s8": "int8", "u16": "uint16", "s16": "int16", "f16": "float16",
           "u32": "uint32", "s32": "int32", "f32": "float32", "u64": "uint64",
           "s64": "int64", "f64": "float64"}
TARGET_GEOMEAN = 1.10


def log(*a):
    print("[report]", *a, flush=True)


# ---------------------------------------------------------------------------
# Arithmetic (pure; tested by test_inductor_scripts.py)
# ---------------------------------------------------------------------------

def geomean(xs):
    xs = [x for x in xs if x is not None and x > 0]
    return math.exp(sum(math.log(x) for x in xs) / len(xs)) if xs else None


def overlap_efficiency(serial, fused, t1, t2):
    """(Tserial - Tfused) / (Tserial - max(T1, T2)): 1 when fusion hides the
    shorter kernel entirely, 0 when it gains nothing over serial."""
    if None in (serial, fused, t1, t2):
        return None
    denom = serial - max(t1, t2)
    if denom <= 1e-9 * max(serial, 1e-9):
        return None
    return (serial - fused) / denom


def median_of(stats):
    return stats.get("median_ms") if isinstance(stats, dict) else None


def time_of(label, timing):
    """A kernel's time: from the group's "also" or "alone" (interleaved), else
    from the kernel's own alone time."""
    if not label:
        return None
    g = timing.get("group") or {}
    for key in ("also", "alone"):
        if label in (g.get(key) or {}):
            return median_of(g[key][label])
    return median_of((timing.get("kernel_times") or {}).get(label))


def compute_row(d):
    """One program's results from its collected data (see collect())."""
    labels, timing = d.get("labels") or {}, d.get("timing") or {}
    g = timing.get("group") or {}
    checks = d.get("checks") or {}
    strategies = d.get("strategies") or {}
    row = {"program": d["program"], "notes": list(d.get("notes", []))}
    t1, t2 = time_of(labels.get("k1"), timing), time_of(labels.get("k2"), timing)
    row.update({"t1": t1, "t2": t2, "max12": max(t1, t2) if None not in (t1, t2) else None,
                "serial": median_of(g.get("serial")), "streams": median_of(g.get("concurrent")),
                "graph": median_of(g.get("graph"))})
    combo = time_of(labels.get("combo"), timing)
    row["combo_source"] = "combo kernel" if combo is not None else None
    if combo is not None and d.get("combo_mode") == "forced":
        row["combo_source"] = "combo kernel (forced partition)"
    if combo is None and row["serial"] is not None and d.get("combo_mode") is not None:
        combo = row["serial"]
        row["combo_source"] = "no combo kernel: serial"
        row["notes"].append("Inductor made no single combo kernel; its kernels run serially")
    row["combo"] = combo
    for s in STRATEGIES:
        r = strategies.get(s) or {}
        label = (labels.get("fused") or {}).get(s)
        status = (checks.get(s) or {}).get("status", "not run")
        t = time_of(label, timing) if r.get("ok") else None
        row[f"fused_{s}"] = t
        row[f"status_{s}"] = ((r.get("status") or "refused") if not r.get("ok") else
                              "WRONG" if status == "fail" else
                              status if status in ("crash", "timeout", "error") else
                              "ok" if status == "pass" else "unchecked")
        row[f"overlap_{s}"] = overlap_efficiency(row["serial"], t, t1, t2)
    st = row["status_auto"]
    if st in ("ok", "unchecked") and row["fused_auto"] is not None:
        row["auto"], row["auto_source"] = row["fused_auto"], "fused"
    elif st == "refused" and (strategies.get("auto") is not None):
        row["auto"], row["auto_source"] = row["serial"], "declined: unfused (serial)"
    else:
        row["auto"], row["auto_source"] = None, f"auto {st}"
    row["speedup_auto_vs_combo"] = (row["combo"] / row["auto"]
                                    if row["combo"] and row["auto"] else None)
    row["overlap_auto"] = overlap_efficiency(row["serial"], row["auto"], t1, t2)
    e2e = d.get("e2e") or {}

    def e2e_t(tag, kind):
        return median_of((e2e.get(tag) or {}).get(kind))

    row.update({"eager_ms": e2e_t("eager", "calls"),
                "compiled_plain_ms": e2e_t("compiled_plain", "calls"),
                "compiled_combo_ms": e2e_t("compiled_combo", "calls"),
                "compiled_plain_graph_ms": e2e_t("compiled_plain", "graph"),
                "compiled_combo_graph_ms": e2e_t("compiled_combo", "graph")})
    row["e2e_combo_speedup"] = (row["compiled_plain_ms"] / row["compiled_combo_ms"]
                                if row["compiled_plain_ms"] and row["compiled_combo_ms"] else None)
    row["e2e_combo_speedup_graph"] = (
        row["compiled_plain_graph_ms"] / row["compiled_combo_graph_ms"]
        if row["compiled_plain_graph_ms"] and row["compiled_combo_graph_ms"] else None)
    return row


def is_forced(row):
    """A combo kernel Inductor did not choose: its default partition made none,
    and dump_kernels.py forced every node into one. Such a kernel can be
    pathological (one block-serial partition), so a speedup over it says
    nothing about gpu-opt; it is reported apart, never in the headline."""
    return row["combo_source"] == "combo kernel (forced partition)"


def summarize(rows):
    """Geomeans over `rows`: auto and each strategy over the combo kernel, the
    combo kernel over the serial kernels, and end to end."""
    summary = {
        "geomean_auto_vs_combo": geomean([r["speedup_auto_vs_combo"] for r in rows]),
        "programs_in_geomean": sum(1 for r in rows if r["speedup_auto_vs_combo"]),
        "programs": [r["program"] for r in rows],
        "geomean_auto_vs_serial": geomean(
            [r["serial"] / r["auto"] for r in rows if r["serial"] and r["auto"]]),
        "geomean_e2e_combo_vs_plain": geomean([r["e2e_combo_speedup"] for r in rows]),
        "geomean_kernel_combo_vs_serial": geomean(
            [r["serial"] / r["combo"] for r in rows if r["serial"] and r["combo"]
             and r["combo_source"] != "no combo kernel: serial"])}
    for s in STRATEGIES:
        summary[f"geomean_fused_{s}_vs_combo"] = geomean(
            [r["combo"] / r[f"fused_{s}"] for r in rows
             if r["combo"] and r[f"fused_{s}"] and r[f"status_{s}"] in ("ok", "unchecked")])
    return summary


def compute(programs):
    """Rows per program, and the summary: the headline geomeans are over the
    programs whose baseline is Inductor's own choice (its combo kernel, or its
    serial kernels when it made none); programs with a forced combo kernel are
    summarized apart under "forced"."""
    rows = [compute_row(d) for d in programs]
    summary = summarize([r for r in rows if not is_forced(r)])
    summary["forced"] = summarize([r for r in rows if is_forced(r)])
    summary["target"] = TARGET_GEOMEAN
    return rows, summary


# ---------------------------------------------------------------------------
# Output
# ---------------------------------------------------------------------------

def gpu_slug(name):
    m = re.search(r"\b([A-Z]{1,2}\d{2,4}[A-Z]?)\b", name or "")
    return (m.group(1) if m else re.sub(r"[^A-Za-z0-9]+", "-", name or "gpu")).lower()


def f4(x):
    return "–" if x is None else f"{x:.4f}"


def f2(x):
    return "–" if x is None else f"{x:.2f}"


def fx(x):
    return "–" if x is None else f"{x:.3f}×"


def strategy_geomeans(summary):
    return ", ".join(f"{s} {fx(summary[f'geomean_fused_{s}_vs_combo'])}" for s in STRATEGIES)


def headline(summary):
    """The summary paragraph: the programs with Inductor's own baseline first;
    the forced combo kernels after, apart, with why they do not count."""
    text = (f"**Geomean speedup of gpu-opt (auto) over Inductor's combo kernel: "
            f"{fx(summary['geomean_auto_vs_combo'])}** over {summary['programs_in_geomean']} "
            f"programs where Inductor chose the kernels itself "
            f"({', '.join(summary['programs']) or 'none'}; target ≥ {TARGET_GEOMEAN:.2f}×). "
            f"Combo kernel over serial kernels: "
            f"{fx(summary['geomean_kernel_combo_vs_serial'])}; compiled program, combo on over "
            f"off (end to end): {fx(summary['geomean_e2e_combo_vs_plain'])}. Each strategy "
            f"over combo (programs where it fused correctly): {strategy_geomeans(summary)}.")
    forced = summary.get("forced") or {}
    if forced.get("programs"):
        text += (f"\n\nApart, not in the figures above: {len(forced['programs'])} program"
                 f"{'s' if len(forced['programs']) != 1 else ''} "
                 f"({', '.join(forced['programs'])}) for which Inductor's default partition made "
                 f"no combo kernel; the combo kernel there was forced (every node in one "
                 f"partition) and is pathological, so gpu-opt's "
                 f"{fx(forced['geomean_auto_vs_combo'])} geomean over it measures that partition, "
                 f"not fusion. Against the serial kernels Inductor runs there by default, "
                 f"gpu-opt (auto) is {fx(forced['geomean_auto_vs_serial'])} geomean.")
    return text


def write_results(saved, out_dir):
    rows, summary = compute(saved["programs"])
    saved["rows"], saved["summary"] = rows, summary
    dev = saved.get("device") or {}
    env = saved.get("environment") or {}
    stem = os.path.join(out_dir, f"inductor-{gpu_slug(dev.get('name'))}")
    os.makedirs(out_dir, exist_ok=True)
    with open(stem + ".json", "w") as f:
        json.dump(saved, f, indent=1)
    by = {d["program"]: d for d in saved["programs"]}
    md = [f"# gpu-opt horizontal fusion vs Inductor combo kernels on {dev.get('name', '?')}", "",
          f"- GPU: {dev.get('name', '?')} (compute capability {dev.get('compute_capability', '?')}, "
          f"{dev.get('multiprocessors', '?')} SMs"
          + (f", driver {dev['driver_version'] // 1000}.{dev['driver_version'] % 1000 // 10}"
             if isinstance(dev.get("driver_version"), int) else "") + ")",
          f"- Software: PyTorch {env.get('torch', '?')}, Triton {env.get('triton', '?')}, "
          f"CUDA {env.get('cuda', '?')}, Python {env.get('python', '?')}",
          f"- Date: {saved.get('date', '?')}",
          f"- Commands: `{saved.get('dump_command', 'python3 benchmarks/inductor/dump_kernels.py')}`, "
          f"`{saved.get('fuse_command', 'python3 benchmarks/inductor/fuse_and_spec.py --dump DUMP_DIR')}`, "
          f"`{saved.get('command', 'python3 benchmarks/inductor/report.py --dump DUMP_DIR')}`",
          "- Kernels: the two Triton kernels Inductor generates for each program with "
          "`combo_kernels=False` (k1, k2) and its combo kernel with `combo_kernels=True`, "
          "captured from torch.compile (dump_kernels.py); fused with `gpu-opt --hfuse` "
          "(fuse_and_spec.py); all run as PTX by gpu-run on seeded random inputs (shared "
          "inputs get the same seed).",
          f"- Method: gpu-run, CUDA events, {saved.get('warmup', '?')} warm-up and "
          f"{saved.get('repeat', '?')} timed rounds, median in ms; per program the modes "
          "(k1 and k2 alone, serial, two streams, CUDA graph, and the combo and fused "
          "kernels alone) interleaved round by round."
          + (" " + saved["timing_note"] if saved.get("timing_note") else ""),
          "- speedup = combo / auto; overlap = (serial - fused) / (serial - max(T1, T2)); "
          "auto declined by gpu-opt counts as unfused (serial). Correctness: every fused "
          "output bit-identical to the separate kernels' on the same inputs.", "",
          headline(summary), "",
          "## Kernel times (ms)", "",
          "| program | T1 | T2 | max | serial | streams | graph | combo | thread | interleave "
          "| dynamic | auto | auto vs combo | overlap (auto) |",
          "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: "
          "| ---: | ---: |"]
    for r in rows:
        cells = []
        for s in ["thread", "interleave", "dynamic"]:
            st = r[f"status_{s}"]
            cells.append(f4(r[f"fused_{s}"]) + ("" if st in ("ok",) else f" ({st})"))
        auto = f4(r["auto"]) + ("" if r["auto_source"] == "fused" else f" ({r['auto_source']})")
        combo = f4(r["combo"]) + ("" if r["combo_source"] == "combo kernel" else
                                  f" ({r['combo_source']})" if r["combo_source"] else "")
        md.append(f"| {r['program']} | {f4(r['t1'])} | {f4(r['t2'])} | {f4(r['max12'])} | "
                  f"{f4(r['serial'])} | {f4(r['streams'])} | {f4(r['graph'])} | {combo} | "
                  f"{' | '.join(cells)} | {auto} | {fx(r['speedup_auto_vs_combo'])} | "
                  f"{f2(r['overlap_auto'])} |")
    md += ["", "Overlap efficiency per strategy:", "",
           "| program | thread | interleave | dynamic | auto |", "| --- | ---: | ---: | ---: | ---: |"]
    for r in rows:
        md.append(f"| {r['program']} | " + " | ".join(f2(r[f"overlap_{s}"]) for s in STRATEGIES) + " |")
    md += ["", "## Programs, kernels and fusion", ""]
    for r in rows:
        d = by[r["program"]]
        md.append(f"- **{r['program']}**: {d.get('description', '')}. Kernels: "
                  f"{', '.join(d.get('kernels', []))}; combo: "
                  f"{', '.join(d.get('combo_kernels', [])) or 'none'}"
                  + (" (Inductor's default partition made no single combo kernel; this one "
                     "puts every node in one partition)" if d.get("combo_mode") == "forced" else "")
                  + ".")
        for s in STRATEGIES:
            st = (d.get("strategies") or {}).get(s)
            if not st:
                continue
            if st.get("ok"):
                chk = (d.get("checks") or {}).get(s, {})
                md.append(f"  - {s}: {st.get('kernel', '')}, grid {st.get('grid')}, block "
                          f"{(st.get('block') or ['?'])[0]}, smem {st.get('smem')}; check: "
                          f"{chk.get('status', 'not run')}"
                          + (f" ({chk.get('detail')})" if chk.get("detail") else ""))
            else:
                msg = (st.get("message") or "").strip().splitlines()
                md.append(f"  - {s}: not fused: {msg[-1] if msg else '?'}")
        cc = (d.get("checks") or {}).get("combo")
        if cc:
            md.append(f"  - combo kernel vs separate kernels: {cc.get('status')}"
                      + (f" ({cc.get('detail')})" if cc.get("detail") else ""))
        for n in r["notes"] + list(d.get("dump_warnings", []))[:6]:
            md.append(f"  - note: {n}")
    md += ["", "## End to end (dump_kernels.py, PyTorch, CUDA events, ms per call)", "",
           "| program | eager | compiled, combo off | compiled, combo on | combo on vs off "
           "| graph, combo off | graph, combo on | combo on vs off (graph) |",
           "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |"]
    for r in rows:
        md.append(f"| {r['program']} | {f4(r['eager_ms'])} | {f4(r['compiled_plain_ms'])} | "
                  f"{f4(r['compiled_combo_ms'])} | {fx(r['e2e_combo_speedup'])} | "
                  f"{f4(r['compiled_plain_graph_ms'])} | {f4(r['compiled_combo_graph_ms'])} | "
                  f"{fx(r['e2e_combo_speedup_graph'])} |")
    md += ["", "Reference: combo kernels measured 1.06× geomean over plain compiled code "
           "(0.83–1.31×) on an H100 (the issue's reference anchor).", ""]
    with open(stem + ".md", "w") as f:
        f.write("\n".join(md))
    fields = ["program", "t1", "t2", "max12", "serial", "streams", "graph", "combo",
              "combo_source"] + [f"fused_{s}" for s in STRATEGIES] + \
             [f"status_{s}" for s in STRATEGIES] + ["auto", "auto_source",
                                                    "speedup_auto_vs_combo"] + \
             [f"overlap_{s}" for s in STRATEGIES] + \
             ["eager_ms", "compiled_plain_ms", "compiled_combo_ms", "compiled_plain_graph_ms",
              "compiled_combo_graph_ms", "e2e_combo_speedup", "e2e_combo_speedup_graph"]
    with open(stem + ".csv", "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=fields, extrasaction="ignore")
        w.writeheader()
        for r in rows:
            w.writerow({k: ("" if r.get(k) is None else r.get(k)) for k in fields})
    print("\n".join(md))
    log(f"wrote {stem}.md, .csv and .json")
    return stem


# ---------------------------------------------------------------------------
# Running gpu-run
# ---------------------------------------------------------------------------

def run_gpu_run(gpu_run, dump, spec_rel, report_rel, log_rel, timeout):
    """(status, report or None, message); status: ok, crash, timeout, error."""
    cmd = [gpu_run, "--spec", spec_rel, "--json", report_rel]
    rp = os.path.join(dump, report_rel)
    if os.path.exists(rp):
        os.remove(rp)
    t0 = time.time()
    try:
        proc = subprocess.run(cmd, cwd=dump, capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired as e:
        with open(os.path.join(dump, log_rel), "w") as f:
            f.write(f"$ gpu-run --spec {spec_rel}\ntimed out after {timeout} s\n"
                    f"{e.stdout or ''}{e.stderr or ''}")
        return "timeout", None, f"timed out after {timeout} s"
    text = (proc.stdout or "") + (proc.stderr or "")
    with open(os.path.join(dump, log_rel), "w") as f:
        f.write(f"$ gpu-run --spec {spec_rel} --json {report_rel}  ({time.time() - t0:.1f} s, "
                f"exit {proc.returncode})\n{text}")
    report = None
    if os.path.exists(rp):
        with open(rp) as f:
            report = json.load(f)
    if proc.returncode != 0:
        lines = [l for l in text.splitlines() if l.strip()]
        return ("crash" if report is None else "error"), report, \
            "; ".join(lines[-3:]) or f"exit {proc.returncode}"
    return "ok", report, ""


def compare_files(a, b, elem_type, count, exact=True, tolerance=None):
    """(status, detail): pass or fail, bit identity (exact) or relative L2."""
    size = ELEM_SIZE[elem_type] * count
    for p in (a, b):
        if not os.path.exists(p):
            return "error", f"missing {os.path.basename(p)}"
        if os.path.getsize(p) != size:
            return "error", f"{os.path.basename(p)} has {os.path.getsize(p)} bytes, expected {size}"
    if exact:  # the comparison gpuopt.verify makes of fused kernels
        ok, detail = verify.compare_files(a, b, elem_type)
        return ("pass" if ok else "fail"), ("bit-identical" if ok else detail)
    same = True
    with open(a, "rb") as fa, open(b, "rb") as fb:
        while True:
            ca, cb = fa.read(1 << 24), fb.read(1 << 24)
            if ca != cb:
                same = False
                break
            if not ca:
                break
    if same:
        return "pass", "bit-identical"
    try:
        import numpy as np
    except ImportError:
        return ("fail", "differs (numpy missing: no details)") if exact else \
            ("skipped", "differs; numpy needed for the tolerance")
    dt = NP_TYPE.get(elem_type)
    if dt is None:  # bf16: compare as raw 16-bit
        dt = "uint16"
    x = np.fromfile(a, dtype=dt)
    y = np.fromfile(b, dtype=dt)
    neq = x != y
    if np.issubdtype(x.dtype, np.floating):
        neq &= ~(np.isnan(x) & np.isnan(y))
    n = int(neq.sum())
    xd, yd = x.astype(np.float64), y.astype(np.float64)
    finite = np.isfinite(xd) & np.isfinite(yd)
    maxabs = float(np.abs(xd - yd)[finite].max()) if finite.any() else float("nan")
    norm = float(np.linalg.norm(yd[finite])) or 1e-30
    rel = float(np.linalg.norm((xd - yd)[finite])) / norm
    nan_mismatch = int((np.isnan(xd) != np.isnan(yd)).sum())
    detail = (f"{n} of {count} elements differ, first at {int(np.argmax(neq))}, max abs "
              f"{maxabs:.3g}, rel L2 {rel:.3g}" + (f", NaN on one side {nan_mismatch}" if nan_mismatch else ""))
    if exact:
        return ("pass" if n == 0 else "fail"), detail
    ok = rel <= tolerance and nan_mismatch == 0
    return ("pass" if ok else "fail"), detail


def run_checks(args, dump, checks):
    results = {}
    for prog, chk in checks.get("programs", {}).items():
        res = results[prog] = {}
        log(f"{prog}: reference run (separate kernels) ...")
        st, _, msg = run_gpu_run(args.gpu_run, dump, chk["reference"],
                                 f"check/{prog}/ref.report.json", f"check/{prog}/ref.log", args.timeout)
        res["reference"] = {"status": st, "detail": msg}
        if st != "ok":
            log(f"{prog}: reference run {st}: {msg}")
            for s in chk["variants"]:
                res[s] = {"status": "not run", "detail": f"reference run {st}"}
            continue
        items = [(s, v) for s, v in chk["variants"].items()]
        if chk.get("combo"):
            items.append(("combo", chk["combo"]))
        for s, v in items:
            st, _, msg = run_gpu_run(args.gpu_run, dump, v["spec"], f"check/{prog}/{s}.report.json",
                                     f"check/{prog}/{s}.log", args.timeout)
            if st != "ok":
                res[s] = {"status": st, "detail": msg}
                log(f"{prog}: {s}: {st}: {msg}")
                continue
            worst, details = "pass", []
            for pair in v["pairs"]:
                cs, detail = compare_files(os.path.join(dump, pair["fused"]),
                                           os.path.join(dump, pair["ref"]), pair["type"],
                                           pair["count"], v.get("exact", True), v.get("tolerance"))
                what = pair.get("what") or f"part {pair.get('part')} arg {pair.get('arg')}"
                if cs != "pass" or not v.get("exact", True):
                    details.append(f"{what}: {detail}")
                if cs != "pass" and worst == "pass":
                    worst = cs
                if not args.keep_check_files:
                    try:
                        os.remove(os.path.join(dump, pair["fused"]))
                    except OSError:
                        pass
            res[s] = {"status": worst, "detail": "; ".join(details)}
            log(f"{prog}: {s}: {worst}" + (f" ({'; '.join(details)})" if details else ""))
        if not args.keep_check_files:
            for f in os.listdir(os.path.join(dump, "check", prog)):
                if f.endswith(".bin"):
                    os.remove(os.path.join(dump, "check", prog, f))
    return results


def sub_spec(spec, groups, drop):
    labels = []
    gs = []
    for g in groups:
        g = dict(g)
        g["also"] = [l for l in g.get("also", []) if l not in drop]
        gs.append(g)
        labels += g["kernels"] + g["also"]
    return {"warmup": spec["warmup"], "repeat": spec["repeat"],
            "kernels": [k for k in spec["kernels"] if k["label"] in labels], "groups": gs}


def strip_new_features(spec):
    s = json.loads(json.dumps(spec))
    for g in s["groups"]:
        g.pop("also", None)
        g["modes"] = [m for m in g.get("modes", []) if m != "graph"]
    return s


def unsupported_feature(msg):
    return "unknown key" in msg or "expected \"alone\"" in msg or "also" in msg and "groups" in msg


def run_timing(args, dump, spec, drop):
    """{program: {"group", "kernel_times", "fallback"}}, reports, note."""
    os.makedirs(os.path.join(dump, "timing"), exist_ok=True)
    batches = [spec["groups"]] if args.single_process else [[g] for g in spec["groups"]]
    out, reports, notes = {}, [], set()
    for groups in batches:
        name = "all" if args.single_process else groups[0]["name"]
        s = sub_spec(spec, groups, drop)
        rel = f"timing/{name}.spec.json"
        with open(os.path.join(dump, rel), "w") as f:
            json.dump(s, f, indent=1)
        log(f"timing {name}: {len(s['kernels'])} kernels ...")
        st, rep, msg = run_gpu_run(args.gpu_run, dump, rel, f"timing/{name}.report.json",
                                   f"timing/{name}.log", args.timing_timeout)
        fallback = False
        if st != "ok" and unsupported_feature(msg):
            log(f"timing {name}: gpu-run rejected the spec ({msg}); again without mode graph "
                "and group key also")
            s2 = strip_new_features(s)
            rel2 = f"timing/{name}.fallback.spec.json"
            with open(os.path.join(dump, rel2), "w") as f:
                json.dump(s2, f, indent=1)
            st, rep, msg = run_gpu_run(args.gpu_run, dump, rel2, f"timing/{name}.report.json",
                                       f"timing/{name}.log", args.timing_timeout)
            fallback = True
            notes.add("This gpu-run knew neither mode graph nor group key also: the combo "
                      "and fused times are each kernel's time alone, measured before the "
                      "groups (not interleaved with them); no graph times.")
        if st != "ok" or rep is None:
            log(f"timing {name}: {st}: {msg}")
            for g in groups:
                out[g["name"]] = {"error": f"{st}: {msg}"}
            continue
        reports.append(rep)
        ktimes = {k["label"]: k.get("time") for k in rep.get("kernels", [])}
        rgroups = {g["name"]: g for g in rep.get("groups", [])}
        for g in groups:
            out[g["name"]] = {"group": rgroups.get(g["name"]), "kernel_times": ktimes,
                              "fallback": fallback}
    return out, reports, " ".join(sorted(notes))


def describe_command(argv):
    out, it = [], iter(argv)
    for a in it:
        if a in ("--gpu-run", "--dump", "--out-dir", "--from-json"):
            v = next(it, "")
            rel = os.path.relpath(os.path.abspath(v), ROOT)
            out += [a, {"--gpu-run": "gpu-run", "--dump": "DUMP_DIR"}.get(
                a, "OUT_DIR" if rel.startswith("..") else rel)]
        elif "=" in a and a.split("=")[0] in ("--gpu-run", "--dump", "--out-dir", "--from-json"):
            k = a.split("=")[0]
            out.append(f"{k}={'gpu-run' if k == '--gpu-run' else 'DUMP_DIR' if k == '--dump' else 'PATH'}")
        else:
            out.append(a)
    return " ".join(["python3 benchmarks/inductor/report.py"] + out)


def collect(dump, fusion, checks_res, timing, summary):
    """Per program, everything compute_row needs (saved in the JSON)."""
    programs = []
    for prog, e in fusion.get("programs", {}).items():
        try:
            with open(os.path.join(dump, prog, "launches.json")) as f:
                res = json.load(f)
        except OSError:
            res = {}
        d = {"program": prog, "description": res.get("description", ""),
             "combo_mode": e.get("combo_mode"), "status": e.get("status"),
             "kernels": e.get("kernels", []), "combo_kernels": e.get("combo_kernels", []),
             "labels": e.get("labels"), "shared_inputs": e.get("shared_inputs", []),
             "strategies": {s: {k: v for k, v in r.items() if k in (
                 "ok", "status", "message", "kernel", "grid", "block", "smem", "command", "parts",
                 "notes", "warnings")}
                 for s, r in (e.get("strategies") or {}).items()},
             "checks": (checks_res or {}).get(prog, {}),
             "timing": (timing or {}).get(prog, {}),
             "e2e": res.get("e2e", {}),
             "kernel_times_torch": {L["kernel"]: L.get("time_ms") for v in
                                    (res.get("variants") or {}).values()
                                    for L in v.get("launches", [])},
             "dump_warnings": res.get("warnings", []), "dump_errors": res.get("errors", []),
             "notes": list(e.get("notes", []))}
        if e.get("status") == "skipped":
            d["notes"].append(f"not fused: {e.get('reason')}")
        programs.append(d)
    return programs


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--dump", help="the directory of dump_kernels.py and fuse_and_spec.py")
    ap.add_argument("--gpu-run", default=shutil.which("gpu-run") or
                    os.path.join(ROOT, "build", "bin", "gpu-run"))
    ap.add_argument("--out-dir", default=os.path.join(ROOT, "docs", "results"))
    ap.add_argument("--timeout", type=int, default=300, help="seconds per correctness gpu-run")
    ap.add_argument("--timing-timeout", type=int, default=900, help="seconds per timing gpu-run")
    ap.add_argument("--skip-checks", action="store_true")
    ap.add_argument("--skip-timing", action="store_true")
    ap.add_argument("--single-process", action="store_true",
                    help="time every program in one gpu-run process")
    ap.add_argument("--keep-check-files", action="store_true")
    ap.add_argument("--date", default=datetime.date.today().isoformat())
    ap.add_argument("--from-json", help="write the tables again from a saved inductor-<gpu>.json")
    args = ap.parse_args(argv)

    if args.from_json:
        with open(args.from_json) as f:
            saved = json.load(f)
        write_results(saved, args.out_dir)
        return 0
    if not args.dump:
        ap.error("--dump or --from-json is required")
    dump = os.path.abspath(args.dump)
    args.gpu_run = os.path.abspath(args.gpu_run)
    if not os.path.isfile(args.gpu_run) and not args.skip_timing:
        print(f"report: error: no gpu-run at {args.gpu_run}", file=sys.stderr)
        return 2

    def load(name, default=None):
        p = os.path.join(dump, name)
        if not os.path.exists(p):
            if default is not None:
                return default
            raise SystemExit(f"report: error: {p} is missing (run fuse_and_spec.py first)")
        with open(p) as f:
            return json.load(f)

    fusion, checks, spec = load("fusion.json"), load("checks.json"), load("timing_spec.json")
    summary = load("summary.json", {})
    t0 = time.time()
    checks_res = {} if args.skip_checks else run_checks(args, dump, checks)
    # Leave out of the timing what crashed or hung in the checks.
    drop = set()
    for prog, res in checks_res.items():
        labels = fusion["programs"].get(prog, {}).get("labels", {})
        for s, r in res.items():
            if r.get("status") in ("crash", "timeout") and s in (labels.get("fused") or {}):
                drop.add(labels["fused"][s])
            if s == "combo" and r.get("status") in ("crash", "timeout") and labels.get("combo"):
                drop.add(labels["combo"])
        if res.get("reference", {}).get("status") in ("crash", "timeout"):
            spec["groups"] = [g for g in spec["groups"] if g["name"] != prog]
    if drop:
        log(f"left out of the timing (crashed or timed out in the checks): {sorted(drop)}")
    timing, reports, note = ({}, [], "") if args.skip_timing else run_timing(args, dump, spec, drop)
    device = reports[0]["device"] if reports else {}
    if not device:
        for prog in checks_res:
            p = os.path.join(dump, "check", prog, "ref.report.json")
            if os.path.exists(p):
                with open(p) as f:
                    device = json.load(f).get("device", {})
                break
    if not device.get("name"):
        device["name"] = (summary.get("environment") or {}).get("gpu", "unknown GPU")
    saved = {"command": describe_command(argv if argv is not None else sys.argv[1:]),
             "dump_command": summary.get("command"),
             "fuse_command": "python3 benchmarks/inductor/fuse_and_spec.py --dump DUMP_DIR",
             "date": args.date, "device": device, "environment": summary.get("environment", {}),
             "warmup": spec.get("warmup"), "repeat": spec.get("repeat"), "timing_note": note,
             "programs": collect(dump, fusion, checks_res, timing, summary),
             "timing_reports": reports, "seconds": round(time.time() - t0, 1)}
    write_results(saved, args.out_dir)
    bad = [f"{p}/{s}" for p, r in checks_res.items() for s, v in r.items()
           if s not in ("combo", "reference") and v.get("status") not in ("pass", "not run")]
    if bad:
        log(f"correctness problems: {bad}")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
