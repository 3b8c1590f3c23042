#!/usr/bin/env python3
"""A stand-in for ptxas in --hfuse-plan tests: writes an empty cubin and, with
-v, a resource report for every .entry of the input. Registers per entry come
from $FAKE_PTXAS_REGS ("entry=regs,..."; default 32), for a probed kernel from
$FAKE_PTXAS_PROBED_REGS first; an entry named in
$FAKE_PTXAS_FAIL makes it fail like ptxas refusing the input."""
import os
import re
import sys

args = sys.argv[1:]
src = next(a for a in args if a.endswith(".ptx"))
out = args[args.index("-o") + 1]
text = open(src).read()
regs = dict(item.split("=") for item in
            os.environ.get("FAKE_PTXAS_REGS", "").split(",") if item)
# A probed kernel (one with a probe buffer) may report other registers.
if "__probe_" in text:
    regs.update(item.split("=") for item in
                os.environ.get("FAKE_PTXAS_PROBED_REGS", "").split(",") if item)
for name in re.findall(r"\.entry\s+([\w$]+)", text):
    if name == os.environ.get("FAKE_PTXAS_FAIL"):
        print(f"ptxas error   : Entry function '{name}' uses too much shared data")
        sys.exit(255)
open(out, "wb").close()
if "-v" in args:
    for name in re.findall(r"\.entry\s+([\w$]+)", text):
        smem = re.search(r"\.shared\s+\.align\s+\d+\s+\.b8\s+\w+\[(\d+)\]", text)
        print(f"ptxas info    : Compiling entry function '{name}' for 'sm_90a'")
        print(f"ptxas info    : Function properties for {name}")
        print("    0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads")
        print(f"ptxas info    : Used {regs.get(name, 32)} registers, used 1 barriers, "
              f"{smem.group(1) if smem else 0} bytes smem, 368 bytes cmem[0]")
