#!/usr/bin/env python3
"""A stand-in for ptxas in --hfuse-plan tests: writes an empty cubin and, with
-v, a resource report for every .entry of the input. Registers per entry come
from $FAKE_PTXAS_REGS ("entry=regs,..."; default 32), for a probed kernel from
$FAKE_PTXAS_PROBED_REGS first, and for one that calls a probe exit function
from $FAKE_PTXAS_EXIT_FUNCTION_REGS before that; a probed kernel spills the
bytes $FAKE_PTXAS_PROBED_SPILLS gives it (any entry those of
$FAKE_PTXAS_SPILLS), and one capped with `.maxnreg N`
those of $FAKE_PTXAS_CAPPED_SPILLS (and at most N registers). $FAKE_PTXAS_MODULE_REGS
("text=regs,...") sets the registers of every entry of an input that contains
the text, before the others (two modules may have kernels of one name). An
entry named in $FAKE_PTXAS_FAIL makes it fail like ptxas refusing the
input; so does an `.extern .func` without -c."""
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
def env_map(var):
    return dict(item.split("=") for item in os.environ.get(var, "").split(",") if item)


for marker, count in env_map("FAKE_PTXAS_MODULE_REGS").items():
    if marker in text:
        regs.update({name: count for name in re.findall(r"\.entry\s+([\w$]+)", text)})
spills = env_map("FAKE_PTXAS_SPILLS")
if "__probe_" in text:
    regs.update(env_map("FAKE_PTXAS_PROBED_REGS"))
    spills = env_map("FAKE_PTXAS_PROBED_SPILLS")
if ".func __pr_exit_" in text:
    regs.update(env_map("FAKE_PTXAS_EXIT_FUNCTION_REGS"))
# A probed kernel capped with .maxnreg N: at most N registers, and spills.
if "__probe_" in text:
    for name, bytes_ in env_map("FAKE_PTXAS_CAPPED_SPILLS").items():
        cap = re.search(r"\.entry\s+" + re.escape(name) + r"\([^{]*\.maxnreg\s+(\d+)", text)
        if cap:
            regs[name] = str(min(int(regs.get(name, 32)), int(cap.group(1))))
            spills[name] = bytes_
# Calls into another module link later: like ptxas, only with -c.
if re.search(r"\.extern\s+\.func\b", text) and "-c" not in args:
    print("ptxas fatal   : Unresolved extern function")
    sys.exit(255)
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
        print(f"    0 bytes stack frame, {spills.get(name, 0)} bytes spill stores, "
              "0 bytes spill loads")
        print(f"ptxas info    : Used {regs.get(name, 32)} registers, used 1 barriers, "
              f"{smem.group(1) if smem else 0} bytes smem, 368 bytes cmem[0]")
