#!/usr/bin/env python3
"""Check every kernel of the suite against a reference, through gpu-run.

For each kernel: draw inputs from a fresh random seed, write them to files,
run the kernel with gpu-run (inputs from the files, outputs to files; output
buffers are filled with 0xFF bytes first, so unwritten elements show), compute
a reference with numpy, hashlib or PyTorch, and compare: bit-exact for
integer and hash kernels; for floating-point kernels, the relative L2 norm
||out - ref|| / ||ref|| against a float64 reference, with a tolerance that
suits the arithmetic (fp32 accumulation, fp16 outputs). Problem sizes are the
ones the kernels' headers (benchmarks/kernels/*.cu) give to fill an H100.

CUDA kernels come from test/corpus/nvcc, Triton kernels from
test/corpus/triton. Triton 3.9 entries take two trailing pointers (global and
profile scratch), passed as null: these kernels need no scratch. Their block
is num_warps * 32 threads (the PTX's .reqntid) and their dynamic shared
memory the size Triton's compile metadata reports (compile_aot.py prints it).

Needs the gpuopt package (pip install ./python), numpy, PyTorch with CUDA
for the float64 references of the GEMMs and attention (numpy on the CPU
otherwise, slow), a GPU and gpu-run (--gpu-run, $GPUOPT_BIN_DIR, PATH, or
build/bin). Exit status 0 when every kernel
passes.

usage: check_suite.py [--gpu-run PATH] [--only NAME ...] [--seed N]
                      [--workdir DIR] [--json FILE] [--markdown FILE] [--small]
"""

import argparse
import hashlib
import json
import multiprocessing
import os
import shutil
import subprocess
import sys
import tempfile
import time
import traceback

import numpy as np
from baselines import sm_count  # the grids baselines.py times

from gpuopt.tools import ToolNotFound, find_tool
from gpuopt.verify import compare_arrays, gpu_run_type, kernel_command

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
CORPUS = os.path.join(ROOT, "test", "corpus")
POISON = 0xFF

# Dynamic shared memory of the Triton kernels, from their compile metadata.
TRITON_SMEM = {
    "softmax_fp32_b1024": 16,
    "layernorm_fwd_fp16": 32,
    "matmul_fp16_128x128x64_w8_s3": 98304,
    "attn_fwd_noncausal_d64": 65536,
    "attn_fwd_causal_d64": 65536,
}


def cdiv(a, b):
    return (a + b - 1) // b


class KernelFailure(Exception):
    pass


class Context:
    """Per-kernel helpers: input files, gpu-run invocations, comparisons."""

    def __init__(self, args, name, seed, workdir):
        self.gpu_run = args.gpu_run
        self.small = args.small
        self.name = name
        self.seed = seed
        self.rng = np.random.default_rng(seed)
        self.workdir = workdir
        self.dir = os.path.join(workdir, name)
        os.makedirs(self.dir, exist_ok=True)
        self.results = []
        self.time_ms = None
        self.device = None
        self.command = None

    def file(self, name):
        return os.path.join(self.dir, name)

    def write(self, name, array):
        path = self.file(name + ".bin")
        np.ascontiguousarray(array).tofile(path)
        return path

    def buf_file(self, ty, array, name):
        return f"buf:{ty}:{array.size}:file:{self.write(name, array)}"

    def run(self, ptx, grid, block, args, outs, smem=0, kernel=None):
        """Runs one kernel; returns {arg index: read-only memmap of dtype}."""
        paths = {i: self.file(f"out{i}.bin") for i in outs}
        report = self.file("gpu-run.json")
        spec = {"module": os.path.join(CORPUS, ptx), "kernel": kernel,
                "grid": list(grid if isinstance(grid, tuple) else (grid,)),
                "block": [block], "smem": smem, "args": args}
        cmd = kernel_command(self.gpu_run, spec) + ["--warmup", "1", "--repeat", "3",
                                                    "--json", report]
        for i, p in paths.items():
            cmd += ["--out", f"{i}:{p}"]
        # Recorded without machine paths: the repository is the current
        # directory, the work files are under $WORK.
        self.command = " ".join(["gpu-run"] + cmd[1:]).replace(
            self.workdir, "$WORK").replace(ROOT + os.sep, "")
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=180)
        if proc.returncode != 0:
            raise KernelFailure(f"gpu-run exited with {proc.returncode}: "
                                f"{proc.stderr.strip() or proc.stdout.strip()}")
        with open(report) as f:
            rep = json.load(f)
        self.time_ms = rep["kernels"][0].get("time", {}).get("median_ms")
        self.device = rep["device"]["name"]
        return {i: np.memmap(p, dtype=outs[i], mode="r") for i, p in paths.items()}

    # Comparisons ---------------------------------------------------------

    def exact(self, what, got, ref):
        """Bit-exact comparison of two arrays of the same dtype."""
        ref = np.ascontiguousarray(ref).reshape(-1)
        got = np.asarray(got).reshape(-1)
        if got.dtype != ref.dtype or got.size != ref.size:
            return self._result(False, f"{what}: got {got.size} x {got.dtype}, "
                                       f"expected {ref.size} x {ref.dtype}")
        # The comparison gpuopt.verify makes of fused and probed kernels.
        ty = gpu_run_type(ref.dtype)
        if ty == "u8" and ref.dtype != np.uint8:
            got, ref = got.view(np.uint8), ref.view(np.uint8)
        ok, detail = compare_arrays(got, ref, ty)
        return self._result(ok, f"{what}: {detail}")

    def close(self, what, got, ref, tol):
        """||got - ref|| / ||ref|| <= tol, with ref in float64."""
        g = np.asarray(got, dtype=np.float64).reshape(-1)
        r = np.asarray(ref, dtype=np.float64).reshape(-1)
        if g.size != r.size:
            return self._result(False, f"{what}: got {g.size} elements, expected {r.size}")
        finite = np.isfinite(g)
        if not finite.all():
            n = int((~finite).sum())
            return self._result(False, f"{what}: {n} of {g.size} elements are not finite "
                                       f"(unwritten?); first at {int(np.argmin(finite))}")
        diff = g - r
        rel = float(np.linalg.norm(diff) / np.linalg.norm(r))
        max_abs = float(np.abs(diff).max())
        return self._result(rel <= tol, f"{what}: rel L2 {rel:.2e} (tol {tol:.0e}), "
                                        f"max abs {max_abs:.2e}")

    def untouched(self, what, got):
        """Every byte still holds the poison: the kernel did not write there."""
        b = np.asarray(got).view(np.uint8)
        n = int((b != POISON).sum())
        return self._result(n == 0, f"{what}: " + ("untouched" if n == 0 else
                                                   f"{n} bytes written"))

    def _result(self, ok, detail):
        self.results.append((ok, detail))
        return ok


def s32(v):
    return f"scalar:s32:{v}"


def u32(v):
    return f"scalar:u32:{v}"


def matmul64(a, b):
    """a @ b in float64, on the GPU when PyTorch has one."""
    try:
        import torch
        if torch.cuda.is_available():
            ta = torch.from_numpy(np.ascontiguousarray(a)).cuda().double()
            tb = torch.from_numpy(np.ascontiguousarray(b)).cuda().double()
            out = (ta @ tb).cpu().numpy()
            del ta, tb
            torch.cuda.empty_cache()
            return out
    except ImportError:
        pass
    return a.astype(np.float64) @ b.astype(np.float64)


# ---------------------------------------------------------------------------
# Crypto kernels (hashlib and numpy references, checked in parallel)
# ---------------------------------------------------------------------------

KECCAK_RC = [
    0x0000000000000001, 0x0000000000008082, 0x800000000000808A, 0x8000000080008000,
    0x000000000000808B, 0x0000000080000001, 0x8000000080008081, 0x8000000000008009,
    0x000000000000008A, 0x0000000000000088, 0x0000000080008009, 0x000000008000000A,
    0x000000008000808B, 0x800000000000008B, 0x8000000000008089, 0x8000000000008003,
    0x8000000000008002, 0x8000000000000080, 0x000000000000800A, 0x800000008000000A,
    0x8000000080008081, 0x8000000000008080, 0x0000000080000001, 0x8000000080008008]
# Rotation offsets r[x][y] of lane (x, y).
KECCAK_ROT = [[0, 36, 3, 41, 18], [1, 44, 10, 45, 2], [62, 6, 43, 15, 61],
              [28, 55, 25, 21, 56], [27, 20, 39, 8, 14]]


def _rotl(v, n):
    return v if n == 0 else (v << np.uint64(n)) | (v >> np.uint64(64 - n))


def keccak_f(a):
    """Keccak-f[1600] on 25 lanes (index x + 5 y), each a uint64 array."""
    for rc in KECCAK_RC:
        c = [a[x] ^ a[x + 5] ^ a[x + 10] ^ a[x + 15] ^ a[x + 20] for x in range(5)]
        d = [c[(x - 1) % 5] ^ _rotl(c[(x + 1) % 5], 1) for x in range(5)]
        a = [a[i] ^ d[i % 5] for i in range(25)]
        b = [None] * 25
        for x in range(5):
            for y in range(5):
                b[y + 5 * ((2 * x + 3 * y) % 5)] = _rotl(a[x + 5 * y], KECCAK_ROT[x][y])
        a = [b[i] ^ (~b[(i % 5 + 1) % 5 + 5 * (i // 5)] & b[(i % 5 + 2) % 5 + 5 * (i // 5)])
             for i in range(25)]
        a[0] = a[0] ^ np.uint64(rc)
    return a


def keccak_one_block(lanes, n, rate, msg_bytes, pad_first):
    """Sponge over one block: message lanes, padding, permutation."""
    zero = np.zeros(n, np.uint64)
    st = [lanes[i] if i < len(lanes) else zero.copy() for i in range(25)]
    st[msg_bytes // 8] = st[msg_bytes // 8] ^ np.uint64(pad_first << (8 * (msg_bytes % 8)))
    last = rate - 1
    st[last // 8] = st[last // 8] ^ np.uint64(0x80 << (8 * (last % 8)))
    return keccak_f(st)


def keccak_self_test():
    """The Keccak reference against hashlib's SHA-3 (same permutation,
    0x06 padding), so that a mistake in it cannot pass as a kernel bug."""
    rng = np.random.default_rng(1)
    for rate, msg_len, fn in ((72, 40, hashlib.sha3_512), (136, 96, hashlib.sha3_256)):
        msgs = [rng.bytes(msg_len) for _ in range(3)]
        lanes = [np.array([int.from_bytes(m[8 * i:8 * i + 8], "little") for m in msgs],
                          np.uint64) for i in range(msg_len // 8)]
        st = keccak_one_block(lanes, 3, rate, msg_len, 0x06)
        out_len = fn().digest_size
        for j, m in enumerate(msgs):
            got = b"".join(int(st[i][j]).to_bytes(8, "little") for i in range(out_len // 8))
            if got != fn(m).digest():
                raise KernelFailure("the Keccak reference disagrees with hashlib")


def fnv(a, b):
    return (a * np.uint32(0x01000193)) ^ b


def _ethash_chunk(task):
    dag_path, num_pages, header, start_nonce, lo, hi, out_path = task
    n = hi - lo
    dag = np.memmap(dag_path, dtype=np.uint32, mode="r").reshape(num_pages, 32)
    nonces = (np.uint64(start_nonce) + np.arange(lo, hi, dtype=np.uint64))
    lanes = [np.full(n, h, np.uint64) for h in header] + [nonces]
    seed = keccak_one_block(lanes, n, 72, 40, 0x01)[:8]
    s = np.empty((n, 16), np.uint32)
    for i in range(8):
        s[:, 2 * i] = (seed[i] & np.uint64(0xFFFFFFFF)).astype(np.uint32)
        s[:, 2 * i + 1] = (seed[i] >> np.uint64(32)).astype(np.uint32)
    mix = np.concatenate([s, s], axis=1)
    for i in range(64):
        p = fnv(np.uint32(i) ^ s[:, 0], mix[:, i % 32]) % np.uint32(num_pages)
        mix = fnv(mix, dag[p])
    cmix = fnv(fnv(fnv(mix[:, 0::4], mix[:, 1::4]), mix[:, 2::4]), mix[:, 3::4])
    lanes = list(seed) + [cmix[:, 2 * k].astype(np.uint64) |
                          (cmix[:, 2 * k + 1].astype(np.uint64) << np.uint64(32))
                          for k in range(4)]
    st = keccak_one_block(lanes, n, 136, 96, 0x01)
    expected = np.stack(st[:4], axis=1)
    got = np.memmap(out_path, dtype=np.uint64, mode="r").reshape(-1, 4)[lo:hi]
    bad = np.nonzero((expected != got).any(axis=1))[0]
    return int(bad.size), (lo + int(bad[0]) if bad.size else -1)


def _hash_chunk(task):
    kind, header76, start, lo, hi, out_path = task
    width = 64 if kind == "blake2b" else 32
    prefix = hashlib.blake2b(header76) if kind == "blake2b" else hashlib.sha256(header76)
    parts = []
    for g in range(lo, hi):
        h = prefix.copy()
        h.update(((start + g) & 0xFFFFFFFF).to_bytes(4, "little"))
        parts.append(h.digest() if kind == "blake2b" else hashlib.sha256(h.digest()).digest())
    expected = np.frombuffer(b"".join(parts), np.uint8).reshape(-1, width)
    got = np.memmap(out_path, dtype=np.uint8, mode="r").reshape(-1, width)[lo:hi]
    bad = np.nonzero((expected != got).any(axis=1))[0]
    return int(bad.size), (lo + int(bad[0]) if bad.size else -1)


# ---------------------------------------------------------------------------
# BLAKE-256 (SHA-3 finalist, 14 rounds): pure Python, stdlib only, and a numpy
# model of its compression for many messages at once
# ---------------------------------------------------------------------------

BLAKE256_IV = (0x6A09E667, 0xBB67AE85, 0x3C6EF372, 0xA54FF53A,
               0x510E527F, 0x9B05688C, 0x1F83D9AB, 0x5BE0CD19)
BLAKE256_C = (0x243F6A88, 0x85A308D3, 0x13198A2E, 0x03707344, 0xA4093822, 0x299F31D0,
              0x082EFA98, 0xEC4E6C89, 0x452821E6, 0x38D01377, 0xBE5466CF, 0x34E90C6C,
              0xC0AC29B7, 0xC97C50DD, 0x3F84D5B5, 0xB5470917)
BLAKE_SIGMA = (
    (0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15),
    (14, 10, 4, 8, 9, 15, 13, 6, 1, 12, 0, 2, 11, 7, 5, 3),
    (11, 8, 12, 0, 5, 2, 15, 13, 10, 14, 3, 6, 7, 1, 9, 4),
    (7, 9, 3, 1, 13, 12, 11, 14, 2, 6, 5, 10, 4, 0, 15, 8),
    (9, 0, 5, 7, 2, 4, 10, 15, 14, 1, 11, 12, 6, 8, 3, 13),
    (2, 12, 6, 10, 0, 11, 8, 3, 4, 13, 7, 5, 15, 14, 1, 9),
    (12, 5, 1, 15, 14, 13, 4, 10, 0, 7, 6, 3, 9, 2, 8, 11),
    (13, 11, 7, 14, 12, 1, 3, 9, 5, 0, 15, 4, 8, 6, 2, 10),
    (6, 15, 14, 9, 11, 3, 0, 8, 12, 2, 13, 7, 1, 4, 10, 5),
    (10, 2, 8, 4, 7, 6, 1, 5, 15, 11, 9, 14, 3, 12, 13, 0))
# (a, b, c, d) of the four column steps, then the four diagonal steps.
BLAKE_STEPS = ((0, 4, 8, 12), (1, 5, 9, 13), (2, 6, 10, 14), (3, 7, 11, 15),
               (0, 5, 10, 15), (1, 6, 11, 12), (2, 7, 8, 13), (3, 4, 9, 14))


def blake256_compress(h, block, t):
    """One BLAKE-256 compression (salt 0) of a 64-byte block into the eight
    words h, with the bit counter t; returns the new h. Plain Python."""
    M = 0xFFFFFFFF
    m = [int.from_bytes(block[4 * i:4 * i + 4], "big") for i in range(16)]
    c = BLAKE256_C
    v = list(h) + list(c[:4]) + [(t & M) ^ c[4], (t & M) ^ c[5],
                                 (t >> 32) ^ c[6], (t >> 32) ^ c[7]]

    def rotr(x, n):
        return ((x >> n) | (x << (32 - n))) & M

    for r in range(14):
        s = BLAKE_SIGMA[r % 10]
        for i, (a, b, cc, d) in enumerate(BLAKE_STEPS):
            x, y = s[2 * i], s[2 * i + 1]
            v[a] = (v[a] + v[b] + (m[x] ^ c[y])) & M
            v[d] = rotr(v[d] ^ v[a], 16)
            v[cc] = (v[cc] + v[d]) & M
            v[b] = rotr(v[b] ^ v[cc], 12)
            v[a] = (v[a] + v[b] + (m[y] ^ c[x])) & M
            v[d] = rotr(v[d] ^ v[a], 8)
            v[cc] = (v[cc] + v[d]) & M
            v[b] = rotr(v[b] ^ v[cc], 7)
    return [h[i] ^ v[i] ^ v[i + 8] for i in range(8)]


def blake256_blocks(msg):
    """The padded blocks of msg with their counters (message bits up to and
    including the block; 0 for a block of padding alone)."""
    bits = 8 * len(msg)
    pad_len = (55 - len(msg)) % 64  # bytes between the message and length
    if pad_len == 0:
        pad = b"\x81"  # the 1 bit and the BLAKE-256 0x01 bit in one byte
    else:
        pad = b"\x80" + b"\x00" * (pad_len - 1) + b"\x01"
    data = msg + pad + bits.to_bytes(8, "big")
    out = []
    for k in range(len(data) // 64):
        t = min(bits, 512 * (k + 1)) if 512 * k < bits else 0
        out.append((data[64 * k:64 * k + 64], t))
    return out


def blake256(msg):
    """BLAKE-256 of msg (bytes), pure Python: the 32-byte digest."""
    h = list(BLAKE256_IV)
    for block, t in blake256_blocks(msg):
        h = blake256_compress(h, block, t)
    return b"".join(x.to_bytes(4, "big") for x in h)


def blake256_compress_np(h, m, t):
    """blake256_compress for n messages at once: h and m lists of 8 and 16
    uint32 arrays (or scalars), t a Python int; returns 8 uint32 arrays."""
    c = [np.uint32(x) for x in BLAKE256_C]
    u = np.uint32
    v = [np.asarray(x, np.uint32) for x in h] + c[:4] + [
        u(t & 0xFFFFFFFF) ^ c[4], u(t & 0xFFFFFFFF) ^ c[5], u(t >> 32) ^ c[6], u(t >> 32) ^ c[7]]
    m = [np.asarray(x, np.uint32) for x in m]

    def rotr(x, n):
        return (x >> u(n)) | (x << u(32 - n))

    with np.errstate(over="ignore"):  # uint32 sums wrap, as intended
        v = _blake256_rounds_np(v, m, c, rotr)
    return [np.asarray(h[i], np.uint32) ^ v[i] ^ v[i + 8] for i in range(8)]


def _blake256_rounds_np(v, m, c, rotr):
    for r in range(14):
        s = BLAKE_SIGMA[r % 10]
        for i, (a, b, cc, d) in enumerate(BLAKE_STEPS):
            x, y = s[2 * i], s[2 * i + 1]
            v[a] = v[a] + v[b] + (m[x] ^ c[y])
            v[d] = rotr(v[d] ^ v[a], 16)
            v[cc] = v[cc] + v[d]
            v[b] = rotr(v[b] ^ v[cc], 12)
            v[a] = v[a] + v[b] + (m[y] ^ c[x])
            v[d] = rotr(v[d] ^ v[a], 8)
            v[cc] = v[cc] + v[d]
            v[b] = rotr(v[b] ^ v[cc], 7)
    return v


def blake256_headers_np(header76, nonces):
    """BLAKE-256 of header76 + each nonce (little-endian uint32 array) with
    numpy: the digests as an (n, 32) uint8 array. Block 1 holds no nonce, so
    it is compressed once, in plain Python."""
    h = blake256_compress(list(BLAKE256_IV), header76[:64], 512)
    words = [int.from_bytes(header76[64 + 4 * i:68 + 4 * i], "big") for i in range(3)]
    nonce_be = nonces.astype(np.uint32).byteswap()
    m = [np.uint32(w) for w in words] + [nonce_be, np.uint32(0x80000000)] + \
        [np.uint32(0)] * 8 + [np.uint32(1), np.uint32(0), np.uint32(640)]
    out = blake256_compress_np([np.uint32(x) for x in h], m, 640)
    n = nonces.size
    digest = np.stack([np.broadcast_to(x, (n,)) for x in out], axis=1).astype(">u4")
    return digest.view(np.uint8).reshape(n, 32)


# Test vectors of the BLAKE submission (version 1.3).
BLAKE256_VECTORS = [
    (b"\x00", "0ce8d4ef4dd7cd8d62dfded9d4edb0a774ae6a41929a74da23109e8f11139c87"),
    (b"\x00" * 72, "d419bad32d504fb7d44d460c42c5593fe544fa4c135dec31e21bd9abdcc22d41"),
]


def blake256_self_test():
    """The pure-Python BLAKE-256 against the submission's test vectors, and
    the numpy model against it, so that a mistake in either cannot pass as a
    kernel bug."""
    for msg, want in BLAKE256_VECTORS:
        if blake256(msg).hex() != want:
            raise KernelFailure(f"the BLAKE-256 reference fails the test vector of "
                                f"{len(msg)} bytes")
    rng = np.random.default_rng(2)
    header76 = rng.bytes(76)
    nonces = np.array([0, 1, 0xFFFFFFFF, int(rng.integers(0, 2**32))], np.uint32)
    got = blake256_headers_np(header76, nonces)
    for j, nonce in enumerate(nonces):
        if bytes(got[j]) != blake256(header76 + int(nonce).to_bytes(4, "little")):
            raise KernelFailure("the numpy BLAKE-256 model disagrees with the pure-Python one")


def _blake256_chunk(task):
    header76, start, lo, hi, out_path = task
    nonces = ((np.uint64(start) + np.arange(lo, hi, dtype=np.uint64)) &
              np.uint64(0xFFFFFFFF)).astype(np.uint32)
    expected = blake256_headers_np(header76, nonces)
    # The chunk's first digest once more with the pure-Python BLAKE-256.
    if bytes(expected[0]) != blake256(header76 + int(nonces[0]).to_bytes(4, "little")):
        raise KernelFailure("the numpy BLAKE-256 model disagrees with the pure-Python one")
    got = np.memmap(out_path, dtype=np.uint8, mode="r").reshape(-1, 32)[lo:hi]
    bad = np.nonzero((expected != got).any(axis=1))[0]
    return int(bad.size), (lo + int(bad[0]) if bad.size else -1)


def parallel_check(c, what, fn, tasks, total):
    ctx = multiprocessing.get_context("fork")
    with ctx.Pool(min(len(tasks), os.cpu_count() or 1)) as pool:
        results = pool.map(fn, tasks)
    bad = sum(r[0] for r in results)
    firsts = [r[1] for r in results if r[1] >= 0]
    if bad:
        return c._result(False, f"{what}: {bad} of {total} digests differ, first at nonce "
                                f"index {min(firsts)}")
    return c._result(True, f"{what}: bit-exact ({total} digests)")


def chunks(total, parts):
    step = cdiv(total, parts)
    return [(lo, min(total, lo + step)) for lo in range(0, total, step)]


def check_ethash_like(c):
    keccak_self_test()
    num_pages = 1 << 16 if c.small else 1 << 25  # 4 GiB DAG
    num_nonces = 1 << 12 if c.small else 1 << 20
    dag_path = c.file("dag.bin")
    with open(dag_path, "wb") as f:
        step = 1 << 28
        for off in range(0, num_pages * 128, step):
            f.write(c.rng.bytes(min(step, num_pages * 128 - off)))
    header = [int(x) for x in c.rng.integers(0, 2**64, 4, dtype=np.uint64)]
    start = int(c.rng.integers(0, 2**63))
    hdr_path = c.write("header", np.array(header, np.uint64))
    outs = c.run("nvcc/ethash_like.ptx", cdiv(num_nonces, 128), 128, [
        f"buf:u32:{num_pages * 32}:file:{dag_path}", u32(num_pages),
        f"buf:u64:4:file:{hdr_path}", f"scalar:u64:{start}", u32(num_nonces),
        f"buf:u64:{num_nonces * 4}:out"], {5: np.uint64})
    out_path = c.file("out5.bin")
    del outs
    tasks = [(dag_path, num_pages, header, start, lo, hi, out_path)
             for lo, hi in chunks(num_nonces, 64)]
    parallel_check(c, "out", _ethash_chunk, tasks, num_nonces)


def run_header_hash(c, kernel, word, header, start, num):
    """Runs one of the header-hash kernels (blake2b, sha256d, blake256), which
    share a signature: the 80-byte header as `word`s, the start nonce, the
    nonce count, and 8 `word`s of digest per nonce. Returns the digest file."""
    dtype = np.uint64 if word == "u64" else np.uint32
    c.run(f"nvcc/{kernel}.ptx", cdiv(num, 256), 256, [
        c.buf_file(word, np.frombuffer(header, dtype), "header"), u32(start),
        u32(num), f"buf:{word}:{num * 8}:out"], {3: dtype})
    return c.file("out3.bin")


def check_blake2b(c):
    num = 1 << 12 if c.small else 1 << 24
    header = c.rng.bytes(80)
    # Start close to 2^32 so that the 32-bit nonce wraps inside the launch.
    start = 2**32 - int(c.rng.integers(1, num))
    out = run_header_hash(c, "blake2b", "u64", header, start, num)
    tasks = [("blake2b", header[:76], start, lo, hi, out)
             for lo, hi in chunks(num, 64)]
    parallel_check(c, "out", _hash_chunk, tasks, num)


def check_sha256d(c):
    num = 1 << 12 if c.small else 1 << 26
    header = c.rng.bytes(80)
    start = int(c.rng.integers(0, 2**32))
    out = run_header_hash(c, "sha256d", "u32", header, start, num)
    tasks = [("sha256d", header[:76], start, lo, hi, out)
             for lo, hi in chunks(num, 128)]
    parallel_check(c, "out", _hash_chunk, tasks, num)


def check_blake256(c):
    blake256_self_test()
    num = 1 << 12 if c.small else 1 << 26
    header = c.rng.bytes(80)
    # Start close to 2^32 so that the 32-bit nonce wraps inside the launch.
    start = 2**32 - int(c.rng.integers(1, num))
    out = run_header_hash(c, "blake256", "u32", header, start, num)
    tasks = [(header[:76], start, lo, hi, out) for lo, hi in chunks(num, 128)]
    parallel_check(c, "out", _blake256_chunk, tasks, num)


# ---------------------------------------------------------------------------
# Deep-learning kernels of the HFuse set, and the reduction
# ---------------------------------------------------------------------------

def check_im2col(c):
    N, C, H, W = (2, 8, 20, 20) if c.small else (16, 64, 56, 56)
    KH = KW = 3
    pad, stride, dil = 1, 1, 1
    HO = (H + 2 * pad - (dil * (KH - 1) + 1)) // stride + 1
    WO = (W + 2 * pad - (dil * (KW - 1) + 1)) // stride + 1
    x = c.rng.standard_normal((N, C, H, W), dtype=np.float32)
    cols = N * C * KH * KW * HO * WO
    outs = c.run("nvcc/im2col.ptx", cdiv(N * C * HO * WO, 256), 256,
                 [c.buf_file("f32", x, "x")] +
                 [s32(v) for v in (N, C, H, W, KH, KW, pad, pad, stride, stride,
                                   dil, dil, HO, WO)] + [f"buf:f32:{cols}:out"],
                 {15: np.float32})
    xp = np.pad(x, ((0, 0), (0, 0), (pad, pad), (pad, pad)))
    ref = np.empty((N, C, KH, KW, HO, WO), np.float32)
    for i in range(KH):
        for j in range(KW):
            ref[:, :, i, j] = xp[:, :, i * dil:i * dil + stride * (HO - 1) + 1:stride,
                                 j * dil:j * dil + stride * (WO - 1) + 1:stride]
    c.exact("data_col", outs[15], ref)


def check_maxpool(c):
    N, C, H, W = (2, 4, 30, 30) if c.small else (32, 64, 112, 112)
    K, S, P = 3, 2, 1
    HO, WO = (H + 2 * P - K) // S + 1, (W + 2 * P - K) // S + 1
    x = c.rng.standard_normal((N, C, H, W), dtype=np.float32)
    total = N * C * HO * WO
    outs = c.run("nvcc/maxpool.ptx", cdiv(total, 256), 256,
                 [c.buf_file("f32", x, "x")] +
                 [s32(v) for v in (N, C, H, W, HO, WO, K, K, S, S, P, P)] +
                 [f"buf:f32:{total}:out", f"buf:s64:{total}:out"],
                 {13: np.float32, 14: np.int64})
    xp = np.pad(x, ((0, 0), (0, 0), (P, P), (P, P)), constant_values=-np.inf)
    # Window elements in row-major scan order; argmax keeps the first maximum.
    win = np.stack([xp[:, :, i:i + S * (HO - 1) + 1:S, j:j + S * (WO - 1) + 1:S]
                    for i in range(K) for j in range(K)], axis=-1)
    k = np.argmax(win, axis=-1)
    val = np.take_along_axis(win, k[..., None], axis=-1)[..., 0]
    h = np.arange(HO)[:, None] * S - P + k // K
    w = np.arange(WO)[None, :] * S - P + k % K
    c.exact("output", outs[13], val)
    c.exact("indices", outs[14], (h * W + w).astype(np.int64))


def check_batchnorm_stats(c):
    N, C, H, W = (4, 16, 10, 10) if c.small else (64, 512, 28, 28)
    mu = c.rng.uniform(-2, 2, C)
    sd = c.rng.uniform(0.5, 2, C)
    x = (c.rng.standard_normal((N, C, H * W), dtype=np.float32) * sd[None, :, None]
         + mu[None, :, None]).astype(np.float32)
    outs = c.run("nvcc/batchnorm_stats.ptx", C, 256,
                 [c.buf_file("f32", x, "x"), s32(N), s32(C), s32(H * W),
                  f"buf:f32:{C}:out", f"buf:f32:{C}:out"], {4: np.float32, 5: np.float32})
    x64 = x.astype(np.float64)
    mean = x64.mean(axis=(0, 2))
    var = ((x64 - mean[None, :, None]) ** 2).mean(axis=(0, 2))
    c.close("mean", outs[4], mean, 1e-5)
    c.close("var", outs[5], var, 1e-5)


def check_upsample_bilinear(c):
    N, C, IH, IW, OH, OW = (2, 4, 16, 12, 32, 20) if c.small else (32, 64, 64, 64, 128, 128)
    x = c.rng.standard_normal((N, C, IH, IW), dtype=np.float32)
    total = N * C * OH * OW
    outs = c.run("nvcc/upsample_bilinear.ptx", cdiv(total, 256), 256,
                 [c.buf_file("f32", x, "x")] + [s32(v) for v in (N, C, IH, IW, OH, OW)] +
                 [f"buf:f32:{total}:out"], {7: np.float32})

    def source(n_in, n_out):
        # Source coordinates in float arithmetic, as the kernel computes them.
        scale = np.float32(n_in) / np.float32(n_out)
        o = np.arange(n_out, dtype=np.float32)
        s = np.maximum(scale * (o + np.float32(0.5)) - np.float32(0.5), np.float32(0))
        i0 = s.astype(np.int64)
        i1 = i0 + (i0 < n_in - 1)
        return i0, i1, (s - i0.astype(np.float32)).astype(np.float64)

    y0, y1, ly = source(IH, OH)
    x0, x1, lx = source(IW, OW)
    x64 = x.astype(np.float64)
    top, bot = x64[:, :, y0, :], x64[:, :, y1, :]
    ly = ly[:, None]
    ref = ((1 - ly) * ((1 - lx) * top[..., x0] + lx * top[..., x1]) +
           ly * ((1 - lx) * bot[..., x0] + lx * bot[..., x1]))
    c.close("output", outs[7], ref, 1e-5)


def check_histogram(c):
    n = 1 << 16 if c.small else 1 << 26
    bins = 1024
    # Some keys are out of range on purpose: the kernel ignores them.
    keys = c.rng.integers(0, bins + bins // 16, n, dtype=np.uint32)
    outs = c.run("nvcc/histogram.ptx", 8 * sm_count(), 256,
                 [c.buf_file("u32", keys, "keys"), f"scalar:s64:{n}", u32(bins),
                  f"buf:u32:{bins}:zero"], {3: np.uint32}, smem=bins * 4)
    ref = np.bincount(keys[keys < bins], minlength=bins).astype(np.uint32)
    c.exact("bins", outs[3], ref)


def check_reduce_shfl(c):
    n = 1 << 16 if c.small else 1 << 26
    x = c.rng.random(n, dtype=np.float32)
    outs = c.run("nvcc/reduce_shfl.ptx", 8 * sm_count(), 256,
                 [c.buf_file("f32", x, "x"), f"scalar:s64:{n}", "buf:f32:1:zero"],
                 {2: np.float32})
    # The order of the block atomics varies: a tolerance, not bit identity.
    c.close("out", outs[2], np.array([x.astype(np.float64).sum()]), 1e-5)


# ---------------------------------------------------------------------------
# Tensor-core GEMMs
# ---------------------------------------------------------------------------

def _check_gemm(c, ptx, tile_m, block):
    M = N = K = 256 if c.small else 8192
    a = (c.rng.random((M, K), dtype=np.float32) * 2 - 1).astype(np.float16)
    bt = (c.rng.random((N, K), dtype=np.float32) * 2 - 1).astype(np.float16)  # B, column-major
    outs = c.run(ptx, (N // 128, M // tile_m), block,
                 [c.buf_file("f16", a, "a"), c.buf_file("f16", bt, "b"),
                  f"buf:f32:{M * N}:out", s32(M), s32(N), s32(K)], {2: np.float32})
    ref = matmul64(a, bt.T)
    # fp16 products are exact in fp32; only the fp32 accumulation rounds.
    c.close("C", outs[2], ref, 1e-3)


def check_gemm_mma(c):
    _check_gemm(c, "nvcc/gemm_mma.ptx", 128, 256)


def check_gemm_wgmma(c):
    _check_gemm(c, "nvcc/gemm_wgmma.ptx", 64, 128)


# ---------------------------------------------------------------------------
# Triton kernels
# ---------------------------------------------------------------------------

def check_triton_softmax(c):
    rows = 256 if c.small else 65536
    cols, stride = 1000, 1024  # Masked tail: columns 1000..1023 stay untouched.
    x = c.rng.standard_normal((rows, stride), dtype=np.float32) * 3
    outs = c.run("triton/softmax_fp32_b1024.ptx", rows, 128,
                 [f"buf:f32:{rows * stride}:out", c.buf_file("f32", x, "x"),
                  s32(stride), s32(stride), s32(cols), "null", "null"],
                 {0: np.float32}, smem=TRITON_SMEM["softmax_fp32_b1024"])
    out = outs[0].reshape(rows, stride)
    x64 = x[:, :cols].astype(np.float64)
    e = np.exp(x64 - x64.max(axis=1, keepdims=True))
    c.close("out", out[:, :cols], e / e.sum(axis=1, keepdims=True), 1e-5)
    c.untouched("out padding", out[:, cols:])


def check_triton_layernorm(c):
    M, N = (64, 1536) if c.small else (16384, 4096)
    eps = 1e-5
    x = (c.rng.standard_normal((M, N), dtype=np.float32) + 0.5).astype(np.float16)
    w = (1 + 0.5 * c.rng.standard_normal(N, dtype=np.float32)).astype(np.float16)
    b = (0.1 * c.rng.standard_normal(N, dtype=np.float32)).astype(np.float16)
    outs = c.run("triton/layernorm_fwd_fp16.ptx", M, 256,
                 [c.buf_file("f16", x, "x"), f"buf:f16:{M * N}:out", c.buf_file("f16", w, "w"),
                  c.buf_file("f16", b, "b"), f"buf:f32:{M}:out", f"buf:f32:{M}:out",
                  s32(N), s32(N), f"scalar:f32:{eps}", "null", "null"],
                 {1: np.float16, 4: np.float32, 5: np.float32},
                 smem=TRITON_SMEM["layernorm_fwd_fp16"])
    x64 = x.astype(np.float64)
    mean = x64.mean(axis=1)
    var = ((x64 - mean[:, None]) ** 2).mean(axis=1)
    rstd = 1 / np.sqrt(var + np.float64(np.float32(eps)))
    y = (x64 - mean[:, None]) * rstd[:, None] * w.astype(np.float64) + b.astype(np.float64)
    c.close("y (fp16)", outs[1], y, 2e-3)
    c.close("mean", outs[4], mean, 1e-5)
    c.close("rstd", outs[5], rstd, 1e-5)


def check_triton_matmul(c):
    M = N = K = 256 if c.small else 8192
    a = (c.rng.random((M, K), dtype=np.float32) * 2 - 1).astype(np.float16)
    b = (c.rng.random((K, N), dtype=np.float32) * 2 - 1).astype(np.float16)
    outs = c.run("triton/matmul_fp16_128x128x64_w8_s3.ptx", cdiv(M, 128) * cdiv(N, 128), 256,
                 [c.buf_file("f16", a, "a"), c.buf_file("f16", b, "b"), f"buf:f16:{M * N}:out",
                  s32(M), s32(N), s32(K), s32(K), s32(N), s32(N), "null", "null"],
                 {2: np.float16}, smem=TRITON_SMEM["matmul_fp16_128x128x64_w8_s3"])
    c.close("C (fp16)", outs[2], matmul64(a, b), 2e-3)


def attention64(q, k, v, scale, causal):
    """softmax(q k^T * scale) v in float64, head by head in batches."""
    try:
        import torch
        dev = "cuda" if torch.cuda.is_available() else "cpu"
    except ImportError:
        torch = None
    Z, H, n, d = q.shape
    out = np.empty((Z, H, n, d), np.float64)
    qf, kf, vf = (t.reshape(Z * H, n, d) for t in (q, k, v))
    per = max(1, (1 << 27) // (n * n))  # 1 GiB of float64 scores at a time
    mask = np.triu(np.ones((n, n), bool), 1)
    for lo in range(0, Z * H, per):
        hi = min(Z * H, lo + per)
        if torch is not None:
            tq, tk, tv = (torch.from_numpy(np.ascontiguousarray(t[lo:hi])).to(dev).double()
                          for t in (qf, kf, vf))
            s = tq @ tk.transpose(1, 2) * scale
            if causal:
                s.masked_fill_(torch.from_numpy(mask).to(dev), float("-inf"))
            o = torch.softmax(s, dim=-1) @ tv
            out.reshape(Z * H, n, d)[lo:hi] = o.cpu().numpy()
            del tq, tk, tv, s, o
        else:
            s = qf[lo:hi].astype(np.float64) @ kf[lo:hi].astype(np.float64).transpose(0, 2, 1)
            s *= scale
            if causal:
                s[:, mask] = -np.inf
            s = np.exp(s - s.max(axis=-1, keepdims=True))
            out.reshape(Z * H, n, d)[lo:hi] = (s / s.sum(-1, keepdims=True)) @ vf[lo:hi]
    if torch is not None and dev == "cuda":
        torch.cuda.empty_cache()
    return out


def _check_attention(c, stem, causal):
    Z, H, n, d = (1, 2, 256, 64) if c.small else (4, 32, 4096, 64)
    scale = 1 / np.sqrt(d)
    q, k, v = (c.rng.standard_normal((Z, H, n, d), dtype=np.float32).astype(np.float16)
               for _ in range(3))
    strides = [H * n * d, n * d, d] * 4
    outs = c.run(f"triton/{stem}.ptx", (n // 128, Z * H), 256,
                 [c.buf_file("f16", q, "q"), c.buf_file("f16", k, "k"),
                  c.buf_file("f16", v, "v"), f"buf:f16:{q.size}:out", f"scalar:f32:{scale}"] +
                 [s32(s) for s in strides] + [s32(H), s32(n), "null", "null"],
                 {3: np.float16}, smem=TRITON_SMEM[stem])
    # P is rounded to fp16 before P V, and the output is fp16.
    c.close("out (fp16)", outs[3], attention64(q, k, v, scale, causal), 5e-3)


def check_triton_attention(c):
    _check_attention(c, "attn_fwd_noncausal_d64", False)


def check_triton_attention_causal(c):
    _check_attention(c, "attn_fwd_causal_d64", True)


# Hash kernels first: their references fork worker processes, best done
# before PyTorch starts threads.
KERNELS = [
    ("ethash_like", check_ethash_like),
    ("blake2b", check_blake2b),
    ("sha256d", check_sha256d),
    ("blake256", check_blake256),
    ("im2col", check_im2col),
    ("maxpool", check_maxpool),
    ("batchnorm_stats", check_batchnorm_stats),
    ("upsample_bilinear", check_upsample_bilinear),
    ("histogram", check_histogram),
    ("reduce_shfl", check_reduce_shfl),
    ("gemm_mma", check_gemm_mma),
    ("gemm_wgmma", check_gemm_wgmma),
    ("triton_softmax", check_triton_softmax),
    ("triton_layernorm", check_triton_layernorm),
    ("triton_matmul", check_triton_matmul),
    ("triton_attention", check_triton_attention),
    ("triton_attention_causal", check_triton_attention_causal),
]


def find_gpu_run():
    try:
        return find_tool("gpu-run")
    except ToolNotFound:
        pass
    for d in ("build", "build-rt"):
        p = os.path.join(ROOT, d, "bin", "gpu-run")
        if os.access(p, os.X_OK):
            return p
    return None


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--gpu-run", default=None, help="the gpu-run binary")
    ap.add_argument("--only", action="append", default=[],
                    help="check only kernels whose name contains this (repeatable)")
    ap.add_argument("--seed", type=int, default=None,
                    help="base seed (default: fresh from the OS; printed)")
    ap.add_argument("--workdir", default=None, help="where input and output files go")
    ap.add_argument("--json", default=None, help="write the results as JSON here")
    ap.add_argument("--small", action="store_true",
                    help="tiny problem sizes, to try the script itself quickly")
    ap.add_argument("--keep", action="store_true", help="keep the input and output files")
    ap.add_argument("--markdown", default=None,
                    help="write the results as a markdown table here")
    ap.add_argument("--date", default=None, help="date for the markdown (default: today)")
    args = ap.parse_args(argv)
    args.gpu_run = args.gpu_run or find_gpu_run()
    if not args.gpu_run:
        print("check_suite: error: gpu-run not found (build it, or give --gpu-run)",
              file=sys.stderr)
        return 2
    seed = args.seed if args.seed is not None else int.from_bytes(os.urandom(4), "little")
    kernels = [(n, f) for n, f in KERNELS if not args.only or any(s in n for s in args.only)]
    if not kernels:
        print("check_suite: error: no kernel matches --only", file=sys.stderr)
        return 2
    workdir = args.workdir or tempfile.mkdtemp(prefix="gpuopt-check-")
    os.makedirs(workdir, exist_ok=True)
    print(f"check_suite: seed {seed}, gpu-run {args.gpu_run}, files in {workdir}", flush=True)

    summary = []
    device = None
    for index, (name, fn) in enumerate(kernels):
        c = Context(args, name, seed + 7919 * index, workdir)
        start = time.time()
        try:
            fn(c)
            if not c.results:
                c._result(False, "no comparison made")
        except KernelFailure as e:
            c._result(False, str(e))
        except Exception as e:  # A broken check must not hide the others.
            c._result(False, f"{type(e).__name__}: {e}")
            traceback.print_exc()
        finally:
            if not args.keep:
                shutil.rmtree(c.dir, ignore_errors=True)
        ok = all(r[0] for r in c.results)
        elapsed = time.time() - start
        t = f"{c.time_ms:.4f} ms" if c.time_ms is not None else "-"
        print(f"{'PASS' if ok else 'FAIL'} {name} (seed {c.seed}, kernel {t}, "
              f"check {elapsed:.1f} s)", flush=True)
        for r_ok, detail in c.results:
            print(f"    {'ok ' if r_ok else 'BAD'} {detail}", flush=True)
        if not ok and c.command:
            print(f"    command: {c.command}", flush=True)
        device = device or c.device
        summary.append({"kernel": name, "pass": ok, "seed": c.seed, "time_ms": c.time_ms,
                        "check_s": round(elapsed, 1), "command": c.command,
                        "results": [{"ok": o, "detail": d} for o, d in c.results]})
    if not args.keep and not args.workdir:
        shutil.rmtree(workdir, ignore_errors=True)

    passed = sum(s["pass"] for s in summary)
    print(f"\ncheck_suite: {passed} of {len(summary)} kernels pass")
    print(f"{'kernel':<26} {'result':<6} {'median':>12}")
    for s in summary:
        t = f"{s['time_ms']:.4f} ms" if s["time_ms"] is not None else "-"
        print(f"{s['kernel']:<26} {'PASS' if s['pass'] else 'FAIL':<6} {t:>12}")
    result = {"seed": seed, "device": device, "kernels": summary}
    if args.json:
        with open(args.json, "w") as f:
            json.dump(result, f, indent=2)
    if args.markdown:
        with open(args.markdown, "w") as f:
            f.write(render_markdown(result, args.date or time.strftime("%Y-%m-%d"),
                                    "python3 benchmarks/check_suite.py"))
    return 0 if passed == len(summary) else 1


def render_markdown(result, date, command):
    """The results of a run as a markdown page."""
    kernels = result["kernels"]
    passed = sum(k["pass"] for k in kernels)
    lines = [f"# Suite kernels against their references on {result['device']}", "",
             f"- GPU: {result['device']}", f"- Date: {date}",
             f"- Command: `{command}` (base seed {result['seed']})",
             "- Method: fresh random inputs per kernel, run through gpu-run (inputs from "
             "files, outputs to files, outputs poisoned with 0xFF first); references with "
             "hashlib (sha256d, blake2b), a pure-Python BLAKE-256 checked against the "
             "BLAKE submission's test vectors and a numpy model of it (blake256), a numpy Keccak/FNV model checked against "
             "hashlib's SHA-3 (ethash_like), numpy, and PyTorch float64 on the GPU "
             "(GEMMs, attention). Integer and hash outputs must be bit-exact; float "
             "outputs are compared by ||out - ref|| / ||ref|| against a float64 reference.",
             f"- Result: {passed} of {len(kernels)} kernels pass.", "",
             "| kernel | result | kernel time (median of 3) | checks |",
             "| --- | --- | ---: | --- |"]
    for k in kernels:
        t = f"{k['time_ms']:.4f} ms" if k["time_ms"] is not None else "-"
        checks = "; ".join(r["detail"] for r in k["results"]).replace("|", "/")
        lines.append(f"| {k['kernel']} | {'PASS' if k['pass'] else 'FAIL'} | {t} | {checks} |")
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    sys.exit(main())
