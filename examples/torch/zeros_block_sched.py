#!/usr/bin/env python3
"""Neutrino's block-scheduling case on PyTorch Inductor (needs a GPU,
PyTorch 2.11, Triton 3.6 and the gpuopt package):

    python3 examples/torch/zeros_block_sched.py [--out DIR]

`torch.zeros((4096, 4096))` compiled by torch.compile becomes one Triton
fill kernel; gpuopt.torch.trace compiles it with that kernel probed by
block_sched, checks the result against eager PyTorch bit for bit, and
reports how much of the SMs' slot time went to scheduling blocks rather
than running them (most of it, for a kernel whose blocks each write 4 KiB),
with a timeline plot. Prints one JSON line; exits 1 on a mismatch.
"""

import argparse
import json
import os
import sys

import torch

import gpuopt.torch
from gpuopt import block_sched


def zeros():
    return torch.zeros((4096, 4096), device="cuda")


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", default="zeros-block-sched")
    args = ap.parse_args()
    traced = gpuopt.torch.trace(zeros, probe="block_sched")
    out = traced()
    torch.cuda.synchronize()
    same = torch.equal(out.view(torch.uint8), zeros().view(torch.uint8))
    launch = traced.launches[-1]
    launch.save(os.path.join(args.out, "trace"))
    blocks, missing = block_sched.blocks_of(launch.trace())
    cost = block_sched.scheduling_cost(blocks)
    idle = block_sched.slot_idle(blocks)
    block_sched.plot(blocks, os.path.join(args.out, "block_sched.png"), 1.98)
    print(json.dumps({
        "kernel": launch.name, "grid": launch.grid, "block": launch.block,
        "launches": len(traced.launches), "bit_identical": same,
        "skipped": traced.skipped, "blocks": cost["blocks"], "sms": cost["sms"],
        "missing_warps": missing,
        "mean_block_clocks": round(cost["mean_block_clocks"], 1),
        "mean_gap_clocks": round(cost["mean_gap_clocks"], 1),
        "scheduling_share": round(cost["scheduling_share"], 4),
        "idle_share": round(idle["idle_share"], 4),
        "device": launch.device["name"]}))
    return 0 if same else 1


if __name__ == "__main__":
    sys.exit(main())
