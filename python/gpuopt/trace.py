"""Read a probe trace directory written by `gpu-run --trace DIR`.

A trace holds the kernel's launch manifest (manifest.json), trace.json
(kernel, grid, block, device, and per map its file, shape and overflow
count) and one .npy array per record map, shaped (blocks, units per block,
capacity) with a structured dtype named after the map's fields. numpy alone
reads it; this module adds the bookkeeping.
"""

import json
import os

import numpy as np


class TraceError(Exception):
    pass


class Trace:
    """A loaded trace: `maps[name]` is the record array of that map."""

    def __init__(self, path):
        self.path = path
        try:
            with open(os.path.join(path, "trace.json")) as f:
                self.info = json.load(f)
        except (OSError, ValueError) as e:
            raise TraceError(f"{path}: not a gpu-run trace (trace.json: {e})")
        self.maps = {}
        self.overflow = {}
        for m in self.info.get("maps", []):
            arr = np.load(os.path.join(path, m["file"]))
            if list(arr.shape) != list(m["shape"]):
                raise TraceError(f"{m['file']}: shape {arr.shape}, trace.json says "
                                 f"{m['shape']}")
            self.maps[m["name"]] = arr
            self.overflow[m["name"]] = m.get("overflow")

    @property
    def grid(self):
        return self.info["grid"]

    @property
    def block(self):
        return self.info["block"]

    def map_info(self, name):
        return next(m for m in self.info["maps"] if m["name"] == name)

    def records(self, name):
        """The map's records flattened to (slots, capacity), with the slot's
        block and unit: (array, block index, unit index)."""
        arr = self.maps[name]
        blocks, units = arr.shape[0], arr.shape[1]
        block = np.repeat(np.arange(blocks), units)
        unit = np.tile(np.arange(units), blocks)
        return arr.reshape(blocks * units, -1), block, unit


def load(path):
    return Trace(path)
