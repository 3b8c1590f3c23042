#!/usr/bin/env python3
"""Regenerate the held-out kernel set: PTX for sm_90a from pinned sources.

Two kinds of kernels, none written for this project:

* CUB / Thrust algorithms from the CUDA toolkit's CCCL headers, instantiated
  by the small host functions in cuda/*.cu and compiled with nvcc -ptx.
* Triton kernels from PyPI packages (liger-kernel, sglang) at the versions
  pinned in requirements.txt, compiled ahead of time without a GPU.  The
  packages import torch at module level, so their kernel files are not
  imported: each file is parsed, everything but its @triton.jit functions,
  triton imports and constant assignments is blanked out (line numbers kept),
  and that text is executed.

* Added on 2026-11-28 (pairs-2026-11-28.json): Triton kernels of unsloth (the
  wheel, pinned in requirements-2026-11-28.txt) and mamba-ssm (read from its
  sdist archive in --sdist-dir, SHA-256 pinned there), the same way.

Writes ptx/<kernel>.ptx and kernels.json (what each kernel is, where it comes
from, how it is launched for the problem size stated).  pairs.json is not
written here: the pairs were fixed by hand (see README.md).

Usage (from the repository root):
  python3 -m venv build/heldout-venv
  build/heldout-venv/bin/pip install --no-deps -r benchmarks/heldout/requirements.txt \
      -r benchmarks/heldout/requirements-2026-11-28.txt
  build/heldout-venv/bin/python benchmarks/heldout/generate.py [--only cuda|triton|2026-11-28] [--check]

--check assembles every PTX with ptxas for sm_90a, imports it with
build/bin/gpu-translate --import-ptx and runs build/bin/gpu-opt
--print-kernel-analysis on the result.
"""

import argparse
import ast
import importlib.metadata
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import types

HERE = os.path.dirname(os.path.abspath(__file__))
REPO_ROOT = os.path.dirname(os.path.dirname(HERE))
PTX_DIR = os.path.join(HERE, "ptx")
KERNELS_JSON = os.path.join(HERE, "kernels.json")

ARCH = 90
PTX_VERSION = 88  # PTX ISA 8.8 for the Triton kernels, as benchmarks/triton does
NVCC_FLAGS = ["-std=c++17", "-arch=sm_90a", "-O3", "-ptx"]
H100_SMS = 132  # H100 SXM5: the SM count in the occupancy-dependent grids below

# ---------------------------------------------------------------------------
# CUB / Thrust.  Launch shapes come from CCCL 3.0.1's sm_90 policies (printed
# by a host program from cub::detail::*::policy_hub<...>::Policy900/600) and
# its dispatch code; where the grid depends on occupancy, the occupancy
# follows from ptxas's register and shared-memory counts (noted per kernel).
# On a GPU, compiling cuda/*.cu with -DCUB_DEBUG_LOG and running the host
# function prints every launch CUB makes, which checks these numbers.
# ---------------------------------------------------------------------------
N24 = 1 << 24
N22 = 1 << 22

CUDA_KERNELS = [
    {
        "id": "cub_reduce_kernel",
        "source": "cuda/cub_reduce_sum.cu",
        "entry_contains": "DeviceReduceKernel",
        "function": "cub::DeviceReduce::Sum<const float*, float*> (first pass: DeviceReduceKernel)",
        "problem": f"sum of {N24} floats (64 MiB)",
        "grid": [4096, 1, 1],
        "block": [256, 1, 1],
        "dynamic_smem": 0,
        "launch_rule": "policy 256 threads x 16 items = 4096-item tiles; grid = min(tiles, occupancy * SMs * 5) "
                       "= min(4096, 8 * 132 * 5) (32 registers: 8 blocks/SM)",
        "preceded_by": [],
        "followed_by": "DeviceReduceSingleTileKernel<<<1, 256>>> over the 4096 partial sums",
    },
    {
        "id": "cub_reduce_kernel_small",
        "source": "cuda/cub_reduce_sum.cu",
        "entry_contains": "DeviceReduceKernel",
        "function": "cub::DeviceReduce::Sum<const float*, float*> (first pass: DeviceReduceKernel)",
        "problem": f"sum of {1 << 19} floats (2 MiB): a decode-size reduction",
        "grid": [128, 1, 1],
        "block": [256, 1, 1],
        "dynamic_smem": 0,
        "launch_rule": "4096-item tiles: 524288 / 4096 = 128 blocks, below one block per SM",
        "preceded_by": [],
        "followed_by": "DeviceReduceSingleTileKernel<<<1, 256>>> over the 128 partial sums",
    },
    {
        "id": "cub_scan_kernel",
        "source": "cuda/cub_scan_inclusive_sum.cu",
        "entry_contains": "DeviceScanKernel",
        "function": "cub::DeviceScan::InclusiveSum<const int*, int*> (DeviceScanKernel, decoupled look-back)",
        "problem": f"inclusive sum of {N24} ints (64 MiB)",
        "grid": [5462, 1, 1],
        "block": [128, 1, 1],
        "dynamic_smem": 0,
        "launch_rule": "sm_90 tuning: 128 threads x 24 items = 3072-item tiles; grid = ceil(16777216 / 3072)",
        "preceded_by": ["DeviceScanInitKernel<<<ceil(5462 / 128) = 43, 128>>> (tile status)"],
        "followed_by": None,
    },
    {
        "id": "cub_histogram_sweep",
        "source": "cuda/cub_histogram_even.cu",
        "entry_contains": "DeviceHistogramSweepKernel",
        "function": "cub::DeviceHistogram::HistogramEven<const unsigned char*, int> (DeviceHistogramSweepKernel, "
                    "256 bins, shared-memory privatized counters)",
        "problem": f"256-bin histogram of {N24} bytes (16 MiB)",
        "grid": [2 * H100_SMS, 1, 1],
        "block": [768, 1, 1],
        "dynamic_smem": 0,
        "launch_rule": "sm_90 tuning: 768 threads x 12 pixels; grid.x = min(occupancy * SMs, tiles) = "
                       "min(2 * 132, ceil(16777216 / 9216) = 1821) (768 threads: 2 blocks/SM); blocks take "
                       "tiles from a queue",
        "preceded_by": ["DeviceHistogramInitKernel<<<1, 256>>> (zeroes the bins, resets the tile queue)"],
        "followed_by": None,
    },
    {
        "id": "cub_radix_histogram",
        "source": "cuda/cub_radix_sort_keys.cu",
        "entry_contains": "DeviceRadixSortHistogramKernel",
        "function": "cub::DeviceRadixSort::SortKeys<unsigned> (onesweep: DeviceRadixSortHistogramKernel, "
                    "digit counts of all 4 passes)",
        "problem": f"sort of {N22} 32-bit keys (16 MiB)",
        "grid": [12 * H100_SMS, 1, 1],
        "block": [128, 1, 1],
        "dynamic_smem": 0,
        "launch_rule": "grid = occupancy * SMs = 12 * 132 (40 registers x 128 threads: 12 blocks/SM)",
        "preceded_by": [],
        "followed_by": "DeviceRadixSortExclusiveSumKernel<<<4, 256>>>, then 4 onesweep passes",
    },
    {
        "id": "cub_onesweep_pass",
        "source": "cuda/cub_radix_sort_keys.cu",
        "entry_contains": "DeviceRadixSortOnesweepKernel",
        "function": "cub::DeviceRadixSort::SortKeys<unsigned> (one DeviceRadixSortOnesweepKernel pass, 8 bits)",
        "problem": f"sort of {N22} 32-bit keys (16 MiB), one of 4 passes",
        "grid": [547, 1, 1],
        "block": [384, 1, 1],
        "dynamic_smem": 0,
        "launch_rule": "sm_90 tuning: 384 threads x 20 items = 7680-key tiles; grid = ceil(4194304 / 7680)",
        "preceded_by": ["DeviceRadixSortHistogramKernel", "DeviceRadixSortExclusiveSumKernel",
                        "a memset of the pass's lookback counters"],
        "followed_by": None,
    },
    {
        "id": "thrust_transform_saxpy",
        "source": "cuda/thrust_transform_saxpy.cu",
        "entry_contains": "transform_kernel",
        "entry_also": "Ei5Saxpy",  # the 32-bit-offset instantiation (n fits in int)
        "function": "thrust::transform(x, x + n, y, out, a * x + y) (cub::detail::transform::transform_kernel, "
                    "prefetch algorithm, int offsets)",
        "problem": f"saxpy over {N24} floats (2 x 64 MiB in, 64 MiB out)",
        "grid": [21846, 1, 1],
        "block": [256, 1, 1],
        "dynamic_smem": 0,
        "launch_rule": "prefetch policy, 256 threads; items/thread = ceil(48 KiB / (8 blocks/SM * 256 * 8 bytes)) "
                       "= 3, clamped to [1, 32]; grid = ceil(16777216 / 768)",
        "preceded_by": [],
        "followed_by": None,
    },
]

# ---------------------------------------------------------------------------
# Triton.  Signatures follow what Triton's launcher specializes at the stated
# shapes: pointers 16-byte aligned, integers divisible by 16 marked so, an
# integer equal to 1 (a unit stride) a constant (0 counts as divisible by
# 16), None arguments constants.
# Grids, warps and stages are those the package's own launch code picks.
# ---------------------------------------------------------------------------
BT = 4096  # tokens: batch 4 x sequence 1024
HIDDEN = 4096  # Llama-style hidden size
INTER = 14336  # Llama-3-8B MLP intermediate size
VOCAB = 128256  # Llama-3 vocabulary
DECODE_ROWS = 64  # a decode batch


def _liger_rms_norm(rows):
    return dict(
        package="liger-kernel", file="liger_kernel/ops/rms_norm.py", fn="_rms_norm_forward_kernel",
        signature={"Y_ptr": "*bf16", "Y_row_stride": "i32", "X_ptr": "*bf16", "X_row_stride": "i32",
                   "W_ptr": "*bf16", "RSTD_ptr": "*fp32", "n_cols": "i32", "eps": "fp32", "offset": "fp32"},
        constexprs={"W_row_stride": 1, "RSTD_row_stride": 1, "casting_mode": 0, "elementwise_affine": True,
                    "BLOCK_SIZE": 4096},
        div16=["Y_ptr", "Y_row_stride", "X_ptr", "X_row_stride", "W_ptr", "RSTD_ptr", "n_cols"],
        num_warps=8, num_stages=3, grid=[rows, 1, 1],
        problem=f"RMSNorm forward (LigerRMSNorm, casting mode llama), {rows} x {HIDDEN} bf16",
        launch_rule="rms_norm_forward: BLOCK_SIZE = next_pow2(4096), num_warps 8 (calculate_settings); "
                    "one program per row")


def _liger_swiglu(rows):
    return dict(
        package="liger-kernel", file="liger_kernel/ops/swiglu.py", fn="_swiglu_forward_kernel",
        signature={"a_ptr": "*bf16", "b_ptr": "*bf16", "c_ptr": "*bf16", "stride": "i32", "gate_multiplier": "fp32"},
        constexprs={"n_cols": INTER, "BLOCK_SIZE": 16384},
        div16=["a_ptr", "b_ptr", "c_ptr", "stride"],
        num_warps=16, num_stages=3, grid=[rows, 1, 1],
        problem=f"SwiGLU forward (LigerSiLUMulFunction), {rows} x {INTER} bf16",
        launch_rule="swiglu_forward (non-Blackwell path): BLOCK_SIZE = next_pow2(14336) = 16384, num_warps 16; "
                    "one program per row")


TRITON_KERNELS = [
    dict(id="liger_rms_norm_fwd", **_liger_rms_norm(BT)),
    dict(id="liger_rms_norm_fwd_decode", **_liger_rms_norm(DECODE_ROWS)),
    dict(id="liger_swiglu_fwd", **_liger_swiglu(BT)),
    dict(id="liger_swiglu_fwd_decode", **_liger_swiglu(DECODE_ROWS)),
    dict(
        id="liger_layer_norm_fwd",
        package="liger-kernel", file="liger_kernel/ops/layer_norm.py", fn="_layer_norm_forward_kernel",
        signature={"Y_ptr": "*bf16", "Y_row_stride": "i32", "X_ptr": "*bf16", "X_row_stride": "i32",
                   "W_ptr": "*bf16", "B_ptr": "*bf16", "Mean_ptr": "*fp32", "RSTD_ptr": "*fp32",
                   "n_cols": "i32", "eps": "fp32"},
        constexprs={"W_row_stride": 1, "B_row_stride": 1, "Mean_row_stride": 1, "RSTD_row_stride": 1,
                    "BLOCK_SIZE": 4096},
        div16=["Y_ptr", "Y_row_stride", "X_ptr", "X_row_stride", "W_ptr", "B_ptr", "Mean_ptr", "RSTD_ptr",
               "n_cols"],
        num_warps=8, num_stages=3, grid=[BT, 1, 1],
        problem=f"LayerNorm forward (LigerLayerNorm), {BT} x {HIDDEN} bf16",
        launch_rule="layer_norm_forward: BLOCK_SIZE 4096, num_warps 8; one program per row"),
    dict(
        id="liger_rope_fwd",
        package="liger-kernel", file="liger_kernel/ops/rope.py", fn="_triton_rope",
        signature={"q_ptr": "*bf16", "q_row_stride": "i32", "k_ptr": "*bf16", "k_row_stride": "i32",
                   "cos": "*bf16", "cos_row_stride": "i32", "sin": "*bf16", "sin_row_stride": "i32", "sl": "i32"},
        constexprs={"bs": 4, "cos_bs": 1, "n_qh": 32, "n_kh": 8, "hd": 128, "pad_n_qh": 32, "pad_n_kh": 8,
                    "pad_hd": 128, "pad_rd": 128, "rd": 128, "BLOCK_SIZE": 32, "BACKWARD_PASS": False},
        div16=["q_ptr", "q_row_stride", "k_ptr", "k_row_stride", "cos", "cos_row_stride", "sin", "sin_row_stride",
               "sl"],
        num_warps=4, num_stages=3, grid=[BT, 1, 1],
        problem="RoPE forward (liger_rotary_pos_emb) on q, k: batch 4, sequence 1024, 32 query / 8 KV heads, "
                "head dim 128, bf16",
        launch_rule="rope_forward: one program per token (batch x sequence); default num_warps 4"),
    dict(
        id="liger_rope_fwd_decode",
        package="liger-kernel", file="liger_kernel/ops/rope.py", fn="_triton_rope",
        signature={"q_ptr": "*bf16", "q_row_stride": "i32", "k_ptr": "*bf16", "k_row_stride": "i32",
                   "cos": "*bf16", "cos_row_stride": "i32", "sin": "*bf16", "sin_row_stride": "i32"},
        constexprs={"sl": 1, "bs": DECODE_ROWS, "cos_bs": DECODE_ROWS, "n_qh": 32, "n_kh": 8, "hd": 128,
                    "pad_n_qh": 32, "pad_n_kh": 8, "pad_hd": 128, "pad_rd": 128, "rd": 128, "BLOCK_SIZE": 32,
                    "BACKWARD_PASS": False},
        div16=["q_ptr", "q_row_stride", "k_ptr", "k_row_stride", "cos", "cos_row_stride", "sin", "sin_row_stride"],
        num_warps=4, num_stages=3, grid=[DECODE_ROWS, 1, 1],
        problem=f"RoPE forward at decode: batch {DECODE_ROWS}, one token each, 32 query / 8 KV heads, head dim "
                "128, per-sequence cos/sin, bf16",
        launch_rule="rope_forward: one program per token; seq_len 1 is specialized as a constant like any 1"),
    dict(
        id="liger_cross_entropy_fwd",
        package="liger-kernel", file="liger_kernel/ops/cross_entropy.py", fn="liger_cross_entropy_kernel",
        signature={"X_ptr": "*bf16", "X_stride": "i32", "Y_ptr": "*i64", "loss_ptr": "*bf16",
                   "n_cols": "i32", "n_non_ignore": "i32", "sum_non_ignore_weight": "i32", "weight_sum": "fp32",
                   "ignore_index": "i32", "token_accuracy_stride": "i32", "predicted_tokens_stride": "i32"},
        constexprs={"Y_stride": 1, "weight_ptr": None, "z_loss_ptr": None, "loss_stride": 1,
                    "token_accuracy_ptr": None, "predicted_tokens_ptr": None,
                    "lse_square_scale": 0.0, "label_smoothing": 0.0, "reduction": "mean", "softcap": None,
                    "RETURN_Z_LOSS": False, "RETURN_TOKEN_ACCURACY": False, "RETURN_PREDICTED_TOKENS": False,
                    "BLOCK_SIZE": 32768, "HAS_WEIGHT": False, "HAS_SOFTCAPPING": False, "HAS_GRADIENTS": True},
        div16=["X_ptr", "X_stride", "Y_ptr", "loss_ptr", "n_cols", "n_non_ignore", "sum_non_ignore_weight",
               "token_accuracy_stride", "predicted_tokens_stride"],
        num_warps=32, num_stages=3, grid=[1024, 1, 1],
        problem=f"cross-entropy forward with in-place gradient (LigerCrossEntropyLoss, mean), 1024 tokens x "
                f"{VOCAB} vocabulary, bf16 logits, no ignored tokens",
        launch_rule="cross_entropy_forward: BLOCK_SIZE = min(32768, next_pow2(V)), num_warps 32 (not "
                    "Blackwell); one program per token, looping over the vocabulary"),
    dict(
        id="sglang_prefill_attention",
        package="sglang", file="sglang/kernels/ops/attention/prefill_attention.py", fn="_fwd_kernel",
        signature={"Q": "*bf16", "K": "*bf16", "V": "*bf16", "sm_scale": "fp32", "B_Start_Loc": "*i32",
                   "B_Seqlen": "*i32", "Out": "*bf16", "stride_qbs": "i32", "stride_qh": "i32",
                   "stride_kbs": "i32", "stride_kh": "i32", "stride_vbs": "i32", "stride_vh": "i32",
                   "stride_obs": "i32", "stride_oh": "i32"},
        constexprs={"kv_group_num": 1, "BLOCK_M": 128, "BLOCK_DMODEL": 128, "BLOCK_N": 128, "IS_CAUSAL": True,
                    "Lk": 128},
        div16=["Q", "K", "V", "B_Start_Loc", "B_Seqlen", "Out", "stride_qbs", "stride_qh", "stride_kbs",
               "stride_kh", "stride_vbs", "stride_vh", "stride_obs", "stride_oh"],
        num_warps=8, num_stages=1, grid=[1, 32, 16],
        problem="causal prefill attention (context_attention_fwd): 1 sequence of 2048 tokens, 32 heads, "
                "head dim 128, bf16",
        launch_rule="context_attention_fwd: BLOCK 128 (capability > 8), num_warps 8 (Lk > 64), num_stages 1; "
                    "grid (batch, heads, ceil(2048 / 128))"),
    dict(
        id="sglang_decode_attention_stage1",
        package="sglang", file="sglang/kernels/ops/attention/decode_attention.py", fn="_fwd_kernel_stage1",
        signature={"Q": "*bf16", "K_Buffer": "*bf16", "V_Buffer": "*bf16", "sm_scale_withk": "fp32",
                   "kv_indptr": "*i32", "kv_indices": "*i64", "Att_Out": "*fp32", "Att_Lse": "*fp32",
                   "num_kv_splits": "*i32", "stride_qbs": "i32", "stride_qh": "i32", "stride_buf_kbs": "i32",
                   "stride_buf_kh": "i32", "stride_buf_vbs": "i32", "stride_buf_vh": "i32",
                   "stride_buf_kpage": "i32", "stride_buf_ktok": "i32", "stride_buf_vpage": "i32",
                   "stride_buf_vtok": "i32", "stride_mid_ob": "i32", "stride_mid_oh": "i32",
                   "stride_mid_os": "i32", "aux0_stride_t": "i32", "aux0_stride_h": "i32", "aux0_len": "i32"},
        constexprs={"kv_group_num": 1, "BLOCK_DMODEL": 128, "BLOCK_DV": 128, "BLOCK_N": 64, "MIN_BLOCK_KV": 32,
                    "logit_cap": 0.0, "Lk": 128, "Lv": 128, "xai_temperature_len": -1, "PAGE_SIZE": 1,
                    "SCORE_MOD": None, "Aux0": None, "uneven_batch": None, "ROTATE_BATCH": False},
        div16=["Q", "K_Buffer", "V_Buffer", "kv_indptr", "kv_indices", "Att_Out", "Att_Lse", "num_kv_splits",
               "stride_qbs", "stride_qh", "stride_buf_kbs", "stride_buf_kh", "stride_buf_vbs", "stride_buf_vh",
               "stride_buf_kpage", "stride_buf_ktok", "stride_buf_vpage", "stride_buf_vtok", "stride_mid_ob",
               "stride_mid_oh", "stride_mid_os", "aux0_stride_t", "aux0_stride_h", "aux0_len"],
        num_warps=4, num_stages=2, grid=[16, 32, 8],
        problem="decode attention, stage 1 (split-KV): 16 sequences x 4096 cached tokens, 32 heads (MHA), "
                "head dim 128, page size 1, bf16 KV cache, 8 KV splits",
        launch_rule="_decode_att_m_fwd: BLOCK 64, num_warps 4 (kv_group_num 1), num_stages 2; grid (batch, "
                    "heads, max_kv_splits = 8, the server's default)",
        followed_by="_fwd_kernel_stage2 (merges the 8 splits; not in the set)"),
]

# ---------------------------------------------------------------------------
# Added on 2026-11-28 for pairs-2026-11-28.json (README.md, "The 2026-11-28
# addition"): Triton kernels from two more PyPI packages, pinned in
# requirements-2026-11-28.txt.
#
# * unsloth: the wheel, installed with --no-deps; its kernel files are read.
# * mamba-ssm: the sdist (its setup.py needs torch and nvcc, so it neither
#   installs nor prepares metadata here); the kernel files are read from the
#   archive, whose SHA-256 is pinned, in --sdist-dir.
#
# Shapes: unsloth's MLP gates at Llama-3-8B (SwiGLU) and Gemma-2-9B (GeGLU,
# exact GELU) sizes; mamba-ssm's Mamba2 decode step and its gated RMSNorm at
# Mamba2-2.7B sizes (d_model 2560, d_ssm 5120, headdim 64 -> 80 heads,
# d_state 128, ngroups 1, bf16 weights; in_proj width 2 * 5120 + 2 * 128 + 80
# = 10576).  Strides are those of the tensors the packages' modules pass.
# ---------------------------------------------------------------------------
ADDED_2026_11_28 = "2026-11-28"
GATE_ROWS_DECODE = 8  # a small decode batch for the GeGLU gate: 8 x 14336 / 1024 = 112 programs
MAMBA_BATCH = 64  # decode batch
MAMBA_TOKENS = 4096  # prefill tokens (batch 4 x sequence 1024)
MAMBA_HEADS, MAMBA_HEADDIM, MAMBA_DSTATE, MAMBA_DSSM = 80, 64, 128, 5120
MAMBA_CONV_DIM = MAMBA_DSSM + 2 * MAMBA_DSTATE  # xBC: x, B, C
MAMBA_IN_PROJ = 2 * MAMBA_DSSM + 2 * MAMBA_DSTATE + MAMBA_HEADS  # zxbcdt: z, xBC, dt


def _unsloth_gate(kid, fn, file, rows, what):
    n = rows * INTER
    return dict(
        id=kid, added=ADDED_2026_11_28,
        package="unsloth", file=file, fn=fn,
        signature={"e": "*bf16", "g": "*bf16", "h": "*bf16", "n_elements": "i32"},
        constexprs={"BLOCK_SIZE": 1024, "LONG_INDEXING": 0},
        div16=["e", "g", "h", "n_elements"],
        num_warps=4, num_stages=3, grid=[-(-n // 1024), 1, 1],
        problem=f"{what}, {rows} x {INTER} bf16 ({n} elements)",
        launch_rule=f"{fn.lstrip('_')} launcher: BLOCK_SIZE 1024 (module constant), LONG_INDEXING 0 "
                    f"(n <= 2^31 - 4096), Triton's default 4 warps and 3 stages; grid = ceil({n} / 1024)")


def _mamba_rmsnorm_gated(kid, rows, what):
    return dict(
        id=kid, added=ADDED_2026_11_28,
        package="mamba-ssm", file="mamba_ssm/ops/triton/layernorm_gated.py", fn="_layer_norm_fwd_1pass_kernel",
        signature={"X": "*bf16", "Y": "*bf16", "W": "*bf16", "Z": "*bf16", "Rstd": "*fp32",
                   "stride_x_row": "i32", "stride_y_row": "i32", "stride_z_row": "i32", "M": "i32", "N": "i32",
                   "eps": "fp32"},
        constexprs={"B": None, "Mean": None, "BLOCK_N": 8192, "HAS_BIAS": False, "HAS_Z": True,
                    "NORM_BEFORE_GATE": False, "IS_RMS_NORM": True},
        div16=["X", "Y", "W", "Z", "Rstd", "stride_x_row", "stride_y_row", "stride_z_row", "M", "N"],
        num_warps=8, num_stages=3, grid=[rows, 1, 1],
        problem=f"Mamba2's gated RMSNorm (RMSNormGated, norm(x * silu(z)), group 5120 = d_ssm, ngroups 1) "
                f"{what}: {rows} x {MAMBA_DSSM} bf16, z a slice of in_proj's output (row stride "
                f"{MAMBA_IN_PROJ})",
        launch_rule="_layer_norm_fwd: BLOCK_N = next_pow2(5120) = 8192, num_warps = min(max(8192 // 256, 1), 8) "
                    "= 8, Triton's default 3 stages; grid (M, ngroups) = "
                    f"({rows}, 1); heuristics: HAS_BIAS False, HAS_Z True")


TRITON_KERNELS_2026_11_28 = [
    _unsloth_gate("unsloth_swiglu_fwd", "_fg_kernel", "unsloth/kernels/swiglu.py", BT,
                  "SwiGLU forward (swiglu_fg_kernel: silu(e) * g) at Llama-3-8B's MLP width"),
    _unsloth_gate("unsloth_geglu_fwd_decode", "_exact_forward_kernel", "unsloth/kernels/geglu.py",
                  GATE_ROWS_DECODE, "exact GeGLU forward (geglu_exact_forward_kernel: gelu_erf(e) * g) at "
                  "Gemma-2-9B's MLP width, decode of 8 sequences"),
    dict(
        id="mamba2_selective_state_update", added=ADDED_2026_11_28,
        package="mamba-ssm", file="mamba_ssm/ops/triton/selective_state_update.py",
        fn="_selective_scan_update_kernel",
        helpers={"softplus": "mamba_ssm/ops/triton/softplus.py"},
        signature={"state_ptr": "*bf16", "x_ptr": "*bf16", "dt_ptr": "*bf16", "dt_bias_ptr": "*bf16",
                   "A_ptr": "*fp32", "B_ptr": "*bf16", "C_ptr": "*bf16", "D_ptr": "*fp32", "out_ptr": "*bf16",
                   "batch": "i32", "nheads": "i32", "dim": "i32", "dstate": "i32", "nheads_ngroups_ratio": "i32",
                   "stride_state_batch": "i32", "stride_state_head": "i32", "stride_state_dim": "i32",
                   "stride_x_batch": "i32", "stride_x_head": "i32",
                   "stride_dt_batch": "i32", "stride_dt_dim": "i32",
                   "stride_dt_bias_dim": "i32",
                   "stride_A_dim": "i32", "stride_A_dstate": "i32",
                   "stride_B_batch": "i32", "stride_B_group": "i32",
                   "stride_C_batch": "i32", "stride_C_group": "i32",
                   "stride_D_dim": "i32",
                   "stride_z_batch": "i32", "stride_z_head": "i32", "stride_z_dim": "i32",
                   "stride_out_batch": "i32", "stride_out_head": "i32"},
        # Unit strides (1) are constants, as Triton specializes them; z and
        # state_batch_indices are None (Mamba2 with rmsnorm=True passes no z).
        constexprs={"z_ptr": None, "state_batch_indices_ptr": None,
                    "stride_state_dstate": 1, "stride_x_dim": 1, "stride_dt_head": 1,
                    "stride_dt_bias_head": 1, "stride_A_head": 1, "stride_B_dstate": 1, "stride_C_dstate": 1,
                    "stride_D_head": 1, "stride_out_dim": 1,
                    "DT_SOFTPLUS": True, "TIE_HDIM": True, "BLOCK_SIZE_M": 4, "HAS_DT_BIAS": True,
                    "HAS_D": True, "HAS_Z": False, "HAS_STATE_BATCH_INDICES": False, "BLOCK_SIZE_DSTATE": 128},
        div16=["state_ptr", "x_ptr", "dt_ptr", "dt_bias_ptr", "A_ptr", "B_ptr", "C_ptr", "D_ptr", "out_ptr",
               "batch", "nheads", "dim", "dstate", "nheads_ngroups_ratio",
               "stride_state_batch", "stride_state_head", "stride_state_dim", "stride_x_batch", "stride_x_head",
               "stride_dt_batch", "stride_dt_dim", "stride_dt_bias_dim", "stride_A_dim", "stride_A_dstate",
               "stride_B_batch", "stride_B_group", "stride_C_batch", "stride_C_group", "stride_D_dim",
               "stride_z_batch", "stride_z_head", "stride_z_dim", "stride_out_batch", "stride_out_head"],
        num_warps=4, num_stages=3, grid=[MAMBA_HEADDIM // 4, MAMBA_BATCH, MAMBA_HEADS],
        problem=f"Mamba2 decode step, selective_state_update: {MAMBA_BATCH} sequences x {MAMBA_HEADS} heads x "
                f"headdim {MAMBA_HEADDIM} x d_state {MAMBA_DSTATE}, bf16 SSM state updated in place "
                f"({MAMBA_BATCH * MAMBA_HEADS * MAMBA_HEADDIM * MAMBA_DSTATE * 2 >> 20} MiB), A/dt/dt_bias/D "
                "repeated over headdim (stride 0: TIE_HDIM), dt_softplus, no z (rmsnorm follows)",
        launch_rule="selective_state_update: BLOCK_SIZE_M 4, num_warps 4 (d_state 128: the hand-tuned table), "
                    "Triton's default 3 stages; grid (ceil(64 / 4), batch, nheads) = (16, 64, 80); x, B, C "
                    f"slices of xBC (row stride {MAMBA_CONV_DIM}), dt a slice of in_proj's output (row stride "
                    f"{MAMBA_IN_PROJ})",
        followed_by="RMSNormGated (_layer_norm_fwd_1pass_kernel) on the output, gated by z"),
    _mamba_rmsnorm_gated("mamba2_rmsnorm_gated_fwd", MAMBA_TOKENS, "at prefill (4096 tokens)"),
    _mamba_rmsnorm_gated("mamba2_rmsnorm_gated_fwd_decode", MAMBA_BATCH, "at decode (64 sequences, one token each)"),
]

JIT_IMPORT_MODULES = ("triton", "math")


REQUIREMENTS = ["requirements.txt", "requirements-2026-11-28.txt"]
SDIST_PIN = re.compile(r"^#\s*sdist:\s*(\S+)==(\S+)\s+sha256:([0-9a-f]{64})\s*$")


def _pins():
    """{package: version} from the requirements files (the sdists that are
    read, not installed, included)."""
    pins = {}
    for name in REQUIREMENTS:
        with open(os.path.join(HERE, name)) as f:
            for line in f:
                m = SDIST_PIN.match(line.strip())
                if m:
                    pins[m.group(1)] = m.group(2)
                    continue
                line = line.split("#", 1)[0].strip()
                if line:
                    pkg, version = line.split("==")
                    pins[pkg.strip()] = version.strip()
    return pins


def _sdist_pins():
    """{package: (version, sha256)} of the sdists read from their archives."""
    out = {}
    for name in REQUIREMENTS:
        with open(os.path.join(HERE, name)) as f:
            for line in f:
                m = SDIST_PIN.match(line.strip())
                if m:
                    out[m.group(1)] = (m.group(2), m.group(3))
    return out


def _find_entry(ptx, contains, also=None):
    names = re.findall(r"^\.(?:visible|weak) \.entry (\S+?)\(", ptx, flags=re.MULTILINE)
    hits = [n for n in names if contains in n and (also is None or also in n)]
    if len(hits) != 1:
        raise RuntimeError(f"{contains!r}: {len(hits)} matching entries in {names}")
    return hits[0]


def generate_cuda(records):
    nvcc = os.environ.get("NVCC", "nvcc")
    version = subprocess.run([nvcc, "--version"], capture_output=True, text=True, check=True).stdout
    release = re.search(r"release [^\n]*", version).group(0)
    built = {}
    for k in CUDA_KERNELS:
        src = k["source"]
        stem = os.path.splitext(os.path.basename(src))[0]
        out = os.path.join(PTX_DIR, stem + ".ptx")
        if src not in built:
            subprocess.run([nvcc, *NVCC_FLAGS, os.path.join(HERE, src), "-o", out], check=True)
            built[src] = True
        with open(out) as f:
            ptx = f.read()
        rec = {key: k[key] for key in ("id", "function", "problem", "grid", "block", "dynamic_smem",
                                         "launch_rule", "preceded_by", "followed_by")}
        rec.update(kind="cuda", source=f"CUDA toolkit CCCL headers ({release}), host code {src}",
                   ptx=f"ptx/{stem}.ptx", entry=_find_entry(ptx, k["entry_contains"], k.get("entry_also")),
                   compile=" ".join(["nvcc", *NVCC_FLAGS]))
        records.append(rec)
        print(f"{out}: {rec['entry'][:80]}...")


def _is_triton_jit(dec):
    node = dec.func if isinstance(dec, ast.Call) else dec
    return isinstance(node, ast.Attribute) and node.attr == "jit" and isinstance(node.value, ast.Name) \
        and node.value.id == "triton"


def _is_constant_value(node):
    if isinstance(node, ast.Constant):
        return True
    if isinstance(node, ast.UnaryOp):
        return _is_constant_value(node.operand)
    # tl.constexpr(<constant>)
    return isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "constexpr" \
        and all(_is_constant_value(a) for a in node.args)


def _jit_only_source(text):
    """The file's text with every top-level statement blanked out except
    @triton.jit functions, imports of triton/math and constant assignments."""
    tree = ast.parse(text)
    lines = text.splitlines(keepends=True)
    keep = [False] * len(lines)
    for node in tree.body:
        if isinstance(node, ast.FunctionDef):
            ok = any(_is_triton_jit(d) for d in node.decorator_list)
            first = min([node.lineno] + [d.lineno for d in node.decorator_list])
        elif isinstance(node, ast.Import):
            ok = all(a.name.split(".")[0] in JIT_IMPORT_MODULES for a in node.names)
            first = node.lineno
        elif isinstance(node, (ast.Assign, ast.AnnAssign)):
            ok = node.value is not None and _is_constant_value(node.value)
            first = node.lineno
        else:
            ok = False
        if ok:
            for i in range(first - 1, node.end_lineno):
                keep[i] = True
    return "".join(l if k else "\n" for l, k in zip(lines, keep))


def _nested_jit_source(text, fn_name):
    """The file's text with every line blanked but its top-level triton
    imports and the first @triton.jit definition of fn_name at any depth
    (mamba-ssm's softplus sits under `if TRITON3:`), dedented; line numbers
    kept."""
    tree = ast.parse(text)
    lines = text.splitlines(keepends=True)
    out = ["\n"] * len(lines)
    for node in tree.body:
        if isinstance(node, ast.Import) and all(a.name.split(".")[0] in JIT_IMPORT_MODULES for a in node.names):
            for i in range(node.lineno - 1, node.end_lineno):
                out[i] = lines[i]
    for node in ast.walk(tree):
        if isinstance(node, ast.FunctionDef) and node.name == fn_name and \
                any(_is_triton_jit(d) for d in node.decorator_list):
            first = min([node.lineno] + [d.lineno for d in node.decorator_list])
            indent = node.col_offset
            for i in range(first - 1, node.end_lineno):
                out[i] = lines[i][indent:] if lines[i].strip() else "\n"
            return "".join(out)
    raise RuntimeError(f"no @triton.jit {fn_name} in the file")


def _exec_module(text, rel, work, inject=None):
    import triton.language.extra.libdevice as libdevice

    copy = os.path.join(work, rel)
    os.makedirs(os.path.dirname(copy), exist_ok=True)
    with open(copy, "w") as f:
        f.write(text)
    name = "heldout_" + re.sub(r"\W", "_", rel)
    mod = types.ModuleType(name)
    mod.__file__ = copy
    # The packages import these from libdevice behind version checks that
    # need torch; provide them directly (a module's own definitions win).
    mod.rsqrt = libdevice.rsqrt
    mod.tanh = libdevice.tanh
    for k, v in (inject or {}).items():
        setattr(mod, k, v)
    sys.modules[name] = mod
    exec(compile(text, copy, "exec"), mod.__dict__)
    return mod


def _load_jit_module(path, rel, work, text=None, helpers=None):
    """Execute the jit-only text of path (or of text, read from an sdist) as a
    module; rel names it in debug info.  helpers: {name: (rel, text)} of
    @triton.jit functions the file imports from another module of its
    package, defined in the module before its own text runs."""
    import triton.language.extra.libdevice as libdevice

    inject = {}
    for hname, (hrel, htext) in (helpers or {}).items():
        hmod = _exec_module(_nested_jit_source(htext, hname), hrel, work)
        hfn = getattr(hmod, hname)
        hfn.file_name = hrel
        inject[hname] = hfn
    return _exec_module(_jit_only_source(text if text is not None else open(path).read()), rel, work, inject)


class _Sdists:
    """Kernel files read from pinned sdist archives in a folder (--sdist-dir)."""

    def __init__(self, folder):
        self.folder = folder
        self.pins = _sdist_pins()
        self.archives = {}

    def _archive(self, package):
        import hashlib
        import tarfile
        if package not in self.archives:
            version, sha = self.pins[package]
            stem = f"{package.replace('-', '_')}-{version}"
            path = os.path.join(self.folder, stem + ".tar.gz")
            if not os.path.exists(path):
                raise RuntimeError(f"{package} {version}: no {path} (README.md says how to get the sdist)")
            with open(path, "rb") as f:
                got = hashlib.sha256(f.read()).hexdigest()
            if got != sha:
                raise RuntimeError(f"{path}: SHA-256 {got}, pinned {sha}")
            self.archives[package] = (tarfile.open(path), stem)
        return self.archives[package]

    def read(self, package, rel):
        tar, stem = self._archive(package)
        return tar.extractfile(f"{stem}/{rel}").read().decode()


def _kernel_source(k, pins, sdists):
    """(version, path or None, text or None) of a kernel's package file."""
    if k["package"] in sdists.pins:
        return pins[k["package"]], None, sdists.read(k["package"], k["file"])
    dist = importlib.metadata.distribution(k["package"])
    if dist.version != pins[k["package"]]:
        raise RuntimeError(f"{k['package']} {dist.version} installed, {pins[k['package']]} pinned")
    return dist.version, str(dist.locate_file(k["file"])), None


def generate_triton(records, pins, kernels=None, sdist_dir=None):
    import triton
    from triton.backends.compiler import GPUTarget
    from triton.compiler import ASTSource
    from triton.runtime.jit import JITFunction

    kernels = TRITON_KERNELS if kernels is None else kernels
    sdists = _Sdists(sdist_dir or os.path.join(REPO_ROOT, "build", "heldout-sdist"))

    if triton.__version__ != pins["triton"]:
        raise RuntimeError(f"triton {triton.__version__} installed, {pins['triton']} pinned")
    triton_dir = os.path.dirname(os.path.abspath(triton.__file__))
    work = tempfile.mkdtemp(prefix="heldout-src-")
    modules, compiled_by_key = {}, {}
    try:
        for k in kernels:
            version, path, text = _kernel_source(k, pins, sdists)
            if k["file"] not in modules:
                helpers = {name: (hrel, sdists.read(k["package"], hrel) if text is not None else
                                  open(str(importlib.metadata.distribution(k["package"]).locate_file(hrel))).read())
                           for name, hrel in k.get("helpers", {}).items()}
                modules[k["file"]] = _load_jit_module(path, k["file"], work, text, helpers)
            key = json.dumps([k[f] for f in ("file", "fn", "signature", "constexprs", "div16", "num_warps",
                                              "num_stages")], sort_keys=True)
            fn = getattr(modules[k["file"]], k["fn"])
            while not isinstance(fn, JITFunction):  # @triton.heuristics: the values are constexprs given
                fn = fn.fn
            fn.file_name = k["file"]  # package-relative path in .loc/.file and DWARF
            sig = dict(k["signature"])
            for name in k["constexprs"]:
                sig[name] = "constexpr"
            missing = [n for n in fn.arg_names if n not in sig]
            if missing:
                raise RuntimeError(f"{k['id']}: no type for {missing}")
            sig = {n: sig[n] for n in fn.arg_names}
            names = list(sig)
            attrs = {(names.index(n),): [["tt.divisibility", 16]] for n in k["div16"]}
            src = ASTSource(fn=fn, signature=sig, constexprs={(names.index(n),): v
                                                              for n, v in k["constexprs"].items()},
                            attrs=attrs)
            options = {"num_warps": k["num_warps"], "num_stages": k["num_stages"], "ptx_version": PTX_VERSION,
                       "enable_fp_fusion": True}
            if key in compiled_by_key:  # the same kernel at another grid: one PTX file
                stem, md = compiled_by_key[key]
            else:
                compiled = triton.compile(src, target=GPUTarget("cuda", ARCH, 32), options=options)
                ptx = compiled.asm["ptx"].replace(f'"{triton_dir}/', '"triton/').replace(f'"{work}/', '"')
                for path in (REPO_ROOT, triton_dir, work):
                    if path in ptx:
                        raise RuntimeError(f"{k['id']}: machine-specific path {path!r} in the PTX")
                stem, md = k["id"], compiled.metadata
                with open(os.path.join(PTX_DIR, stem + ".ptx"), "w", newline="\n") as f:
                    f.write(ptx)
                compiled_by_key[key] = (stem, md)
            rec = {
                "id": k["id"], "kind": "triton",
                "source": f"{k['package']} {version}{' (sdist)' if text is not None else ''}, {k['file']}, "
                          f"compiled with triton {triton.__version__}",
                "function": k["fn"], "problem": k["problem"], "ptx": f"ptx/{stem}.ptx", "entry": md.name,
                "signature": k["signature"], "constexprs": k["constexprs"], "num_warps": md.num_warps,
                "num_stages": md.num_stages, "grid": k["grid"], "block": [md.num_warps * 32, 1, 1],
                "dynamic_smem": md.shared, "launch_rule": k["launch_rule"],
                "preceded_by": k.get("preceded_by", []), "followed_by": k.get("followed_by"),
            }
            if k.get("added"):
                rec["added"] = k["added"]
            records.append(rec)
            print(f"ptx/{stem}.ptx ({k['id']}): {md.name} warps={md.num_warps} stages={md.num_stages} shared={md.shared}")
    finally:
        shutil.rmtree(work, ignore_errors=True)


def _ptxas_info(path):
    """{entry: (registers, static shared bytes)} from ptxas -v for sm_90a."""
    ptxas = os.environ.get("PTXAS", "ptxas")
    with tempfile.TemporaryDirectory() as d:
        r = subprocess.run([ptxas, f"-arch=sm_{ARCH}a", "-v", path, "-o", os.path.join(d, "o.cubin")],
                           capture_output=True, text=True, check=True)
    info, entry = {}, None
    for line in r.stderr.splitlines():
        m = re.search(r"Compiling entry function '([^']+)'", line)
        if m:
            entry = m.group(1)
        m = re.search(r"Used (\d+) registers.*?(?:(\d+) bytes smem)?$", line)
        if m and entry:
            info[entry] = (int(m.group(1)), int(m.group(2) or 0))
    return info


def check(records):
    """ptxas, gpu-translate --import-ptx and gpu-opt --print-kernel-analysis on every PTX."""
    bindir = os.path.join(REPO_ROOT, "build", "bin")
    failures = 0
    with tempfile.TemporaryDirectory() as d:
        for ptx in sorted({r["ptx"] for r in records}):
            path = os.path.join(HERE, ptx)
            mlir = os.path.join(d, os.path.basename(ptx) + ".mlir")
            steps = [[os.path.join(bindir, "gpu-translate"), "--import-ptx", path, "-o", mlir],
                     [os.path.join(bindir, "gpu-opt"), "--print-kernel-analysis", mlir, "-o", os.devnull]]
            for cmd in steps:
                r = subprocess.run(cmd, capture_output=True, text=True)
                if r.returncode != 0:
                    failures += 1
                    print(f"FAIL {' '.join(cmd)}\n{r.stderr[-2000:]}")
                    break
            else:
                print(f"ok   {ptx}: imported, analysed")
    return failures


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--only", choices=["cuda", "triton", ADDED_2026_11_28],
                    help="regenerate one kind, or only the Triton kernels added on 2026-11-28 (kernels.json "
                         "keeps the others)")
    ap.add_argument("--sdist-dir", default=os.path.join(REPO_ROOT, "build", "heldout-sdist"),
                    help="where the pinned sdists (mamba-ssm) lie (default: build/heldout-sdist)")
    ap.add_argument("--check", action="store_true", help="then assemble, import and analyse every PTX")
    args = ap.parse_args(argv)
    sys.dont_write_bytecode = True
    os.makedirs(PTX_DIR, exist_ok=True)
    pins = _pins()

    records = []
    if args.only and os.path.exists(KERNELS_JSON):
        with open(KERNELS_JSON) as f:
            records = [r for r in json.load(f)["kernels"]
                       if (r.get("added") != args.only if args.only == ADDED_2026_11_28 else r["kind"] != args.only)]
    if args.only in (None, "cuda"):
        generate_cuda(records)
    if args.only in (None, "triton", ADDED_2026_11_28):
        cache = tempfile.mkdtemp(prefix="triton-heldout-cache-")
        os.environ["TRITON_CACHE_DIR"] = cache
        os.environ.setdefault("TRITON_DEFAULT_FP_FUSION", "1")
        try:
            kernels = TRITON_KERNELS + TRITON_KERNELS_2026_11_28 if args.only != ADDED_2026_11_28 \
                else TRITON_KERNELS_2026_11_28
            generate_triton(records, pins, kernels, args.sdist_dir)
        finally:
            shutil.rmtree(cache, ignore_errors=True)

    # Registers and static shared memory as ptxas 13 reports them for sm_90a:
    # with the block size they fix the occupancy the launch rules assume.
    infos = {}
    for r in records:
        if r["ptx"] not in infos:
            infos[r["ptx"]] = _ptxas_info(os.path.join(HERE, r["ptx"]))
        r["registers"], r["static_smem"] = infos[r["ptx"]][r["entry"]]
    order = [k["id"] for k in CUDA_KERNELS + TRITON_KERNELS + TRITON_KERNELS_2026_11_28]
    records.sort(key=lambda r: order.index(r["id"]))
    with open(KERNELS_JSON, "w", newline="\n") as f:
        json.dump({"pins": pins, "arch": f"sm_{ARCH}a", "kernels": records}, f, indent=1)
        f.write("\n")
    print(f"wrote {len(records)} kernels to {KERNELS_JSON}")
    if args.check:
        return 1 if check(records) else 0
    return 0


if __name__ == "__main__":
    sys.exit(main())
