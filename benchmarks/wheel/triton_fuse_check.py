#!/usr/bin/env python3
"""gpuopt.triton.fuse(k1, k2, measure=True) on two small Triton kernels,
checked bit for bit against the kernels launched apart (needs a GPU, torch,
Triton and the installed gpuopt):

    python3 benchmarks/wheel/triton_fuse_check.py --out DIR

The kernels are the Triton tutorials' vector add (2^24 fp32) and row softmax
(16384 x 1024 fp32, 8 warps), as in benchmarks/triton_fuse/run.py. Three
sets of the same seeded tensors:

- ref: each kernel launched apart by Triton (`kernel[grid](...)`);
- auto: `gpuopt.triton.fuse(add, softmax, measure=True)` (strategy="auto":
  gpu-opt's model chooses in process; measure=True times fused against the
  kernels back to back once for this launch shape and keeps the faster),
  called twice; after each call every output must equal ref's bit for bit;
- forced: `gpuopt.triton.fuse(add, softmax, strategy="interleave")`, so that
  a fused kernel runs (and is checked) also where auto declines or the
  measurement keeps the kernels apart; verify=True (the default) compares
  its first launch with the kernels apart on copies inside gpuopt, and
  its outputs are compared with ref here.

Builds go to DIR/cache (fresh), so gpu-opt's compiler runs in this process.
Writes DIR/result.json and DIR/details.md; prints `RESULT: PASS|FAIL ...`.
"""

import argparse
import os
import sys
import time
import traceback

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

import wheelcheck  # noqa: E402

ADD_N = 1 << 24
ROWS, COLS = 16384, 1024
SEED = 1234


try:  # importable without Triton (the CPU tests import this module)
    import triton
    import triton.language as tl
except ImportError:
    triton = None

if triton is not None:
    @triton.jit
    def add_kernel(x_ptr, y_ptr, out_ptr, n, BLOCK: tl.constexpr):
        offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
        m = offs < n
        tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=m) + tl.load(y_ptr + offs, mask=m),
                 mask=m)

    @triton.jit
    def softmax_kernel(out_ptr, in_ptr, in_stride, out_stride, n_cols, BLOCK: tl.constexpr):
        row = tl.program_id(0)
        cols = tl.arange(0, BLOCK)
        m = cols < n_cols
        x = tl.load(in_ptr + row * in_stride + cols, mask=m, other=-float("inf"))
        x = x - tl.max(x, 0)
        e = tl.exp(x)
        tl.store(out_ptr + row * out_stride + cols, e / tl.sum(e, 0), mask=m)


def kernels():
    """(add_kernel, softmax_kernel)."""
    if triton is None:
        raise ImportError("triton is not installed")
    return add_kernel, softmax_kernel


class Set:
    """One set of the pair's tensors, from the same seed."""

    def __init__(self, seed=SEED):
        import torch
        g = torch.Generator(device="cuda").manual_seed(seed)
        self.x = torch.randn(ADD_N, device="cuda", generator=g)
        self.y = torch.randn(ADD_N, device="cuda", generator=g)
        self.inp = torch.randn(ROWS, COLS, device="cuda", generator=g)
        self.add_out = torch.zeros(ADD_N, device="cuda")
        self.sm_out = torch.zeros(ROWS, COLS, device="cuda")

    def outputs(self):
        return {"add.out": self.add_out, "softmax.out": self.sm_out}

    def clear(self):
        self.add_out.zero_()
        self.sm_out.zero_()

    def calls(self, add_kernel, softmax_kernel):
        import triton
        from gpuopt.triton import call
        return [call(add_kernel, (triton.cdiv(ADD_N, 1024),), self.x, self.y, self.add_out,
                     ADD_N, BLOCK=1024),
                call(softmax_kernel, (ROWS,), self.sm_out, self.inp, COLS, COLS, COLS,
                     BLOCK=triton.next_power_of_2(COLS), num_warps=8)]


def same_bits(a, b):
    """{name: bool}: every output's bytes equal."""
    import torch
    out = {}
    for name, t in a.outputs().items():
        u = b.outputs()[name]
        out[name] = bool(torch.equal(t.contiguous().view(torch.uint8),
                                     u.contiguous().view(torch.uint8)))
    return out


def launch_apart(calls):
    for c in calls:
        c.kernel[c.grid](*c.args, **c.kwargs)


def run_fused(name, fz, ref, s, k, times=2):
    """Calls the fused callable `times` times on s (outputs cleared before
    each), comparing with ref after each; the record."""
    import torch
    rec = {"name": name, "calls": []}
    for i in range(times):
        s.clear()
        t0 = time.time()
        fz(*s.calls(*k))
        torch.cuda.synchronize()
        rec["calls"].append({"seconds": round(time.time() - t0, 3), "bit_identical": same_bits(ref, s)})
    d = next(iter(fz.decisions.values())) if len(fz.decisions) == 1 else {}
    rec["decision"] = {key: d.get(key) for key in ("choice", "why", "strategy", "times_ms")}
    rec["remarks"] = d.get("remarks")
    rec["stats"] = dict(fz.stats)
    rec["decisions"] = len(fz.decisions)
    return rec


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", required=True)
    args = ap.parse_args(argv)
    out = os.path.abspath(args.out)
    os.makedirs(out, exist_ok=True)
    cache = os.path.join(out, "cache")
    problems, records = [], []
    info = {}
    try:
        import torch
        import gpuopt
        from gpuopt.triton import fuse
        info = {"gpu": torch.cuda.get_device_name(), "torch": torch.__version__,
                "triton": triton.__version__, "gpuopt": gpuopt.__file__}
        print(info, flush=True)
        k = kernels()
        ref = Set()
        launch_apart(ref.calls(*k))
        torch.cuda.synchronize()
        for name, make in (
                ("auto, measure=True", lambda: fuse(*k, measure=True, cache_dir=cache)),
                ("interleave (forced)", lambda: fuse(*k, strategy="interleave",
                                                     cache_dir=cache))):
            s = Set()
            try:
                rec = run_fused(name, make(), ref, s, k)
            except Exception as e:  # noqa: BLE001 (recorded; the other one goes on)
                rec = {"name": name, "error": f"{type(e).__name__}: {e}",
                       "trace": traceback.format_exc()}
                print(rec["trace"], file=sys.stderr)
            records.append(rec)
            del s
            torch.cuda.empty_cache()
    except Exception as e:  # noqa: BLE001
        problems.append(f"{type(e).__name__}: {e}")
        traceback.print_exc()

    for rec in records:
        print(f"== {rec['name']}: " + (rec.get("error") or
              f"decision {rec['decision']}, stats {rec['stats']}, calls {rec['calls']}"))
        for r in rec.get("remarks") or []:
            print(f"   {r}")
        if rec.get("error"):
            problems.append(f"{rec['name']}: {rec['error'][:300]}")
            continue
        for i, c in enumerate(rec["calls"]):
            bad = [n for n, ok in c["bit_identical"].items() if not ok]
            if bad:
                problems.append(f"{rec['name']}: call {i + 1}: {', '.join(bad)} differ from the "
                                "kernels apart")
    if len(records) == 2 and not records[0].get("error"):
        d = records[0]["decision"]
        if d.get("choice") == "fused" and not d.get("times_ms"):
            problems.append("auto, measure=True: fused without measuring")
        if d.get("choice") not in ("fused", "serial"):
            problems.append(f"auto, measure=True: no decision ({d})")
    if len(records) == 2 and not records[1].get("error"):
        r = records[1]
        if r["decision"].get("choice") != "fused" or r["stats"].get("fused", 0) < 2 or \
                r["stats"].get("verified", 0) < 1:
            problems.append(f"interleave (forced): the fused kernel did not run as expected "
                            f"(decision {r['decision'].get('choice')}, stats {r['stats']})")

    md = [f"`add_kernel` ({ADD_N} fp32, grid {ADD_N // 1024}, 4 warps) + `softmax_kernel` "
          f"({ROWS} x {COLS} fp32, grid {ROWS}, 8 warps), Triton {info.get('triton')}, on "
          f"{info.get('gpu')}; each fused callable called twice, every output compared bit for "
          "bit (bytes) with the kernels launched apart on the same seeded inputs.", "",
          "| fuse(...) | choice | strategy | fused (ms) | apart, serial (ms) | bit-identical | "
          "launches fused / apart / verified |", "| --- | --- | --- | ---: | ---: | --- | --- |"]
    for rec in records:
        if rec.get("error"):
            md.append(f"| {rec['name']} | error: {rec['error'][:120].replace('|', '/')} | | | | | |")
            continue
        d, t = rec["decision"], rec["decision"].get("times_ms") or {}
        same = all(all(c["bit_identical"].values()) for c in rec["calls"])
        st = rec["stats"]
        md.append(f"| {rec['name']} | {d.get('choice')} | {d.get('strategy') or '-'} | "
                  f"{t.get('fused', float('nan')):.4f} | {t.get('serial', float('nan')):.4f} | "
                  f"{'yes' if same else '**no**'} | {st.get('fused')} / {st.get('serial')} / "
                  f"{st.get('verified')} |")
    for rec in records:
        if rec.get("remarks"):
            md += ["", f"gpu-opt's remarks ({rec['name']}):", "", "```"] + \
                [str(r) for r in rec["remarks"]] + ["```"]
        elif rec.get("decision", {}).get("why"):
            md += ["", f"{rec['name']}: {rec['decision']['why']}"]
    md.append("\nTimes are gpuopt.triton.fuse's own measure=True medians (CUDA events, 20 "
              "launches after 5 warm-up, not queued behind a GPU sleep): a decision, not a "
              "benchmark.")
    wheelcheck.write_text(os.path.join(out, "details.md"), "\n".join(md) + "\n")
    wheelcheck.dump_json({"info": info, "records": records, "problems": problems},
                         os.path.join(out, "result.json"))
    if problems:
        return wheelcheck.result(False, "; ".join(problems))
    a, f = records
    ta = a["decision"].get("times_ms") or {}
    return wheelcheck.result(
        True, f"auto+measure chose {a['decision']['choice']}"
        + (f" ({a['decision']['strategy']}: fused {ta.get('fused', 0):.4f} ms vs apart "
           f"{ta.get('serial', 0):.4f} ms)" if ta else f" ({a['decision'].get('why')})")
        + f"; forced interleave fused and verified; all outputs bit-identical to the kernels apart")


if __name__ == "__main__":
    sys.exit(main())
