#!/usr/bin/env python3
"""gpu-run on a real GPU: launches the manifest decides, and __constant__ data.

  generate (no GPU)  fuses the two kernels of test/Runtime/Inputs/smem-parts.ptx
                     by dynamic dispatch, the first with exactly 48 KiB of
                     dynamic shared memory (the fused kernel's ticket makes it
                     need the >48 KiB opt-in: manifest "smem_optin")
  check    (GPU)     - the fused kernel, launched from its manifest with no
                       --smem, writes what the two kernels apart write, byte
                       for byte (gpu-run must raise the shared memory limit);
                     - the module's kernel without dynamic shared memory runs
                       without --smem (decided per kernel);
                     - --const fills __constant__ arrays: fake_const and taps4
                       (test/Runtime/Inputs/const.cu) against numpy on fresh
                       random inputs and coefficients.

usage: runtime_checks.py generate [--gpu-opt PATH] [--dir DIR]
       runtime_checks.py check [--gpu-run PATH] [--dir DIR] [--seed N]
Exit status 1 when a check fails.
"""

import argparse
import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
INPUTS = os.path.join(ROOT, "test", "Runtime", "Inputs")
K1 = "_ZN12gpuopt_tests42reverse_rows_through_dynamic_shared_memoryIfEEvPKT_PS1_j"
K2 = "_ZN12gpuopt_tests27scale_in_a_grid_stride_loopIfEEvPT_S1_j"
N = 8192
SMEM = 49152


def run(cmd):
    print("$ " + " ".join(cmd), flush=True)
    r = subprocess.run(cmd, capture_output=True, text=True)
    out = (r.stdout + r.stderr).strip()
    if out:
        print(out[-2000:], flush=True)
    return r.returncode


def cmd_generate(args):
    os.makedirs(args.dir, exist_ok=True)
    return run([args.gpu_opt, os.path.join(INPUTS, "smem-parts.ptx"),
                f"--hfuse=kernels={K1},{K2} strategy=dynamic blocks=128,256 "
                f"grids=64,32 smem={SMEM},0",
                "-o", os.path.join(args.dir, "fused.ptx"),
                "--manifest", os.path.join(args.dir, "fused.json")])


def cmd_check(args):
    import numpy as np
    d = os.path.abspath(args.dir)
    rng = np.random.default_rng(args.seed)
    failures = []

    def check(name, ok, detail=""):
        print(f"runtime_checks: {name}: {'PASS' if ok else 'FAIL'} {detail}", flush=True)
        if not ok:
            failures.append(name)

    def path(name):
        return os.path.join(d, name)

    # Fused kernel with a 48 KiB part, launched as its manifest says.
    x = rng.standard_normal(N, dtype=np.float32)
    y = rng.standard_normal(N, dtype=np.float32)
    x.tofile(path("x.bin"))
    y.tofile(path("y.bin"))
    smem_parts = os.path.join(INPUTS, "smem-parts.ptx")
    a1 = ["--arg", f"buf:f32:{N}:file:{path('x.bin')}", "--arg", f"buf:f32:{N}:out",
          "--arg", f"scalar:u32:{N}"]
    a2 = ["--arg", f"buf:f32:{N}:file:{path('y.bin')}", "--arg", "scalar:f32:1.5",
          "--arg", f"scalar:u32:{N}"]
    rc1 = run([args.gpu_run, smem_parts, "--kernel", K1, "--grid", "64", "--block", "128",
               "--smem", str(SMEM)] + a1 + ["--out", f"1:{path('k1.bin')}", "--repeat", "0"])
    # No --smem: the kernel uses no dynamic shared memory, though its module
    # declares an extern shared array.
    rc2 = run([args.gpu_run, smem_parts, "--kernel", K2, "--grid", "32", "--block", "256"]
              + a2 + ["--out", f"0:{path('k2.bin')}", "--repeat", "0"])
    check("kernel without dynamic shared memory runs without --smem", rc2 == 0)
    rcf = run([args.gpu_run, path("fused.ptx"), "--manifest", path("fused.json")] + a1 + a2
              + ["--out", f"1:{path('f1.bin')}", "--out", f"3:{path('f2.bin')}",
                 "--repeat", "3"])
    check("fused kernel with smem_optin launches from its manifest", rcf == 0)
    if rc1 == 0 and rc2 == 0 and rcf == 0:
        same1 = open(path("k1.bin"), "rb").read() == open(path("f1.bin"), "rb").read()
        same2 = open(path("k2.bin"), "rb").read() == open(path("f2.bin"), "rb").read()
        check("fused outputs bit-identical to the kernels apart", same1 and same2)
        check("reference: reversed rows", np.array_equal(
            np.fromfile(path("k1.bin"), np.float32), x.reshape(-1, 128)[:, ::-1].ravel()))

    # __constant__ arrays.
    const_ptx = os.path.join(INPUTS, "const.ptx")
    src = rng.integers(0, 128, N, dtype=np.uint8)
    coeffs = rng.integers(0, 128, 64, dtype=np.uint8)
    src.tofile(path("src.bin"))
    coeffs.tofile(path("coeffs.bin"))
    rc = run([args.gpu_run, const_ptx, "--kernel", "fake_const", "--grid", str(N // 128),
              "--block", "128", "--arg", f"buf:u8:{N}:file:{path('src.bin')}",
              "--arg", f"buf:u8:{N}:out", "--arg", f"scalar:u32:{N}",
              "--const", f"coeffs:u8:64:file:{path('coeffs.bin')}",
              "--out", f"1:{path('dst.bin')}", "--repeat", "0"])
    check("--const coeffs (u8[64]) reaches the kernel", rc == 0 and np.array_equal(
        np.fromfile(path("dst.bin"), np.uint8), src + np.tile(coeffs, N // 64)))
    v = rng.standard_normal(N, dtype=np.float32)
    taps = rng.standard_normal(4, dtype=np.float32)
    v.tofile(path("v.bin"))
    taps.tofile(path("taps.bin"))
    rc = run([args.gpu_run, const_ptx, "--kernel", "taps4", "--grid", str(N // 256),
              "--block", "256", "--arg", f"buf:f32:{N}:file:{path('v.bin')}",
              "--arg", f"scalar:u32:{N}", "--const", f"filt::taps:f32:4:file:{path('taps.bin')}",
              "--out", f"0:{path('taps_out.bin')}", "--repeat", "0"])
    check("--const filt::taps (f32[4], namespaced) reaches the kernel", rc == 0 and np.array_equal(
        np.fromfile(path("taps_out.bin"), np.float32), v * np.tile(taps, N // 4)))
    print(f"runtime_checks: {'all passed' if not failures else 'FAILED: ' + ', '.join(failures)}")
    return 1 if failures else 0


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    g = sub.add_parser("generate")
    g.add_argument("--gpu-opt", default=os.path.join(ROOT, "build", "bin", "gpu-opt"))
    c = sub.add_parser("check")
    c.add_argument("--gpu-run", default=os.path.join(ROOT, "build", "bin", "gpu-run"))
    c.add_argument("--seed", type=int, default=int.from_bytes(os.urandom(4), "little"))
    for p in (g, c):
        p.add_argument("--dir", default=os.path.join(ROOT, "build", "runtime-checks"))
    args = ap.parse_args(argv)
    return cmd_generate(args) if args.cmd == "generate" else cmd_check(args)


if __name__ == "__main__":
    sys.exit(main())
