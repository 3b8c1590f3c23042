"""Synthetic traces for tests, laid out exactly as `gpu-run --trace DIR`
writes them: one MAP.npy per map (a structured array of shape (blocks,
units, capacity), fields at the probe pass's offsets: in order, each
aligned to its size, the record rounded up to its largest field),
MAP.counts.npy for dynamic maps, trace.json and manifest.json.
"""

import json
import os

import numpy as np

TYPES = {"u32": "<u4", "u64": "<u8", "s32": "<i4", "s64": "<i8", "f32": "<f4",
         "f64": "<f8", "u16": "<u2", "u8": "|u1"}

# The built-in probes' fields (configs/probes/*.yaml).
FIELDS = {
    "gmem_bytes": [("sync", "u64"), ("async", "u64")],
    "tensorop_count": [("mma", "u32"), ("wgmma", "u32")],
    "dmat": [("addr", "u64"), ("clock", "u32"), ("info", "u32")],
    "warp_sched": [("gstart", "u64"), ("gend", "u64"), ("sm", "u32"), ("warp", "u32")],
    "program_progress": [("clock", "u32"), ("site", "u32")],
    "block_sched": [("gend", "u64"), ("start", "u32"), ("end", "u32"), ("sm", "u32")],
}
LEVELS = {"gmem_bytes": "thread"}


def layout(fields):
    """(dtype, [(name, type, offset)], record bytes) of a probe's fields."""
    offset, align, out = 0, 1, []
    for name, ty in fields:
        size = np.dtype(TYPES[ty]).itemsize
        offset = -(-offset // size) * size
        out.append((name, ty, offset))
        offset += size
        align = max(align, size)
    rec = -(-offset // align) * align
    dtype = np.dtype({"names": [n for n, _, _ in out],
                      "formats": [TYPES[t] for _, t, _ in out],
                      "offsets": [o for _, _, o in out], "itemsize": rec})
    return dtype, out, rec


def dtype_of(probe, part=False, copy=False):
    """A built-in probe's record dtype; with `part` (and `copy`) the fields
    the probe pass appends to a fused kernel's records."""
    return layout(FIELDS[probe] + ([("part", "u32")] if part else [])
                  + ([("copy", "u32")] if copy else []))[0]


def write_trace(path, maps, grid, block, kernel="k", fused_from=None,
                device=None, strategy="thread"):
    """maps: list of dicts {"name", "records" (blocks, units, capacity)
    structured array, optional "probe", "level", "counts" (blocks, units)
    -> a dynamic map, "overflow"}. fused_from: list of kernel names, or of
    dicts of fused_from keys ("kernel", "threads", "replicas", ...) (the
    manifest then describes a fused kernel, by strategy `strategy`)."""
    os.makedirs(path)
    entries, probes = [], []
    for i, m in enumerate(maps):
        name, rec = m["name"], m["records"]
        probe = m.get("probe", name)
        fields = [(n, {v: k for k, v in TYPES.items()}[rec.dtype.fields[n][0].str],
                   rec.dtype.fields[n][1]) for n in rec.dtype.names]
        np.save(os.path.join(path, f"{name}.npy"), rec)
        counts = m.get("counts")
        level = m.get("level", LEVELS.get(probe, "warp"))
        entry = {"name": name, "probe": probe, "level": level,
                 "capacity": int(rec.shape[2]), "record_bytes": rec.dtype.itemsize,
                 "shape": list(rec.shape), "file": f"{name}.npy"}
        overflow = m.get("overflow")
        if counts is not None:
            counts = np.asarray(counts, np.uint32)
            np.save(os.path.join(path, f"{name}.counts.npy"), counts)
            entry["counts"] = f"{name}.counts.npy"
            entry["dynamic"] = True
            if overflow is None:
                overflow = int(np.maximum(counts.astype(np.int64) - rec.shape[2], 0).sum())
        entry["overflow"] = overflow
        entries.append(entry)
        probe_entry = {"name": name, "probe": probe, "param": 1 + 2 * i, "level": level,
                       "capacity": int(rec.shape[2]), "record_bytes": rec.dtype.itemsize,
                       "overflow_counter": overflow is not None,
                       "fields": [{"name": n, "type": t, "offset": o}
                                  for n, t, o in fields]}
        if counts is not None:  # manifest version 4: the launcher picks the capacity
            probe_entry |= {"capacity": "dynamic", "capacity_param": 2 + 2 * i,
                            "slot_counts": True}
        probes.append(probe_entry)
    with open(os.path.join(path, "trace.json"), "w") as f:
        json.dump({"kernel": kernel, "module": "k.probed.ptx", "grid": list(grid),
                   "block": list(block),
                   "device": device or {"name": "NVIDIA H100 80GB HBM3",
                                        "multiprocessors": 132,
                                        "compute_capability": "9.0"},
                   "maps": entries}, f, indent=2)
    k = {"name": kernel, "params": [], "launch": {"grid": list(grid), "block": list(block),
                                                  "dynamic_smem": 0},
         "probes": probes}
    if fused_from:
        k["fusion_strategy"] = strategy
        k["fused_from"] = [{"kernel": n, "threads": [0, 0], "grid": "runtime",
                            "dynamic_smem_offset": 0, "dynamic_smem": 0, "arg_map": []}
                           if isinstance(n, str) else
                           {"threads": [0, 0], "grid": "runtime", "dynamic_smem_offset": 0,
                            "dynamic_smem": 0, "arg_map": []} | n
                           for n in fused_from]
    with open(os.path.join(path, "manifest.json"), "w") as f:
        version = 4 if any("counts" in e for e in entries) else 3
        if any(isinstance(n, dict) and n.get("replicas", 1) != 1 for n in fused_from or []):
            version = 6  # fused_from's replicas
        json.dump({"manifest_version": version,
                   "module": {"path": "k.probed.ptx", "format": "ptx"},
                   "kernels": [k]}, f, indent=1)
    return path
