#!/usr/bin/env python3
"""Totals of the counting probes: `gmem_bytes` (per thread: synchronous and
asynchronous global bytes) and `tensorop_count` (per warp: mma/wmma.mma and
wgmma.mma_async executed), from whichever of the two maps the trace has;
per fused part when the records carry a `part` field.

  python3 -m gpuopt.totals TRACE_DIR [--json totals.json]
"""

import argparse
import json
import sys

import numpy as np

from gpuopt.trace import TraceError, load, parts, summary_part_label

GMEM, TENSOR = "gmem_bytes", "tensorop_count"


def _gmem(recs):
    sync = recs["sync"].astype(np.uint64)
    asyn = recs["async"].astype(np.uint64)
    per = sync + asyn
    return {"threads": int(len(recs)), "sync": int(sync.sum()), "async": int(asyn.sum()),
            "bytes": int(per.sum()),
            "per_thread": {"min": int(per.min()) if len(per) else 0,
                           "mean": float(per.mean()) if len(per) else 0.0,
                           "max": int(per.max()) if len(per) else 0}}


def _tensor(recs):
    mma = recs["mma"].astype(np.uint64)
    wgmma = recs["wgmma"].astype(np.uint64)
    return {"warps": int(len(recs)), "mma": int(mma.sum()), "wgmma": int(wgmma.sum()),
            "max_per_warp": {"mma": int(mma.max()) if len(mma) else 0,
                             "wgmma": int(wgmma.max()) if len(wgmma) else 0}}


def _with_parts(trace, name, recs, fn):
    out = fn(recs) | {"overflow": trace.overflow.get(name)}
    ps = parts(trace, recs)
    if ps:
        out["parts"] = [{"part": p, "kernel": k} | fn(recs[sel]) for p, k, sel in ps]
    return out


def gmem_totals(trace):
    """Total sync and async global bytes, and bytes (sync + async) per
    thread: min, mean, max; "parts" per fused part when records have one."""
    trace.require(GMEM, ["sync", "async"])
    recs, _, _ = trace.valid_records(GMEM)
    return _with_parts(trace, GMEM, recs, _gmem)


def tensorop_totals(trace):
    """Total mma and wgmma, and the most any one warp executed; "parts" per
    fused part when records have one."""
    trace.require(TENSOR, ["mma", "wgmma"])
    recs, _, _ = trace.valid_records(TENSOR)
    return _with_parts(trace, TENSOR, recs, _tensor)


def totals(trace):
    """{map: totals} of whichever counting maps the trace has."""
    out = {}
    if GMEM in trace.maps:
        out[GMEM] = gmem_totals(trace)
    if TENSOR in trace.maps:
        out[TENSOR] = tensorop_totals(trace)
    if not out:
        have = ", ".join(sorted(trace.maps)) or "none"
        raise TraceError(f"{trace.path}: no '{GMEM}' or '{TENSOR}' map (probe with "
                         f"--probe=gmem_bytes or --probe=tensorop_count; the trace "
                         f"has: {have})")
    return out


_part = summary_part_label


def report(trace, out):
    lines = [f"{trace.info.get('kernel')}: grid {trace.grid}, block {trace.block}"]
    if GMEM in out:
        g = out[GMEM]
        pt = g["per_thread"]
        lines.append(f"  gmem_bytes: {g['bytes']} bytes ({g['sync']} sync, {g['async']} "
                     f"async) over {g['threads']} threads, per thread min {pt['min']} "
                     f"mean {pt['mean']:.1f} max {pt['max']}; overflow {g['overflow']}")
        for d in g.get("parts", []):
            pt = d["per_thread"]
            lines.append(f"    {_part(d)}: {d['sync']} sync + {d['async']} async bytes "
                         f"over {d['threads']} threads, per thread min {pt['min']} "
                         f"mean {pt['mean']:.1f} max {pt['max']}")
    if TENSOR in out:
        t = out[TENSOR]
        mx = t["max_per_warp"]
        lines.append(f"  tensorop_count: {t['mma']} mma, {t['wgmma']} wgmma over "
                     f"{t['warps']} warps, per warp max {mx['mma']} mma, {mx['wgmma']} "
                     f"wgmma; overflow {t['overflow']}")
        for d in t.get("parts", []):
            mx = d["max_per_warp"]
            lines.append(f"    {_part(d)}: {d['mma']} mma, {d['wgmma']} wgmma over "
                         f"{d['warps']} warps, per warp max {mx['mma']} mma, "
                         f"{mx['wgmma']} wgmma")
    return "\n".join(lines)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("trace", help="gpu-run --trace directory of a gmem_bytes and/or "
                    "tensorop_count probe")
    ap.add_argument("--json", default=None, help="the numbers as JSON")
    args = ap.parse_args(argv)
    try:
        trace = load(args.trace)
        out = totals(trace)
    except TraceError as e:
        print(f"totals: error: {e}", file=sys.stderr)
        return 2
    print(report(trace, out))
    if args.json:
        with open(args.json, "w") as f:
            json.dump(out, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
