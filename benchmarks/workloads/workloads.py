"""The three serving workloads and the fused variants built for each.

Workloads (kernels in kernels.py, compiled into ptx/ by compile.py):

- attention: chunked prefill (FA2-style, causal, 128-row tiles, 8 warps) next
  to decode attention (one query per sequence, 4 warps), 32 heads, d = 128,
  fp16, at three mixes: balanced (a 2048-token chunk over 4096 tokens of KV
  + 16 decodes at 4096), prefill-heavy (4096 + 4 decodes at 4096) and
  decode-heavy (512 over 4096 + 64 decodes at 2048); and with the decode
  split over the KV as serving stacks run it (sglang's two-stage decode:
  stage 1 fused with the prefill, stage 2 timed on the side), balanced
  (2048 over 4096 + 12 decodes at 4096) and prefill-heavy (4096 + 4).
- gemm+reduce (Tacker's case): a tensor-core GEMM (4096^3, fp16, wgmma)
  next to a memory-bound row reduction (65536 rows of 8192 fp16, 1 GiB);
  Triton's matmul, and again with the project's own nvcc wgmma GEMM.
- decode step: small-batch decode kernels that each fill less than one wave
  of an H100 (64 tokens, hidden 4096, Llama-2-7B shapes), fused five and six
  ways: RMSNorm, RoPE, residual add, a GEMV, the sampling softmax over a
  32000-token vocabulary, and (six-way) SwiGLU.

Inputs are gpu-run argument texts: buffers filled on the device from fixed
seeds (random:SEED), so the runs carry no data files and every process sees
the same values. `small=True` shrinks every size (tests; a quick GPU check).

VARIANTS is the table of fused variants: one row per variant, its strategy
and further --hfuse options; `{ratio:KIND}` in the options expands per
workload (below). A row whose options gpu-opt does not know is built, refused
and recorded as such, so rows for options that are still being added can
stand in the table before gpu-opt has them.
"""

import json
import math
import os

HERE = os.path.dirname(os.path.abspath(__file__))
KERNELS_JSON = os.path.join(HERE, "kernels.json")

# name, strategy, further --hfuse options. {ratio:KIND} is a comma list of
# each kernel's blocks per dispatch period:
#   even     1:1:...
#   grids    in proportion to the kernels' grids (they finish together),
#            reduced, each at most 64
#   first2   grids, with the first kernel's share doubled (two kernels only)
#   last2    grids, with the last kernel's share doubled (two kernels only)
VARIANTS = [
    ("thread", "thread", ""),
    ("thread-r128", "thread", "maxnreg=128"),
    ("interleave-even", "interleave", "ratio={ratio:even}"),
    ("interleave-grids", "interleave", "ratio={ratio:grids}"),
    ("interleave-first2", "interleave", "ratio={ratio:first2}"),
    ("interleave-last2", "interleave", "ratio={ratio:last2}"),
    ("dynamic-even", "dynamic", "ratio={ratio:even}"),
    ("dynamic-grids", "dynamic", "ratio={ratio:grids}"),
    ("auto", "auto", ""),
    # The planner's first choice even where it predicts less than a 10% gain.
    ("auto-any", "auto", "min-gain=0"),
]

# Variants of options being added to gpu-opt; add a row per new option.
# {replicas:smallN}: two kernels, the one with fewer threads (the second on a
# tie) copied N times in the fused block. {setmaxnreg:KIND}: per-kernel
# register budgets from each kernel's ptxas count (rounded up to 8, at least
# 24): own = that, fit = all scaled down alike (to multiples of 8) until the
# fused block's budgets (with its replicas) fit one SM's 65536 registers.
EXTRA_VARIANTS = [
    # Thread split with copies of the smaller kernel's block and per-part
    # register budgets (setmaxnreg).
    ("thread-replicas2", "thread", "replicas={replicas:small2}"),
    ("thread-replicas3", "thread", "replicas={replicas:small3}"),
    ("thread-setmaxnreg", "thread", "setmaxnreg={setmaxnreg:fit}"),
    ("thread-setmaxnreg-own", "thread", "setmaxnreg={setmaxnreg:own}"),
    ("thread-replicas2-setmaxnreg", "thread",
     "replicas={replicas:small2} setmaxnreg={setmaxnreg:fit}"),
    # SM-aware dispatch (POD-Attention's per-SM choice) and multi-block tickets.
    ("sm_aware-even", "sm_aware", "ratio={ratio:even}"),
    ("sm_aware-grids", "sm_aware", "ratio={ratio:grids}"),
    ("dynamic-grids-u4", "dynamic", "ratio={ratio:grids} units=4"),
    ("sm_aware-grids-u4", "sm_aware", "ratio={ratio:grids} units=4"),
    # Launch-agnostic fused kernels: grids read from parameters at launch.
    ("interleave-grids-rt", "interleave", "ratio={ratio:grids} runtime-shapes=true"),
    ("thread-rt", "thread", "runtime-shapes=true"),
]

SM90 = "sm_90a"


def load_kernels():
    with open(KERNELS_JSON) as f:
        return json.load(f)["kernels"]


def buf(ty, count, init):
    return f"buf:{ty}:{count}:{init}"


def s32(v):
    return f"scalar:s32:{v}"


def f32(v):
    return f"scalar:f32:{v}"


# Triton 3.9 kernels take two trailing pointers (global and profile scratch),
# unused by these kernels: null.
SCRATCH = ["null", "null"]


class Seeds:
    """Fixed seeds, one per random buffer, in the order they are asked for."""

    def __init__(self, base):
        self.next = base

    def __call__(self):
        self.next += 1
        return self.next


def kernel(table, label, stem, grid, args, role):
    k = table[stem]
    return {"label": label, "module": f"benchmarks/workloads/{k['ptx']}", "kernel": k["entry"],
            "grid": list(grid) + [1] * (3 - len(grid)), "block": [k["block"], 1, 1],
            "smem": k["dynamic_smem"], "args": args + SCRATCH, "role": role, "stem": stem}


def prefill(table, seeds, q_len, kv_len, heads=32, d=128):
    hd = heads * d
    return kernel(table, "prefill", "prefill_attn_causal_d128", [q_len // 128, heads], [
        buf("f16", q_len * hd, f"random:{seeds()}"), buf("f16", kv_len * hd, f"random:{seeds()}"),
        buf("f16", kv_len * hd, f"random:{seeds()}"), buf("f16", q_len * hd, "out"),
        f32(1 / math.sqrt(d)), s32(hd), s32(d), s32(hd), s32(d), s32(hd), s32(d), s32(hd),
        s32(d), s32(q_len), s32(kv_len)],
        f"causal prefill chunk of {q_len} tokens over {kv_len} tokens of KV, {heads} heads, "
        f"d={d}, fp16")


def decode(table, seeds, batch, kv_len, heads=32, d=128):
    hd = heads * d
    return kernel(table, "decode", "decode_attn_d128", [batch, heads], [
        buf("f16", batch * hd, f"random:{seeds()}"),
        buf("f16", batch * kv_len * hd, f"random:{seeds()}"),
        buf("f16", batch * kv_len * hd, f"random:{seeds()}"), buf("f16", batch * hd, "out"),
        buf("s32", batch, f"fill:{kv_len}"), f32(1 / math.sqrt(d)),
        s32(hd), s32(d), s32(kv_len * hd), s32(hd), s32(d), s32(kv_len * hd), s32(hd), s32(d),
        s32(hd), s32(d)],
        f"decode attention, {batch} sequences x {kv_len} tokens of KV, {heads} heads, d={d}, "
        "fp16")


def decode_splitkv(table, seeds, batch, kv_len, splits=8, heads=32, d=128):
    """sglang's split-KV decode: stage 1 (grid batch x heads x splits, each
    program one KV chunk) and stage 2 (grid batch x heads), which merges
    stage 1's partial outputs and so runs after it: marked "tail" (not fused,
    timed on the side; see build)."""
    hd = heads * d
    mid = [s32(heads * splits * d), s32(splits * d), s32(d)]
    what = (f"{batch} sequences x {kv_len} tokens of KV in {splits} splits, {heads} heads, "
            f"d={d}, fp16")
    stage1 = kernel(table, "stage1", "decode_splitkv_stage1_d128", [batch, heads, splits], [
        buf("f16", batch * hd, f"random:{seeds()}"),
        buf("f16", batch * kv_len * hd, f"random:{seeds()}"),
        buf("f16", batch * kv_len * hd, f"random:{seeds()}"),
        buf("s32", batch, f"fill:{kv_len}"), buf("s32", batch, f"fill:{splits}"),
        f32(1 / math.sqrt(d)), buf("f32", batch * heads * splits * d, "out"),
        buf("f32", batch * heads * splits, "out"),
        s32(hd), s32(d), s32(kv_len * hd), s32(hd), s32(d), s32(kv_len * hd), s32(hd), s32(d),
        *mid], f"split-KV decode attention stage 1 (partial outputs and LSE), {what}")
    stage2 = kernel(table, "stage2", "decode_splitkv_stage2_d128_s8", [batch, heads], [
        buf("f32", batch * heads * splits * d, f"random:{seeds()}"),
        buf("f32", batch * heads * splits, f"random:{seeds()}"), buf("f16", batch * hd, "out"),
        buf("s32", batch, f"fill:{kv_len}"), buf("s32", batch, f"fill:{splits}"),
        *mid, s32(hd), s32(d)],
        f"split-KV decode attention stage 2 (merge of the {splits} splits), {what}")
    stage2["tail"] = True
    return [stage1, stage2]


def attention_splitkv(table, name, q_len, kv_len, batch, dec_len, small):
    seeds = Seeds({"attn-splitkv-balanced": 700, "attn-splitkv-prefill-heavy": 800}[name])
    if small:
        q_len, kv_len, batch, dec_len = 128, 256, 2, 256
    return [prefill(table, seeds, q_len, kv_len), *decode_splitkv(table, seeds, batch, dec_len)]


def attention(table, name, q_len, kv_len, batch, dec_len, small):
    seeds = Seeds({"attn-balanced": 100, "attn-prefill-heavy": 200,
                   "attn-decode-heavy": 300}[name])
    if small:
        q_len, kv_len, batch, dec_len = 128, 256, 2, 256
    return [prefill(table, seeds, q_len, kv_len), decode(table, seeds, batch, dec_len)]


def gemm_reduce(table, small):
    seeds = Seeds(400)
    n, rows, cols = (256, 256, 1024) if small else (4096, 65536, 8192)
    return [
        kernel(table, "gemm", "matmul_fp16_128x128x64_w8_s3", [(n // 128) ** 2], [
            buf("f16", n * n, f"random:{seeds()}"), buf("f16", n * n, f"random:{seeds()}"),
            buf("f16", n * n, "out"), s32(n), s32(n), s32(n), s32(n), s32(n), s32(n)],
            f"GEMM {n}x{n}x{n}, fp16 in, fp32 accumulation (tensor cores: wgmma)"),
        kernel(table, "reduce", "row_stats_fp16", [rows], [
            buf("f16", rows * cols, f"random:{seeds()}"), buf("f32", rows, "out"),
            buf("f32", rows, "out"), s32(cols), s32(cols), f32(1e-5)],
            f"row mean and rstd of {rows} x {cols} fp16 ({rows * cols * 2 >> 20} MiB read): "
            "memory-bound"),
    ]


def gemm_wgmma_reduce(table, small):
    """The project's own nvcc warpgroup GEMM (benchmarks/kernels/gemm_wgmma.cu,
    test/corpus/nvcc/gemm_wgmma.ptx) in place of Triton's."""
    seeds = Seeds(450)
    n = 256 if small else 4096
    gemm = {"label": "gemm", "module": "test/corpus/nvcc/gemm_wgmma.ptx",
            "kernel": "gemm_wgmma_f16", "grid": [n // 128, n // 64, 1], "block": [128, 1, 1],
            "smem": 0, "args": [buf("f16", n * n, f"random:{seeds()}"),
                                buf("f16", n * n, f"random:{seeds()}"),
                                buf("f32", n * n, "out"), s32(n), s32(n), s32(n)],
            "role": f"GEMM {n}x{n}x{n}, fp16 in, fp32 out (nvcc, wgmma, 48 KiB static shared)",
            "stem": "gemm_wgmma"}
    return [gemm, gemm_reduce(table, small)[1]]


def decode_step(table, with_swiglu, small):
    seeds = Seeds(600 if with_swiglu else 500)
    t, hidden, heads, d, inter, vocab, max_pos = 64, 4096, 32, 128, 11008, 32000, 4096
    if small:
        t, vocab = 4, 4096
    out = [
        kernel(table, "rmsnorm", "rmsnorm_bf16_4096", [t], [
            buf("bf16", t * hidden, f"random:{seeds()}"), buf("bf16", t * hidden, "out"),
            buf("bf16", hidden, f"random:{seeds()}"), buf("f32", t, "out"), s32(hidden),
            s32(hidden), f32(1e-6)], f"RMSNorm of {t} x {hidden} bf16 ({t} blocks)"),
        kernel(table, "rope", "rope_bf16_32h_d128", [t], [
            buf("bf16", t * heads * d, f"random:{seeds()}"),
            buf("bf16", t * heads * d, f"random:{seeds()}"),
            buf("bf16", t * heads * d, "out"), buf("bf16", t * heads * d, "out"),
            buf("bf16", max_pos * d // 2, f"random:{seeds()}"),
            buf("bf16", max_pos * d // 2, f"random:{seeds()}"),
            buf("s32", t, f"random:{seeds()}:0:{max_pos}"), s32(heads * d), s32(heads * d)],
            f"RoPE of q and k, {t} tokens x {heads} heads x {d} ({t} blocks)"),
    ]
    if with_swiglu:
        out.append(kernel(table, "swiglu", "swiglu_bf16_b16384", [t], [
            buf("bf16", t * inter, f"random:{seeds()}"),
            buf("bf16", t * inter, f"random:{seeds()}"),
            buf("bf16", t * inter, "out"), s32(inter), s32(inter)],
            f"SwiGLU of {t} x {inter} bf16 ({t} blocks of 512 threads)"))
    n = t * hidden
    out += [
        kernel(table, "add", "add_bf16_b1024", [n // 1024], [
            buf("bf16", n, f"random:{seeds()}"), buf("bf16", n, f"random:{seeds()}"),
            buf("bf16", n, "out"), s32(n)], f"residual add of {t} x {hidden} bf16 "
            f"({n // 1024} blocks of 128 threads)"),
        kernel(table, "gemv", "gemv_bf16_32x128", [hidden // 32], [
            buf("bf16", hidden * hidden, f"random:{seeds()}"),
            buf("bf16", hidden, f"random:{seeds()}"),
            buf("bf16", hidden, "out"), s32(hidden), s32(hidden), s32(hidden)],
            f"GEMV {hidden} x {hidden} bf16 ({hidden // 32} blocks)"),
        kernel(table, "softmax", "softmax_fp32_b2048", [t], [
            buf("f32", t * vocab, "out"), buf("f32", t * vocab, f"random:{seeds()}:-8:8"),
            s32(vocab), s32(vocab), s32(vocab)],
            f"softmax of {t} rows of {vocab} fp32 logits ({t} blocks)"),
    ]
    return out


# name, group (the brief's item), what it is, builder(table, small).
WORKLOADS = [
    ("attn-balanced", "attention",
     "prefill chunk 2048 over 4096 KV + 16 decodes at 4096 KV",
     lambda t, s: attention(t, "attn-balanced", 2048, 4096, 16, 4096, s)),
    ("attn-prefill-heavy", "attention",
     "prefill chunk 4096 over 4096 KV + 4 decodes at 4096 KV",
     lambda t, s: attention(t, "attn-prefill-heavy", 4096, 4096, 4, 4096, s)),
    ("attn-decode-heavy", "attention",
     "prefill chunk 512 over 4096 KV + 64 decodes at 2048 KV",
     lambda t, s: attention(t, "attn-decode-heavy", 512, 4096, 64, 2048, s)),
    # The decode as serving stacks run it: split KV (8 splits, sglang's
    # default), stage 1 fused with the prefill, stage 2 (the merge) after.
    # 12 decodes: stage 1 reads 12 x 4096 x 32 x 128 x 2 x 2 B = 0.81 GB,
    # ~0.27 ms at ~3 TB/s, as long as the prefill alone on an H100.
    ("attn-splitkv-balanced", "attention-splitkv",
     "prefill chunk 2048 over 4096 KV + 12 split-KV decodes (8 splits) at 4096 KV",
     lambda t, s: attention_splitkv(t, "attn-splitkv-balanced", 2048, 4096, 12, 4096, s)),
    ("attn-splitkv-prefill-heavy", "attention-splitkv",
     "prefill chunk 4096 over 4096 KV + 4 split-KV decodes (8 splits) at 4096 KV",
     lambda t, s: attention_splitkv(t, "attn-splitkv-prefill-heavy", 4096, 4096, 4, 4096, s)),
    ("gemm-reduce", "gemm+memory",
     "tensor-core GEMM 4096^3 + memory-bound row reduction (1 GiB)",
     lambda t, s: gemm_reduce(t, s)),
    ("gemm-wgmma-reduce", "gemm+memory",
     "the project's nvcc wgmma GEMM 4096^3 + the same row reduction",
     lambda t, s: gemm_wgmma_reduce(t, s)),
    ("decode-step-5", "decode-step",
     "RMSNorm, RoPE, residual add, GEMV, sampling softmax (64 tokens): 5-way",
     lambda t, s: decode_step(t, False, s)),
    ("decode-step-6", "decode-step",
     "the same and SwiGLU: 6-way",
     lambda t, s: decode_step(t, True, s)),
]


def attention_sizes(name, text):
    """A workload NAME=PREFILL:KV:DECODES:DECODE_KV (prepare --attention) as
    a WORKLOADS row: attention at other sizes, e.g. to balance the two
    kernels' times on another GPU."""
    q_len, kv_len, batch, dec_len = (int(x) for x in text.split(":"))
    if q_len % 128 or kv_len % 64 or q_len > kv_len or dec_len % 16 or min(batch, dec_len) < 1:
        raise ValueError(f"{name}={text}: the prefill chunk must be a multiple of 128 and at "
                         "most the KV length, a multiple of 64; the decode KV a multiple of 16")
    return (name, "attention", f"prefill chunk {q_len} over {kv_len} KV + {batch} decodes at "
            f"{dec_len} KV", lambda t, s: attention(t, "attn-balanced", q_len, kv_len, batch,
                                                    dec_len, s))


def build(small=False, only=None, extra=()):
    """[{name, group, description, kernels: [run spec kernel], tail: [...]}];
    extra: more WORKLOADS rows. `kernels` are independent (fused); `tail`
    kernels depend on them (split-KV stage 2), so they run after the kernels
    in every configuration, fused or not: they are left out of every
    configuration's time and timed alone on the side."""
    table = load_kernels()
    out = []
    for name, group, desc, make in list(WORKLOADS) + list(extra):
        if only and not any(o in name for o in only):
            continue
        ks = make(table, small)
        out.append({"name": name, "group": group, "description": desc,
                    "kernels": [k for k in ks if not k.get("tail")],
                    "tail": [k for k in ks if k.get("tail")]})
    return out


def ratio(kind, grids, cap=64):
    """The {ratio:KIND} of VARIANTS for kernels of these grids (block counts),
    as a list, or None where KIND does not apply."""
    n = len(grids)
    if kind == "even":
        return [1] * n
    lo = min(grids)
    base = [max(1, min(cap, round(g / lo))) for g in grids]
    g = math.gcd(*base)
    base = [b // g for b in base]
    if kind == "grids":
        return base
    if kind in ("first2", "last2") and n == 2:
        i = 0 if kind == "first2" else 1
        r = list(base)
        r[i] = min(cap, r[i] * 2)
        g = math.gcd(*r)
        return [x // g for x in r]
    return None


REGISTERS_PER_SM = 65536


def replicas(kind, threads):
    """{replicas:smallN} for kernels of these block sizes, or None."""
    if not kind.startswith("small") or len(threads) != 2:
        return None
    n = int(kind[len("small"):])
    small = 0 if threads[0] < threads[1] else 1
    return [n if i == small else 1 for i in range(2)]


def setmaxnreg(kind, threads, regs, copies=None):
    """{setmaxnreg:own|fit}: each kernel's register budget, or None without
    register counts."""
    if kind not in ("own", "fit") or not regs or None in regs:
        return None
    budget = [max(24, -(-r // 8) * 8) for r in regs]
    width = [t * c for t, c in zip(threads, copies or [1] * len(threads))]
    need = sum(w * b for w, b in zip(width, budget))
    if kind == "fit" and need > REGISTERS_PER_SM:
        scale = REGISTERS_PER_SM / need
        budget = [max(24, int(b * scale) // 8 * 8) for b in budget]
        if sum(w * b for w, b in zip(width, budget)) > REGISTERS_PER_SM:
            return None
    return budget
