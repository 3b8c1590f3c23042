"""Does a fused or probed kernel compute what its original kernels compute?

Runs each original kernel and the transformed kernel once through gpu-run
(`--repeat 0`) on the same inputs and compares every buffer the originals
write (`out`, filled with 0xFF bytes first so that unwritten elements show,
and `zero`) byte for byte; with a tolerance, float elements may differ by a
relative error (outputs that depend on the order of float atomics). Inputs
are gpu-run argument texts (`buf:f32:1024:random:1`): equal texts give equal
contents in every process, so the runs see the same data.

- A fused kernel (its manifest has `fused_from`, as `gpu-opt --hfuse`
  writes it) takes the originals' arguments placed by each part's `arg_map`
  (gpuopt.launch_args); its launch shape comes from the manifest, or, for a
  launch-agnostic one (`shape_params`, `--hfuse runtime-shapes=true`), from
  the originals' grids and dynamic shared memory (gpu-run --part-grid,
  --part-smem), so one fused PTX is checked at each shape the spec gives.
- A probed kernel (`gpu-opt --probe`) takes its one original's arguments and
  launch; gpu-run allocates the probe buffers from the manifest.

The originals are a gpu-run run spec (gpu-run --help): {"kernels": [{"label",
"module", "kernel", "grid", "block", "smem", "args"}, ...]}, paths relative
to the current folder. Exit status: 0 PASS, 1 FAIL, 2 error.

  python -m gpuopt.verify --spec pair.json --module fused.ptx --manifest fused.json
  python -m gpuopt.verify --spec k.json --module k.probed.ptx --manifest k.probed.json
"""

import json
import os
import re
import shlex
import shutil
import sys
import tempfile

from gpuopt.launch_args import MappingError, map_args, parse_arg, part_order
from gpuopt.tools import (add_tool_option, command_parser, ToolNotFound, find_tool,
                           run_watchdog)

NP_TYPE = {"u8": "u1", "s8": "i1", "i8": "i1", "u16": "u2", "s16": "i2", "i16": "i2",
           "f16": "f2", "bf16": "u2", "u32": "u4", "s32": "i4", "i32": "i4",
           "f32": "f4", "u64": "u8", "s64": "i8", "i64": "i8", "f64": "f8"}
FLOAT_TYPES = {"f16", "f32", "f64"}


class VerifyError(Exception):
    pass


def output_args(args):
    """Indices of the buffer arguments a kernel writes (init out or zero)."""
    return [i for i, a in enumerate(args)
            if parse_arg(a)["kind"] == "buf" and parse_arg(a)["init"] in ("out", "zero")]


def gpu_run_type(dtype):
    """The gpu-run element type of a numpy dtype (u8 for anything else)."""
    import numpy as np
    dtype = np.dtype(dtype)
    for ty, code in NP_TYPE.items():
        if ty not in ("i8", "i16", "i32", "i64", "bf16") and np.dtype(code) == dtype:
            return ty
    return "u8"


def _fmt_value(x, ty):
    if ty == "bf16":
        return f"0x{int(x):04x} (bf16 bits)"
    if ty in FLOAT_TYPES:
        return repr(float(x))
    return str(int(x))


def compare_arrays(got, ref, ty, tol=None, chunk=1 << 24):
    """Compares two 1-D arrays of gpu-run element type ty (numpy arrays or
    memmaps of NP_TYPE[ty]): bit-exact, or with tol, |got - ref| <= tol *
    |ref| elementwise (bit-equal elements, NaN included, always pass).
    Returns (ok, detail)."""
    import numpy as np
    n = got.size
    if n != ref.size:
        return False, f"size: got {n} elements, expected {ref.size}"
    if n == 0:
        return True, "empty"
    udtype = np.dtype(f"u{got.dtype.itemsize}")
    use_tol = tol is not None and ty in FLOAT_TYPES
    bad_count, first, never, max_rel = 0, None, 0, 0.0
    for start in range(0, n, chunk):
        g, r = got[start:start + chunk], ref[start:start + chunk]
        gu, ru = g.view(udtype), r.view(udtype)
        bad = gu != ru
        if use_tol and bad.any():
            gf, rf = g.astype(np.float64), r.astype(np.float64)
            with np.errstate(invalid="ignore", over="ignore"):
                err = np.abs(gf - rf)
                rel = np.where(rf != 0, err / np.abs(rf), err)
                bad &= ~(err <= tol * np.abs(rf))
                finite = np.isfinite(rel)
                if finite.any():
                    max_rel = max(max_rel, float(rel[finite].max()))
        idx = np.flatnonzero(bad)
        if idx.size:
            bad_count += int(idx.size)
            never += int((gu[idx] == np.iinfo(udtype).max).sum())
            if first is None:
                i = int(idx[0])
                first = (start + i, g[i], r[i])
    what = f"{n} x {ty}"
    if bad_count == 0:
        if use_tol:
            return True, f"within rel {tol:g} ({what}, max rel err {max_rel:.2e})"
        return True, f"bit-exact ({what})"
    i, gv, rv = first
    text = (f"{bad_count} of {n} elements differ" +
            (f" beyond rel {tol:g}" if use_tol else "") +
            (f" ({never} never written: 0xFF)" if never else "") +
            f"; first at {i}: got {_fmt_value(gv, ty)}, expected {_fmt_value(rv, ty)}")
    return False, text


def compare_files(got_path, ref_path, ty, tol=None, chunk=1 << 24):
    """compare_arrays on two raw buffer files (read in chunks: outputs may be
    GiBs). Returns (ok, detail)."""
    import numpy as np
    gs, rs = os.path.getsize(got_path), os.path.getsize(ref_path)
    if gs != rs:
        return False, f"size: got {gs} bytes, expected {rs}"
    dtype = np.dtype(NP_TYPE.get(ty, "u1"))
    if gs % dtype.itemsize:
        dtype, ty = np.dtype("u1"), "u8"
    if gs == 0:
        return True, "empty"
    got = np.memmap(got_path, dtype=dtype, mode="r")
    ref = np.memmap(ref_path, dtype=dtype, mode="r")
    try:
        return compare_arrays(got, ref, ty, tol, chunk)
    finally:
        del got, ref


def kernel_command(gpu_run, spec, module=None, manifest=None):
    """gpu-run's command line for one kernel of a run spec (module and
    manifest replaced when given)."""
    cmd = [gpu_run, module or spec["module"]]
    manifest = manifest or spec.get("manifest")
    if manifest:
        cmd += ["--manifest", manifest]
    if spec.get("kernel"):
        cmd += ["--kernel", spec["kernel"]]
    if "grid" in spec:
        cmd += ["--grid", ",".join(map(str, spec["grid"]))]
    if "block" in spec:
        cmd += ["--block", ",".join(map(str, spec["block"]))]
    if "grid" in spec or "smem" in spec:
        cmd += ["--smem", str(spec.get("smem", 0))]
    for part, grid in sorted((spec.get("part_grids") or {}).items()):
        cmd += ["--part-grid", f"{part}=" + "x".join(map(str, grid))]
    for part, smem in sorted((spec.get("part_smem") or {}).items()):
        cmd += ["--part-smem", f"{part}={smem}"]
    for a in spec["args"]:
        cmd += ["--arg", a]
    return cmd


def _is_uint(v):
    return isinstance(v, int) and not isinstance(v, bool) and v >= 0


def check_kernel_spec(k, where):
    """Raises VerifyError where a run spec's kernel (JSON path `where`, e.g.
    "pair.json: kernels[0]") has a field of the wrong form, worded as
    gpu-run's run spec reader (and gpuopt.run) words it."""
    if not isinstance(k, dict):
        raise VerifyError(f"{where}: expected an object")
    for key in ("module", "args"):
        if key not in k:
            raise VerifyError(f"{where}.{key}: missing")
    for key in ("module", "label", "kernel", "manifest"):
        if key in k and not isinstance(k[key], str):
            raise VerifyError(f"{where}.{key}: expected a string")
    for key in ("grid", "block"):
        if key not in k:
            continue
        dims = k[key]
        if not isinstance(dims, list) or not 1 <= len(dims) <= 3:
            raise VerifyError(f"{where}.{key}: expected an array of 1 to 3 positive "
                              f"integers")
        for i, d in enumerate(dims):
            if not _is_uint(d):
                raise VerifyError(f"{where}.{key}[{i}]: expected an unsigned integer")
            if d == 0:
                raise VerifyError(f"{where}.{key}: dimensions must be positive")
    if "smem" in k and not _is_uint(k["smem"]):
        raise VerifyError(f"{where}.smem: expected an unsigned integer")
    if not isinstance(k["args"], list) or not all(isinstance(a, str) for a in k["args"]):
        raise VerifyError(f"{where}.args: expected an array of argument specs")


def load_spec(path):
    """[(label, kernel spec)] of a gpu-run run spec's kernels. A kernel
    without "module" or "args", or with a grid, block, smem or args that
    gpu-run would reject, is a VerifyError naming its JSON path."""
    with open(path) as f:
        spec = json.load(f)
    kernels = spec.get("kernels") if isinstance(spec, dict) else None
    if not kernels:
        raise VerifyError(f"{path}: no \"kernels\"")
    if not isinstance(kernels, list):
        raise VerifyError(f"{path}: kernels: expected an array of kernel specs")
    out = []
    for i, k in enumerate(kernels):
        check_kernel_spec(k, f"{path}: kernels[{i}]")
        out.append((k.get("label") or k.get("kernel") or f"k{i}", k))
    return out


def entry_name(label, spec):
    """The entry a run spec's kernel names: its "kernel", else its module's
    only .entry (as gpu-run picks it), else its label."""
    if spec.get("kernel"):
        return spec["kernel"]
    try:
        with open(spec["module"], errors="replace") as f:
            names = re.findall(r"\.entry\s+([A-Za-z_$%][\w$%]*)", f.read())
    except (OSError, KeyError):
        names = []
    return names[0] if len(names) == 1 else label


def part_shapes(kernel, entries, specs):
    """A launch-agnostic fused kernel's "part_grids" and "part_smem" (gpu-run
    --part-grid, --part-smem) from the originals' run specs: each part gets
    its original's grid, and its dynamic shared memory where the manifest
    takes it at launch ("dynamic_smem": "runtime"). An original without a
    grid leaves its part to the manifest's default."""
    order = part_order(kernel, entries)
    grids, smem = {}, {}
    for p, spec in enumerate(specs):
        part = order[p]
        if "grid" in spec:
            grids[str(part)] = list(spec["grid"])
        if kernel["fused_from"][part].get("dynamic_smem") == "runtime":
            smem[str(part)] = int(spec.get("smem", 0))
    return {"part_grids": grids, "part_smem": smem}


def transformed_spec(originals, module, manifest, kernel=None, entries=None):
    """The run spec entry of a transformed kernel, with (notes, where, fused):
    where[p][i] is the argument index of original p's argument i, fused
    whether the manifest's kernel is a fused one. originals: [(label, kernel
    spec)]; entries: the originals' entry names (default: entry_name), which
    tell the parts of a fused kernel apart."""
    with open(manifest) as f:
        man = json.load(f)
    kernels = man.get("kernels") or []
    fused = [k for k in kernels if k.get("fused_from") and
             (kernel is None or k.get("name") == kernel)]
    if fused:
        k = fused[0]
        entries = entries or [entry_name(label, s) for label, s in originals]
        args, notes, where = map_args({"kernels": [k]}, entries,
                                      [s["args"] for _, s in originals])
        fused_spec = {"module": module, "manifest": manifest, "kernel": k["name"],
                      "args": args}
        if k.get("shape_params"):
            fused_spec.update(part_shapes(k, entries, [s for _, s in originals]))
        return fused_spec, notes, where, True
    if len(originals) != 1:
        raise VerifyError(f"{manifest}: no fused kernel (fused_from) among its kernels; "
                          f"a kernel that is not fused has one original, not "
                          f"{len(originals)}")
    _, spec = originals[0]
    spec = {k: v for k, v in spec.items() if k not in ("label", "out", "time_alone")}
    spec.update(module=module, manifest=manifest)
    if kernel:
        spec["kernel"] = kernel
    return spec, [], [list(range(len(spec["args"])))], False


class Verifier:
    """Runs original kernels (their outputs kept until drop_original) and
    transformed kernels through gpu-run, and compares their outputs.

    log(msg) reports progress; describe(cmd) turns a command into the text
    recorded in results (default: shell quoting)."""

    def __init__(self, gpu_run, workdir, timeout=180, log=None, describe=None):
        self.gpu_run = gpu_run
        self.workdir = workdir
        self.timeout = timeout
        self.log = log or (lambda msg: None)
        self.describe = describe or shlex.join
        self.originals = {}
        self.device = None
        self.last_run = None  # the transformed kernel's gpu-run (its output)

    def run_original(self, label, spec):
        """{ok, detail, outs: {arg index: path}, command, wall_s}, cached."""
        if label in self.originals:
            return self.originals[label]
        d = os.path.join(self.workdir, "orig", label.replace(os.sep, "_"))
        os.makedirs(d, exist_ok=True)
        outs = {i: os.path.join(d, f"out{i}.bin") for i in output_args(spec["args"])}
        report = os.path.join(d, "report.json")
        cmd = kernel_command(self.gpu_run, spec) + ["--repeat", "0", "--json", report]
        for i, p in outs.items():
            cmd += ["--out", f"{i}:{p}"]
        r = run_watchdog(cmd, self.timeout)
        res = {"outs": outs, "command": self.describe(cmd), "wall_s": round(r.wall, 1)}
        if r.hung:
            res.update(ok=False, detail=f"original {label}: hang after {self.timeout} s")
        elif r.rc != 0:
            res.update(ok=False, detail=f"original {label}: gpu-run exit {r.rc}: {r.message()}")
        else:
            missing = [p for p in outs.values() if not os.path.exists(p)]
            res.update(ok=not missing, detail=f"original {label}: no output {missing}"
                       if missing else "")
            self._note_device(report)
        self.log(f"    original {label}: {'ok' if res['ok'] else res['detail']} "
                 f"({r.wall:.1f} s)")
        self.originals[label] = res
        return res

    def drop_original(self, label):
        self.originals.pop(label, None)
        shutil.rmtree(os.path.join(self.workdir, "orig", label.replace(os.sep, "_")),
                      ignore_errors=True)

    def _note_device(self, report_path):
        if self.device is not None:
            return
        try:
            with open(report_path) as f:
                self.device = json.load(f).get("device")
        except (OSError, ValueError):
            pass

    def transformed_command(self, originals, module, manifest, kernel=None, entries=None):
        """(gpu-run command, notes, where, fused) for the transformed kernel
        (transformed_spec)."""
        spec, notes, where, fused = transformed_spec(originals, module, manifest, kernel,
                                                     entries)
        return kernel_command(self.gpu_run, spec), notes, where, fused

    def verify(self, originals, module, manifest, kernel=None, entries=None,
               tolerances=None, extra_args=(), prefix=(), name="transformed"):
        """Runs the originals (cached) and the transformed kernel and compares
        each output of the originals with the transformed kernel's.
        originals: [(label, kernel spec)]; tolerances: {label: relative
        error}; extra_args: more gpu-run options (--trace DIR); prefix: a
        command to run gpu-run under (compute-sanitizer ...). Returns
        {result: PASS|FAIL, detail, buffers, notes, command, wall_s, launch}."""
        tolerances = tolerances or {}
        self.last_run = None
        entry = {}
        origs = [self.run_original(label, spec) for label, spec in originals]
        bad = [o["detail"] for o in origs if not o["ok"]]
        if bad:
            return {**entry, "result": "FAIL", "detail": "; ".join(bad)}
        try:
            cmd, notes, where, is_fused = self.transformed_command(
                originals, module, manifest, kernel, entries)
        except (OSError, ValueError, KeyError, MappingError, VerifyError) as e:
            return {**entry, "result": "FAIL", "detail": f"manifest unusable: {e}"}
        d = os.path.join(self.workdir, name.replace(os.sep, "_"))
        shutil.rmtree(d, ignore_errors=True)
        os.makedirs(d)
        report = os.path.join(d, "report.json")
        outs = []
        for p, (label, spec) in enumerate(originals):
            for i in output_args(spec["args"]):
                fi = where[p][i]
                outs.append((p, label, i, fi, os.path.join(d, f"p{p}_out{fi}.bin")))
        cmd += ["--repeat", "0", "--json", report]
        for _, _, _, fi, path in outs:
            cmd += ["--out", f"{fi}:{path}"]
        cmd = list(prefix) + cmd + list(extra_args)
        entry["command"] = self.describe(cmd)
        entry["notes"] = notes
        r = run_watchdog(cmd, self.timeout)
        self.last_run = r
        entry["wall_s"] = round(r.wall, 1)
        try:
            if r.hung:
                return {**entry, "result": "FAIL", "detail": f"hang after {self.timeout} s"}
            if r.rc != 0:
                return {**entry, "result": "FAIL",
                        "detail": f"gpu-run exit {r.rc}: {r.message()}"}
            try:
                with open(report) as f:
                    k = json.load(f)["kernels"][0]
                entry["launch"] = {x: k.get(x) for x in ("grid", "block", "dynamic_smem",
                                                         "registers", "static_smem",
                                                         "local_bytes")}
            except (OSError, ValueError, KeyError, IndexError, TypeError):
                pass
            buffers, ok = [], True
            for p, label, i, fi, path in outs:
                ty = parse_arg(originals[p][1]["args"][i])["type"]
                tol = tolerances.get(label)
                ref = origs[p]["outs"][i]
                if not os.path.exists(path):
                    b_ok, detail = False, "no output file"
                else:
                    b_ok, detail = compare_files(path, ref, ty, tol)
                ok &= b_ok
                buffers.append({"kernel": label, "arg": i, "fused_arg": fi, "type": ty,
                                "tolerance": tol, "ok": b_ok, "detail": detail})
            entry["buffers"] = buffers
            failed = [f"{b['kernel']} arg {b['arg']}" +
                      (f" (fused {b['fused_arg']})" if is_fused else "") + f": {b['detail']}"
                      for b in buffers if not b["ok"]]
            if failed:
                return {**entry, "result": "FAIL", "detail": "; ".join(failed)}
            tols = sorted({b["kernel"] for b in buffers if b["tolerance"]})
            detail = f"{len(buffers)} buffers bit-exact"
            if tols:
                detail = (f"{len(buffers)} buffers equal; {', '.join(tols)} within rel "
                          f"{tolerances[tols[0]]:g}")
            return {**entry, "result": "PASS", "detail": detail}
        finally:
            shutil.rmtree(d, ignore_errors=True)


def parse_tolerances(items, labels):
    """--tolerance [LABEL=]REL values as {label: rel}; without a label, for
    every original."""
    out = {}
    for item in items:
        label, eq, value = item.rpartition("=")
        rel = float(value)
        if eq and label not in labels:
            raise VerifyError(f"--tolerance {item}: no original kernel labelled {label!r} "
                              f"(labels: {', '.join(labels)})")
        for lab in ([label] if eq else labels):
            out[lab] = rel
    return out


def main(argv=None):
    ap = command_parser("python -m gpuopt.verify", __doc__)
    ap.add_argument("--spec", required=True,
                    help="gpu-run run spec holding the original kernels")
    ap.add_argument("--module", required=True, help="the fused or probed kernel (PTX/cubin)")
    ap.add_argument("--manifest", required=True, help="its launch manifest")
    ap.add_argument("--kernel", default=None,
                    help="the kernel of the module (default: the fused one, or the "
                         "original's name)")
    add_tool_option(ap, "gpu-run")
    ap.add_argument("--tolerance", action="append", default=[], metavar="[LABEL=]REL",
                    help="relative error allowed in float outputs (of one original)")
    ap.add_argument("--timeout", type=int, default=180, help="seconds per gpu-run call")
    ap.add_argument("--workdir", default=None, help="for the output files (default: a "
                    "temporary folder, removed afterwards)")
    ap.add_argument("--json", default=None, help="write the result here")
    args = ap.parse_args(argv)
    try:
        gpu_run = find_tool("gpu-run", args.gpu_run)
        originals = load_spec(args.spec)
        tolerances = parse_tolerances(args.tolerance, [label for label, _ in originals])
    except (ToolNotFound, VerifyError, OSError, ValueError) as e:
        print(f"verify: error: {e}", file=sys.stderr)
        return 2
    workdir = args.workdir or tempfile.mkdtemp(prefix="gpuopt-verify-")
    try:
        v = Verifier(gpu_run, workdir, args.timeout, log=lambda m: print(m, flush=True))
        result = v.verify(originals, args.module, args.manifest, args.kernel,
                          tolerances=tolerances)
    finally:
        if not args.workdir:
            shutil.rmtree(workdir, ignore_errors=True)
    for note in result.get("notes", []):
        print(f"    note: {note}")
    for b in result.get("buffers", []):
        print(f"    {'ok ' if b['ok'] else 'BAD'} {b['kernel']} arg {b['arg']}: {b['detail']}")
    print(f"{result['result']}: {result['detail']}")
    if args.json:
        with open(args.json, "w") as f:
            json.dump(result, f, indent=1)
    return 0 if result["result"] == "PASS" else 1


if __name__ == "__main__":
    sys.exit(main())
