"""Prints what a trace of replicas.ptx's kernels fused with replicas=1,3
and probed with warp_sched and gmem_bytes says about each part's own blocks
(probe-replicas-gpu.test): per part, its records, the distinct blocks of its
own that wrote them, and whether every block has each of its warps (threads)
exactly once."""
import sys

import numpy as np

from gpuopt import trace as tr

t = tr.load(sys.argv[1])
for name in ("warp_sched", "gmem_bytes"):
    recs, block, unit = t.valid_records(name)
    if name == "warp_sched":
        written = recs["gend"] != 0
        recs, block, unit = recs[written], block[written], unit[written]
    pb = tr.part_blocks(t, recs, block)
    pu = tr.part_units(t, name, recs, unit)
    for part in (0, 1, tr.NO_PART):
        sel = recs["part"] == part
        label = "none" if part == tr.NO_PART else part
        if part == tr.NO_PART:
            print(f"{name} part {label}: {int(sel.sum())} records, copy "
                  f"{sorted(set(recs['copy'][sel].tolist()))}")
            continue
        blocks = np.unique(pb[sel])
        units = np.unique(pu[sel])
        # each (block, unit) once
        pairs = pb[sel] * 4096 + pu[sel]
        once = len(np.unique(pairs)) == int(sel.sum()) == len(blocks) * len(units)
        print(f"{name} part {label}: {int(sel.sum())} records, blocks "
              f"{blocks.min()}..{blocks.max()} ({len(blocks)}), units "
              f"{units.min()}..{units.max()}, each once: {once}, copies "
              f"{sorted(set(recs['copy'][sel].tolist()))}")
