#!/usr/bin/env python3
"""Compile the Triton kernels in kernels.py ahead of time (no GPU needed) and
write their PTX to test/corpus/triton/<kernel>_<variant>.ptx.

The target is CUDA capability 90 (Triton emits `.target sm_90a`).  Output is
deterministic: a private, throw-away Triton cache is used, the PTX ISA version
is pinned (--ptx-version) instead of being derived from whichever ptxas
Triton finds, and source paths in debug info are made repo-relative.

Usage: python3 benchmarks/triton/compile_aot.py [--out DIR] [--only SUBSTR] [--list] [--check]
"""

import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
REPO_ROOT = os.path.dirname(os.path.dirname(HERE))
DEFAULT_OUT = os.path.join("test", "corpus", "triton")

# Fixed choices for reproducibility.
ARCH = 90
WARP_SIZE = 32
DEFAULT_PTX_VERSION = 88  # PTX ISA 8.8: accepted by CUDA 12.9+ ptxas (and by 13.0)


def _variants():
    """(file stem, kernel fn, signature, constexprs, options, 16-divisible args)."""
    import kernels as k

    v = []

    def add(stem, fn, signature, constexprs, num_warps=4, num_stages=3, div16=None):
        sig = dict(signature)
        for name in constexprs:
            sig[name] = "constexpr"
        # Keep the kernel's argument order in the signature.
        sig = {name: sig[name] for name in fn.arg_names}
        if div16 is None:  # default: every pointer argument is 16-byte aligned
            div16 = [n for n, t in sig.items() if t.startswith("*")]
        v.append((stem, fn, sig, dict(constexprs), {"num_warps": num_warps, "num_stages": num_stages}, div16))

    # Elementwise ---------------------------------------------------------
    add("vector_add_fp32_b1024", k.vector_add_kernel,
        {"x_ptr": "*fp32", "y_ptr": "*fp32", "out_ptr": "*fp32", "n_elements": "i32"},
        {"BLOCK_SIZE": 1024}, num_warps=4, div16=["x_ptr", "y_ptr", "out_ptr", "n_elements"])
    add("vector_add_fp16_b4096", k.vector_add_kernel,
        {"x_ptr": "*fp16", "y_ptr": "*fp16", "out_ptr": "*fp16", "n_elements": "i32"},
        {"BLOCK_SIZE": 4096}, num_warps=8)
    gelu_sig = {"x_ptr": "*fp16", "bias_ptr": "*fp16", "res_ptr": "*fp16", "out_ptr": "*fp16",
                "n_rows": "i32", "n_cols": "i32", "scale": "fp32"}
    add("bias_gelu_residual_erf", k.bias_gelu_residual_kernel, gelu_sig,
        {"BLOCK_SIZE": 1024, "APPROX_TANH": False}, num_warps=4)
    add("bias_gelu_residual_tanh", k.bias_gelu_residual_kernel, gelu_sig,
        {"BLOCK_SIZE": 1024, "APPROX_TANH": True}, num_warps=4)
    add("dropout_fp32", k.dropout_kernel,
        {"x_ptr": "*fp32", "out_ptr": "*fp32", "n_elements": "i32", "p": "fp32", "seed": "i32"},
        {"BLOCK_SIZE": 1024}, num_warps=4)
    add("transpose_fp16_64x64", k.transpose_kernel,
        {"in_ptr": "*fp16", "out_ptr": "*fp16", "M": "i32", "N": "i32", "stride_im": "i32", "stride_om": "i32"},
        {"BLOCK_M": 64, "BLOCK_N": 64}, num_warps=4,
        div16=["in_ptr", "out_ptr", "stride_im", "stride_om"])

    # Normalisation / softmax ---------------------------------------------
    add("softmax_fp32_b1024", k.softmax_kernel,
        {"out_ptr": "*fp32", "in_ptr": "*fp32", "in_row_stride": "i32", "out_row_stride": "i32", "n_cols": "i32"},
        {"BLOCK_SIZE": 1024}, num_warps=4,
        div16=["out_ptr", "in_ptr", "in_row_stride", "out_row_stride"])
    add("softmax_fp16_b4096", k.softmax_kernel,
        {"out_ptr": "*fp16", "in_ptr": "*fp16", "in_row_stride": "i32", "out_row_stride": "i32", "n_cols": "i32"},
        {"BLOCK_SIZE": 4096}, num_warps=16,
        div16=["out_ptr", "in_ptr", "in_row_stride", "out_row_stride"])
    add("layernorm_fwd_fp16", k.layernorm_fwd_kernel,
        {"x_ptr": "*fp16", "y_ptr": "*fp16", "w_ptr": "*fp16", "b_ptr": "*fp16", "mean_ptr": "*fp32",
         "rstd_ptr": "*fp32", "stride": "i32", "N": "i32", "eps": "fp32"},
        {"BLOCK_SIZE": 1024}, num_warps=8,
        div16=["x_ptr", "y_ptr", "w_ptr", "b_ptr", "mean_ptr", "rstd_ptr", "stride"])
    add("rmsnorm_fwd_fp16", k.rmsnorm_fwd_kernel,
        {"x_ptr": "*fp16", "y_ptr": "*fp16", "w_ptr": "*fp16", "stride": "i32", "N": "i32", "eps": "fp32"},
        {"BLOCK_SIZE": 2048}, num_warps=8, div16=["x_ptr", "y_ptr", "w_ptr", "stride"])

    # Reductions ------------------------------------------------------------
    add("row_sum_fp32", k.row_sum_kernel,
        {"x_ptr": "*fp32", "out_ptr": "*fp32", "stride": "i32", "n_cols": "i32"},
        {"BLOCK_SIZE": 1024}, num_warps=4, div16=["x_ptr", "out_ptr", "stride"])
    add("col_sum_atomic_fp32", k.col_sum_atomic_kernel,
        {"x_ptr": "*fp32", "out_ptr": "*fp32", "M": "i32", "N": "i32", "stride": "i32"},
        {"BLOCK_M": 64, "BLOCK_N": 64}, num_warps=4, div16=["x_ptr", "out_ptr", "stride"])

    # GEMM ------------------------------------------------------------------
    mm_sig = {"a_ptr": "*fp16", "b_ptr": "*fp16", "c_ptr": "*fp16", "M": "i32", "N": "i32", "K": "i32",
              "stride_am": "i32", "stride_ak": "i32", "stride_bk": "i32", "stride_bn": "i32",
              "stride_cm": "i32", "stride_cn": "i32"}
    mm_div16 = ["a_ptr", "b_ptr", "c_ptr", "M", "N", "K", "stride_am", "stride_bk", "stride_cm"]
    # Unit inner strides are specialised away, like the JIT does for stride == 1.
    mm_unit = {"stride_ak": 1, "stride_bn": 1, "stride_cn": 1}
    for bm, bn, bk, warps, stages in [(128, 128, 64, 8, 3), (64, 64, 32, 4, 4), (128, 256, 64, 8, 3),
                                       (64, 128, 32, 4, 4)]:
        add(f"matmul_fp16_{bm}x{bn}x{bk}_w{warps}_s{stages}", k.matmul_kernel, mm_sig,
            {"BLOCK_M": bm, "BLOCK_N": bn, "BLOCK_K": bk, "GROUP_M": 8, **mm_unit},
            num_warps=warps, num_stages=stages, div16=mm_div16)

    add("matmul_tma_fp16_128x128x64_w8_s3", k.matmul_tma_kernel,
        {"a_ptr": "*fp16", "b_ptr": "*fp16", "c_ptr": "*fp16", "M": "i32", "N": "i32", "K": "i32"},
        {"BLOCK_M": 128, "BLOCK_N": 128, "BLOCK_K": 64}, num_warps=8, num_stages=3,
        div16=["a_ptr", "b_ptr", "c_ptr", "M", "N", "K"])

    # Attention -------------------------------------------------------------
    attn_sig = {"Q": "*fp16", "K": "*fp16", "V": "*fp16", "Out": "*fp16", "sm_scale": "fp32",
                "stride_qz": "i32", "stride_qh": "i32", "stride_qm": "i32",
                "stride_kz": "i32", "stride_kh": "i32", "stride_kn": "i32",
                "stride_vz": "i32", "stride_vh": "i32", "stride_vn": "i32",
                "stride_oz": "i32", "stride_oh": "i32", "stride_om": "i32",
                "H": "i32", "N_CTX": "i32"}
    attn_div16 = ["Q", "K", "V", "Out"] + [n for n in attn_sig if n.startswith("stride_")]
    for causal in (False, True):
        add(f"attn_fwd_{'causal' if causal else 'noncausal'}_d64", k.attn_fwd_kernel, attn_sig,
            {"HEAD_DIM": 64, "BLOCK_M": 128, "BLOCK_N": 64, "CAUSAL": causal},
            num_warps=8, num_stages=3, div16=attn_div16)
    add("attn_fwd_noncausal_d128", k.attn_fwd_kernel, attn_sig,
        {"HEAD_DIM": 128, "BLOCK_M": 128, "BLOCK_N": 64, "CAUSAL": False},
        num_warps=8, num_stages=2, div16=attn_div16)
    return v


def _b8_bytes(ptx):
    """All `.b8 N` data bytes of the PTX, concatenated (DWARF strings live there)."""
    return bytes(int(m) & 0xFF for m in re.findall(r"^\s*\.b8\s+(\d+)", ptx, flags=re.MULTILINE))


def _make_paths_portable(ptx, triton_dir):
    """Make the source paths recorded in the PTX independent of the machine.

    The kernels' own file name is already repo-relative (see main), so the
    DWARF `.debug_info` strings, which PTX spells as `.b8` byte lists and
    which cannot be edited without fixing DWARF offsets, carry no absolute
    path.  `.file` directives may also name Triton's own library sources
    (inlined helpers such as tl.sum); those are rewritten to `triton/...`.
    """
    prefix = triton_dir.rstrip("/") + "/"
    ptx = ptx.replace(f'"{prefix}', '"triton/')
    for path in (REPO_ROOT, triton_dir):
        if path in ptx or path.encode() in _b8_bytes(ptx):
            raise RuntimeError(f"machine-specific path {path!r} left in the generated PTX")
    return ptx


def _ptxas_check(path):
    """Assemble path with $PTXAS for sm_90a; raise if ptxas rejects it."""
    ptxas = os.environ.get("PTXAS", "ptxas")
    with tempfile.TemporaryDirectory() as d:
        subprocess.run([ptxas, f"-arch=sm_{ARCH}a", path, "-o", os.path.join(d, "out.cubin")], check=True)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", default=None, help=f"output directory (default: {DEFAULT_OUT} in the repository)")
    ap.add_argument("--only", action="append", default=[], help="only variants whose name contains this")
    ap.add_argument("--list", action="store_true", help="list variant names and exit")
    ap.add_argument("--check", action="store_true",
                    help="assemble every output with $PTXAS (default: ptxas) for sm_90a")
    ap.add_argument("--ptx-version", type=int, default=DEFAULT_PTX_VERSION,
                    help="PTX ISA version as Triton spells it, e.g. 88 for 8.8 (default: %(default)s)")
    args = ap.parse_args(argv)
    if args.out is None:
        args.out = os.path.join(REPO_ROOT, DEFAULT_OUT)

    sys.dont_write_bytecode = True  # keep the source tree clean
    # A private cache: never reuse artefacts from another Triton build or run.
    cache_dir = tempfile.mkdtemp(prefix="triton-aot-cache-")
    os.environ["TRITON_CACHE_DIR"] = cache_dir
    # Pin FP contraction (mul+add -> fma) explicitly; Triton's default is changing.
    os.environ.setdefault("TRITON_DEFAULT_FP_FUSION", "1")
    try:
        return _compile_all(args)
    finally:
        shutil.rmtree(cache_dir, ignore_errors=True)


def _compile_all(args):
    import triton
    from triton.backends.compiler import GPUTarget
    from triton.compiler import ASTSource

    variants = _variants()
    if args.only:
        variants = [v for v in variants if any(s in v[0] for s in args.only)]
    if args.list:
        for v in variants:
            print(v[0])
        return 0

    # Record the kernel source as a repo-relative path in .loc/.file and DWARF.
    rel_src = os.path.relpath(os.path.join(HERE, "kernels.py"), REPO_ROOT).replace(os.sep, "/")
    for v in variants:
        v[1].file_name = rel_src
    triton_dir = os.path.dirname(os.path.abspath(triton.__file__))

    target = GPUTarget("cuda", ARCH, WARP_SIZE)
    os.makedirs(args.out, exist_ok=True)
    for stem, fn, sig, constexprs, opts, div16 in variants:
        names = list(sig)
        attrs = {(names.index(n), ): [["tt.divisibility", 16]] for n in div16}
        src = ASTSource(fn=fn, signature=sig, constexprs=constexprs, attrs=attrs)
        options = dict(opts, ptx_version=args.ptx_version, enable_fp_fusion=True)
        compiled = triton.compile(src, target=target, options=options)
        ptx = _make_paths_portable(compiled.asm["ptx"], triton_dir)
        path = os.path.join(args.out, f"{stem}.ptx")
        with open(path, "w", newline="\n") as f:
            f.write(ptx)
        md = compiled.metadata
        print(f"{path}: {md.name} warps={md.num_warps} stages={md.num_stages} shared={md.shared}")
        if args.check:
            _ptxas_check(path)
    print(f"triton {triton.__version__}: wrote {len(variants)} PTX files to {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
