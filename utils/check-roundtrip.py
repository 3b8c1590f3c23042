#!/usr/bin/env python3
"""Check that PTX survives import into the ptx dialect and export unchanged.

For every PTX file: import it with `gpu-translate --import-ptx` (to MLIR text),
export it with `--export-ptx`, assemble the original and the exported PTX
with ptxas, and compare the cubins' code sections (utils/compare-cubin-text.py).
The exported PTX must also be a fixed point: importing and exporting it again
gives the same text.

Both PTX files are assembled with the same ptxas flags, chosen per file:
  -g  when the `.target` line says `debug` (nvcc -G output): ptxas then keeps
      the PTX's debug information, and the code depends on details such as
      `[%rd1+0]` versus `[%rd1]` that an optimised build hides;
  -c  for relocatable code (nvcc -rdc=true output): files named `*.rdc.ptx`,
      and files that declare an `.extern .global` / `.extern .const` variable
      or an `.extern .func` other than the system calls whole-program ptxas
      resolves itself (vprintf, malloc, free, __assertfail). `.extern .shared`
      (dynamic shared memory, as Triton and nvcc emit it) does not count. A
      library's PTX without externs (only `.visible .func`) needs the name:
      whole-program ptxas would drop its uncalled functions.
Compared cubins' relocations are compared as well (compare-cubin-text.py).

Prints one line per file with the ptxas flags used, a summary with counts per
corpus folder, and a line counting the files compared under -g and -c; exits
1 if any file differs.
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

# External functions that ptxas resolves in a whole-program build.
SYSCALLS = {"vprintf", "malloc", "free", "__assertfail"}
TARGET_RE = re.compile(r"^\s*\.target\s+([^\n/]*)", re.M)
EXTERN_FUNC_RE = re.compile(r"^\s*\.extern\s+\.func\s*(?:\([^)]*\)\s*)?([A-Za-z_$%][\w$%]*)", re.M)
EXTERN_VAR_RE = re.compile(r"^\s*\.extern\s+\.(?:global|const)\b", re.M)


def ptxas_flags(path, text):
    """The extra ptxas flags for the PTX file at path (see the module doc)."""
    flags = []
    target = TARGET_RE.search(text)
    if target and "debug" in [t.strip() for t in target.group(1).split(",")]:
        flags.append("-g")
    if (path.endswith(".rdc.ptx") or EXTERN_VAR_RE.search(text)
            or any(name not in SYSCALLS for name in EXTERN_FUNC_RE.findall(text))):
        flags.append("-c")
    return flags


def run(cmd):
    proc = subprocess.run(cmd, capture_output=True, text=True)
    if proc.returncode != 0:
        raise RuntimeError("%s failed:\n%s" % (" ".join(cmd), proc.stderr.strip()))
    return proc.stdout


def check(path, flags, args, tmp):
    """Returns (identical, why, compared): compared is True once both cubins
    were built and compared."""
    base = os.path.join(tmp, re.sub(r"[^A-Za-z0-9_.-]", "_", path))
    try:
        run([args.gpu_translate, "--import-ptx", path, "-o", base + ".mlir"])
        run([args.gpu_translate, "--export-ptx", base + ".mlir", "-o", base + ".out.ptx"])
        run([args.gpu_translate, "--import-ptx", base + ".out.ptx", "-o", base + ".2.mlir"])
        run([args.gpu_translate, "--export-ptx", base + ".2.mlir", "-o", base + ".2.ptx"])
        with open(base + ".out.ptx") as a, open(base + ".2.ptx") as b:
            if a.read() != b.read():
                return False, "export is not a fixed point of import+export", False
        for src, cubin in ((path, base + ".orig.cubin"), (base + ".out.ptx", base + ".rt.cubin")):
            run([args.ptxas, "-arch=" + args.chip] + flags + [src, "-o", cubin])
        proc = subprocess.run([sys.executable, COMPARE, base + ".orig.cubin", base + ".rt.cubin"],
                              capture_output=True, text=True)
        if proc.returncode != 0:
            return False, proc.stdout.strip() + proc.stderr.strip(), True
        return True, "", True
    except RuntimeError as e:
        return False, str(e), False


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

    def one(path):
        with open(path) as f:
            text = f.read()
        flags = ptxas_flags(path, text)
        n = len(re.findall(r"^\s*(?:\.visible\s+|\.weak\s+)?\.entry\s", text, re.M))
        return path, flags, n, check(path, flags, args, tmp)

    kernels = {}
    ok = {}
    under = {"-g": 0, "-c": 0}
    plain = not_compared = 0
    with tempfile.TemporaryDirectory() as tmp, \
            concurrent.futures.ThreadPoolExecutor(args.jobs) as pool:
        for path, flags, n, (same, why, compared) in pool.map(one, files):
            group = os.path.basename(os.path.dirname(path))
            kernels[group] = kernels.get(group, 0) + n
            ok.setdefault(group, [0, 0])
            ok[group][1] += 1
            how = "[ptxas %s]" % " ".join(["-arch=" + args.chip] + flags)
            if compared:
                for flag in flags:
                    under[flag] += 1
                plain += not flags
            else:
                not_compared += 1
            if same:
                ok[group][0] += 1
                print("IDENTICAL %s (%d kernels) %s" % (path, n, how))
            else:
                print("DIFFERENT %s %s: %s" % (path, how, why))
    total_ok = sum(v[0] for v in ok.values())
    print("round trip: %d/%d files with identical code sections, %d kernels (%s)" % (
        total_ok, len(files), sum(kernels.values()),
        ", ".join("%s: %d/%d files, %d kernels" % (g, ok[g][0], ok[g][1], kernels[g])
                  for g in sorted(ok))))
    print("ptxas: %d files compared under -g (debug target), %d under -c (relocatable), "
          "%d with neither; %d not compared (import, export or ptxas failed)" % (
              under["-g"], under["-c"], plain, not_compared))
    return 0 if total_ok == len(files) else 1


if __name__ == "__main__":
    sys.exit(main())
