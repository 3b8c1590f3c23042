#!/usr/bin/env python3
"""A small torch.compile program for gpuopt-trace (needs a GPU):

    gpuopt-trace -p block_sched python3 examples/torch/compiled_block.py OUT.pt

A transformer block's pointwise and normalisation tail (layernorm, GELU,
residual add, softmax over the last dimension, row sums) compiled by
Inductor into Triton kernels, on inputs from a fixed seed; its output is
saved to OUT.pt, so that a plain run and a traced run can be compared bit for
bit.
"""

import sys

import torch


def block(x, w, b, r):
    h = torch.nn.functional.layer_norm(x, x.shape[-1:], w, b)
    h = torch.nn.functional.gelu(h) + r
    return torch.softmax(h, dim=-1), h.sum(dim=-1)


def main():
    torch.manual_seed(0)
    x, r = (torch.randn(8192, 1024, device="cuda") for _ in range(2))
    w, b = torch.randn(1024, device="cuda"), torch.randn(1024, device="cuda")
    out = torch.compile(block)(x, w, b, r)
    torch.cuda.synchronize()
    torch.save([t.cpu() for t in out], sys.argv[1])


if __name__ == "__main__":
    main()
