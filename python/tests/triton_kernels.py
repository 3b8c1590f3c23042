"""A Triton kernel compiled for sm_90a without a GPU (triton.compile of an
ASTSource runs every stage, ptxas included, on the CPU)."""

import triton
import triton.language as tl
from triton.backends.compiler import GPUTarget
from triton.compiler import ASTSource


@triton.jit
def add_kernel(x_ptr, y_ptr, out_ptr, n, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    x = tl.load(x_ptr + offs, mask=m)
    y = tl.load(y_ptr + offs, mask=m)
    tl.store(out_ptr + offs, x + y, mask=m)


@triton.jit
def row_sum_kernel(x_ptr, out_ptr, stride, n_cols, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + row * stride + cols, mask=cols < n_cols, other=0.0)
    tl.store(out_ptr + row, tl.sum(x, axis=0))


def compile_add(num_warps=4):
    src = ASTSource(fn=add_kernel,
                    signature={"x_ptr": "*fp32", "y_ptr": "*fp32", "out_ptr": "*fp32",
                               "n": "i32", "BLOCK": "constexpr"},
                    constexprs={"BLOCK": 1024})
    return triton.compile(src, target=GPUTarget("cuda", 90, 32),
                          options={"num_warps": num_warps})


def compile_row_sum():
    src = ASTSource(fn=row_sum_kernel,
                    signature={"x_ptr": "*fp32", "out_ptr": "*fp32", "stride": "i32",
                               "n_cols": "i32", "BLOCK": "constexpr"},
                    constexprs={"BLOCK": 512})
    return triton.compile(src, target=GPUTarget("cuda", 90, 32))
