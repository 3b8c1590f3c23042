#!/usr/bin/env python3
"""Program progress from a `--probe=program_progress` trace.

Each warp's records are {clock, site}: the %clock (32 bits, per SM) at each
branch lane 0 took or fell through, and the branch's site, in program
order. Only the records that were written count (the dynamic map's counts
say how many). Times are per warp: clocks since the warp's first record,
unwrapped modulo 2^32 from record to record. The report gives the records,
distinct sites, the most frequent sites and the mean time between a warp's
successive records; the plot draws site against time for up to 64 warps.

  python3 -m gpuopt.progress TRACE_DIR [--plot progress.png] [--json progress.json]
"""

import argparse
import sys

import numpy as np

from gpuopt.trace import (load_records, parts,
                          print_summary, warp_times)

MAP = "program_progress"


def progress_of(trace):
    """The written records as flat arrays: site, time (clocks since the
    warp's first record), warp (block * units + unit), block, unit."""
    arr = trace.require(MAP, ["clock", "site"])
    recs, block, unit = trace.valid_records(MAP)
    warp = block.astype(np.int64) * arr.shape[1] + unit
    return {"site": recs["site"].astype(np.int64), "time": warp_times(recs["clock"], warp),
            "warp": warp, "block": block, "unit": unit, "records": recs}


def _summary(p, sel, top=10):
    site, time, warp = p["site"][sel], p["time"][sel], p["warp"][sel]
    n = int(sel.sum())
    warps, first = np.unique(warp, return_index=True)
    # Records are grouped by warp in order: a warp's last time is its span.
    last = np.r_[first[1:], n] - 1
    spans = time[last] if n else np.zeros(0, np.int64)
    steps = n - len(warps)
    sites, counts = np.unique(site, return_counts=True)
    order = np.lexsort((sites, -counts))[:top]
    return {"records": n, "warps": int(len(warps)), "sites": int(len(sites)),
            "top_sites": [{"site": int(sites[i]), "count": int(counts[i])} for i in order],
            "mean_step_clocks": float(spans.sum()) / steps if steps else 0.0,
            "max_warp_clocks": int(spans.max()) if len(spans) else 0}


def summary(trace, p=None):
    """Records, warps, distinct sites, the 10 most frequent sites, mean
    clocks between a warp's successive records; "parts" per fused part."""
    if p is None:
        p = progress_of(trace)
    out = _summary(p, np.ones(len(p["site"]), bool)) | {
        "overflow": trace.overflow.get(MAP), "dropped": trace.dropped(MAP)}
    ps = parts(trace, p["records"])
    if ps:
        out["parts"] = [{"part": i, "kernel": k} | _summary(p, sel) for i, k, sel in ps]
    return out


def sample_warps(warp, count=64):
    """Up to `count` warps spread evenly over the warps with records."""
    warps = np.unique(warp)
    if len(warps) <= count:
        return warps
    return warps[np.linspace(0, len(warps) - 1, count).round().astype(int)]


def plot(p, path, count=64):
    """Site (y) against clocks since the warp's first record (x), one step
    line per warp, for up to `count` warps."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    chosen = sample_warps(p["warp"], count)
    fig, ax = plt.subplots(figsize=(11, 6))
    cmap = plt.get_cmap("viridis")
    for i, wid in enumerate(chosen):
        on = p["warp"] == wid
        ax.plot(p["time"][on], p["site"][on], drawstyle="steps-post", lw=0.8, alpha=0.7,
                marker=".", markersize=2, color=cmap(i / max(1, len(chosen) - 1)))
    ax.set_xlabel("clocks since the warp's first record")
    ax.set_ylabel("branch site")
    ax.set_title(f"program progress: {len(chosen)} of {len(np.unique(p['warp']))} warps, "
                 f"{len(p['site'])} records")
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)


def _fmt(s):
    top = ", ".join(f"{d['site']}: {d['count']}" for d in s["top_sites"])
    return (f"{s['records']} records of {s['warps']} warps, {s['sites']} distinct sites, "
            f"mean {s['mean_step_clocks']:.1f} clocks between records, longest warp "
            f"{s['max_warp_clocks']} clocks; top sites {top}")


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("trace", help="gpu-run --trace directory of a program_progress probe")
    ap.add_argument("--plot", default=None, help="site over time PNG (up to 64 warps)")
    ap.add_argument("--json", default=None, help="the numbers as JSON")
    args = ap.parse_args(argv)
    loaded = load_records("progress", args.trace, progress_of, "site")
    if loaded is None:
        return 2
    trace, p = loaded
    s = summary(trace, p)
    print_summary(trace, s, _fmt, args.json)
    if args.plot:
        plot(p, args.plot)
        print(f"  wrote {args.plot}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
