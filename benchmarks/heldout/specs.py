"""gpu-run arguments for every kernel of the held-out set (kernels.json).

Each kernel gets the arguments its library's own launch code would pass at
the stated problem size (kernels.json "problem"), with inputs from seeded
random numbers, so that a run's outputs are the same on every machine and
every process. `kernel_spec(kernel_id, data_dir)` returns the gpu-run run
spec entry (docs: `gpu-run --help`, "Run spec") and `KERNELS[id]` says which
arguments the kernel writes ("check": compared bit for bit between the
kernels apart and a fused kernel) and what had to be set up in place of the
launches that come before it in the library ("setup").

CUB passes some structures by value whose first member is a pointer
(ScanTileState, GridQueue, cuda::std::array<T *, 1>, Thrust's kernel_arg):
gpu-run puts a buffer's address in the first 8 bytes of such an aggregate
parameter. Plain structures (GridEvenShare, ScaleTransform) are `bytes:HEX`,
laid out as the CCCL 3.0.1 headers lay them out. Triton kernels take two
trailing scratch pointers (global and profile scratch), null here: none of
these kernels uses scratch memory.

Where a kernel needs what an earlier launch leaves (CUB's scan tile status,
the radix sort's digit offsets, sglang's KV index pointers), `write_data`
writes those contents to files under `data_dir`, computed here from the same
seeded inputs gpu-run generates (its splitmix64 stream), and the spec loads
them with `file:`. Relative paths are relative to the current folder, as
gpu-run reads them.
"""

import os
import struct

HERE = os.path.dirname(os.path.abspath(__file__))

SCAN_ITEMS = 1 << 24
SCAN_TILE = 128 * 24
SCAN_TILES = -(-SCAN_ITEMS // SCAN_TILE)  # 5462
SCAN_PADDING = 32  # ScanTileState's TILE_STATUS_PADDING (a warp)
SCAN_TILE_INVALID = 99  # ScanTileStatus: OOB 0, INVALID 99, PARTIAL, INCLUSIVE

SORT_ITEMS = 1 << 22
SORT_TILE = 384 * 20
SORT_BLOCKS = -(-SORT_ITEMS // SORT_TILE)  # 547
SORT_KEYS_SEED = 31

DECODE_BATCH, DECODE_TOKENS, HEADS, HEAD_DIM = 16, 4096, 32, 128

# Mamba2-2.7B (pairs-2026-11-28.json): heads, head dim, state size, d_ssm; the
# row widths of xBC (x, B, C) and of in_proj's output (z, xBC, dt).
MAMBA_BATCH, MAMBA_TOKENS = 64, 4096
MAMBA_HEADS, MAMBA_HEADDIM, MAMBA_DSTATE, MAMBA_DSSM = 80, 64, 128, 5120
MAMBA_CONV_DIM = MAMBA_DSSM + 2 * MAMBA_DSTATE  # 5376
MAMBA_IN_PROJ = 2 * MAMBA_DSSM + 2 * MAMBA_DSTATE + MAMBA_HEADS  # 10576

NULL2 = ["null", "null"]  # Triton's global and profile scratch pointers


def u32s(*values):
    """bytes:HEX of little-endian 32-bit integers (signed or not)."""
    return "bytes:" + b"".join(struct.pack("<I", v & 0xFFFFFFFF) for v in values).hex()


def f32_hex(x):
    return "bytes:" + struct.pack("<f", x).hex()


def even_share(num_items, max_grid, tile_items):
    """cub::GridEvenShare<unsigned>::DispatchInit, as the 10 32-bit fields
    (total_tiles, big_shares, big_share_items, normal_share_items,
    normal_base_offset, num_items, grid_size, block_offset, block_end,
    block_stride) of its byte image."""
    total_tiles = -(-num_items // tile_items)
    grid_size = min(total_tiles, max_grid)
    avg = total_tiles // grid_size
    big_shares = total_tiles - avg * grid_size
    normal_share_items = avg * tile_items
    return u32s(total_tiles, big_shares, normal_share_items + tile_items, normal_share_items,
                big_shares * tile_items, num_items, grid_size, num_items, num_items, 0)


def splitmix_u64(seed, count):
    """gpu-run's random:SEED stream (ArgSpec.cpp randomAt): element i is
    splitmix64 of seed + (i + 1) * golden gamma; an integer element is its low
    bytes."""
    import numpy as np
    with np.errstate(over="ignore"):
        i = np.arange(1, count + 1, dtype=np.uint64)
        z = np.uint64(seed) + i * np.uint64(0x9E3779B97F4A7C15)
        z = (z ^ (z >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
        z = (z ^ (z >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
        return z ^ (z >> np.uint64(31))


def data_files(data_dir):
    return {"scan_tile_state": os.path.join(data_dir, "scan_tile_state.u32"),
            "sort_bins": os.path.join(data_dir, "onesweep_bins_pass0.u32"),
            "kv_indptr": os.path.join(data_dir, "decode_kv_indptr.s32")}


def write_data(data_dir):
    """Writes the inputs that stand for earlier launches; returns their paths."""
    files = data_files(data_dir)
    os.makedirs(data_dir, exist_ok=True)
    # DeviceScanInitKernel: 32 padding descriptors of status OOB (0), then one
    # {status INVALID, value 0} per tile (ScanTileState<int, true>: 32-bit status
    # and value, one 64-bit word per tile).
    words = [0, 0] * SCAN_PADDING + [SCAN_TILE_INVALID, 0] * SCAN_TILES
    with open(files["scan_tile_state"], "wb") as f:
        f.write(struct.pack(f"<{len(words)}I", *words))
    # DeviceRadixSortHistogramKernel + ExclusiveSumKernel for the first pass
    # (bits 0-7): the exclusive prefix sum of the keys' lowest digit.
    import numpy as np
    keys = splitmix_u64(SORT_KEYS_SEED, SORT_ITEMS).astype(np.uint32)
    counts = np.bincount(keys & np.uint32(0xFF), minlength=256).astype(np.uint64)
    bins = np.concatenate([[0], np.cumsum(counts)[:-1]]).astype("<u4")
    with open(files["sort_bins"], "wb") as f:
        f.write(bins.tobytes())
    # sglang's kv_indptr: sequence b's cache slots are kv_indices[4096 b, 4096 (b + 1)).
    with open(files["kv_indptr"], "wb") as f:
        f.write(struct.pack(f"<{DECODE_BATCH + 1}i",
                            *[b * DECODE_TOKENS for b in range(DECODE_BATCH + 1)]))
    return files


def _args(kernel_id, files):
    """(args, check, setup) of one kernel."""
    if kernel_id in ("cub_reduce_kernel", "cub_reduce_kernel_small"):
        n, grid = (1 << 24, 4096) if kernel_id == "cub_reduce_kernel" else (1 << 19, 128)
        seed = 1 if kernel_id == "cub_reduce_kernel" else 2
        return ([f"buf:f32:{n}:random:{seed}", f"buf:f32:{grid}:out", f"scalar:u32:{n}",
                 even_share(n, 8 * 132 * 5, 4096), "bytes:00", "bytes:00"],
                [1], "none: the first pass of two; its output is each block's partial sum")
    if kernel_id == "cub_scan_kernel":
        return (["buf:s32:16777216:random:3:-1000:1000", "buf:s32:16777216:out",
                 f"buf:u32:{2 * (SCAN_PADDING + SCAN_TILES)}:file:{files['scan_tile_state']}",
                 "scalar:u32:0", "bytes:00", "bytes:00", f"scalar:u32:{SCAN_ITEMS}"],
                [1], "DeviceScanInitKernel's tile status loaded from a file (padding OOB, tiles "
                "INVALID) before the checked launch; timed launches find the previous launch's "
                "inclusive prefixes (the same values), so the look-back ends at once and the "
                "timed scan waits less than a first run does")
    if kernel_id == "cub_histogram_sweep":
        n = 1 << 24
        return (["buf:u8:16777216:random:4",
                 u32s(256), u32s(256),            # num_output_bins, num_privatized_bins
                 "buf:s32:256:zero",              # d_output_histograms[0]
                 f"buf:s32:{264 * 256}:zero",     # d_privatized_histograms[0] (unused: smem)
                 u32s(256, 0, 256, 256),          # ScaleTransform {max, min, bins, range}
                 "bytes:00",                      # PassThruTransform
                 f"scalar:u32:{n}", "scalar:u32:1", f"scalar:u32:{n}",
                 f"scalar:u32:{-(-n // (768 * 12))}",
                 "buf:s32:2:zero"],               # GridQueue (unused: no work stealing)
                [3], "DeviceHistogramInitKernel's zeroed bins and tile queue are zero buffers; the "
                "bins accumulate over timed launches (integer atomics: the checked launch's "
                "counts are exact)")
    if kernel_id == "cub_onesweep_pass":
        return ([f"buf:s32:{SORT_BLOCKS * 256}:zero",    # d_lookback (memset by CUB)
                 "buf:s32:1:zero",                        # d_ctrs (memset by CUB)
                 "null",                                  # d_bins_out (next pass: none)
                 f"buf:u32:256:file:{files['sort_bins']}",  # d_bins_in (histogram + scan)
                 f"buf:u32:{SORT_ITEMS}:out",
                 f"buf:u32:{SORT_ITEMS}:random:{SORT_KEYS_SEED}",
                 "null", "null",                          # values: keys only
                 f"scalar:u32:{SORT_ITEMS}", "scalar:u32:0", "scalar:u32:8", "bytes:00"],
                [4], "the pass's digit offsets (DeviceRadixSortHistogramKernel + "
                "ExclusiveSumKernel) computed here from the same seeded keys and loaded from a "
                "file; the lookback and tile counter, which CUB's memset zeroes before the pass, "
                "are zero buffers that gpu-run zeroes again before every timed launch "
                "(\"reset\", outside the timed interval)")
    if kernel_id == "thrust_transform_saxpy":
        n = 1 << 24
        return ([f"scalar:u32:{n}", "scalar:u32:3", f32_hex(2.0), f"buf:f32:{n}:out",
                 f"buf:f32:{n}:random:5", f"buf:f32:{n}:random:6"],
                [3], "none")
    if kernel_id in ("liger_rms_norm_fwd", "liger_rms_norm_fwd_decode"):
        rows, cols = (4096 if kernel_id == "liger_rms_norm_fwd" else 64), 4096
        return ([f"buf:bf16:{rows * cols}:out", f"scalar:u32:{cols}",
                 f"buf:bf16:{rows * cols}:random:7", f"scalar:u32:{cols}",
                 f"buf:bf16:{cols}:random:8:0.5:1.5", f"buf:f32:{rows}:out",
                 f"scalar:u32:{cols}", "scalar:f32:1e-6", "scalar:f32:0"] + NULL2,
                [0, 5], "none")
    if kernel_id in ("liger_swiglu_fwd", "liger_swiglu_fwd_decode"):
        rows, cols = (4096 if kernel_id == "liger_swiglu_fwd" else 64), 14336
        return ([f"buf:bf16:{rows * cols}:random:9", f"buf:bf16:{rows * cols}:random:10",
                 f"buf:bf16:{rows * cols}:out", f"scalar:u32:{cols}", "scalar:f32:1"] + NULL2,
                [2], "none")
    if kernel_id == "liger_layer_norm_fwd":
        rows, cols = 4096, 4096
        return ([f"buf:bf16:{rows * cols}:out", f"scalar:u32:{cols}",
                 f"buf:bf16:{rows * cols}:random:11", f"scalar:u32:{cols}",
                 f"buf:bf16:{cols}:random:12:0.5:1.5", f"buf:bf16:{cols}:random:13",
                 f"buf:f32:{rows}:out", f"buf:f32:{rows}:out",
                 f"scalar:u32:{cols}", "scalar:f32:1e-6"] + NULL2,
                [0, 6, 7], "none")
    if kernel_id in ("liger_rope_fwd", "liger_rope_fwd_decode"):
        # q [tokens, 32, 128], k [tokens, 8, 128] rotated in place; cos/sin
        # [cos_bs, sl, 128].
        tokens = 4096 if kernel_id == "liger_rope_fwd" else 64
        seed = 14 if kernel_id == "liger_rope_fwd" else 18
        cos_rows = 1024 if kernel_id == "liger_rope_fwd" else 64
        args = [f"buf:bf16:{tokens * 32 * 128}:random:{seed}", "scalar:u32:4096",
                f"buf:bf16:{tokens * 8 * 128}:random:{seed + 1}", "scalar:u32:1024",
                f"buf:bf16:{cos_rows * 128}:random:{seed + 2}", "scalar:u32:128",
                f"buf:bf16:{cos_rows * 128}:random:{seed + 3}", "scalar:u32:128"]
        if kernel_id == "liger_rope_fwd":
            args.append("scalar:u32:1024")  # sl
        return (args + NULL2, [0, 2], "q and k are rotated in place: they are the outputs "
                "checked; timed launches rotate them again")
    if kernel_id == "liger_cross_entropy_fwd":
        rows, vocab = 1024, 128256
        return ([f"buf:bf16:{rows * vocab}:random:22:-4:4", f"scalar:u32:{vocab}",
                 f"buf:s64:{rows}:random:23:0:{vocab}", f"buf:bf16:{rows}:out",
                 "scalar:u32:0", "scalar:u32:0",  # token accuracy, predicted tokens: off
                 f"scalar:u32:{vocab}", f"scalar:u32:{rows}",  # n_cols, n_non_ignore
                 f"scalar:u32:{rows}", "scalar:f32:0",  # sum_non_ignore_weight, weight_sum
                 "scalar:s32:-100"] + NULL2,             # ignore_index
                [0, 3], "the logits are overwritten with the gradient in place: they are an "
                "output checked; timed launches see the previous launch's gradient as logits")
    if kernel_id == "sglang_prefill_attention":
        tokens = 2048
        n = tokens * HEADS * HEAD_DIM
        stride = [f"scalar:u32:{HEADS * HEAD_DIM}", f"scalar:u32:{HEAD_DIM}"]
        return ([f"buf:bf16:{n}:random:24", f"buf:bf16:{n}:random:25", f"buf:bf16:{n}:random:26",
                 f"scalar:f32:{HEAD_DIM ** -0.5!r}", "buf:s32:1:zero",
                 f"buf:s32:1:fill:{tokens}", f"buf:bf16:{n}:out"] + stride * 4 + NULL2,
                [6], "none")
    if kernel_id == "sglang_decode_attention_stage1":
        slots = DECODE_BATCH * DECODE_TOKENS
        kv = slots * HEADS * HEAD_DIM
        splits = 8
        hd = f"scalar:u32:{HEAD_DIM}"
        row = f"scalar:u32:{HEADS * HEAD_DIM}"
        return ([f"buf:bf16:{DECODE_BATCH * HEADS * HEAD_DIM}:random:27",
                 f"buf:bf16:{kv}:random:28", f"buf:bf16:{kv}:random:29",
                 f"scalar:f32:{HEAD_DIM ** -0.5!r}",
                 f"buf:s32:{DECODE_BATCH + 1}:file:{files['kv_indptr']}",
                 f"buf:s64:{slots}:random:30:0:{slots}",
                 f"buf:f32:{DECODE_BATCH * HEADS * splits * HEAD_DIM}:out",
                 f"buf:f32:{DECODE_BATCH * HEADS * splits}:out",
                 f"buf:s32:{DECODE_BATCH}:fill:{splits}",
                 row, hd,                      # stride_qbs, stride_qh
                 row, hd, row, hd,             # K and V: slot, head
                 row, row, row, row,           # page and token strides (unused at page size 1)
                 f"scalar:u32:{HEADS * splits * HEAD_DIM}", f"scalar:u32:{splits * HEAD_DIM}",
                 hd,                           # Att_Out strides
                 "scalar:u32:0", "scalar:u32:0", "scalar:u32:0"] + NULL2,   # Aux0: none
                [6, 7], "kv_indptr (the server's page table) loaded from a file: sequence b's "
                "4096 cache slots are kv_indices[4096 b, 4096 (b + 1)), each a seeded random slot")
    # Added on 2026-11-28 (pairs-2026-11-28.json).
    if kernel_id in ("unsloth_swiglu_fwd", "unsloth_geglu_fwd_decode"):
        rows = 4096 if kernel_id == "unsloth_swiglu_fwd" else 8
        n = rows * 14336
        seed = 40 if kernel_id == "unsloth_swiglu_fwd" else 42
        return ([f"buf:bf16:{n}:random:{seed}", f"buf:bf16:{n}:random:{seed + 1}", f"buf:bf16:{n}:out",
                 f"scalar:u32:{n}"] + NULL2,
                [2], "none")
    if kernel_id == "mamba2_selective_state_update":
        b, h, p, n = MAMBA_BATCH, MAMBA_HEADS, MAMBA_HEADDIM, MAMBA_DSTATE
        u = [f"scalar:u32:{v}" for v in (
            b, h, p, n, h,                              # batch, nheads, dim, dstate, nheads // ngroups
            h * p * n, p * n, n,                        # state strides (batch, head, dim; dstate 1)
            MAMBA_CONV_DIM, p,                          # x: a slice of xBC (dim 1)
            MAMBA_IN_PROJ, 0,                           # dt: a slice of zxbcdt (head 1), repeated over dim
            0,                                          # dt_bias: repeated over dim (head 1)
            0, 0,                                       # A: repeated over dim and dstate (head 1)
            MAMBA_CONV_DIM, n,                          # B: a slice of xBC (dstate 1)
            MAMBA_CONV_DIM, n,                          # C
            0,                                          # D: repeated over dim (head 1)
            0, 0, 0,                                    # z: None
            h * p, p)]                                  # out (dim 1)
        return ([f"buf:bf16:{b * h * p * n}:random:44:-1:1",        # state (in place)
                 f"buf:bf16:{b * MAMBA_CONV_DIM}:random:45:-1:1",   # x
                 f"buf:bf16:{b * MAMBA_IN_PROJ}:random:46:-3:1",    # dt (before softplus)
                 f"buf:bf16:{h}:random:47:-5:-2",                   # dt_bias
                 f"buf:f32:{h}:random:48:-16:-1",                   # A = -exp(A_log)
                 f"buf:bf16:{b * MAMBA_CONV_DIM}:random:49:-1:1",   # B
                 f"buf:bf16:{b * MAMBA_CONV_DIM}:random:50:-1:1",   # C
                 f"buf:f32:{h}:random:51:0.5:1.5",                  # D
                 f"buf:bf16:{b * h * p}:out"] + u + NULL2,
                [0, 8], "the SSM state is updated in place: it is an output checked; timed launches "
                "update it again (A < 0 and dt > 0, so it decays). x, B, C (slices of one xBC row) and "
                "dt (a slice of in_proj's output) are buffers of their own with the slices' row strides")
    if kernel_id in ("mamba2_rmsnorm_gated_fwd", "mamba2_rmsnorm_gated_fwd_decode"):
        rows = MAMBA_TOKENS if kernel_id == "mamba2_rmsnorm_gated_fwd" else MAMBA_BATCH
        seed = 52 if kernel_id == "mamba2_rmsnorm_gated_fwd" else 56
        d = MAMBA_DSSM
        return ([f"buf:bf16:{rows * d}:random:{seed}", f"buf:bf16:{rows * d}:out",
                 f"buf:bf16:{d}:random:{seed + 1}:0.5:1.5",
                 f"buf:bf16:{rows * MAMBA_IN_PROJ}:random:{seed + 2}:-3:3",   # z: row stride of zxbcdt
                 f"buf:f32:{rows}:out",
                 f"scalar:u32:{d}", f"scalar:u32:{d}", f"scalar:u32:{MAMBA_IN_PROJ}",
                 f"scalar:u32:{rows}", f"scalar:u32:{d}", "scalar:f32:1e-5"] + NULL2,
                [1, 4], "z (a slice of in_proj's output) is a buffer of its own with the slice's row stride")
    raise KeyError(f"no arguments for kernel {kernel_id!r}")


# Kernels whose timed launches would not repeat the checked launch's work
# (gpu-run reuses buffers between launches) unless gpu-run zeroes some
# buffers before each launch, as the library does ("reset" in the run spec,
# outside the timed interval).
RESETS = {
    # The onesweep pass takes its tile index from a global counter (atomicAdd
    # on d_ctrs) and looks back through d_lookback, both zeroed by CUB's
    # memset before every pass; without it every launch after the first finds
    # the counter past the last tile and sorts nothing.
    "cub_onesweep_pass": [0, 1],
}

# Kernels that cannot be timed at all (none since gpu-run's "reset").
NOT_TIMEABLE = {}


def load_kernels():
    import json
    with open(os.path.join(HERE, "kernels.json")) as f:
        return {k["id"]: k for k in json.load(f)["kernels"]}


def kernel_spec(kernel_id, data_dir, kernels=None, label=None):
    """The gpu-run run spec entry of a held-out kernel (module path relative
    to the current folder)."""
    kernels = kernels or load_kernels()
    k = kernels[kernel_id]
    args, _, _ = _args(kernel_id, data_files(data_dir))
    spec = {"label": label or kernel_id,
            "module": os.path.relpath(os.path.join(HERE, k["ptx"])),
            "kernel": k["entry"] if "entry" in k else None,
            "grid": k["grid"], "block": k["block"], "smem": k["dynamic_smem"],
            "args": args}
    if kernel_id in RESETS:
        spec["reset"] = RESETS[kernel_id]
    return spec


def kernel_meta(kernel_id, data_dir="data"):
    _, check, setup = _args(kernel_id, data_files(data_dir))
    return {"check": check, "setup": setup, "not_timeable": NOT_TIMEABLE.get(kernel_id),
            "reset": RESETS.get(kernel_id, [])}


TYPE_BYTES = {"u8": 1, "s8": 1, "i8": 1, "u16": 2, "s16": 2, "i16": 2, "f16": 2, "bf16": 2,
              "u32": 4, "s32": 4, "i32": 4, "f32": 4, "u64": 8, "s64": 8, "i64": 8, "f64": 8}


def ptx_params(gpu_run, module, entry):
    """[{name, type, size, offset, kind}] of one .entry, as `gpu-run --list`
    reads the PTX header (no GPU)."""
    import re
    import subprocess
    r = subprocess.run([gpu_run, module, "--kernel", entry, "--list"], capture_output=True,
                       text=True, check=True)
    params, current = [], None
    for line in r.stdout.splitlines():
        m = re.match(r"kernel (\S+):", line)
        if m:
            current = m.group(1)
            continue
        m = re.match(r"\s+(\d+): (\S+) \.(\w+) size (\d+) align (\d+) offset (\d+) (\w+)", line)
        if m and current == entry:
            params.append({"name": m.group(2), "type": m.group(3), "size": int(m.group(4)),
                           "offset": int(m.group(6)), "kind": m.group(7)})
    return params


def check_args(args, params):
    """Problems of a gpu-run argument list against a kernel's parameters, as
    gpu-run checks them (ArgSpec.cpp checkArgAgainstParam); [] when none."""
    problems = []
    if len(args) != len(params):
        return [f"{len(args)} arguments for {len(params)} parameters"]
    for i, (a, p) in enumerate(zip(args, params)):
        kind = a.split(":")[0]
        is_float = p["type"] in ("f16", "f32", "f64")
        if kind in ("buf", "null"):
            ok = (p["size"] >= 8 and p["offset"] % 8 == 0) if p["kind"] == "bytes" else \
                (p["size"] == 8 and not is_float)
            if not ok:
                problems.append(f"arg {i} ({a}): an address for .{p['type']} size {p['size']}")
        elif kind == "scalar":
            ty = a.split(":")[1]
            if p["kind"] == "bytes" or TYPE_BYTES[ty] != p["size"] or \
                    (not p["type"].startswith("b") and ty.startswith("f") != is_float):
                problems.append(f"arg {i} ({a}): scalar for .{p['type']} size {p['size']}")
        elif kind == "bytes":
            if p["kind"] != "bytes" or len(a.split(":")[1]) != 2 * p["size"]:
                problems.append(f"arg {i} ({a}): bytes for .{p['type']} size {p['size']}")
        else:
            problems.append(f"arg {i} ({a}): unknown kind")
    return problems
