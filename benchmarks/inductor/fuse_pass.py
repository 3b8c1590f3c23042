#!/usr/bin/env python3
"""gpu-opt's Inductor fusion pass (gpuopt.torch.compile_fused) against
Inductor's own combo kernels, end to end, on the six two-op programs of the
Inductor benchmark (gpuopt.capture.inductor.programs; needs a GPU, PyTorch
2.11, Triton 3.6 and the gpuopt package with its compiler extension):

    python3 benchmarks/inductor/fuse_pass.py [--programs a,b] [--reps 50] [--json OUT]

For each program, on seeded random inputs (every variant gets its own copy
of the same inputs: bnstats_histogram updates one in place):

- Inductor as it is, combo kernels off ("off") and on ("combo");
- the pass: it plans on its first call, builds, checks and measures each
  pair of independent kernels on the second, times its variants and keeps
  the fastest ("pass", what a user gets from then on), and, apart, its
  fused variant forced ("fused": combo off with the pairs fused wherever
  the per-pair measured choice said so);
- outputs bit for bit: "fused" (three calls) and the pass's second call
  against the same compile without gpu-opt's kernels, "pass"
  against the variant it chose; "off" and "combo" are separate compiles,
  which may autotune reductions differently;
- time of one call of the compiled program (CUDA events around the call,
  Python launch included), warm-up, then rounds that interleave the
  variants, median; ratio = pass / min(off, combo).

Prints one JSON line per program and a summary; --json writes them all.
"""

import argparse
import json
import statistics
import sys

from gpuopt.torch_fuse import clone_tensors as clone


def same_bits(a, b):
    import torch
    if isinstance(a, torch.Tensor):
        return bool(torch.equal(a.contiguous().view(torch.uint8), b.contiguous().view(torch.uint8)))
    if isinstance(a, (list, tuple)):
        return len(a) == len(b) and all(same_bits(x, y) for x, y in zip(a, b))
    return a == b


def timed(fn, inputs, reps):
    import torch
    samples = []
    for _ in range(reps):
        args = clone(inputs)
        s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        torch.cuda.synchronize()
        s.record()
        fn(*args)
        e.record()
        e.synchronize()
        samples.append(s.elapsed_time(e))
    return samples


def run_program(prog, reps, rounds, seed):
    import torch
    import gpuopt.torch
    torch._dynamo.reset()
    g = torch.Generator(device="cuda").manual_seed(seed)
    inputs = prog.make_inputs(g)
    pas = gpuopt.torch.compile_fused(prog.fn, reps=20, warmup=3)
    row = {"program": prog.name, "description": prog.description, "seed": seed}
    pas(*clone(inputs))                 # compiles, autotunes, plans
    second = pas(*clone(inputs))        # builds, checks, measures each pair; chooses
    # Inductor as it is, combo kernels off and on: the pass compiled both
    # (its own copies of the function) to choose among them.
    off, combo = pas.plain, pas.combo
    ref_off = off(*clone(inputs))
    ref_combo = combo(*clone(inputs))
    row["pass"] = pas.report()
    # The fused variant against the same compile without gpu-opt's kernels
    # (separate compiles may autotune reductions differently, so "off" is
    # not bit-identical to it in general).
    unfused = pas.compiled(*clone(inputs))
    fused_outs = [pas._run_fused(tuple(clone(inputs)), {}) for _ in range(3)]
    chosen_out = pas(*clone(inputs))
    chosen_ref = {"combo": ref_combo, "plain": ref_off}.get(pas.choice, unfused)
    row["bit_identical"] = {
        "fused_vs_unfused": all(same_bits(o, unfused) for o in fused_outs),
        "second_call_vs_unfused": same_bits(second, unfused),
        "pass_vs_its_choice": same_bits(chosen_out, chosen_ref),
        "unfused_vs_off": same_bits(unfused, ref_off),
        "combo_vs_off": same_bits(ref_combo, ref_off)}
    variants = {"off": off, "combo": combo, "pass": pas,
                "fused": lambda *a: pas._run_fused(a, {})}
    for fn in variants.values():       # warm
        for _ in range(3):
            fn(*clone(inputs))
    samples = {k: [] for k in variants}
    for _ in range(rounds):
        for name, fn in variants.items():
            samples[name] += timed(fn, inputs, reps)
    t = {k: statistics.median(v) for k, v in samples.items()}
    row["times_ms"] = t
    best = min(t["off"], t["combo"])
    row["pass_vs_best_inductor"] = best / t["pass"]
    row["fused_vs_best_inductor"] = best / t["fused"]
    row["combo_vs_off"] = t["off"] / t["combo"]
    row["fuses"] = pas.choice == "fused"
    return row


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--programs", default=None, help="comma-separated names (default: all six)")
    ap.add_argument("--reps", type=int, default=30, help="timed calls per variant and round")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--seed", type=int, default=2026)
    ap.add_argument("--json", default=None)
    args = ap.parse_args(argv)
    import torch
    from gpuopt.capture.inductor import programs
    progs = programs()
    if args.programs:
        want = args.programs.split(",")
        progs = [p for p in progs if p.name in want]
    rows = []
    for prog in progs:
        try:
            row = run_program(prog, args.reps, args.rounds, args.seed)
        except Exception as e:  # recorded; the others go on
            import traceback
            row = {"program": prog.name, "error": f"{type(e).__name__}: {e}",
                   "trace": traceback.format_exc()[-3000:]}
        rows.append(row)
        short = {k: row.get(k) for k in ("program", "times_ms", "pass_vs_best_inductor",
                                         "fused_vs_best_inductor", "bit_identical", "error")}
        short["choice"] = (row.get("pass") or {}).get("choice")
        short["pairs"] = [(p["kernels"], [d.get("choice") for d in p["decisions"]],
                           [d.get("times_ms") for d in p["decisions"]])
                          for p in (row.get("pass") or {}).get("pairs", [])]
        print(json.dumps(short), flush=True)
    result = {"gpu": torch.cuda.get_device_name(), "torch": torch.__version__,
              "reps": args.reps, "rounds": args.rounds, "rows": rows}
    if args.json:
        with open(args.json, "w") as f:
            json.dump(result, f, indent=1)
    ok = all("error" not in r and all(r["bit_identical"][k] for k in
                                      ("fused_vs_unfused", "second_call_vs_unfused",
                                       "pass_vs_its_choice")) for r in rows)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
