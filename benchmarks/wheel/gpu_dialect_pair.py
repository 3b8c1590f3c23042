#!/usr/bin/env python3
"""examples/gpu-dialect/run.sh's MLIR part, without the nvcc baseline:

    python3 benchmarks/wheel/gpu_dialect_pair.py --out DIR --cubin PAIR.cubin \\
        --manifest PAIR.json [--seed N]

For a machine whose only ptxas (Triton's bundled one) cannot read the PTX ISA
of examples/gpu-dialect/pair.nvcc.ptx (nvcc 13.0's `.version 9.0`): run.sh
assembles and probes that PTX (step 3), so it stops there. This does what
run.sh does for the MLIR kernels, with the installed gpu-opt, gpu-run and
gpuopt (on PATH / PYTHONPATH):

1. the kernels apart: gpu-opt --gpu-to-ptx="chip=sm_90a" pair.mlir;
2. fused (gpu-opt --hfuse pair.mlir) and fused + probed (--probe=block_sched),
   as PTX; PAIR.cubin / PAIR.json are the user's command's output
   (`gpu-opt --hfuse --probe=block_sched pair.mlir -o pair.cubin --manifest
   pair.json`), run as they are;
4. one gpu-run process, seeded random inputs: the kernels apart and every
   fused kernel, each output compared byte for byte with the kernels apart's,
   and the apart kernels' with numpy (logistic bit for bit, blocksum within
   1e-4);
5. the probed cubin's block_sched records (python3 -m gpuopt.block_sched);
6. registers and CUDA-event times (medians of 200 after 20 warm-up launches).

Skipped, as run.sh without those tools: nvcc's build of the pair (step 3)
and the host executables (step 7: mlir-opt-22, llc-22). Writes DIR/details.md
and prints `RESULT: PASS|FAIL ...`.
"""

import argparse
import json
import os
import shutil
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, HERE)

import wheelcheck  # noqa: E402

SRC = os.path.join(ROOT, "examples", "gpu-dialect", "pair.mlir")
CHIP = "sm_90a"
# As run.sh: 528 blocks of 256 threads; logistic over 135000 floats, r = 3.7.
GRID, N, R = 528, 135000, "3.7"
M = GRID * 256


def sh(cmd, timeout=180):
    print("$ " + " ".join(cmd), flush=True)
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
    text = (r.stdout + r.stderr).strip()
    if text:
        print(text, flush=True)
    if r.returncode != 0:
        raise RuntimeError(f"{os.path.basename(cmd[0])} exited {r.returncode}: "
                           f"{wheelcheck.first_line(r.stderr or r.stdout)}")
    return r


def memref(buf, n):
    """A memref<?xf32> argument: allocated and aligned pointers, offset, size, stride."""
    return ["null", buf, "scalar:s64:0", f"scalar:s64:{n}", "scalar:s64:1"]


def spec(out, seed, cubin, cubin_manifest):
    o = os.path.join(out, "outputs")
    r = f"scalar:f32:{R}"
    x = f"buf:f32:{N}:random:{seed}:0.01:0.99"
    inp = f"buf:f32:{M}:random:{seed + 1}"
    sums = f"buf:f32:{GRID}:out"
    logistic = [r] + memref(x, N) + [f"scalar:s64:{N}"]
    blocksum = memref(inp, M) + memref(sums, GRID)
    pair = os.path.join(out, "pair.ptx")

    def apart(label, name, outs, args):
        return {"label": label, "module": pair, "kernel": name, "grid": [GRID], "block": [256],
                "smem": 0, "time_alone": False, "out": outs, "args": args}
    kernels = [
        # logistic with n = 0: every thread returns early; writes x as generated.
        apart("x", "logistic", {"2": f"{o}/x"}, logistic[:6] + ["scalar:s64:0"]),
        apart("mlir.logistic", "logistic", {"2": f"{o}/mlir.x"}, logistic),
        apart("mlir.blocksum", "blocksum", {"1": f"{o}/in", "6": f"{o}/mlir.sums"}, blocksum),
    ]
    fused = {"mlir.fused": (os.path.join(out, "fused.ptx"), os.path.join(out, "fused.json")),
             "mlir.fused.probed": (os.path.join(out, "fused.probed.ptx"),
                                   os.path.join(out, "fused.probed.json")),
             "user.pair.cubin": (cubin, cubin_manifest)}
    for label, (module, manifest) in fused.items():
        k = {"label": label, "module": module, "manifest": manifest, "time_alone": False,
             "out": {"2": f"{o}/{label}.x", "13": f"{o}/{label}.sums"},
             "args": logistic + blocksum}
        if label == "user.pair.cubin":
            k["trace"] = os.path.join(out, "trace")
        kernels.append(k)
    return {"warmup": 20, "repeat": 200, "kernels": kernels,
            "groups": [{"name": "mlir", "kernels": ["mlir.logistic", "mlir.blocksum"],
                        "modes": ["alone", "serial", "concurrent"], "also": list(fused)}]}, fused


def check_arg_maps(fused):
    for label, (_, manifest) in fused.items():
        k = wheelcheck.load_json(manifest)["kernels"][0]
        maps = [(p["kernel"], p["arg_map"]) for p in k["fused_from"]]
        want = [("logistic", list(range(7))), ("blocksum", list(range(7, 17)))]
        if maps != want:
            raise RuntimeError(f"{label}: expected logistic's then blocksum's arguments in "
                               f"order, got {maps}")


def check_numpy(o):
    import numpy as np
    r = np.float32(R)
    x0, x, inputs, sums = (np.fromfile(os.path.join(o, f), dtype=np.float32)
                           for f in ("x", "mlir.x", "in", "mlir.sums"))
    v = x0
    for _ in range(64):
        v = (r * v) * (np.float32(1) - v)
    ok = x.size == v.size and np.array_equal(x.view(np.uint32), v.view(np.uint32))
    ref = inputs.reshape(-1, 256).astype(np.float64).sum(1)
    err = float(np.abs(sums - ref).max()) if sums.size == ref.size else float("inf")
    lines = [f"logistic against numpy: {x.size} floats, "
             + ("bit-identical" if ok else "NOT bit-identical"),
             f"blocksum against numpy: max abs error {err:.2e} over {sums.size} sums"]
    return ok and err < 1e-4, lines


def times_table(report):
    kernels = {k["label"]: k for k in report["kernels"]}
    rows = ["| kernel | registers | static smem | median (us) | / serial |",
            "| --- | ---: | ---: | ---: | ---: |"]
    for g in report["groups"]:
        serial = g["serial"]["median_ms"]

        def row(label, t, k=None):
            regs = k.get("registers", "") if k else ""
            smem = k.get("static_smem", "") if k else ""
            rows.append(f"| {label} | {regs} | {smem} | {1000 * t['median_ms']:.2f} | "
                        f"{t['median_ms'] / serial:.2f} |")
        for label in g["kernels"]:
            row(label, g["alone"][label], kernels[label])
        for mode in ("serial", "concurrent"):
            row(f"both, {mode}", g[mode])
        for label, t in g["also"].items():
            row(label, t, kernels[label])
    return rows


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", required=True)
    ap.add_argument("--cubin", required=True, help="the user's command's pair.cubin")
    ap.add_argument("--manifest", required=True, help="its manifest")
    ap.add_argument("--seed", type=int, default=int(time.time()) % 1000000)
    args = ap.parse_args(argv)
    out = os.path.abspath(args.out)
    os.makedirs(out, exist_ok=True)
    md, problems = [], []
    gpu_opt, gpu_run = shutil.which("gpu-opt"), shutil.which("gpu-run")
    try:
        if not gpu_opt or not gpu_run:
            raise RuntimeError("gpu-opt or gpu-run is not on PATH")
        print("== 1. the kernels apart", flush=True)
        sh([gpu_opt, f"--gpu-to-ptx=chip={CHIP}", SRC, "-o", f"{out}/pair.ptx",
            "--manifest", f"{out}/pair.json"])
        print("== 2. fused, and fused + probed", flush=True)
        sh([gpu_opt, "--hfuse", SRC, "-o", f"{out}/fused.ptx", "--manifest", f"{out}/fused.json"])
        sh([gpu_opt, "--hfuse", "--probe=block_sched", SRC, "-o", f"{out}/fused.probed.ptx",
            "--manifest", f"{out}/fused.probed.json"])
        s, fused = spec(out, args.seed, os.path.abspath(args.cubin),
                        os.path.abspath(args.manifest))
        check_arg_maps(fused)
        o = os.path.join(out, "outputs")
        shutil.rmtree(o, ignore_errors=True)
        shutil.rmtree(os.path.join(out, "trace"), ignore_errors=True)
        os.makedirs(o)
        wheelcheck.dump_json(s, os.path.join(out, "spec.json"))
        print(f"== 4. one gpu-run process, inputs of seed {args.seed}", flush=True)
        sh([gpu_run, "--spec", f"{out}/spec.json", "--json", f"{out}/time.json"], 300)
        same = []
        for label in fused:
            for ref in ("x", "sums"):
                a, b = os.path.join(o, f"mlir.{ref}"), os.path.join(o, f"{label}.{ref}")
                if not (os.path.exists(b) and open(a, "rb").read() == open(b, "rb").read()):
                    problems.append(f"DIFFER: {label}.{ref} and mlir.{ref} (the kernels apart)")
                same.append(f"{label}.{ref}")
        ok, lines = check_numpy(o)
        for ln in lines:
            print("  " + ln)
        if not ok:
            problems.append("numpy: " + "; ".join(lines))
        md.append(f"Inputs of seed {args.seed}; outputs (x: {N} floats, sums: {GRID} floats) of "
                  f"{', '.join(fused)} "
                  + ("bit-identical to the MLIR kernels run apart" if not any(
                      p.startswith("DIFFER") for p in problems) else "**not** all identical")
                  + "; " + "; ".join(lines) + ".")
        print("== 5. block scheduling of the user's pair.cubin", flush=True)
        r = sh([sys.executable, "-m", "gpuopt.block_sched", f"{out}/trace", "--json",
                f"{out}/block_sched.json"])
        md += ["", "Block scheduling of the user's `pair.cubin` (`python3 -m gpuopt.block_sched`):",
               "", "```"] + r.stdout.strip().splitlines()[:20] + ["```"]
        report = wheelcheck.load_json(os.path.join(out, "time.json"))
        md += ["", f"Registers and times on {report['device'].get('name')} (medians of 200 "
               "launches after 20 warm-up launches, CUDA events, one gpu-run process):", ""]
        md += times_table(report)
        shutil.rmtree(o, ignore_errors=True)  # 2.7 MB of buffers, compared above
    except Exception as e:  # noqa: BLE001
        problems.append(f"{type(e).__name__}: {e}")
    md.append("\nSkipped: nvcc's build of the pair (run.sh step 3; Triton's ptxas cannot read "
              "its PTX ISA) and the host executables (step 7; no mlir-opt-22, llc-22).")
    wheelcheck.write_text(os.path.join(out, "details.md"), "\n".join(md) + "\n")
    if problems:
        return wheelcheck.result(False, "; ".join(problems))
    return wheelcheck.result(True, "apart vs fused (PTX, probed PTX, the user's pair.cubin) "
                             "bit-identical; numpy agrees; block_sched analysed")


if __name__ == "__main__":
    sys.exit(main())
