#!/usr/bin/env python3
"""Compile the workloads' Triton kernels (kernels.py) ahead of time for sm_90a.

Writes ptx/<kernel>.ptx and kernels.json (each kernel's entry, warps, stages,
dynamic shared memory, signature and constants), without a GPU. The PTX is
committed, so that run.py and the tests need no Triton; regenerate it, in a
virtualenv of its own, with the pinned Triton of requirements.txt:

  python3 -m venv build/workloads-venv
  build/workloads-venv/bin/pip install --no-deps -r benchmarks/workloads/requirements.txt
  build/workloads-venv/bin/python benchmarks/workloads/compile.py [--check]

Output is deterministic (a private Triton cache, thrown away; the PTX ISA
version pinned; source paths repository-relative), as
benchmarks/triton/compile_aot.py does it. Kernels are specialised as Triton's
launcher would at the workloads' shapes: pointers 16-byte aligned, integer
arguments divisible by 16 marked so. --check assembles each file with ptxas
(sm_90a).
"""

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
REPO_ROOT = os.path.dirname(os.path.dirname(HERE))
PTX_DIR = os.path.join(HERE, "ptx")
KERNELS_JSON = os.path.join(HERE, "kernels.json")
ARCH = 90
PTX_VERSION = 88  # PTX ISA 8.8, as benchmarks/triton and benchmarks/heldout


def variants():
    """[(stem, fn, signature, constexprs, num_warps, num_stages, div16)]."""
    import kernels as k

    out = []

    def add(stem, fn, signature, constexprs, num_warps, num_stages, div16=None):
        sig = dict(signature)
        for name in constexprs:
            sig[name] = "constexpr"
        sig = {name: sig[name] for name in fn.arg_names}
        if div16 is None:  # pointers and every integer argument (all multiples of 16 here)
            div16 = [n for n, t in sig.items() if t.startswith("*") or t == "i32"]
        out.append((stem, fn, sig, dict(constexprs), num_warps, num_stages, div16))

    ptr16, i32, f32 = "*fp16", "i32", "fp32"
    # Attention, fp16, head dim 128.
    add("prefill_attn_causal_d128", k.prefill_attn_kernel,
        {"Q": ptr16, "K": ptr16, "V": ptr16, "Out": ptr16, "sm_scale": f32,
         **{n: i32 for n in ("stride_qm", "stride_qh", "stride_kn", "stride_kh", "stride_vn",
                             "stride_vh", "stride_om", "stride_oh", "q_len", "kv_len")}},
        {"HEAD_DIM": 128, "BLOCK_M": 128, "BLOCK_N": 64, "CAUSAL": True}, 8, 3)
    add("decode_attn_d128", k.decode_attn_kernel,
        {"Q": ptr16, "K": ptr16, "V": ptr16, "Out": ptr16, "seq_lens": "*i32", "sm_scale": f32,
         **{n: i32 for n in ("stride_qb", "stride_qh", "stride_kb", "stride_kn", "stride_kh",
                             "stride_vb", "stride_vn", "stride_vh", "stride_ob", "stride_oh")}},
        {"HEAD_DIM": 128, "BLOCK_N": 64}, 4, 2)
    # sglang's split-KV decode (stage 1 per KV chunk, stage 2 merging them).
    mid = ("stride_mid_ob", "stride_mid_oh", "stride_mid_os")
    add("decode_splitkv_stage1_d128", k.decode_splitkv_stage1_kernel,
        {"Q": ptr16, "K": ptr16, "V": ptr16, "seq_lens": "*i32", "num_kv_splits": "*i32",
         "sm_scale": f32, "Att_Out": "*fp32", "Att_Lse": "*fp32",
         **{n: i32 for n in ("stride_qb", "stride_qh", "stride_kb", "stride_kn", "stride_kh",
                             "stride_vb", "stride_vn", "stride_vh", *mid)}},
        {"HEAD_DIM": 128, "BLOCK_N": 64, "MIN_BLOCK_KV": 32}, 4, 2)
    add("decode_splitkv_stage2_d128_s8", k.decode_splitkv_stage2_kernel,
        {"Mid_O": "*fp32", "Mid_Lse": "*fp32", "O": ptr16, "seq_lens": "*i32",
         "num_kv_splits": "*i32", **{n: i32 for n in (*mid, "stride_ob", "stride_oh")}},
        {"HEAD_DIM": 128, "MAX_KV_SPLITS": 8, "MIN_BLOCK_KV": 32}, 4, 2)
    # GEMM (tensor cores) and a memory-bound reduction.
    add("matmul_fp16_128x128x64_w8_s3", k.matmul_kernel,
        {"a_ptr": ptr16, "b_ptr": ptr16, "c_ptr": ptr16, "M": i32, "N": i32, "K": i32,
         "stride_am": i32, "stride_bk": i32, "stride_cm": i32},
        # Unit inner strides are specialised away, as the JIT does for == 1.
        {"BLOCK_M": 128, "BLOCK_N": 128, "BLOCK_K": 64, "GROUP_M": 8,
         "stride_ak": 1, "stride_bn": 1, "stride_cn": 1}, 8, 3)
    add("row_stats_fp16", k.row_stats_kernel,
        {"x_ptr": ptr16, "mean_ptr": "*fp32", "rstd_ptr": "*fp32", "stride": i32, "N": i32,
         "eps": f32}, {"BLOCK_SIZE": 1024}, 4, 1)
    # Decode-step kernels, bf16.
    b16 = "*bf16"
    add("rmsnorm_bf16_4096", k.rmsnorm_kernel,
        {"x_ptr": b16, "y_ptr": b16, "w_ptr": b16, "rstd_ptr": "*fp32", "stride": i32, "N": i32,
         "eps": f32}, {"BLOCK_SIZE": 4096}, 8, 1)
    add("rope_bf16_32h_d128", k.rope_kernel,
        {"q_ptr": b16, "k_ptr": b16, "q_out_ptr": b16, "k_out_ptr": b16, "cos_ptr": b16,
         "sin_ptr": b16, "pos_ptr": "*i32", "q_stride": i32, "k_stride": i32},
        {"N_QH": 32, "N_KH": 32, "HEAD_DIM": 128}, 4, 1)
    add("swiglu_bf16_b16384", k.swiglu_kernel,
        {"gate_ptr": b16, "up_ptr": b16, "out_ptr": b16, "stride": i32, "n_cols": i32},
        {"BLOCK_SIZE": 16384}, 16, 1)
    add("add_bf16_b1024", k.add_kernel,
        {"x_ptr": b16, "y_ptr": b16, "out_ptr": b16, "n_elements": i32},
        {"BLOCK_SIZE": 1024}, 4, 1)
    add("gemv_bf16_32x128", k.gemv_kernel,
        {"w_ptr": b16, "x_ptr": b16, "y_ptr": b16, "N": i32, "K": i32, "stride_wn": i32},
        {"BLOCK_N": 32, "BLOCK_K": 128}, 4, 3)
    add("softmax_fp32_b2048", k.softmax_kernel,
        {"out_ptr": "*fp32", "in_ptr": "*fp32", "in_row_stride": i32, "out_row_stride": i32,
         "n_cols": i32}, {"BLOCK_SIZE": 2048}, 4, 1,
        div16=["out_ptr", "in_ptr", "in_row_stride", "out_row_stride"])
    return out


def _portable(ptx, triton_dir):
    """Triton's own sources named triton/...; no machine path may stay."""
    ptx = ptx.replace(f'"{triton_dir.rstrip("/")}/', '"triton/')
    for path in (REPO_ROOT, triton_dir):
        if path in ptx:
            raise RuntimeError(f"machine-specific path {path!r} left in the generated PTX")
    return ptx


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", default=PTX_DIR, help="folder for the PTX (default: ptx/)")
    ap.add_argument("--check", action="store_true", help="assemble each file with ptxas")
    args = ap.parse_args(argv)
    sys.dont_write_bytecode = True
    sys.path.insert(0, HERE)
    cache = tempfile.mkdtemp(prefix="triton-aot-cache-")
    os.environ["TRITON_CACHE_DIR"] = cache
    os.environ.setdefault("TRITON_DEFAULT_FP_FUSION", "1")
    try:
        return compile_all(args)
    finally:
        shutil.rmtree(cache, ignore_errors=True)


def compile_all(args):
    import triton
    from triton.backends.compiler import GPUTarget
    from triton.compiler import ASTSource

    rel_src = os.path.relpath(os.path.join(HERE, "kernels.py"), REPO_ROOT).replace(os.sep, "/")
    triton_dir = os.path.dirname(os.path.abspath(triton.__file__))
    target = GPUTarget("cuda", ARCH, 32)
    os.makedirs(args.out, exist_ok=True)
    table = {}
    import kernels as kmod
    for obj in vars(kmod).values():  # helpers too: .loc/.file and DWARF name kernels.py
        if isinstance(obj, triton.runtime.jit.JITFunction):
            obj.file_name = rel_src
    for stem, fn, sig, constexprs, warps, stages, div16 in variants():
        names = list(sig)
        attrs = {(names.index(n),): [["tt.divisibility", 16]] for n in div16}
        src = ASTSource(fn=fn, signature=sig, constexprs=constexprs, attrs=attrs)
        compiled = triton.compile(src, target=target, options={
            "num_warps": warps, "num_stages": stages, "ptx_version": PTX_VERSION,
            "enable_fp_fusion": True})
        ptx = _portable(compiled.asm["ptx"], triton_dir)
        path = os.path.join(args.out, f"{stem}.ptx")
        with open(path, "w", newline="\n") as f:
            f.write(ptx)
        md = compiled.metadata
        table[stem] = {"ptx": f"ptx/{stem}.ptx", "entry": md.name, "function": fn.__name__,
                       "num_warps": md.num_warps, "num_stages": md.num_stages,
                       "block": md.num_warps * 32, "dynamic_smem": md.shared,
                       "signature": {n: t for n, t in sig.items() if t != "constexpr"},
                       "constexprs": constexprs, "divisible_by_16": div16}
        print(f"{path}: {md.name} warps={md.num_warps} stages={md.num_stages} "
              f"shared={md.shared}")
        if args.check:
            ptxas = os.environ.get("PTXAS", "ptxas")
            with tempfile.TemporaryDirectory() as d:
                subprocess.run([ptxas, f"-arch=sm_{ARCH}a", "-v", path, "-o",
                                os.path.join(d, "k.cubin")], check=True)
    if os.path.abspath(args.out) == PTX_DIR:
        with open(KERNELS_JSON, "w") as f:
            json.dump({"triton": triton.__version__, "arch": f"sm_{ARCH}a",
                       "ptx_version": PTX_VERSION, "kernels": table}, f, indent=1)
            f.write("\n")
    print(f"triton {triton.__version__}: wrote {len(table)} kernels to {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
