#!/usr/bin/env python3
"""Memory access timeline (DMAT, as in Neutrino, OSDI'25) from a
`--probe=dmat` trace.

Each warp's records are its global loads, stores and atomics as lane 0
issued them, in program order: {addr, clock, info} with info = bytes, or
bytes | 0x80000000 for a store or atomic. Only the records that were
written count (a dynamic map's counts say how many). The 32-bit %clock is
per SM and the map has no SM, so times are per warp: clocks since the
warp's first access, unwrapped modulo 2^32 from record to record. The plot
is a density of accesses over (time since warp start, address).

  python3 -m gpuopt.dmat TRACE_DIR [--plot dmat.png] [--y mib|page] [--json dmat.json]
"""

import argparse
import sys

import numpy as np

from gpuopt.trace import (load_records, parts,
                          print_summary, warp_times)

MAP = "dmat"
STORE = 0x80000000
PAGE_BITS = 12  # 4 KiB pages


def accesses(trace):
    """The written records as flat arrays: addr, bytes, store (bool), time
    (clocks since the warp's first access), warp (block * units + unit),
    block, unit, and part when the records have one."""
    arr = trace.require(MAP, ["addr", "clock", "info"])
    recs, block, unit = trace.valid_records(MAP)
    warp = block.astype(np.int64) * arr.shape[1] + unit
    info = recs["info"].astype(np.uint32)
    out = {"addr": recs["addr"].astype(np.uint64),
           "bytes": (info & ~np.uint32(STORE)).astype(np.int64),
           "store": (info & np.uint32(STORE)) != 0,
           "time": warp_times(recs["clock"], warp),
           "warp": warp, "block": block, "unit": unit}
    out["records"] = recs
    return out


def _summary(a, sel=None):
    if sel is None:
        sel = np.ones(len(a["addr"]), bool)
    addr, nbytes, store = a["addr"][sel], a["bytes"][sel], a["store"][sel]
    n = int(sel.sum())
    out = {"accesses": n, "loads": int((~store).sum()), "stores": int(store.sum()),
           "bytes": int(nbytes.sum()), "load_bytes": int(nbytes[~store].sum()),
           "store_bytes": int(nbytes[store].sum()),
           "warps": int(len(np.unique(a["warp"][sel]))), "pages": 0,
           "addr_min": None, "addr_end": None, "max_time_clocks": 0}
    if n:
        last = addr + np.maximum(nbytes, 1).astype(np.uint64) - np.uint64(1)
        pages = np.union1d(addr >> np.uint64(PAGE_BITS), last >> np.uint64(PAGE_BITS))
        out.update(pages=int(len(pages)), addr_min=int(addr.min()),
                   addr_end=int(last.max()) + 1,
                   max_time_clocks=int(a["time"][sel].max()))
    return out


def summary(trace, a=None):
    """Accesses, loads, stores, bytes, distinct 4 KiB pages touched, the
    address range [addr_min, addr_end), warps with records; per part in
    "parts" when the records have a `part` field."""
    if a is None:
        a = accesses(trace)
    out = _summary(a) | {"overflow": trace.overflow.get(MAP),
                         "dropped": trace.dropped(MAP)}
    ps = parts(trace, a["records"])
    if ps:
        out["parts"] = [{"part": p, "kernel": k} | _summary(a, sel) for p, k, sel in ps]
    return out


def plot(a, path, y="mib", gridsize=80):
    """Two panels (loads, stores): hexbin density of time since warp start
    (x, clocks) against the address (y: MiB above the lowest address, or
    the index of the 4 KiB page among the pages touched)."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from matplotlib.colors import ListedColormap, LogNorm
    addr = a["addr"]
    if y == "page":
        page = addr >> np.uint64(PAGE_BITS)
        yv = np.searchsorted(np.unique(page), page).astype(float)
        ylabel = "4 KiB page (index among the pages touched)"
    else:
        yv = (addr - addr.min()).astype(float) / (1 << 20) if len(addr) else addr.astype(float)
        ylabel = f"MiB above {int(addr.min()):#x}" if len(addr) else "MiB"
    x = a["time"].astype(float)
    fig, axes = plt.subplots(1, 2, figsize=(12, 5), sharex=True, sharey=True)
    for ax, (title, sel, cmap) in zip(axes, [("loads", ~a["store"], "Blues"),
                                             ("stores and atomics", a["store"], "Reds")]):
        if sel.any():
            # The colour map's darker part, so that a single access shows.
            cmap = ListedColormap(plt.get_cmap(cmap)(np.linspace(0.35, 1.0, 256)))
            hb = ax.hexbin(x[sel], yv[sel], gridsize=gridsize, mincnt=1, cmap=cmap,
                           norm=LogNorm(vmin=1))
            fig.colorbar(hb, ax=ax, label="accesses (log)")
        else:
            ax.text(0.5, 0.5, "none", ha="center", va="center", transform=ax.transAxes)
        ax.set_title(f"{title}: {int(sel.sum())}")
        ax.set_xlabel("clocks since the warp's first access")
    axes[0].set_ylabel(ylabel)
    fig.suptitle(f"DMAT: {len(x)} accesses of {len(np.unique(a['warp']))} warps")
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)


def _fmt(s):
    rng = (f"[{s['addr_min']:#x}, {s['addr_end']:#x}) "
           f"({(s['addr_end'] - s['addr_min']) / (1 << 20):.2f} MiB)"
           if s["accesses"] else "-")
    return (f"{s['accesses']} accesses ({s['loads']} loads, {s['stores']} stores/atomics) "
            f"of {s['warps']} warps, {s['bytes']} bytes ({s['load_bytes']} loaded, "
            f"{s['store_bytes']} stored), {s['pages']} distinct 4 KiB pages, "
            f"addresses {rng}, longest warp {s['max_time_clocks']} clocks")


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("trace", help="gpu-run --trace directory of a dmat probe")
    ap.add_argument("--plot", default=None, help="density PNG (loads and stores)")
    ap.add_argument("--y", choices=["mib", "page"], default="mib",
                    help="plot's address axis: MiB above the lowest address (default) "
                    "or index among the pages touched (closes gaps between buffers)")
    ap.add_argument("--json", default=None, help="the numbers as JSON")
    args = ap.parse_args(argv)
    loaded = load_records("dmat", args.trace, accesses, "addr")
    if loaded is None:
        return 2
    trace, a = loaded
    s = summary(trace, a)
    print_summary(trace, s, _fmt, args.json)
    if args.plot:
        plot(a, args.plot, args.y)
        print(f"  wrote {args.plot}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
