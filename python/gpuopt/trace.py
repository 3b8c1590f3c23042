"""Read a probe trace directory written by `gpu-run --trace DIR`.

A trace holds the kernel's launch manifest (manifest.json), trace.json
(kernel, grid, block, device, and per map its file, shape and overflow
count) and one .npy array per record map, shaped (blocks, units per block,
capacity) with a structured dtype named after the map's fields. numpy alone
reads it; this module adds the bookkeeping.

Maps of `capacity: dynamic` probes also have a counts file (trace.json's
"counts", shape (blocks, units), uint32): how many records each slot's
writer tried to save. Only min(count, capacity) were written; `valid(name)`
masks the rest. Records of a fused kernel may carry a `part` field, the
index of the fused_from part that wrote them (NO_PART: none);
`part_names(trace)` names the parts from manifest.json. When a part of a
thread split runs several of its blocks per fused block (`replicas` in
fused_from), records also carry `copy`, which of them the writer ran;
`part_blocks` and `part_units` give each record's block and unit as the
part's own kernel, launched apart, would number them.
"""

import json
import os

import numpy as np

NO_PART = 0xFFFFFFFF  # `part` of a record written outside every fused part


class TraceError(Exception):
    pass


class Trace:
    """A loaded trace: `maps[name]` is the record array of that map,
    `counts[name]` its per-slot save counts (None for a static map)."""

    def __init__(self, path):
        self.path = path
        try:
            with open(os.path.join(path, "trace.json")) as f:
                self.info = json.load(f)
        except (OSError, ValueError) as e:
            raise TraceError(f"{path}: not a gpu-run trace (trace.json: {e})")
        self.maps = {}
        self.counts = {}
        self.overflow = {}
        self._manifest = None
        for m in self.info.get("maps", []):
            arr = np.load(os.path.join(path, m["file"]))
            if list(arr.shape) != list(m["shape"]):
                raise TraceError(f"{m['file']}: shape {arr.shape}, trace.json says "
                                 f"{m['shape']}")
            self.maps[m["name"]] = arr
            self.overflow[m["name"]] = m.get("overflow")
            counts = None
            if m.get("counts"):
                try:
                    counts = np.load(os.path.join(path, m["counts"]))
                except (OSError, ValueError) as e:
                    raise TraceError(f"{path}: map '{m['name']}': counts: {e}")
                if counts.shape != arr.shape[:2]:
                    raise TraceError(f"{m['counts']}: shape {counts.shape}, expected "
                                     f"{arr.shape[:2]} (blocks, units) of {m['file']}")
            self.counts[m["name"]] = counts

    @classmethod
    def from_records(cls, info, decoded, manifest=None):
        """A trace held in memory: `info` as trace.json's (kernel, grid,
        block, device; "maps" is filled in), `decoded` as
        gpuopt.probe_buffer.decode returns it, `manifest` the launch
        manifest. `save(dir)` writes it as gpu-run writes a trace."""
        self = cls.__new__(cls)
        self.path = info.get("kernel", "<memory>")
        self.info = dict(info)
        self.maps, self.counts, self.overflow = {}, {}, {}
        self._manifest = manifest or {}
        maps = []
        for name, (records, counts, overflow) in decoded.items():
            self.maps[name] = records
            self.counts[name] = counts
            self.overflow[name] = overflow
            maps.append({"name": name, "shape": list(records.shape),
                         "record_bytes": records.dtype.itemsize,
                         "file": f"{name}.npy",
                         "counts": f"{name}.counts.npy" if counts is not None else None,
                         "overflow": overflow})
        self.info["maps"] = maps
        return self

    def save(self, path):
        """Writes the trace into `path` (new or empty) in gpu-run's layout:
        trace.json, manifest.json and one .npy (+ .counts.npy) per map."""
        if os.path.exists(path) and os.listdir(path):
            raise TraceError(f"{path}: not empty; a trace never overwrites files")
        os.makedirs(path, exist_ok=True)
        for m in self.info["maps"]:
            np.save(os.path.join(path, m["file"]), self.maps[m["name"]])
            if m.get("counts"):
                np.save(os.path.join(path, m["counts"]), self.counts[m["name"]])
        with open(os.path.join(path, "trace.json"), "w") as f:
            json.dump(self.info, f, indent=2)
        if self._manifest:
            with open(os.path.join(path, "manifest.json"), "w") as f:
                json.dump(self._manifest, f, indent=1)
        self.path = path

    @property
    def grid(self):
        return self.info["grid"]

    @property
    def block(self):
        return self.info["block"]

    @property
    def manifest(self):
        """manifest.json (the kernel's launch manifest), or None if absent."""
        if self._manifest is None:
            try:
                with open(os.path.join(self.path, "manifest.json")) as f:
                    self._manifest = json.load(f)
            except (OSError, ValueError):
                self._manifest = {}
        return self._manifest or None

    def map_info(self, name):
        return next(m for m in self.info["maps"] if m["name"] == name)

    def require(self, name, fields, probe=None):
        """The map's record array; TraceError if the trace lacks the map or
        one of `fields`."""
        if name not in self.maps:
            have = ", ".join(sorted(self.maps)) or "none"
            raise TraceError(f"{self.path}: no '{name}' map (probe with "
                             f"--probe={probe or name}; the trace has: {have})")
        arr = self.maps[name]
        missing = [f for f in fields if f not in (arr.dtype.names or ())]
        if missing:
            raise TraceError(f"{self.path}: map '{name}' has no field "
                             f"{', '.join(missing)} (fields: {arr.dtype.names})")
        return arr

    def valid(self, name):
        """Boolean mask, shape (blocks, units, capacity), of the records that
        were written: index < min(count, capacity) for a map with counts,
        every record otherwise."""
        arr = self.maps[name]
        counts = self.counts.get(name)
        if counts is None:
            return np.ones(arr.shape, bool)
        cap = arr.shape[2]
        n = np.minimum(counts.astype(np.int64), cap)
        return np.arange(cap)[None, None, :] < n[..., None]

    def dropped(self, name):
        """Records that did not fit their slot, from the counts (None for a
        map without counts)."""
        counts = self.counts.get(name)
        if counts is None:
            return None
        cap = self.maps[name].shape[2]
        return int(np.maximum(counts.astype(np.int64) - cap, 0).sum())

    def records(self, name):
        """The map's records flattened to (slots, capacity), with the slot's
        block and unit: (array, block index, unit index)."""
        arr = self.maps[name]
        blocks, units = arr.shape[0], arr.shape[1]
        block = np.repeat(np.arange(blocks), units)
        unit = np.tile(np.arange(units), blocks)
        return arr.reshape(blocks * units, -1), block, unit

    def dataframe(self, name):
        """The map's written records as a pandas DataFrame (pandas is
        optional: ImportError without it): one row per record, its fields
        as columns, with `block`, `unit` and `index` (the record's place in
        its slot)."""
        import pandas as pd
        arr = self.maps[name]
        block, unit, index = np.nonzero(self.valid(name))
        rec = arr[block, unit, index]
        cols = {"block": block, "unit": unit, "index": index}
        for field in rec.dtype.names or ():
            if rec.dtype[field].kind != "V":  # not padding
                cols[field] = rec[field]
        return pd.DataFrame(cols)

    def valid_records(self, name):
        """The written records, flat, in (block, unit, index) order (a
        warp's records in program order): (records, block, unit)."""
        arr = self.maps[name]
        block, unit, index = np.nonzero(self.valid(name))
        return arr[block, unit, index], block, unit


def load(path):
    return Trace(path)


def fused_kernel(trace):
    """manifest.json's entry of the traced kernel (else its first kernel
    with fused_from); {} without a manifest."""
    kernels = (trace.manifest or {}).get("kernels") or []
    named = [k for k in kernels if k.get("name") == trace.info.get("kernel")]
    if named:
        return named[0]
    return next((k for k in kernels if k.get("fused_from")), {})


def part_names(trace):
    """Part index -> kernel name of a fused kernel, from manifest.json's
    kernel with fused_from (the traced kernel's entry when it has one);
    {} for an unfused kernel or a trace without a manifest."""
    return {i: p.get("kernel", f"part {i}")
            for i, p in enumerate(fused_kernel(trace).get("fused_from") or [])}


def _parts_of(trace, records):
    """(fused_from, part per record, copy per record) of a thread split
    whose records name their part; None when the part's own blocks cannot
    be told (block-level strategies) or records have no part."""
    names = records.dtype.names or ()
    if "part" not in names:
        return None
    kernel = fused_kernel(trace)
    if kernel.get("fusion_strategy", "thread") != "thread":
        return None
    part = records["part"].astype(np.int64)
    copy = (records["copy"].astype(np.int64) if "copy" in names
            else np.where(part == NO_PART, NO_PART, 0))
    return kernel.get("fused_from") or [], part, copy


def _per_part_start(trace, records, values):
    """(out, parts) for part_blocks and part_units: `values` themselves and
    None for a kernel that is not fused; else an array of -1 to fill and
    _parts_of's answer (None when the records cannot be attributed)."""
    if "part" not in (records.dtype.names or ()):
        return values.copy(), None
    return np.full(values.shape, -1, np.int64), _parts_of(trace, records)


def part_blocks(trace, records, block):
    """Per record (`records` and `block` flat, as valid_records gives them),
    the linear index of the block of its own part that wrote it, the index
    that part's kernel launched apart sees: under the thread split the fused
    block times the part's `replicas`, plus the record's `copy`. The block
    itself for a kernel that is not fused; -1 for a record written outside
    every part (NO_PART) and under the block-level strategies, whose records
    do not say which block of its part a fused block ran."""
    block = np.asarray(block, np.int64)
    out, parts = _per_part_start(trace, records, block)
    if parts is None:
        return out
    fused_from, part, copy = parts
    for p, entry in enumerate(fused_from):
        sel = (part == p) & (copy != NO_PART)
        out[sel] = block[sel] * int(entry.get("replicas", 1)) + copy[sel]
    return out


def part_units(trace, name, records, unit):
    """Per record of map `name` (flat, with its slot's `unit`), its unit in
    its own part's block: the thread or warp index the part's kernel
    launched apart sees (0 for a block-level map): the fused unit less the
    part's first thread (in warps for a warp-level map) and the copies
    before its own. The unit itself for a kernel that is not fused; -1
    where part_blocks gives -1."""
    unit = np.asarray(unit, np.int64)
    out, parts = _per_part_start(trace, records, unit)
    if parts is None:
        return out
    fused_from, part, copy = parts
    level = trace.map_info(name).get("level")
    if level is None:
        level = next((m.get("level") for m in fused_kernel(trace).get("probes") or []
                      if m.get("name") == name), "thread")
    for p, entry in enumerate(fused_from):
        sel = (part == p) & (copy != NO_PART)
        lo, hi = entry.get("threads", [0, 0])
        threads = (hi - lo) // int(entry.get("replicas", 1))
        if level == "block":
            out[sel] = 0
        elif level == "warp":
            out[sel] = unit[sel] - lo // 32 - copy[sel] * -(-threads // 32)
        else:
            out[sel] = unit[sel] - lo - copy[sel] * threads
    return out


def part_label(names, part):
    if part == NO_PART:
        return "(no part)"
    return names.get(int(part), f"part {int(part)}")


def summary_part_label(d):
    """How the analyses name a per-part summary {"part", "kernel", ...}."""
    return "(no part)" if d["part"] is None else f"part {d['part']} ({d['kernel']})"


def load_records(tool, path, extract, key):
    """Loads a trace and `extract(trace)`'s records for a command-line tool;
    None (after printing `tool: error: ...`) when the trace is unreadable or
    no record was written (`extract(...)[key]` empty)."""
    import sys
    try:
        trace = load(path)
        records = extract(trace)
    except TraceError as e:
        print(f"{tool}: error: {e}", file=sys.stderr)
        return None
    if not len(records[key]):
        print(f"{tool}: error: no records were written", file=sys.stderr)
        return None
    return trace, records


def print_summary(trace, s, fmt, json_path=None):
    """The report of a per-record analysis (dmat, progress): the kernel, the
    overflow, the summary and each part's; and `s` as JSON when asked."""
    print(f"{trace.info.get('kernel')}: grid {trace.grid}, block {trace.block}; "
          f"overflow {s['overflow']}, dropped {s['dropped']}")
    print(f"  {fmt(s)}")
    for d in s.get("parts", []):
        print(f"    {summary_part_label(d)}: {fmt(d)}")
    if json_path:
        with open(json_path, "w") as f:
            json.dump(s, f, indent=1)


def parts(trace, records):
    """When `records` (a structured array) has a `part` field: a list of
    (part index or None for NO_PART, kernel name or None, boolean mask), in
    part order; [] otherwise."""
    if "part" not in (records.dtype.names or ()):
        return []
    names = part_names(trace)
    out = []
    for p in np.unique(records["part"]):
        p = int(p)
        out.append((None if p == NO_PART else p,
                    None if p == NO_PART else names.get(p),
                    records["part"] == p))
    return out


def warp_times(clock, warp):
    """Per record, clocks since its warp's first record: `clock` 32-bit
    values, `warp` a warp id per record, records grouped by warp in program
    order. Successive records of a warp are unwrapped modulo 2^32 (right
    while they are less than 2^32 clocks, about 2 s, apart)."""
    clock = np.asarray(clock, np.int64)
    warp = np.asarray(warp)
    if not len(clock):
        return np.zeros(0, np.int64)
    step = np.zeros(len(clock), np.int64)
    step[1:] = (clock[1:] - clock[:-1]) % (1 << 32)
    first = np.ones(len(clock), bool)
    first[1:] = warp[1:] != warp[:-1]
    step[first] = 0
    total = np.cumsum(step)
    starts = np.nonzero(first)[0]
    group = np.cumsum(first) - 1
    return total - total[starts][group]


def perfetto_slice(name, pid, tid, ts_us, dur_us, args=None):
    """A complete event ("X") of a Chrome/Perfetto trace, times in µs."""
    event = {"name": name, "ph": "X", "pid": int(pid), "tid": int(tid),
             "ts": ts_us, "dur": dur_us}
    if args:
        event["args"] = args
    return event


def perfetto_names(pid, process=None, threads=()):
    """Metadata events: the process `pid` named `process` (sorted by pid)
    and its threads, given as (tid, name) pairs."""
    events = []
    if process is not None:
        events.append({"name": "process_name", "ph": "M", "pid": int(pid),
                       "args": {"name": process}})
        events.append({"name": "process_sort_index", "ph": "M", "pid": int(pid),
                       "args": {"sort_index": int(pid)}})
    for tid, name in threads:
        events.append({"name": "thread_name", "ph": "M", "pid": int(pid),
                       "tid": int(tid), "args": {"name": name}})
    return events


def perfetto_trace(events):
    """The JSON object ui.perfetto.dev and chrome://tracing open."""
    return {"traceEvents": events, "displayTimeUnit": "ns"}
