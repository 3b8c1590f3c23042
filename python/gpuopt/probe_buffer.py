"""Decode a probed kernel's raw probe buffer into record arrays.

gpu-run reads probe buffers in C++ and writes traces (gpuopt.trace). A
kernel launched by someone else's launcher (Triton's, with the buffer in
its profile-scratch slot: `--probe="... buffer=last-param"`) hands the
caller the raw bytes instead; this module turns them into the same arrays,
by the same rules as include/gpuopt/Runtime/ProbeRecordLayout.h:

    buffer of a map: records (slots x capacity x record bytes), rounded up to 8
                     [u32 count per slot, rounded up to 8]   slot_counts
                     [u64 overflow counter]                  overflow_counter

Slots are block-major (linear block index, then thread/warp/block unit).
With `buffer=last-param` every map's buffer starts at
`blocks * block_offset` in the one scratch buffer of
`blocks * probe_scratch.bytes_per_block` bytes.
"""

import numpy as np

_NPY = {"u8": "<u1", "u16": "<u2", "u32": "<u4", "u64": "<u8",
        "s8": "<i1", "s16": "<i2", "s32": "<i4", "s64": "<i8",
        "b8": "<u1", "b16": "<u2", "b32": "<u4", "b64": "<u8",
        "f16": "<f2", "f32": "<f4", "f64": "<f8"}


class ProbeBufferError(Exception):
    pass


def _align8(n):
    return (n + 7) // 8 * 8


def record_dtype(probe_map):
    """The structured dtype of a map's records (fields at their manifest
    offsets, padded to record_bytes), as gpu-run's .npy files hold them."""
    fields = probe_map["fields"]
    try:
        formats = [_NPY[f["type"]] for f in fields]
    except KeyError as e:
        raise ProbeBufferError(f"map '{probe_map['name']}': field type {e} is not a "
                               "PTX fundamental type")
    return np.dtype({"names": [f["name"] for f in fields], "formats": formats,
                     "offsets": [f["offset"] for f in fields],
                     "itemsize": probe_map["record_bytes"]})


def units_per_block(probe_map, block):
    threads = int(np.prod(block))
    level = probe_map["level"]
    if level == "thread":
        return threads
    if level == "warp":
        return (threads + 31) // 32
    return 1


def map_layout(probe_map, blocks, block):
    """(slots, records bytes, counts offset or None, overflow offset or
    None, total bytes) of one map's buffer for `blocks` blocks of `block`."""
    slots = blocks * units_per_block(probe_map, block)
    records = slots * probe_map["capacity"] * probe_map["record_bytes"]
    counts_off = _align8(records)
    counts = _align8(slots * 4) if probe_map.get("slot_counts") else 0
    overflow_off = counts_off + counts
    total = overflow_off + (8 if probe_map.get("overflow_counter") else 0)
    return (slots, records, counts_off if probe_map.get("slot_counts") else None,
            overflow_off if probe_map.get("overflow_counter") else None, total)


def scratch_bytes(kernel, grid):
    """Bytes of the scratch buffer of a `buffer=last-param` kernel."""
    scratch = kernel.get("probe_scratch")
    if not scratch:
        raise ProbeBufferError(f"kernel '{kernel.get('name')}' keeps its probe buffers in "
                               "parameters of their own (no probe_scratch)")
    return int(np.prod(grid)) * scratch["bytes_per_block"]


def decode(kernel, buffers, grid, block):
    """Decode the probe buffers of one launch of `kernel` (a manifest kernel
    entry with "probes").

    `buffers`: for a `buffer=last-param` kernel, the scratch buffer's bytes
    (bytes, a uint8 array or anything numpy.frombuffer takes); otherwise a
    dict map name -> that map's buffer bytes.

    Returns {name: (records, counts, overflow)}: records shaped (blocks,
    units per block, capacity) with the map's record dtype, counts (blocks,
    units) uint32 or None, overflow an int or None."""
    maps = kernel.get("probes") or []
    if not maps:
        raise ProbeBufferError(f"kernel '{kernel.get('name')}' has no probes")
    blocks = int(np.prod(grid))
    out = {}
    scratch = kernel.get("probe_scratch")
    if scratch:
        raw = np.frombuffer(buffers, np.uint8)
        need = blocks * scratch["bytes_per_block"]
        if raw.size < need:
            raise ProbeBufferError(f"kernel '{kernel.get('name')}': scratch buffer of "
                                   f"{raw.size} bytes, {need} expected for {blocks} blocks")
    for m in maps:
        slots, records, counts_off, overflow_off, total = map_layout(m, blocks, block)
        if scratch:
            base = blocks * m.get("block_offset", 0)
            mem = raw[base:base + total]
        else:
            mem = np.frombuffer(buffers[m["name"]], np.uint8)
        if mem.size < total:
            raise ProbeBufferError(f"map '{m['name']}': {mem.size} bytes, {total} expected")
        units = units_per_block(m, block)
        recs = mem[:records].copy().view(record_dtype(m)).reshape(
            blocks, units, m["capacity"])
        counts = None
        if counts_off is not None:
            counts = mem[counts_off:counts_off + slots * 4].copy().view("<u4").reshape(
                blocks, units)
        overflow = None
        if overflow_off is not None:
            overflow = int(mem[overflow_off:overflow_off + 8].copy().view("<u8")[0])
        out[m["name"]] = (recs, counts, overflow)
    return out
