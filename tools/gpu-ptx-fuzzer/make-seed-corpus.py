#!/usr/bin/env python3
"""Fill a libFuzzer corpus folder with seeds for gpu-ptx-fuzzer.

Seeds are every .ptx file of the kernel corpus (test/corpus), the
hand-written snippets next to this script (seeds/), and, for corpus files
longer than --max-len (which libFuzzer would truncate), the module header
followed by one top-level function at a time.
"""

import argparse
import hashlib
import os
import re
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))

# A top-level function header at the start of a line.
FUNCTION = re.compile(
    r"^(?:\.(?:visible|extern|weak|common)\s+)?\.(?:entry|func)\b", re.M)


def ptx_files(paths):
    for path in paths:
        if os.path.isfile(path):
            yield path
            continue
        for root, _, names in sorted(os.walk(path)):
            for name in sorted(names):
                if name.endswith(".ptx"):
                    yield os.path.join(root, name)


def split_functions(text):
    """The header (all before the first function) plus each function."""
    starts = [m.start() for m in FUNCTION.finditer(text)]
    if not starts:
        return []
    header = text[:starts[0]]
    bounds = starts + [len(text)]
    return [header + text[a:b] for a, b in zip(bounds, bounds[1:])]


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out", help="corpus folder to fill (created)")
    parser.add_argument("inputs", nargs="*",
                        default=[os.path.join(ROOT, "test", "corpus"),
                                 os.path.join(HERE, "seeds")],
                        help="PTX files or folders (default: test/corpus "
                             "and the hand-written seeds)")
    parser.add_argument("--max-len", type=int, default=65536,
                        help="the fuzzer's -max_len (default: %(default)s)")
    args = parser.parse_args()

    os.makedirs(args.out, exist_ok=True)
    count = 0

    def write(name, data):
        nonlocal count
        digest = hashlib.sha1(data).hexdigest()[:12]
        with open(os.path.join(args.out, "%s-%s.ptx" % (name, digest)),
                  "wb") as f:
            f.write(data)
        count += 1

    for path in ptx_files(args.inputs):
        with open(path, "rb") as f:
            data = f.read()
        stem = os.path.splitext(os.path.basename(path))[0]
        write(stem, data)
        if len(data) <= args.max_len:
            continue
        text = data.decode("utf-8", errors="surrogateescape")
        for i, chunk in enumerate(split_functions(text)):
            chunk = chunk.encode("utf-8", errors="surrogateescape")
            if len(chunk) <= args.max_len:
                write("%s.fn%d" % (stem, i), chunk)
    print("wrote %d seeds to %s" % (count, args.out))
    return 0


if __name__ == "__main__":
    sys.exit(main())
