#!/usr/bin/env python3
"""Warp scheduling and the kernel's tail from a `--probe=warp_sched` trace.

Each warp's record holds %globaltimer (ns, one clock for the whole GPU) at
its entry and exit, its SM and its hardware warp slot (%warpid); a record
whose gend stayed 0 was not written (counted as missing, left out). The
report gives the kernel's span (first start to last end), each SM's busy
span, and the tail: from when the first SM goes idle for good (its last
warp ends) to the kernel's end, also as a share of the span; then the 10%
of warps that end last and their SMs, and warps per SM. Per fused part too
when the records carry a `part` field.

  python3 -m gpuopt.warp_sched TRACE_DIR [--plot tail.png] [--perfetto warps.json]
                                      [--json tail.json]
"""

import argparse
import json
import math
import sys

import numpy as np

from gpuopt.trace import (TraceError, load, part_blocks, part_label, part_names,
                          part_units, parts,
                          perfetto_names, perfetto_slice, perfetto_trace,
                          summary_part_label)

MAP = "warp_sched"


def warps_of(trace):
    """The written warp records as flat arrays: gstart, gend (ns), sm, slot
    (%warpid), block, unit (warp of the block), part (when present) with
    part_block and part_warp (the block and warp as the part's own kernel
    numbers them; -1 where not known); and the number of records that were
    not written (gend == 0)."""
    trace.require(MAP, ["gstart", "gend", "sm", "warp"])
    recs, block, unit = trace.valid_records(MAP)
    written = recs["gend"] != 0
    recs, block, unit = recs[written], block[written], unit[written]
    w = {"gstart": recs["gstart"].astype(np.int64), "gend": recs["gend"].astype(np.int64),
         "sm": recs["sm"].astype(np.int64), "slot": recs["warp"].astype(np.int64),
         "block": block, "unit": unit, "records": recs}
    if "part" in (recs.dtype.names or ()):
        w["part"] = recs["part"].astype(np.int64)
        w["part_block"] = part_blocks(trace, recs, block)
        w["part_warp"] = part_units(trace, MAP, recs, unit)
    return w, int((~written).sum())


def _warp(w, i, t0):
    """One warp of the last ones: where it ran and when it ended; in a
    fused kernel also its block and warp in its own part's numbering."""
    d = {"block": int(w["block"][i]), "warp": int(w["unit"][i]), "sm": int(w["sm"][i]),
         "slot": int(w["slot"][i]), "end_ns": int(w["gend"][i]) - t0}
    if "part_block" in w and w["part_block"][i] >= 0:
        d |= {"part_block": int(w["part_block"][i]), "part_warp": int(w["part_warp"][i])}
    return d


def _summary(w, sel, t0, last_share=0.1):
    gs, ge, sm = w["gstart"][sel], w["gend"][sel], w["sm"][sel]
    n = int(sel.sum())
    start, end = int(gs.min()), int(ge.max())
    span = end - start
    per_sm = []
    for s in np.unique(sm):
        on = sm == s
        per_sm.append({"sm": int(s), "warps": int(on.sum()),
                       "start_ns": int(gs[on].min()) - t0, "end_ns": int(ge[on].max()) - t0,
                       "busy_ns": int(ge[on].max()) - int(gs[on].min())})
    idle = min(per_sm, key=lambda d: d["end_ns"])
    tail = end - t0 - idle["end_ns"]
    k = max(1, math.ceil(last_share * n))
    order = np.argsort(-ge, kind="stable")[:k]
    idx = np.nonzero(sel)[0][order]
    last_sms = {}
    for s in w["sm"][idx]:
        last_sms[int(s)] = last_sms.get(int(s), 0) + 1
    counts = np.array([d["warps"] for d in per_sm])
    return {"warps": n, "sms": len(per_sm), "start_ns": start - t0, "end_ns": end - t0,
            "span_ns": span, "tail_ns": tail, "tail_share": tail / span if span else 0.0,
            "first_idle_sm": idle["sm"], "tail_start_ns": idle["end_ns"],
            "last_warps": {"count": k, "from_ns": int(ge[order].min()) - t0,
                           "sms": dict(sorted(last_sms.items(), key=lambda kv: -kv[1])),
                           "warps": [_warp(w, i, t0) for i in idx]},
            "warps_per_sm": {"min": int(counts.min()), "mean": float(counts.mean()),
                             "max": int(counts.max())},
            "per_sm": per_sm}


def analyse(trace, w=None, missing=0):
    """Span, per-SM busy spans, tail, last 10% of warps and warps per SM,
    times in ns from the kernel's first warp start; "parts" per fused part."""
    if w is None:
        w, missing = warps_of(trace)
    if not len(w["gend"]):
        raise TraceError(f"{trace.path}: no '{MAP}' records were written")
    t0 = int(w["gstart"].min())
    out = _summary(w, np.ones(len(w["gend"]), bool), t0) | {
        "missing_warps": missing, "overflow": trace.overflow.get(MAP),
        "device_sms": (trace.info.get("device") or {}).get("multiprocessors")}
    ps = parts(trace, w["records"])
    if ps:
        out["parts"] = [{"part": p, "kernel": k} | _summary(w, sel, t0) for p, k, sel in ps]
    return out


def perfetto(trace, w):
    """Chrome/Perfetto trace events: one process per SM, one thread per
    hardware warp slot, a complete event per warp (µs from the first start)."""
    t0 = int(w["gstart"].min())
    names = part_names(trace)
    events = []
    for i in range(len(w["gend"])):
        args = {"block": int(w["block"][i]), "warp": int(w["unit"][i])}
        name = f"block {args['block']} warp {args['warp']}"
        if "part" in w:
            args["part"] = part_label(names, w["part"][i])
            name += f" {args['part']}"
            if w["part_block"][i] >= 0:
                # The part's own block and warp, as its kernel apart numbers them.
                args["part_block"] = int(w["part_block"][i])
                args["part_warp"] = int(w["part_warp"][i])
                name += f" block {args['part_block']} warp {args['part_warp']}"
        events.append(perfetto_slice(name, w["sm"][i], w["slot"][i],
                                     (int(w["gstart"][i]) - t0) / 1000.0,
                                     (int(w["gend"][i]) - int(w["gstart"][i])) / 1000.0,
                                     args))
    for sm in np.unique(w["sm"]):
        slots = np.unique(w["slot"][w["sm"] == sm])
        events += perfetto_names(sm, f"SM {int(sm)}",
                                 [(slot, f"warp slot {int(slot)}") for slot in slots])
    return perfetto_trace(events)


def running(w, bins):
    """(SMs, running): the mean number of running warps of each SM in each
    of `bins` equal bins from the first start to the last end."""
    t0, t1 = int(w["gstart"].min()), int(w["gend"].max())
    edges = np.linspace(0.0, max(t1 - t0, 1), bins + 1)
    sms = np.unique(w["sm"])
    out = np.zeros((len(sms), bins))
    for row, s in enumerate(sms):
        on = w["sm"] == s
        gs = np.sort(w["gstart"][on] - t0).astype(float)
        ge = np.sort(w["gend"][on] - t0).astype(float)

        def ramp(v):  # integral over [0, e] of the warps that started (ended) by e
            c = np.concatenate([[0.0], np.cumsum(v)])
            n = np.searchsorted(v, edges, side="right")
            return n * edges - c[n]

        area = ramp(gs) - ramp(ge)  # warp-ns run by each edge
        out[row] = np.diff(area) / np.diff(edges)
    return sms, out, edges


def plot(w, s, path, bins=400):
    """Heatmap of running warps, SM (rows) x time, each SM's last warp end
    marked, the tail (first SM idle for good to the end) shaded."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    sms, run, edges = running(w, bins)
    span_us = edges[-1] / 1000.0
    fig, ax = plt.subplots(figsize=(11, min(12, 0.08 * len(sms) + 2.5)))
    im = ax.imshow(run, aspect="auto", interpolation="nearest", cmap="viridis",
                   extent=[0, span_us, len(sms) - 0.5, -0.5])
    fig.colorbar(im, ax=ax, label="running warps (mean over the bin)")
    ends = {d["sm"]: d["end_ns"] / 1000.0 for d in s["per_sm"]}
    ax.plot([ends[int(x)] for x in sms], np.arange(len(sms)), "|", color="white",
            markersize=max(2, min(8, 400 / len(sms))), label="SM's last warp ends")
    ax.axvspan(s["tail_start_ns"] / 1000.0, span_us, color="red", alpha=0.15,
               label=f"tail {s['tail_ns'] / 1000.0:.2f} µs "
                     f"({100 * s['tail_share']:.1f}%)")
    ax.axvline(s["tail_start_ns"] / 1000.0, color="red", lw=1)
    step = max(1, len(sms) // 32)
    ax.set_yticks(range(0, len(sms), step), [f"SM {int(x)}" for x in sms[::step]],
                  fontsize=7)
    ax.set_xlim(0, span_us)
    ax.set_xlabel("µs since the first warp started (globaltimer)")
    ax.set_title(f"{s['warps']} warps on {s['sms']} SMs, span {s['span_ns'] / 1000.0:.2f} µs")
    ax.legend(loc="lower left", fontsize=8, facecolor="0.8")
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)


def _fmt(s):
    us = lambda ns: f"{ns / 1000.0:.3f} µs"  # noqa: E731
    busy = [d["busy_ns"] for d in s["per_sm"]]
    wps = s["warps_per_sm"]
    lw = s["last_warps"]
    top = ", ".join(f"SM {k} ({v})" for k, v in list(lw["sms"].items())[:8])
    more = "" if len(lw["sms"]) <= 8 else f", ... ({len(lw['sms'])} SMs)"
    return [f"{s['warps']} warps on {s['sms']} SMs, span {us(s['span_ns'])} "
            f"(from {us(s['start_ns'])} to {us(s['end_ns'])})",
            f"SM busy span min {us(min(busy))} mean {us(float(np.mean(busy)))} "
            f"max {us(max(busy))}; warps per SM min {wps['min']} mean {wps['mean']:.1f} "
            f"max {wps['max']}",
            f"tail: {us(s['tail_ns'])} ({100 * s['tail_share']:.1f}% of the span) after "
            f"SM {s['first_idle_sm']} went idle at {us(s['tail_start_ns'])}",
            f"last {lw['count']} warps (10%) end after {us(lw['from_ns'])}, on {top}{more}"]


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("trace", help="gpu-run --trace directory of a warp_sched probe")
    ap.add_argument("--plot", default=None, help="SM x time heatmap PNG with the tail")
    ap.add_argument("--perfetto", default=None, help="Chrome/Perfetto trace JSON")
    ap.add_argument("--json", default=None, help="the numbers as JSON")
    args = ap.parse_args(argv)
    try:
        trace = load(args.trace)
        w, missing = warps_of(trace)
        s = analyse(trace, w, missing)
    except TraceError as e:
        print(f"warp_sched: error: {e}", file=sys.stderr)
        return 2
    dev = f" of {s['device_sms']}" if s["device_sms"] else ""
    print(f"{trace.info.get('kernel')}: grid {trace.grid}, block {trace.block}; "
          f"{s['sms']}{dev} SMs used; {missing} warps without a record; "
          f"overflow {s['overflow']}")
    for line in _fmt(s):
        print(f"  {line}")
    for p in s.get("parts", []):
        name = summary_part_label(p)
        print(f"  {name}:")
        for line in _fmt(p):
            print(f"    {line}")
    if args.json:
        with open(args.json, "w") as f:
            json.dump(s, f, indent=1)
    if args.perfetto:
        with open(args.perfetto, "w") as f:
            json.dump(perfetto(trace, w), f)
        print(f"  wrote {args.perfetto} (open it in ui.perfetto.dev)")
    if args.plot:
        plot(w, s, args.plot)
        print(f"  wrote {args.plot}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
