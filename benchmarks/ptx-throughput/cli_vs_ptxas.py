#!/usr/bin/env python3
"""Time the one-process command line `gpu-opt IN.ptx -o OUT.ptx` against ptxas.

For every PTX file: the wall time of `gpu-opt FILE -o OUT.ptx` (import,
verification, export and writing, process start included) and of
`ptxas -arch=CHIP FILE` (`-g` for debug targets, `-c` for relocatable code,
as utils/check-roundtrip.py chooses), each the median of --repeat runs, the
ratio of the two, and gpu-opt's peak resident memory as a multiple of the
PTX size: in all, and above the resident size of the same command on an
empty module (the shared MLIR/LLVM libraries' pages, the same for any input).

    python3 benchmarks/ptx-throughput/cli_vs_ptxas.py --gpu-opt build/bin/gpu-opt \\
        --ptxas /usr/local/cuda/bin/ptxas build/large-ptx test/corpus/nvcc/sha256d.ptx
"""

import argparse
import importlib.util
import os
import statistics
import subprocess
import sys
import tempfile
import time

def load_roundtrip_module():
    """utils/check-roundtrip.py, for the ptxas flags it chooses per file."""
    path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..",
                        "utils", "check-roundtrip.py")
    spec = importlib.util.spec_from_file_location("check_roundtrip", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def run_timed(cmd):
    """Wall seconds and peak resident KiB of one run of `cmd`."""
    start = time.perf_counter()
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    _, status, usage = os.wait4(proc.pid, 0)
    elapsed = time.perf_counter() - start
    proc.returncode = os.waitstatus_to_exitcode(status)
    err = proc.stderr.read().decode()
    proc.stderr.close()
    if proc.returncode != 0:
        raise RuntimeError("%s failed:\n%s" % (" ".join(cmd), err.strip()))
    return elapsed, usage.ru_maxrss


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("files", nargs="+", help="PTX files or folders of them")
    parser.add_argument("--gpu-opt", default="gpu-opt")
    parser.add_argument("--ptxas", default=os.environ.get("PTXAS", "ptxas"))
    parser.add_argument("--chip", default="sm_90a")
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()

    roundtrip = load_roundtrip_module()
    files = []
    for f in args.files:
        if os.path.isdir(f):
            files += sorted(os.path.join(f, n) for n in os.listdir(f) if n.endswith(".ptx"))
        else:
            files.append(f)

    with tempfile.TemporaryDirectory() as tmp:
        empty = os.path.join(tmp, "empty.ptx")
        with open(empty, "w") as f:
            f.write(".version 8.7\n.target sm_90a\n.address_size 64\n")
        out = os.path.join(tmp, "out.ptx")
        base_kib = min(run_timed([args.gpu_opt, empty, "-o", out])[1] for _ in range(3))
        print("gpu-opt resident size on an empty module: %.1f MiB" % (base_kib / 1024))
        print("%-34s %9s %10s %9s %7s %9s %9s" % (
            "file", "MB", "gpu-opt s", "ptxas s", "ratio", "mem/size", "above/size"))
        worst = 0.0
        for path in files:
            size = os.path.getsize(path)
            runs = [run_timed([args.gpu_opt, path, "-o", out]) for _ in range(args.repeat)]
            ours = statistics.median(r[0] for r in runs)
            peak_kib = max(r[1] for r in runs)
            with open(path) as f:
                flags = roundtrip.ptxas_flags(path, f.read())
            theirs = statistics.median(
                run_timed([args.ptxas, "-arch=" + args.chip] + flags +
                          [path, "-o", os.path.join(tmp, "out.cubin")])[0]
                for _ in range(args.repeat))
            ratio = ours / theirs
            worst = max(worst, ratio)
            print("%-34s %9.2f %10.3f %9.2f %6.1f%% %8.1fx %9.1fx" % (
                os.path.basename(path)[:34], size / 1e6, ours, theirs, 100 * ratio,
                peak_kib * 1024 / size, (peak_kib - base_kib) * 1024 / size))
        print("worst gpu-opt/ptxas: %.1f%%" % (100 * worst))
    return 0


if __name__ == "__main__":
    sys.exit(main())
