"""The workloads' Triton kernels: the textbook forms, no rewrite for fusion.

Each kernel is written as the well-known public kernel it names, at the launch
configuration that kernel's own code would pick on an H100; compile.py
compiles them ahead of time for sm_90a (no GPU needed) into ptx/.

- prefill_attn_kernel: FlashAttention-2 forward (Dao, 2023) as Triton's
  tutorial 06 "Fused Attention" (`_attn_fwd` / `_attn_fwd_inner`) writes it:
  128-row query tiles, 64-key steps, online softmax in exp2, the causal band
  handled by a second, masked loop. Chunked prefill: the chunk's q_len
  queries are the last q_len positions of a kv_len-token sequence.
- decode_attn_kernel: single-query decode attention, one program per
  (sequence, head), the online-softmax loop over the KV cache of sglang's
  `decode_attention.py` `_fwd_kernel_stage1` (and lightllm's token attention)
  with one KV split, so no second reduction kernel: 4 warps, 64-key steps.
- matmul_kernel: Triton's tutorial 03 "Matrix Multiplication" (grouped tile
  order, fp32 accumulation; tl.dot becomes wgmma on sm_90a).
- row_stats_kernel: the statistics pass of Triton's tutorial 05 "Layer
  Normalization" (`_layer_norm_fwd_fused`'s mean and rstd loops), one program
  per row: a memory-bound reduction.
- rmsnorm_kernel, rope_kernel, swiglu_kernel: liger-kernel's
  `_rms_norm_forward_kernel` (Llama casting: fp32 math, the weight applied
  after the cast back, rstd kept), `_triton_rope` (neox halves; cos and sin
  gathered by each token's position, as vLLM's rotary kernels do) and
  `_swiglu_forward_kernel` (one program per row, the row in one block).
- add_kernel: Triton's tutorial 01 "Vector Addition".
- gemv_kernel: the plain Triton GEMV: one program per BLOCK_N output rows,
  a loop over K accumulating w * x in fp32, one tl.sum at the end.
- softmax_kernel: softmax over a vocabulary-sized row, too long for one
  block (tutorial 02's kernel holds the row in registers): an online
  max-and-sum pass (Milakov and Gimelshein, 2018), then the normalised values.

Launch shapes follow each source's own choice on an H100: the attention
prefill and the GEMM at their tutorials' Hopper configurations (8 warps, 3
stages), the decode-step kernels with the warps liger's `calculate_settings`
picks for their block sizes (RMSNorm 4096: 8, SwiGLU 16384: 16), 4 warps
elsewhere (compile.py).
"""

import triton
import triton.language as tl


# --------------------------------------------------------------------------
# Attention
# --------------------------------------------------------------------------


@triton.jit
def _prefill_inner(acc, l_i, m_i, q, k_base, v_base, stride_kn, stride_vn, qk_scale,
                   lo, hi, q_pos, offs_n, offs_d,
                   BLOCK_N: tl.constexpr, MASKED: tl.constexpr):
    for start_n in range(lo, hi, BLOCK_N):
        start_n = tl.multiple_of(start_n, BLOCK_N)
        cols = start_n + offs_n
        k = tl.load(k_base + cols[None, :] * stride_kn + offs_d[:, None])
        qk = tl.dot(q, k)
        if MASKED:
            keep = q_pos[:, None] >= cols[None, :]
            qk = qk * qk_scale + tl.where(keep, 0, -1.0e6)
            m_ij = tl.maximum(m_i, tl.max(qk, 1))
            qk -= m_ij[:, None]
        else:
            m_ij = tl.maximum(m_i, tl.max(qk, 1) * qk_scale)
            qk = qk * qk_scale - m_ij[:, None]
        p = tl.math.exp2(qk)
        l_ij = tl.sum(p, 1)
        alpha = tl.math.exp2(m_i - m_ij)
        l_i = l_i * alpha + l_ij
        acc = acc * alpha[:, None]
        v = tl.load(v_base + cols[:, None] * stride_vn + offs_d[None, :])
        acc = tl.dot(p.to(v.dtype), v, acc)
        m_i = m_ij
    return acc, l_i, m_i


@triton.jit
def prefill_attn_kernel(Q, K, V, Out, sm_scale,
                        stride_qm, stride_qh, stride_kn, stride_kh,
                        stride_vn, stride_vh, stride_om, stride_oh,
                        q_len, kv_len,
                        HEAD_DIM: tl.constexpr, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr,
                        CAUSAL: tl.constexpr):
    """Out[q_len, H, D] = attention of the chunk's queries Q[q_len, H, D] over
    K, V[kv_len, H, D] (token-major, as serving engines pack them). q_len is
    a multiple of BLOCK_M, kv_len of BLOCK_N; grid (q_len / BLOCK_M, H)."""
    start_m = tl.program_id(0)
    off_h = tl.program_id(1)
    prefix = kv_len - q_len
    offs_m = start_m * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_n = tl.arange(0, BLOCK_N)
    offs_d = tl.arange(0, HEAD_DIM)
    q = tl.load(Q + off_h * stride_qh + offs_m[:, None] * stride_qm + offs_d[None, :])
    k_base = K + off_h * stride_kh
    v_base = V + off_h * stride_vh
    m_i = tl.zeros([BLOCK_M], dtype=tl.float32) - float("inf")
    l_i = tl.zeros([BLOCK_M], dtype=tl.float32) + 1.0
    acc = tl.zeros([BLOCK_M, HEAD_DIM], dtype=tl.float32)
    qk_scale = sm_scale * 1.44269504  # 1/ln(2): softmax through exp2
    q_pos = prefix + offs_m
    if CAUSAL:
        # Keys before the tile's first query: no mask; then the diagonal band.
        band = prefix + start_m * BLOCK_M
        acc, l_i, m_i = _prefill_inner(acc, l_i, m_i, q, k_base, v_base, stride_kn, stride_vn,
                                       qk_scale, 0, band, q_pos, offs_n, offs_d,
                                       BLOCK_N, False)
        acc, l_i, m_i = _prefill_inner(acc, l_i, m_i, q, k_base, v_base, stride_kn, stride_vn,
                                       qk_scale, band, band + BLOCK_M, q_pos, offs_n, offs_d,
                                       BLOCK_N, True)
    else:
        acc, l_i, m_i = _prefill_inner(acc, l_i, m_i, q, k_base, v_base, stride_kn, stride_vn,
                                       qk_scale, 0, kv_len, q_pos, offs_n, offs_d,
                                       BLOCK_N, False)
    acc = acc / l_i[:, None]
    tl.store(Out + off_h * stride_oh + offs_m[:, None] * stride_om + offs_d[None, :],
             acc.to(Out.dtype.element_ty))


@triton.jit
def decode_attn_kernel(Q, K, V, Out, seq_lens, sm_scale,
                       stride_qb, stride_qh, stride_kb, stride_kn, stride_kh,
                       stride_vb, stride_vn, stride_vh, stride_ob, stride_oh,
                       HEAD_DIM: tl.constexpr, BLOCK_N: tl.constexpr):
    """Out[B, H, D]: one query Q[B, H, D] per sequence over its cache
    K, V[B, max_len, H, D], seq_lens[b] tokens of it; grid (B, H)."""
    b = tl.program_id(0)
    h = tl.program_id(1)
    seq_len = tl.load(seq_lens + b)
    offs_n = tl.arange(0, BLOCK_N)
    offs_d = tl.arange(0, HEAD_DIM)
    q = tl.load(Q + b * stride_qb + h * stride_qh + offs_d).to(tl.float32)
    k_base = K + b * stride_kb + h * stride_kh
    v_base = V + b * stride_vb + h * stride_vh
    qk_scale = sm_scale * 1.44269504
    m_i = -float("inf")
    l_i = 0.0
    acc = tl.zeros([HEAD_DIM], dtype=tl.float32)
    for start_n in range(0, seq_len, BLOCK_N):
        cols = start_n + offs_n
        valid = cols < seq_len
        k = tl.load(k_base + cols[:, None] * stride_kn + offs_d[None, :],
                    mask=valid[:, None], other=0.0)
        qk = tl.sum(q[None, :] * k.to(tl.float32), 1) * qk_scale
        qk = tl.where(valid, qk, float("-inf"))
        m_ij = tl.maximum(m_i, tl.max(qk, 0))
        p = tl.math.exp2(qk - m_ij)
        alpha = tl.math.exp2(m_i - m_ij)
        v = tl.load(v_base + cols[:, None] * stride_vn + offs_d[None, :],
                    mask=valid[:, None], other=0.0)
        acc = acc * alpha + tl.sum(p[:, None] * v.to(tl.float32), 0)
        l_i = l_i * alpha + tl.sum(p, 0)
        m_i = m_ij
    tl.store(Out + b * stride_ob + h * stride_oh + offs_d, (acc / l_i).to(Out.dtype.element_ty))


# --------------------------------------------------------------------------
# GEMM and a memory-bound reduction
# --------------------------------------------------------------------------


@triton.jit
def matmul_kernel(a_ptr, b_ptr, c_ptr, M, N, K,
                  stride_am, stride_ak, stride_bk, stride_bn, stride_cm, stride_cn,
                  BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr,
                  GROUP_M: tl.constexpr):
    """C = A @ B (fp16 in, fp32 accumulate, fp16 out), grouped tile order."""
    pid = tl.program_id(axis=0)
    num_pid_m = tl.cdiv(M, BLOCK_M)
    num_pid_n = tl.cdiv(N, BLOCK_N)
    num_pid_in_group = GROUP_M * num_pid_n
    group_id = pid // num_pid_in_group
    first_pid_m = group_id * GROUP_M
    group_size_m = min(num_pid_m - first_pid_m, GROUP_M)
    pid_m = first_pid_m + ((pid % num_pid_in_group) % group_size_m)
    pid_n = (pid % num_pid_in_group) // group_size_m
    offs_am = (pid_m * BLOCK_M + tl.arange(0, BLOCK_M)) % M
    offs_bn = (pid_n * BLOCK_N + tl.arange(0, BLOCK_N)) % N
    offs_k = tl.arange(0, BLOCK_K)
    a_ptrs = a_ptr + (offs_am[:, None] * stride_am + offs_k[None, :] * stride_ak)
    b_ptrs = b_ptr + (offs_k[:, None] * stride_bk + offs_bn[None, :] * stride_bn)
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k in range(0, tl.cdiv(K, BLOCK_K)):
        a = tl.load(a_ptrs, mask=offs_k[None, :] < K - k * BLOCK_K, other=0.0)
        b = tl.load(b_ptrs, mask=offs_k[:, None] < K - k * BLOCK_K, other=0.0)
        acc = tl.dot(a, b, acc)
        a_ptrs += BLOCK_K * stride_ak
        b_ptrs += BLOCK_K * stride_bk
    c = acc.to(tl.float16)
    offs_cm = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_cn = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    c_ptrs = c_ptr + stride_cm * offs_cm[:, None] + stride_cn * offs_cn[None, :]
    c_mask = (offs_cm[:, None] < M) & (offs_cn[None, :] < N)
    tl.store(c_ptrs, c, mask=c_mask)


@triton.jit
def row_stats_kernel(x_ptr, mean_ptr, rstd_ptr, stride, N, eps, BLOCK_SIZE: tl.constexpr):
    """mean and 1/sqrt(var + eps) of each row of x (one program per row)."""
    row = tl.program_id(0)
    x_ptr += row * stride
    acc = tl.zeros([BLOCK_SIZE], dtype=tl.float32)
    for off in range(0, N, BLOCK_SIZE):
        cols = off + tl.arange(0, BLOCK_SIZE)
        acc += tl.load(x_ptr + cols, mask=cols < N, other=0.0).to(tl.float32)
    mean = tl.sum(acc, axis=0) / N
    acc = tl.zeros([BLOCK_SIZE], dtype=tl.float32)
    for off in range(0, N, BLOCK_SIZE):
        cols = off + tl.arange(0, BLOCK_SIZE)
        a = tl.load(x_ptr + cols, mask=cols < N, other=0.0).to(tl.float32)
        a = tl.where(cols < N, a - mean, 0.0)
        acc += a * a
    var = tl.sum(acc, axis=0) / N
    tl.store(mean_ptr + row, mean)
    tl.store(rstd_ptr + row, 1.0 / tl.sqrt(var + eps))


# --------------------------------------------------------------------------
# Decode-step kernels (each launched with less than one wave of blocks)
# --------------------------------------------------------------------------


@triton.jit
def rmsnorm_kernel(x_ptr, y_ptr, w_ptr, rstd_ptr, stride, N, eps, BLOCK_SIZE: tl.constexpr):
    """y = x / rms(x) * w per row (Llama casting: fp32 math, w applied after
    the cast back); rstd saved for the backward pass."""
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK_SIZE)
    mask = cols < N
    x = tl.load(x_ptr + row * stride + cols, mask=mask, other=0.0).to(tl.float32)
    rstd = tl.math.rsqrt(tl.sum(x * x, axis=0) / N + eps)
    w = tl.load(w_ptr + cols, mask=mask, other=0.0)
    y = (x * rstd).to(w.dtype) * w
    tl.store(rstd_ptr + row, rstd)
    tl.store(y_ptr + row * stride + cols, y, mask=mask)


@triton.jit
def rope_kernel(q_ptr, k_ptr, q_out_ptr, k_out_ptr, cos_ptr, sin_ptr, pos_ptr, q_stride, k_stride,
                N_QH: tl.constexpr, N_KH: tl.constexpr, HEAD_DIM: tl.constexpr):
    """Rotary embedding of q[T, N_QH, D] and k[T, N_KH, D] (neox halves),
    cos/sin[max_pos, D / 2] gathered by each token's position; one program
    per token. Written out of place (liger rotates in place) so that its
    outputs can be checked against a fused kernel's."""
    t = tl.program_id(0)
    pos = tl.load(pos_ptr + t)
    half: tl.constexpr = HEAD_DIM // 2
    offs = tl.arange(0, half)
    cos = tl.load(cos_ptr + pos * half + offs).to(tl.float32)[None, :]
    sin = tl.load(sin_ptr + pos * half + offs).to(tl.float32)[None, :]
    qo = t * q_stride + tl.arange(0, N_QH)[:, None] * HEAD_DIM + offs[None, :]
    q1 = tl.load(q_ptr + qo).to(tl.float32)
    q2 = tl.load(q_ptr + qo + half).to(tl.float32)
    tl.store(q_out_ptr + qo, (q1 * cos - q2 * sin).to(q_out_ptr.dtype.element_ty))
    tl.store(q_out_ptr + qo + half, (q2 * cos + q1 * sin).to(q_out_ptr.dtype.element_ty))
    ko = t * k_stride + tl.arange(0, N_KH)[:, None] * HEAD_DIM + offs[None, :]
    k1 = tl.load(k_ptr + ko).to(tl.float32)
    k2 = tl.load(k_ptr + ko + half).to(tl.float32)
    tl.store(k_out_ptr + ko, (k1 * cos - k2 * sin).to(k_out_ptr.dtype.element_ty))
    tl.store(k_out_ptr + ko + half, (k2 * cos + k1 * sin).to(k_out_ptr.dtype.element_ty))


@triton.jit
def swiglu_kernel(gate_ptr, up_ptr, out_ptr, stride, n_cols, BLOCK_SIZE: tl.constexpr):
    """out = silu(gate) * up, rows of n_cols; grid (rows, cdiv(n_cols, BLOCK_SIZE))."""
    row = tl.program_id(0)
    cols = tl.program_id(1) * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
    mask = cols < n_cols
    a = tl.load(gate_ptr + row * stride + cols, mask=mask, other=0.0).to(tl.float32)
    b = tl.load(up_ptr + row * stride + cols, mask=mask, other=0.0)
    c = (a * tl.sigmoid(a)).to(b.dtype) * b
    tl.store(out_ptr + row * stride + cols, c, mask=mask)


@triton.jit
def add_kernel(x_ptr, y_ptr, out_ptr, n_elements, BLOCK_SIZE: tl.constexpr):
    pid = tl.program_id(axis=0)
    offsets = pid * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
    mask = offsets < n_elements
    x = tl.load(x_ptr + offsets, mask=mask)
    y = tl.load(y_ptr + offsets, mask=mask)
    tl.store(out_ptr + offsets, x + y, mask=mask)


@triton.jit
def gemv_kernel(w_ptr, x_ptr, y_ptr, N, K, stride_wn, BLOCK_N: tl.constexpr,
                BLOCK_K: tl.constexpr):
    """y[N] = W[N, K] @ x[K], fp32 accumulation; grid cdiv(N, BLOCK_N)."""
    pid = tl.program_id(0)
    rows = pid * BLOCK_N + tl.arange(0, BLOCK_N)
    acc = tl.zeros([BLOCK_N, BLOCK_K], dtype=tl.float32)
    for k in range(0, K, BLOCK_K):
        cols = k + tl.arange(0, BLOCK_K)
        w = tl.load(w_ptr + rows[:, None] * stride_wn + cols[None, :],
                    mask=(rows[:, None] < N) & (cols[None, :] < K), other=0.0)
        x = tl.load(x_ptr + cols, mask=cols < K, other=0.0)
        acc += w.to(tl.float32) * x.to(tl.float32)[None, :]
    y = tl.sum(acc, axis=1)
    tl.store(y_ptr + rows, y.to(y_ptr.dtype.element_ty), mask=rows < N)


@triton.jit
def softmax_kernel(out_ptr, in_ptr, in_row_stride, out_row_stride, n_cols,
                   BLOCK_SIZE: tl.constexpr):
    """Softmax of each row (sampling probabilities over a vocabulary): an
    online max/sum pass, then the normalised values; one program per row."""
    row = tl.program_id(0)
    in_ptr += row * in_row_stride
    out_ptr += row * out_row_stride
    m = tl.full([BLOCK_SIZE], float("-inf"), tl.float32)
    s = tl.zeros([BLOCK_SIZE], dtype=tl.float32)
    for off in range(0, n_cols, BLOCK_SIZE):
        cols = off + tl.arange(0, BLOCK_SIZE)
        x = tl.load(in_ptr + cols, mask=cols < n_cols, other=float("-inf")).to(tl.float32)
        m_new = tl.maximum(m, x)
        s = s * tl.exp(m - m_new) + tl.exp(x - m_new)
        s = tl.where(m_new == float("-inf"), 0.0, s)
        m = m_new
    row_max = tl.max(m, axis=0)
    row_sum = tl.sum(s * tl.exp(m - row_max), axis=0)
    for off in range(0, n_cols, BLOCK_SIZE):
        cols = off + tl.arange(0, BLOCK_SIZE)
        x = tl.load(in_ptr + cols, mask=cols < n_cols, other=float("-inf")).to(tl.float32)
        tl.store(out_ptr + cols, tl.exp(x - row_max) / row_sum, mask=cols < n_cols)

# --------------------------------------------------------------------------
# Split-KV decode attention (kept last: the PTX above stays line-for-line)
# --------------------------------------------------------------------------
#
# The decode attention as serving stacks run it (sglang's
# `decode_attention.py` `_fwd_kernel_stage1` and `_fwd_kernel_stage2`,
# FlashDecoding): each sequence's KV split into num_kv_splits chunks of
# MIN_BLOCK_KV-rounded length, one short program per (sequence, head, chunk)
# writing a partial output and its log-sum-exp, then a small merge kernel per
# (sequence, head). sglang's launch on an H100: 4 warps, 2 stages, BLOCK_N 64,
# MIN_BLOCK_KV 32, at most 8 splits.


@triton.jit
def decode_splitkv_stage1_kernel(Q, K, V, seq_lens, num_kv_splits, sm_scale, Att_Out, Att_Lse,
                                 stride_qb, stride_qh, stride_kb, stride_kn, stride_kh,
                                 stride_vb, stride_vn, stride_vh,
                                 stride_mid_ob, stride_mid_oh, stride_mid_os,
                                 HEAD_DIM: tl.constexpr, BLOCK_N: tl.constexpr,
                                 MIN_BLOCK_KV: tl.constexpr):
    """Split-KV decode attention, stage 1 (sglang's `_fwd_kernel_stage1`,
    FlashDecoding): program (b, h, s) attends query Q[b, h] over the s-th of
    num_kv_splits[b] chunks of its cache K, V[B, max_len, H, D] (seq_lens[b]
    tokens) and writes the chunk's normalised output Att_Out[b, h, s, :] and
    log-sum-exp Att_Lse[b, h, s] (fp32); grid (B, H, MAX_KV_SPLITS)."""
    b = tl.program_id(0)
    h = tl.program_id(1)
    split = tl.program_id(2)
    seq_len = tl.load(seq_lens + b)
    splits = tl.load(num_kv_splits + b)
    offs_d = tl.arange(0, HEAD_DIM)
    per_split = tl.cdiv(tl.cdiv(seq_len, splits), MIN_BLOCK_KV) * MIN_BLOCK_KV
    start = per_split * split
    end = tl.minimum(start + per_split, seq_len)
    e_max = -float("inf")
    e_sum = 0.0
    acc = tl.zeros([HEAD_DIM], dtype=tl.float32)
    if end > start:
        q = tl.load(Q + b * stride_qb + h * stride_qh + offs_d)
        k_base = K + b * stride_kb + h * stride_kh
        v_base = V + b * stride_vb + h * stride_vh
        for start_n in range(start, end, BLOCK_N):
            offs_n = start_n + tl.arange(0, BLOCK_N)
            valid = offs_n < end
            k = tl.load(k_base + offs_n[:, None] * stride_kn + offs_d[None, :],
                        mask=valid[:, None], other=0.0)
            qk = tl.sum(q[None, :] * k, 1)
            qk *= sm_scale
            qk = tl.where(valid, qk, float("-inf"))
            v = tl.load(v_base + offs_n[:, None] * stride_vn + offs_d[None, :],
                        mask=valid[:, None], other=0.0)
            n_e_max = tl.maximum(tl.max(qk, 0), e_max)
            re_scale = tl.exp(e_max - n_e_max)
            p = tl.exp(qk - n_e_max)
            acc *= re_scale
            acc += tl.sum(p[:, None] * v, 0)
            e_sum = e_sum * re_scale + tl.sum(p, 0)
            e_max = n_e_max
        mid = b * stride_mid_ob + h * stride_mid_oh + split * stride_mid_os
        tl.store(Att_Out + mid + offs_d, acc / e_sum)
        tl.store(Att_Lse + mid // HEAD_DIM, e_max + tl.log(e_sum))


@triton.jit
def decode_splitkv_stage2_kernel(Mid_O, Mid_Lse, O, seq_lens, num_kv_splits,
                                 stride_mid_ob, stride_mid_oh, stride_mid_os, stride_ob, stride_oh,
                                 HEAD_DIM: tl.constexpr, MAX_KV_SPLITS: tl.constexpr,
                                 MIN_BLOCK_KV: tl.constexpr):
    """Split-KV decode attention, stage 2 (sglang's `_fwd_kernel_stage2`):
    program (b, h) merges the chunks' outputs by their log-sum-exp into
    O[b, h, :]; grid (B, H)."""
    b = tl.program_id(0)
    h = tl.program_id(1)
    seq_len = tl.load(seq_lens + b)
    splits = tl.load(num_kv_splits + b)
    offs_d = tl.arange(0, HEAD_DIM)
    e_sum = 0.0
    e_max = -float("inf")
    acc = tl.zeros([HEAD_DIM], dtype=tl.float32)
    offs_v = b * stride_mid_ob + h * stride_mid_oh + offs_d
    offs_lse = (b * stride_mid_ob + h * stride_mid_oh) // HEAD_DIM
    per_split = tl.cdiv(tl.cdiv(seq_len, splits), MIN_BLOCK_KV) * MIN_BLOCK_KV
    for split in range(0, MAX_KV_SPLITS):
        start = per_split * split
        end = tl.minimum(start + per_split, seq_len)
        if end > start:
            tv = tl.load(Mid_O + offs_v + split * stride_mid_os)
            tlogic = tl.load(Mid_Lse + offs_lse + split * stride_mid_os // HEAD_DIM)
            n_e_max = tl.maximum(tlogic, e_max)
            old_scale = tl.exp(e_max - n_e_max)
            acc *= old_scale
            exp_logic = tl.exp(tlogic - n_e_max)
            acc += exp_logic * tv
            e_sum = e_sum * old_scale + exp_logic
            e_max = n_e_max
    tl.store(O + b * stride_ob + h * stride_oh + offs_d, (acc / e_sum).to(O.dtype.element_ty))
