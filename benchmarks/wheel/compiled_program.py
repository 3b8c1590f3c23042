#!/usr/bin/env python3
"""A tiny torch.compile program for gpuopt-trace (needs a GPU):

    gpuopt-trace -p block_sched python3 benchmarks/wheel/compiled_program.py OUT.json

Pointwise ops and reductions (sin, multiply-add, a row sum, a softmax over
the last dimension, a column max) compiled by Inductor into a few Triton
kernels, called twice on inputs from a fixed seed. OUT.json gets each
output's shape, dtype and the SHA-256 of its bytes, so that a traced and an
untraced run can be compared bit for bit without saving the tensors.
"""

import hashlib
import json
import sys


def program(x, y):
    import torch
    h = torch.sin(x) * y + 1.0
    return h.sum(dim=-1), torch.softmax(h, dim=-1), h.amax(dim=0)


def digest(t):
    import torch
    b = t.detach().contiguous().view(-1).view(torch.uint8).cpu().numpy().tobytes()
    return {"shape": list(t.shape), "dtype": str(t.dtype), "sha256": hashlib.sha256(b).hexdigest()}


def main(argv=None):
    import torch
    argv = sys.argv[1:] if argv is None else argv
    if len(argv) != 1:
        print(__doc__, file=sys.stderr)
        return 2
    torch.manual_seed(0)
    x = torch.randn(2048, 512, device="cuda")
    y = torch.randn(2048, 512, device="cuda")
    compiled = torch.compile(program)
    compiled(x, y)
    out = compiled(x, y)
    torch.cuda.synchronize()
    with open(argv[0], "w") as f:
        json.dump({"device": torch.cuda.get_device_name(), "torch": torch.__version__,
                   "outputs": [digest(t) for t in out]}, f, indent=1)
    print(f"compiled_program: {len(out)} outputs written to {argv[0]}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
