#!/usr/bin/env python3
"""Probe four real Triton kernels from Python (needs a GPU, PyTorch, Triton
3.6 and the gpuopt package):

    python3 examples/triton/probe_kernels.py [--probe block_sched] [--out DIR]
    gpuopt-trace -p block_sched python3 examples/triton/probe_kernels.py --plain OUT.pt --seed 1

softmax, layernorm, a pipelined matmul (num_stages=3) and flash attention
(benchmarks/triton/kernels.py) run on fresh random inputs twice: as Triton
compiles them, and inside `gpuopt.triton.probes(...)`. The probed run's
outputs must equal the plain run's bit for bit; each probed launch's trace
is saved (DIR/<kernel>/, readable by `python3 -m gpuopt.block_sched`) with
its block-scheduling numbers and timeline plot. Prints one JSON line per
kernel and exits 1 on any mismatch.
"""

import argparse
import json
import os
import sys

import torch
import triton

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..",
                                "benchmarks", "triton"))
import kernels as k  # noqa: E402

import gpuopt.triton  # noqa: E402


def programs(seed):
    g = torch.Generator(device="cuda").manual_seed(seed)

    def randn(*shape, dtype=torch.float16):
        return torch.randn(*shape, device="cuda", dtype=dtype, generator=g)

    x = randn(4096, 1024, dtype=torch.float32)

    def softmax():
        y = torch.empty_like(x)
        k.softmax_kernel[(x.shape[0],)](y, x, x.stride(0), y.stride(0), x.shape[1],
                                        BLOCK_SIZE=1024)
        return [y]

    xl, w, b = randn(4096, 2048), randn(2048), randn(2048)

    def layernorm():
        y = torch.empty_like(xl)
        mean = torch.empty(4096, device="cuda", dtype=torch.float32)
        rstd = torch.empty_like(mean)
        k.layernorm_fwd_kernel[(4096,)](xl, y, w, b, mean, rstd, xl.stride(0), 2048, 1e-5,
                                        BLOCK_SIZE=1024)
        return [y, mean, rstd]

    a, bm = randn(2048, 2048), randn(2048, 2048)

    def matmul():
        c = torch.empty(2048, 2048, device="cuda", dtype=torch.float16)
        grid = (triton.cdiv(2048, 128) * triton.cdiv(2048, 128),)
        k.matmul_kernel[grid](a, bm, c, 2048, 2048, 2048, a.stride(0), a.stride(1),
                              bm.stride(0), bm.stride(1), c.stride(0), c.stride(1),
                              BLOCK_M=128, BLOCK_N=128, BLOCK_K=64, GROUP_M=8,
                              num_warps=8, num_stages=3)
        return [c]

    q, kk, v = randn(4, 16, 1024, 64), randn(4, 16, 1024, 64), randn(4, 16, 1024, 64)

    def attention():
        o = torch.empty_like(q)
        grid = (triton.cdiv(1024, 128), 4 * 16)
        k.attn_fwd_kernel[grid](q, kk, v, o, 0.125, *q.stride()[:3], *kk.stride()[:3],
                                *v.stride()[:3], *o.stride()[:3], 16, 1024,
                                HEAD_DIM=64, BLOCK_M=128, BLOCK_N=64, CAUSAL=True,
                                num_warps=4, num_stages=2)
        return [o]

    return {"softmax_kernel": softmax, "layernorm_fwd_kernel": layernorm,
            "matmul_kernel": matmul, "attn_fwd_kernel": attention}


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--probe", default="block_sched")
    ap.add_argument("--out", default="triton-probe-traces")
    ap.add_argument("--seed", type=int, default=int.from_bytes(os.urandom(4), "little"))
    ap.add_argument("--plain", metavar="OUT.pt",
                    help="only run the four kernels, without gpuopt, and save their "
                         "outputs (a plain Triton program, for gpuopt-trace: compare the "
                         "outputs of a traced and an untraced run)")
    args = ap.parse_args()
    if args.plain:
        outs = [t.cpu() for fn in programs(args.seed).values() for t in fn()]
        torch.save(outs, args.plain)
        return 0
    from gpuopt import block_sched
    ok = True
    for name, fn in programs(args.seed).items():
        plain = [t.clone() for t in fn()]
        with gpuopt.triton.probes(args.probe, kernels=[name]) as session:
            probed = fn()
        torch.cuda.synchronize()
        same = all(torch.equal(p.view(torch.uint8), q.view(torch.uint8))
                   for p, q in zip(plain, probed))
        ok &= same
        launch = session.launches_of(name)[-1]
        out = os.path.join(args.out, name)
        launch.save(out)
        row = {"kernel": name, "seed": args.seed, "bit_identical": same,
               "grid": launch.grid, "block": launch.block,
               "probed_ptx_lines": len(launch.probe.probed_ptx.splitlines()),
               "bytes_per_block": launch.probe.kernel_manifest[
                   "probe_scratch"]["bytes_per_block"],
               "trace": out}
        if "block_sched" in launch.maps:
            blocks, missing = block_sched.blocks_of(launch.trace())
            cost = block_sched.scheduling_cost(blocks)
            block_sched.plot(blocks, os.path.join(out, "block_sched.png"), 1.98)
            row.update(blocks=int(cost["blocks"]), sms=int(cost["sms"]),
                       missing_warps=missing,
                       scheduling_share=round(float(cost["scheduling_share"]), 4),
                       overflow=launch.overflow["block_sched"])
        print(json.dumps(row), flush=True)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
