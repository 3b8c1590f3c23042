#!/usr/bin/env python3
"""Check that PTX survives import into the ptx dialect and export unchanged.

For every PTX file: import it with `gpu-translate --import-ptx` (to MLIR text),
export it with `--export-ptx`, assemble the original and the exported PTX
with ptxas, and compare the cubins' code sections (utils/compare-cubin-text.py).
The exported PTX must also be a fixed point: importing and exporting it again
gives the same text.

Prints one line per file and a summary with counts per corpus folder; exits 1
if any file differs.
"""

import argparse
import concurrent.futures
import os
import re
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
COMPARE = os.path.join(HERE, "compare-cubin-text.py")


def run(cmd):
    proc = subprocess.run(cmd, capture_output=True, text=True)
    if proc.returncode != 0:
        raise RuntimeError("%s failed:\n%s" % (" ".join(cmd), proc.stderr.strip()))
    return proc.stdout


def check(path, args, tmp):
    base = os.path.join(tmp, re.sub(r"[^A-Za-z0-9_.-]", "_", path))
    try:
        run([args.gpu_translate, "--import-ptx", path, "-o", base + ".mlir"])
        run([args.gpu_translate, "--export-ptx", base + ".mlir", "-o", base + ".out.ptx"])
        run([args.gpu_translate, "--import-ptx", base + ".out.ptx", "-o", base + ".2.mlir"])
        run([args.gpu_translate, "--export-ptx", base + ".2.mlir", "-o", base + ".2.ptx"])
        with open(base + ".out.ptx") as a, open(base + ".2.ptx") as b:
            if a.read() != b.read():
                return False, "export is not a fixed point of import+export"
        for src, cubin in ((path, base + ".orig.cubin"), (base + ".out.ptx", base + ".rt.cubin")):
            run([args.ptxas, "-arch=" + args.chip, src, "-o", cubin])
        proc = subprocess.run([sys.executable, COMPARE, base + ".orig.cubin", base + ".rt.cubin"],
                              capture_output=True, text=True)
        if proc.returncode != 0:
            return False, proc.stdout.strip() + proc.stderr.strip()
        return True, ""
    except RuntimeError as e:
        return False, str(e)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("files", nargs="+", help="PTX files or folders of them")
    parser.add_argument("--gpu-translate", default="gpu-translate")
    parser.add_argument("--ptxas", default=os.environ.get("PTXAS", "ptxas"))
    parser.add_argument("--chip", default="sm_90a")
    parser.add_argument("-j", "--jobs", type=int, default=os.cpu_count() or 1)
    args = parser.parse_args()

    files = []
    for f in args.files:
        if os.path.isdir(f):
            for root, _, names in os.walk(f):
                files += [os.path.join(root, n) for n in names if n.endswith(".ptx")]
        else:
            files.append(f)
    files.sort()

    kernels = {}
    ok = {}
    with tempfile.TemporaryDirectory() as tmp, \
            concurrent.futures.ThreadPoolExecutor(args.jobs) as pool:
        results = pool.map(lambda f: (f, check(f, args, tmp)), files)
        for path, (same, why) in results:
            group = os.path.basename(os.path.dirname(path))
            with open(path) as f:
                n = len(re.findall(r"^\s*(?:\.visible\s+|\.weak\s+)?\.entry\s", f.read(), re.M))
            kernels[group] = kernels.get(group, 0) + n
            ok.setdefault(group, [0, 0])
            ok[group][1] += 1
            if same:
                ok[group][0] += 1
                print("IDENTICAL %s (%d kernels)" % (path, n))
            else:
                print("DIFFERENT %s: %s" % (path, why))
    total_ok = sum(v[0] for v in ok.values())
    print("round trip: %d/%d files with identical code sections, %d kernels (%s)" % (
        total_ok, len(files), sum(kernels.values()),
        ", ".join("%s: %d/%d files, %d kernels" % (g, ok[g][0], ok[g][1], kernels[g])
                  for g in sorted(ok))))
    return 0 if total_ok == len(files) else 1


if __name__ == "__main__":
    sys.exit(main())
