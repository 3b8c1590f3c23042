#!/usr/bin/env python3
"""Block scheduling from a `--probe=block_sched` trace.

Each warp's record holds its start and end %clock (32 bits, per SM),
%globaltimer at its end and its SM. A block runs from its first warp's start to its last
warp's end. Per SM the blocks form a FIFO of slots: a block that starts
after the SM's first wave takes the slot of the earliest block that ended
before it, and the time between that end and its start is scheduling cost
(Neutrino, OSDI'25). The report compares the sum of those gaps with the sum
of the blocks' running times. Which block took which slot cannot be seen,
and FIFO pairs each start with the oldest free slot; a second measure that
does not pair: per SM, while blocks are still being started there, the slot
time left idle (the most blocks it ran at once, times that window, minus
the time blocks ran in it).

  python3 -m gpuopt.block_sched TRACE_DIR [--plot tl.png] [--perfetto tl.json]
"""

import argparse
import heapq
import json
import sys

import numpy as np

from gpuopt.trace import (TraceError, load, perfetto_names,
                          perfetto_slice, perfetto_trace)

MAP = "block_sched"


def blocks_of(trace, clock_ghz=1.98):
    """Per block: sm, start and end (SM clocks, unwrapped), and its start on
    the global timer (ns); from the warp records that were written (a warp
    whose record stayed zero is left out, and counted).

    %clock is 32 bits: per SM, clocks are taken relative to the warp that
    ended first on the global timer, modulo 2^32 (right for kernels shorter
    than about 2 s)."""
    arr = trace.maps[MAP][..., 0]  # capacity 1: (blocks, warps)
    written = arr["gend"] != 0
    missing = int((~written).sum())
    blk_idx, warp_idx = np.nonzero(written)
    w = arr[blk_idx, warp_idx]
    sm = w["sm"].astype(np.int64)
    start = w["start"].astype(np.int64)
    end = w["end"].astype(np.int64)
    gend = w["gend"].astype(np.int64)
    rel_start = np.empty_like(start)
    rel_end = np.empty_like(end)
    for s_id in np.unique(sm):
        sel = sm == s_id
        ref = start[sel][np.argmin(gend[sel])]
        # Signed distance from ref, modulo 2^32.
        rel_start[sel] = (start[sel] - ref + (1 << 31)) % (1 << 32) - (1 << 31)
        rel_end[sel] = (end[sel] - ref + (1 << 31)) % (1 << 32) - (1 << 31)
    gstart = gend - ((end - start) % (1 << 32)) / clock_ghz
    blocks = np.unique(blk_idx)
    pos = np.searchsorted(blocks, blk_idx)
    n = len(blocks)
    b_start = np.full(n, np.iinfo(np.int64).max)
    b_end = np.full(n, np.iinfo(np.int64).min)
    b_g = np.full(n, np.inf)
    np.minimum.at(b_start, pos, rel_start)
    np.maximum.at(b_end, pos, rel_end)
    np.minimum.at(b_g, pos, gstart)
    b_sm = np.zeros(n, np.int64)
    b_sm[pos] = sm
    return {"block": blocks, "sm": b_sm, "start": b_start, "end": b_end,
            "gstart": b_g}, missing


def scheduling_cost(blocks):
    """Per SM FIFO: sum of gaps between a slot's previous block's end and
    the next block's start, and sum of running times."""
    gaps, running, per_sm = [], [], {}
    for sm in np.unique(blocks["sm"]):
        sel = blocks["sm"] == sm
        starts, ends = blocks["start"][sel], blocks["end"][sel]
        order = np.argsort(starts, kind="stable")
        starts, ends = starts[order], ends[order]
        # The first wave: blocks that start before any block of the SM ends.
        first_end = ends.min()
        free = []  # ends of finished blocks whose slot is free again
        sm_gaps = []
        pending = list(ends[starts < first_end])
        for s, e in zip(starts[starts >= first_end], ends[starts >= first_end]):
            # Slots freed by blocks that ended before this one started.
            pending.sort()
            while pending and pending[0] <= s:
                heapq.heappush(free, pending.pop(0))
            if free:
                sm_gaps.append(s - heapq.heappop(free))
            pending.append(e)
        gaps += sm_gaps
        running += list(ends - starts)
        per_sm[int(sm)] = {"blocks": int(sel.sum()), "gaps": len(sm_gaps),
                           "gap_clocks": int(sum(sm_gaps))}
    total_gap, total_run = float(sum(gaps)), float(sum(running))
    return {"blocks": int(len(blocks["sm"])), "sms": len(per_sm),
            "gaps": len(gaps), "mean_gap_clocks": total_gap / len(gaps) if gaps else 0.0,
            "mean_block_clocks": total_run / len(running) if running else 0.0,
            "scheduling_share": total_gap / (total_gap + total_run)
            if total_gap + total_run else 0.0,
            "per_sm": per_sm}


def slot_idle(blocks):
    """Per SM, over its dispatch window (its first block's start to its last
    block's start, when a free slot could still be filled): the most blocks
    resident at once times the window, minus the blocks' running time inside
    it. The share is that idle slot time over the window's slot time."""
    idle_total, slot_total, per_sm = 0.0, 0.0, {}
    for sm in np.unique(blocks["sm"]):
        sel = blocks["sm"] == sm
        starts, ends = blocks["start"][sel], blocks["end"][sel]
        lo, hi = starts.min(), starts.max()
        # Resident blocks over time: at equal times, ends before starts, so
        # back-to-back blocks do not count twice.
        times = np.concatenate([ends, starts])
        deltas = np.concatenate([-np.ones(len(ends), np.int64),
                                 np.ones(len(starts), np.int64)])
        order = np.lexsort((deltas, times))
        resident = int(np.cumsum(deltas[order]).max())
        busy = float(np.clip(np.minimum(ends, hi) - np.maximum(starts, lo), 0, None).sum())
        slot_time = float(resident) * float(hi - lo)
        idle = slot_time - busy
        idle_total += idle
        slot_total += slot_time
        per_sm[int(sm)] = {"resident": resident, "window_clocks": int(hi - lo),
                           "idle_slot_clocks": idle}
    return {"idle_slot_clocks": idle_total, "slot_clocks": slot_total,
            "idle_share": idle_total / slot_total if slot_total else 0.0,
            "max_resident": max((v["resident"] for v in per_sm.values()), default=0),
            "per_sm": per_sm}


def perfetto(blocks, clock_ghz):
    """Chrome/Perfetto trace events: one track per SM, a slice per block,
    aligned across SMs by each block's %globaltimer start."""
    t0 = float(blocks["gstart"].min())
    events = [perfetto_slice(f"block {int(b)}", 0, sm, (float(g) - t0) / 1000.0,
                             (int(e) - int(s)) / clock_ghz / 1000.0)
              for b, sm, s, e, g in zip(blocks["block"], blocks["sm"], blocks["start"],
                                        blocks["end"], blocks["gstart"])]
    events += perfetto_names(0, threads=[(sm, f"SM {int(sm)}")
                                         for sm in np.unique(blocks["sm"])])
    return perfetto_trace(events)


def plot(blocks, path, clock_ghz, max_sms=16):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    t0 = blocks["gstart"].min()
    sms = np.unique(blocks["sm"])[:max_sms]
    fig, ax = plt.subplots(figsize=(10, 0.35 * len(sms) + 1.5))
    for row, sm in enumerate(sms):
        sel = blocks["sm"] == sm
        starts = (blocks["gstart"][sel] - t0) / 1000.0
        durs = (blocks["end"][sel] - blocks["start"][sel]) / clock_ghz / 1000.0
        ax.broken_barh(list(zip(starts, durs)), (row - 0.4, 0.8), alpha=0.6)
    ax.set_yticks(range(len(sms)), [f"SM {int(s)}" for s in sms])
    ax.set_xlabel("µs since the first block (globaltimer; durations from %clock "
                  f"at {clock_ghz} GHz)")
    ax.set_title(f"{len(blocks['sm'])} blocks on {len(np.unique(blocks['sm']))} SMs "
                 f"(first {len(sms)} shown)")
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("trace", help="gpu-run --trace directory of a block_sched probe")
    ap.add_argument("--clock-ghz", type=float, default=1.98,
                    help="SM clock for %%clock64 durations (default 1.98, an H100 SXM)")
    ap.add_argument("--plot", default=None, help="timeline PNG")
    ap.add_argument("--perfetto", default=None, help="Chrome/Perfetto trace JSON")
    ap.add_argument("--json", default=None, help="the numbers as JSON")
    args = ap.parse_args(argv)
    try:
        trace = load(args.trace)
        if MAP not in trace.maps:
            raise TraceError(f"{args.trace}: no '{MAP}' map (probe with --probe=block_sched)")
    except TraceError as e:
        print(f"block_sched: error: {e}", file=sys.stderr)
        return 2
    blocks, missing = blocks_of(trace, args.clock_ghz)
    if not len(blocks["sm"]):
        print("block_sched: error: no records were written", file=sys.stderr)
        return 2
    cost = scheduling_cost(blocks)
    idle = slot_idle(blocks)
    grid = trace.grid
    print(f"{trace.info.get('kernel')}: {cost['blocks']} blocks on {cost['sms']} SMs "
          f"(grid {grid}, block {trace.block}); {missing} warps without a record; "
          f"overflow {trace.overflow.get(MAP)}")
    print(f"  mean block running time {cost['mean_block_clocks']:.0f} clocks, "
          f"mean scheduling gap {cost['mean_gap_clocks']:.0f} clocks over "
          f"{cost['gaps']} block starts")
    print(f"  scheduling share: {100 * cost['scheduling_share']:.1f}% of SM slot time "
          "(gaps / (gaps + running))")
    print(f"  idle slots while blocks start: {100 * idle['idle_share']:.1f}% of the "
          f"slot time (up to {idle['max_resident']} blocks resident per SM, "
          "no pairing)")
    if args.json:
        with open(args.json, "w") as f:
            json.dump({k: v for k, v in cost.items() if k != "per_sm"} |
                      {"missing_warps": missing,
                       "idle_share": idle["idle_share"],
                       "max_resident": idle["max_resident"]}, f, indent=1)
    if args.perfetto:
        with open(args.perfetto, "w") as f:
            json.dump(perfetto(blocks, args.clock_ghz), f)
        print(f"  wrote {args.perfetto} (open it in ui.perfetto.dev)")
    if args.plot:
        plot(blocks, args.plot, args.clock_ghz)
        print(f"  wrote {args.plot}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
