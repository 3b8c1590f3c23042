#!/usr/bin/env python3
"""Check that the ELF files under a folder (or in a wheel) run on a machine
that has only what a Python wheel may rely on.

Every ELF file's NEEDED entries must be among the system libraries a
manylinux wheel may use (libc, libm, libdl, libpthread, librt, libstdc++,
libgcc_s, libz, the dynamic loader) or a library shipped beside it (found in
the same folder tree); no RUNPATH may point outside the tree (only $ORIGIN
paths); and libgpuopt.so may export only gpuopt::api symbols, so that the
MLIR and LLVM inside it never meet another LLVM in the same process.

    utils/check-needed.py build/self-contained
    utils/check-needed.py dist/gpuopt-0.1.0-....whl

Prints one line per ELF file and exits 1 on the first kind of violation
found in any of them. Reads ELF files with readelf and nm (binutils).
"""

import argparse
import os
import re
import subprocess
import sys
import tempfile
import zipfile

ALLOWED = {
    "libc.so.6", "libm.so.6", "libdl.so.2", "libpthread.so.0", "librt.so.1",
    "libstdc++.so.6", "libgcc_s.so.1", "libz.so.1", "ld-linux-x86-64.so.2",
}
# What libgpuopt.so may export: the API's functions, classes and their
# typeinfo and vtables (Itanium mangling of gpuopt::api).
API_SYMBOL = re.compile(r"^_Z(N|TV|TI|TS|NK)N?6gpuopt3api")


def is_elf(path):
    try:
        with open(path, "rb") as f:
            return f.read(4) == b"\x7fELF"
    except OSError:
        return False


def dynamic_section(path):
    out = subprocess.run(["readelf", "-dW", path], capture_output=True,
                         text=True, check=True).stdout
    needed = re.findall(r"\(NEEDED\)\s+Shared library: \[([^\]]+)\]", out)
    runpath = re.findall(r"\((?:RUNPATH|RPATH)\)\s+Library r(?:un)?path: \[([^\]]*)\]", out)
    return needed, runpath


def exported_symbols(path):
    out = subprocess.run(["nm", "-D", "--defined-only", path],
                         capture_output=True, text=True, check=True).stdout
    symbols = []
    for line in out.splitlines():
        parts = line.split()
        if len(parts) == 3 and parts[1] not in ("A",):
            symbols.append(parts[2])
    return symbols


def check_tree(root):
    """Returns the list of problems found under root."""
    elves = []
    for folder, _, files in os.walk(root):
        for name in files:
            path = os.path.join(folder, name)
            if not os.path.islink(path) and is_elf(path):
                elves.append(path)
    shipped = {os.path.basename(p) for p in elves}
    problems = []
    if not elves:
        problems.append(f"{root}: no ELF files")
    for path in sorted(elves):
        rel = os.path.relpath(path, root)
        needed, runpath = dynamic_section(path)
        foreign = [n for n in needed if n not in ALLOWED and n not in shipped]
        outside = [p for entry in runpath for p in entry.split(":")
                   if p and not p.startswith("$ORIGIN")]
        print(f"{rel}: NEEDED {', '.join(needed) or '-'}"
              + (f"; RUNPATH {':'.join(runpath)}" if runpath else ""))
        if foreign:
            problems.append(f"{rel} needs {', '.join(foreign)}")
        if outside:
            problems.append(f"{rel} has a RUNPATH outside its folder: {', '.join(outside)}")
        if os.path.basename(path).startswith("libgpuopt"):
            exported = exported_symbols(path)
            extra = [s for s in exported if not API_SYMBOL.match(s)
                     and not s.startswith(("_init", "_fini"))]
            print(f"{rel}: {len(exported)} exported symbols")
            if extra:
                problems.append(f"{rel} exports {len(extra)} symbols outside "
                                f"gpuopt::api, e.g. {', '.join(extra[:5])}")
    return problems


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("path", help="a folder or a .whl file")
    args = parser.parse_args()
    if args.path.endswith(".whl"):
        with tempfile.TemporaryDirectory() as tmp:
            with zipfile.ZipFile(args.path) as wheel:
                for info in wheel.infolist():
                    wheel.extract(info, tmp)
            problems = check_tree(tmp)
    else:
        problems = check_tree(args.path)
    for problem in problems:
        print(f"error: {problem}", file=sys.stderr)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
