#!/usr/bin/env python3
"""Helpers of check-gpu-machine.sh (the gpuopt wheel on a GPU machine).

Subcommands (each prints `RESULT: PASS|FAIL <reason>` last and exits 0 on
PASS, 1 on FAIL, where it judges something):

  env [--site DIR] [--json F]         Python, PyTorch, Triton, numpy, cupy,
                                      the GPU, the CUDA variables, nvcc/ptxas
                                      on PATH, where gpuopt and its tools are
                                      loaded from and whether gpuopt._core and
                                      gpuopt._runtime import
  ldd DIR [--json F]                  every ELF file under DIR through ldd: no
                                      LLVM, MLIR, yaml-cpp, z3, ICU or libxml2
                                      library and nothing "not found"
  triton-ptxas [--isa X.Y]            the path of Triton's bundled ptxas; with
                                      --isa, the first bundled ptxas (ptxas,
                                      then ptxas-blackwell) that assembles PTX
                                      of that ISA version for sm_90a
  manifest-check MANIFEST CUBIN       the user's fused + probed gpu-dialect pair
  gpu-dialect-report LOG DIR          what examples/gpu-dialect/run.sh said
  trace-check TRACEDIR --copy-to D    a gpuopt-trace run directory: kernels,
        [--outputs A B]               launches, probes; A, B: the program's
                                      output digests, traced and not
  summary OUT [--wheel W] ...         OUT/summary.md from OUT/results.tsv and
                                      each step's details.md

Importable without torch, triton, numpy or gpuopt (they are imported where
used).
"""

import argparse
import glob
import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))

# Libraries the wheel must not need at run time: the build machine's LLVM and
# MLIR and what they pull in.
FORBIDDEN = re.compile(r"^lib(llvm|mlir|yaml|z3|icu|xml2)", re.IGNORECASE)
CUDA_VARS = ("CUDA_HOME", "CUDA_PATH", "CUDA_ROOT", "CUDA_TOOLKIT_ROOT_DIR", "CUDACXX")
TOOLS = ("gpu-opt", "gpu-translate", "gpu-run", "gpuopt-trace")

STEPS = [
    ("0", "0-setup", "install, environment, libraries, tools"),
    ("a", "a-gpu-dialect", "gpu-opt --hfuse --probe=block_sched on examples/gpu-dialect/pair.mlir, "
     "run apart vs fused"),
    ("b", "b-heldout-measure", "strategy=auto measure= on a held-out pair"),
    ("c", "c-trace", "gpuopt-trace -p block_sched on a torch.compile program"),
    ("d", "d-triton-fuse", "gpuopt.triton.fuse(..., measure=True) on two Triton kernels"),
]


def result(ok, reason):
    """Prints the verdict line the shell script reads; the exit status."""
    print(f"RESULT: {'PASS' if ok else 'FAIL'} {reason}", flush=True)
    return 0 if ok else 1


def under(path, root):
    if not path or not root:
        return False
    path, root = os.path.realpath(path), os.path.realpath(root)
    return path == root or path.startswith(root.rstrip(os.sep) + os.sep)


def write_text(path, text):
    os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
    with open(path, "w") as f:
        f.write(text)


def dump_json(obj, path):
    write_text(path, json.dumps(obj, indent=1, default=str) + "\n")


def load_json(path):
    with open(path) as f:
        return json.load(f)


def first_line(text, limit=300):
    for line in (text or "").splitlines():
        if line.strip():
            return line.strip()[:limit]
    return ""


# ---------------------------------------------------------------------------
# ptxas
# ---------------------------------------------------------------------------

def triton_ptxas_candidates():
    """Triton's bundled ptxas binaries, the default one first ($TRITON_PTXAS_PATH
    when set, as Triton itself takes it)."""
    import importlib.util
    out = []
    if os.environ.get("TRITON_PTXAS_PATH"):
        out.append(os.environ["TRITON_PTXAS_PATH"])
    spec = importlib.util.find_spec("triton")
    if spec is not None and spec.origin:
        bin_dir = os.path.join(os.path.dirname(spec.origin), "backends", "nvidia", "bin")
        out += [os.path.join(bin_dir, n) for n in ("ptxas", "ptxas-blackwell")]
    return [p for p in dict.fromkeys(out) if os.access(p, os.X_OK)]


def ptxas_version(ptxas):
    try:
        r = subprocess.run([ptxas, "--version"], capture_output=True, text=True, timeout=30)
    except (OSError, subprocess.TimeoutExpired) as e:
        return f"error: {e}"
    m = re.search(r"release (\S+), V(\S+)", r.stdout)
    return f"{m.group(1).rstrip(',')} (V{m.group(2)})" if m else first_line(r.stdout or r.stderr)


def ptx_isa(path):
    """The `.version X.Y` of a PTX file, or None."""
    with open(path, errors="replace") as f:
        for line in f:
            m = re.match(r"\s*\.version\s+(\d+\.\d+)", line)
            if m:
                return m.group(1)
    return None


# A PTX module of ISA version {isa} for sm_90a that every ptxas of that ISA
# accepts: what decides whether a ptxas reads a given version.
PROBE_PTX = """.version {isa}
.target sm_90a
.address_size 64
.visible .entry gpuopt_isa_probe()
{{
	ret;
}}
"""


def ptxas_accepts(ptxas, isa, tmpdir):
    path = os.path.join(tmpdir, f"isa-{isa}.ptx")
    with open(path, "w") as f:
        f.write(PROBE_PTX.format(isa=isa))
    try:
        r = subprocess.run([ptxas, "-arch=sm_90a", path, "-o", os.devnull],
                           capture_output=True, text=True, timeout=60)
    except (OSError, subprocess.TimeoutExpired) as e:
        return False, str(e)
    return r.returncode == 0, first_line(r.stderr or r.stdout)


def pick_ptxas(isa, tmpdir):
    """(path, [notes]): the first bundled ptxas that reads PTX ISA `isa`."""
    notes = []
    for p in triton_ptxas_candidates():
        ok, msg = ptxas_accepts(p, isa, tmpdir)
        notes.append(f"{p} ({ptxas_version(p)}): "
                     + (f"reads PTX ISA {isa}" if ok else f"rejects PTX ISA {isa}: {msg}"))
        if ok:
            return p, notes
    return None, notes


def cmd_triton_ptxas(args):
    cands = triton_ptxas_candidates()
    if not args.isa:
        if not cands:
            print("no ptxas in Triton's backends/nvidia/bin", file=sys.stderr)
            return 1
        print(cands[0])
        return 0
    import tempfile
    with tempfile.TemporaryDirectory(prefix="gpuopt-ptxas-") as d:
        path, notes = pick_ptxas(args.isa, d)
    for n in notes:
        print(n, file=sys.stderr)
    if path is None:
        return 1
    print(path)
    return 0


# ---------------------------------------------------------------------------
# env
# ---------------------------------------------------------------------------

def _module_version(name):
    import importlib
    try:
        m = importlib.import_module(name)
    except Exception as e:  # noqa: BLE001 (any import failure is reported)
        return None, f"{type(e).__name__}: {e}"
    return m, getattr(m, "__version__", "?")


def gather_env(site=None):
    info = {"date": time.strftime("%Y-%m-%d %H:%M:%S %Z"), "python": sys.version.split()[0],
            "python_executable": sys.executable}
    problems = []
    try:
        r = subprocess.run(["nvidia-smi", "-L"], capture_output=True, text=True, timeout=60)
        info["nvidia_smi_L"] = r.stdout.strip() or r.stderr.strip()
        r = subprocess.run(["nvidia-smi", "--query-gpu=name,driver_version,memory.total",
                            "--format=csv,noheader"], capture_output=True, text=True, timeout=60)
        info["gpu_query"] = r.stdout.strip()
    except (OSError, subprocess.TimeoutExpired) as e:
        info["nvidia_smi_L"] = f"error: {e}"
    torch, v = _module_version("torch")
    info["torch"] = v
    if torch is not None:
        info["torch_cuda"] = getattr(torch.version, "cuda", None)
        try:
            if torch.cuda.is_available():
                p = torch.cuda.get_device_properties(0)
                info["torch_device"] = {"name": p.name, "capability": f"{p.major}.{p.minor}",
                                        "sms": p.multi_processor_count}
            else:
                info["torch_device"] = None
                problems.append("torch.cuda.is_available() is False")
        except Exception as e:  # noqa: BLE001
            info["torch_device"] = f"error: {e}"
            problems.append(f"torch.cuda: {e}")
    for name in ("triton", "numpy", "cupy", "pytest"):
        info[name] = _module_version(name)[1]
    info["cuda_env"] = {k: os.environ.get(k) for k in CUDA_VARS}
    for k, v in info["cuda_env"].items():
        if v:
            problems.append(f"${k} is set ({v})")
    info["PATH"] = os.environ.get("PATH", "")
    info["LD_LIBRARY_PATH"] = os.environ.get("LD_LIBRARY_PATH", "")
    info["PYTHONPATH"] = os.environ.get("PYTHONPATH", "")
    for p in info["PATH"].split(os.pathsep):
        if "/usr/local/cuda" in p:
            problems.append(f"PATH has {p}")
    warnings = info["warnings"] = []
    info["nvcc_on_path"] = shutil.which("nvcc")
    if info["nvcc_on_path"]:
        # Nothing here runs nvcc; reported, not a failure.
        warnings.append(f"nvcc is still on PATH ({info['nvcc_on_path']}, outside "
                        "/usr/local/cuda*): nothing in this check runs it")
    info["ptxas_on_path"] = shutil.which("ptxas")
    info["PTXAS"] = os.environ.get("PTXAS")
    triton_ptxas = triton_ptxas_candidates()
    if info["ptxas_on_path"] and not any(
            os.path.realpath(info["ptxas_on_path"]) == os.path.realpath(p) for p in triton_ptxas):
        problems.append(f"ptxas on PATH is {info['ptxas_on_path']}, not Triton's")
    if info["PTXAS"] and not any(
            os.path.realpath(info["PTXAS"]) == os.path.realpath(p) for p in triton_ptxas):
        problems.append(f"$PTXAS ({info['PTXAS']}) is not Triton's bundled ptxas")
    if not triton_ptxas:
        problems.append("no ptxas in Triton's backends/nvidia/bin")
    if info["PTXAS"]:
        info["PTXAS_version"] = ptxas_version(info["PTXAS"])
    info["triton_ptxas"] = {p: ptxas_version(p) for p in triton_ptxas_candidates()}
    # gpuopt: from the wheel's install, both extensions loading.
    gpuopt, _ = _module_version("gpuopt")
    if gpuopt is None:
        problems.append("import gpuopt failed")
    else:
        info["gpuopt_file"] = gpuopt.__file__
        if site and not under(gpuopt.__file__, site):
            problems.append(f"gpuopt is imported from {gpuopt.__file__}, not from {site}")
        for ext in ("_core", "_runtime"):
            m, v = _module_version("gpuopt." + ext)
            info["gpuopt" + ext] = getattr(m, "__file__", None) if m else v
            if m is None:
                problems.append(f"import gpuopt.{ext} failed: {v}")
        try:
            from gpuopt import api
            info["gpuopt_api_core"] = api._core is not None
            if api._core is None:
                problems.append(f"gpuopt.api has no compiler: {api._core_error}")
        except Exception as e:  # noqa: BLE001
            problems.append(f"import gpuopt.api failed: {e}")
    info["tools"] = {}
    for t in TOOLS:
        path = shutil.which(t)
        info["tools"][t] = path
        if not path:
            problems.append(f"{t} is not on PATH")
        elif site and not under(path, site):
            problems.append(f"{t} on PATH is {path}, not the wheel's (under {site})")
    return info, problems


def cmd_env(args):
    info, problems = gather_env(args.site)
    info["problems"] = problems
    if args.json:
        dump_json(info, args.json)
    for k in ("nvidia_smi_L", "gpu_query", "python", "torch", "torch_cuda", "torch_device",
              "triton", "numpy", "cupy", "PTXAS", "PTXAS_version", "ptxas_on_path",
              "nvcc_on_path", "gpuopt_file", "gpuopt_core", "gpuopt_runtime"):
        print(f"{k}: {info.get(k)}")
    for t, p in info["tools"].items():
        print(f"{t}: {p}")
    for w in info["warnings"]:
        print(f"warning: {w}")
    for p in problems:
        print(f"problem: {p}")
    if problems:
        return result(False, "; ".join(problems))
    return result(True, f"Python {info['python']}, torch {info['torch']}, triton "
                  f"{info['triton']}; gpuopt and its tools from the install; no toolkit on PATH")


# ---------------------------------------------------------------------------
# ldd
# ---------------------------------------------------------------------------

def is_elf(path):
    try:
        with open(path, "rb") as f:
            return f.read(4) == b"\x7fELF"
    except OSError:
        return False


def parse_ldd(text):
    """[(name, resolved path or None, not_found)] of ldd's output."""
    deps = []
    for line in text.splitlines():
        s = line.strip()
        if not s or s.startswith(("linux-vdso", "linux-gate")) or "statically linked" in s \
                or "not a dynamic executable" in s:
            continue
        if "=>" in s:
            name, _, rest = s.partition("=>")
            name, rest = name.strip(), rest.strip()
            if rest.startswith("not found"):
                deps.append((name, None, True))
            else:
                deps.append((name, rest.split(" (")[0].strip() or None, False))
        else:
            deps.append((s.split(" (")[0].strip(), s.split(" (")[0].strip(), False))
    return deps


def ldd_problems(deps):
    problems = []
    for name, path, missing in deps:
        if missing:
            problems.append(f"{name} not found")
        for n in (name, os.path.basename(path or "")):
            if n and FORBIDDEN.match(n):
                problems.append(f"needs {name}" + (f" ({path})" if path and path != name else ""))
                break
    return problems


def runpath(path):
    """RPATH/RUNPATH entries (readelf -d), or None without readelf."""
    if not shutil.which("readelf"):
        return None
    r = subprocess.run(["readelf", "-d", path], capture_output=True, text=True)
    return re.findall(r"\((?:RPATH|RUNPATH)\)\s+Library r(?:un)?path: \[([^\]]*)\]", r.stdout)


def cmd_ldd(args):
    files = []
    for dirpath, _, names in os.walk(args.dir):
        for n in sorted(names):
            p = os.path.join(dirpath, n)
            if not os.path.islink(p) and os.path.isfile(p) and is_elf(p):
                files.append(p)
    report, bad = [], 0
    for p in sorted(files):
        r = subprocess.run(["ldd", p], capture_output=True, text=True)
        deps = parse_ldd(r.stdout + r.stderr)
        problems = ldd_problems(deps)
        rp = runpath(p)
        if rp and any("llvm" in e.lower() for e in rp):
            problems.append(f"RUNPATH names an LLVM installation: {rp}")
        rel = os.path.relpath(p, args.dir)
        report.append({"file": rel, "bytes": os.path.getsize(p), "needs": [d[0] for d in deps],
                       "runpath": rp, "problems": problems})
        bad += bool(problems)
        print(f"{rel}: {len(deps)} libraries" + (f", RUNPATH {':'.join(rp)}" if rp else "")
              + ("" if not problems else "; PROBLEMS: " + "; ".join(problems)))
        for name, path, missing in deps:
            print(f"    {name} => {'not found' if missing else path}")
    if args.json:
        dump_json(report, args.json)
    if not files:
        return result(False, f"no ELF file under {args.dir}")
    if bad:
        first = next(r for r in report if r["problems"])
        return result(False, f"{bad} of {len(files)} ELF files need a forbidden or missing "
                      f"library, e.g. {first['file']}: {first['problems'][0]}")
    return result(True, f"{len(files)} ELF files: no LLVM/MLIR/yaml/z3/icu/xml2 library, "
                  "nothing not found")


# ---------------------------------------------------------------------------
# a: the gpu-dialect pair
# ---------------------------------------------------------------------------

def cmd_manifest_check(args):
    problems = []
    try:
        with open(args.cubin, "rb") as f:
            if f.read(4) != b"\x7fELF":
                problems.append(f"{args.cubin} is not an ELF cubin")
        man = load_json(args.manifest)
        (k,) = man["kernels"]
        parts = [p["kernel"] for p in k.get("fused_from", [])]
        probes = [p.get("probe") or p.get("name") for p in k.get("probes", [])]
        print(f"kernel {k['name']}: fused from {parts}, strategy {k.get('fusion_strategy')}, "
              f"probes {probes}, launch {k.get('launch')}, module {man['module']}")
        if parts != ["logistic", "blocksum"]:
            problems.append(f"fused_from is {parts}, expected logistic, blocksum")
        if "block_sched" not in probes:
            problems.append(f"no block_sched probe in the manifest ({probes})")
        if man["module"].get("format") != "cubin":
            problems.append(f"module format {man['module'].get('format')}, expected cubin")
    except Exception as e:  # noqa: BLE001
        problems.append(f"{type(e).__name__}: {e}")
    if problems:
        return result(False, "; ".join(problems))
    return result(True, f"pair.cubin: {k['name']} ({k.get('fusion_strategy')}) fused from "
                  f"logistic + blocksum with a block_sched probe")


def _section(lines, start, stop_prefix="== "):
    out, on = [], False
    for ln in lines:
        if ln.startswith(start):
            on = True
            continue
        if on and ln.startswith(stop_prefix):
            break
        if on:
            out.append(ln)
    return out


def cmd_gpu_dialect_report(args):
    with open(args.log, errors="replace") as f:
        lines = f.read().splitlines()
    text = "\n".join(lines)
    md = []
    bit = [ln for ln in lines if "bit-identical to the" in ln and ln.startswith("run.sh:")]
    numpy_lines = [ln.strip() for ln in lines if "against numpy" in ln]
    skipped = [ln.strip() for ln in lines if "skipped" in ln or "skipping" in ln]
    shim = [ln.strip() for ln in lines if ln.startswith("ptxas-shim:")]
    differ = [ln for ln in lines if ln.startswith("DIFFER")]
    times = _section(lines, "== 6.")
    sched = _section(lines, "== 5.")
    md.append("Outputs: " + ("; ".join(ln.replace("run.sh: ", "") for ln in bit) or
                             "no bit-identity line from run.sh"))
    for ln in numpy_lines:
        md.append(f"- {ln}")
    for ln in differ:
        md.append(f"- **{ln}**")
    for ln in skipped + shim:
        md.append(f"- {ln}")
    if args.cubin_note:
        md.append(f"- {args.cubin_note}")
    if sched:
        md += ["", "Block scheduling of the fused, probed kernel (`python3 -m gpuopt.block_sched`):",
               "", "```"] + sched[:20] + ["```"]
    if times:
        md += ["", "Registers and times (run.sh step 6: medians of 200 launches after 20 "
               "warm-up launches, CUDA events):", "", "```"] + times[:30] + ["```"]
    write_text(os.path.join(args.dir, "details.md"), "\n".join(md) + "\n")
    ok = bool(bit) and not differ and "numpy: " in text and "NOT bit-identical" not in text
    if not ok:
        why = (differ[0] if differ else "run.sh printed no bit-identity line"
               if not bit else "numpy check failed")
        return result(False, why)
    reason = "fused (PTX, cubin, probed or not) bit-identical to the kernels apart"
    if shim:
        reason += "; nvcc PTX's ptxas register report skipped (Triton's ptxas too old for it)"
    if any("host executables: skipped" in s for s in skipped):
        reason += "; host executables skipped (no mlir-opt-22/llc-22, expected)"
    return result(True, reason)


# ---------------------------------------------------------------------------
# c: gpuopt-trace
# ---------------------------------------------------------------------------

COPY_PATTERNS = ("summary.json", "events.jsonl", "probe.json", "kernels", "plots")


def cmd_trace_check(args):
    runs = sorted(d for d in glob.glob(os.path.join(args.tracedir, "*")) if os.path.isdir(d))
    problems, md = [], []
    if len(runs) != 1:
        return result(False, f"{len(runs)} run directories under {args.tracedir}, expected 1")
    run = runs[0]
    summary_path = os.path.join(run, "summary.json")
    if not os.path.exists(summary_path):
        return result(False, f"no summary.json in {run}")
    s = load_json(summary_path)
    if args.copy_to:
        os.makedirs(args.copy_to, exist_ok=True)
        for name in COPY_PATTERNS:
            src = os.path.join(run, name)
            if os.path.isdir(src):
                shutil.copytree(src, os.path.join(args.copy_to, name), dirs_exist_ok=True)
            elif os.path.exists(src):
                shutil.copy2(src, args.copy_to)
    kernels = s.get("kernels", [])
    probed = [k for k in kernels if k.get("probed")]
    launches = s.get("launches", 0)
    errors = [ln for ln in s.get("launch_list", []) if ln.get("error")]
    if s.get("error"):
        problems.append(f"trace error: {s['error']}")
    if not kernels:
        problems.append("0 kernels in the trace")
    if not probed:
        problems.append("no kernel was probed" + (
            f" ({kernels[0]['kernel']}: {kernels[0].get('reason')})" if kernels else ""))
    if not launches:
        problems.append("0 launches recorded")
    if errors:
        problems.append(f"{len(errors)} launches could not be saved or analysed: "
                        f"{errors[0]['error'][:200]}")
    md.append(f"Trace `{os.path.basename(run)}`: {len(kernels)} kernels ({len(probed)} probed), "
              f"{launches} launches recorded, device {s.get('device')}.")
    md += ["", "| kernel | probed | launches | why not probed |", "| --- | --- | ---: | --- |"]
    for k in kernels:
        md.append(f"| {k['kernel']} | {'yes' if k.get('probed') else 'no'} | "
                  f"{k.get('launches', 0)} | {k.get('reason') or ''} |")
    rows = []
    for ln in s.get("launch_list", [])[:8]:
        a = (ln.get("analyses") or {}).get("block_sched") or next(
            iter((ln.get("analyses") or {}).values()), None)
        rows.append(f"| {ln['index']} | {ln['kernel']} | {ln['grid']} | {ln['block']} | "
                    f"{json.dumps(ln.get('overflow', {}))} | {_short(a)} |")
    if rows:
        md += ["", "| launch | kernel | grid | block | overflow | analysis |",
               "| ---: | --- | --- | --- | --- | --- |"] + rows
    if s.get("timings"):
        md += ["", "| kernel | original (us) | probed (us) | overhead |", "| --- | ---: | ---: | ---: |"]
        for t in s["timings"]:
            md.append(f"| {t['kernel']} | {t['original_ms'] * 1e3:.1f} | "
                      f"{t['probed_ms'] * 1e3:.1f} | {100 * t['overhead']:+.1f}% |")
    same = None
    if args.outputs:
        a, b = (load_json(p) if os.path.exists(p) else None for p in args.outputs)
        if a is None:
            problems.append(f"the traced program wrote no {args.outputs[0]}")
        elif b is None:
            md.append("\nThe untraced run was not made or wrote nothing: outputs not compared.")
        else:
            same = a["outputs"] == b["outputs"]
            md.append(f"\nOutputs of the traced and the untraced run ({len(a['outputs'])} tensors, "
                      f"SHA-256 of their bytes): {'bit-identical' if same else 'DIFFERENT'}.")
            if not same:
                problems.append("the traced program's outputs differ from the untraced run's")
    if args.details:
        write_text(args.details, "\n".join(md) + "\n")
    print("\n".join(md))
    if problems:
        return result(False, "; ".join(problems))
    return result(True, f"{len(kernels)} kernels ({len(probed)} probed), {launches} launches "
                  "traced" + ("; outputs bit-identical to the untraced run" if same else ""))


def _short(obj, limit=160):
    if obj is None:
        return ""
    if isinstance(obj, dict):
        keys = [k for k in obj if isinstance(obj[k], (int, float, str))][:6]
        text = ", ".join(f"{k}={obj[k]:.4g}" if isinstance(obj[k], float) else f"{k}={obj[k]}"
                         for k in keys)
    else:
        text = str(obj)
    return text[:limit].replace("|", "/")


# ---------------------------------------------------------------------------
# summary
# ---------------------------------------------------------------------------

def read_results(out):
    rows = {}
    path = os.path.join(out, "results.tsv")
    if os.path.exists(path):
        with open(path) as f:
            for line in f:
                parts = line.rstrip("\n").split("\t")
                if len(parts) >= 4:
                    rows[parts[0]] = {"status": parts[1], "seconds": parts[2],
                                      "reason": "\t".join(parts[3:])}
    return rows


def sha256_file(path):
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def build_summary(out, wheel=None, command=None):
    rows = read_results(out)
    env_path = os.path.join(out, "0-setup", "env.json")
    env = load_json(env_path) if os.path.exists(env_path) else {}
    gpu = (env.get("torch_device") or {}).get("name") if isinstance(
        env.get("torch_device"), dict) else None
    gpu = gpu or first_line(env.get("nvidia_smi_L", "")) or "unknown GPU"
    md = [f"# The gpuopt wheel on a GPU machine without LLVM/MLIR or the CUDA toolkit: {gpu}", ""]
    if env.get("nvidia_smi_L"):
        md.append(f"- GPU: `{first_line(env['nvidia_smi_L'])}`"
                  + (f"; driver, memory: {env['gpu_query'].split(',', 1)[-1].strip()}"
                     if env.get("gpu_query") else ""))
    if wheel:
        name = os.path.basename(wheel)
        digest = sha256_file(wheel) if os.path.exists(wheel) else "?"
        md.append(f"- Wheel: `{name}` (SHA-256 {digest[:16]}…), installed with "
                  "`pip install --no-deps --target` into a fresh folder")
    if env:
        md.append(f"- Software: Python {env.get('python')}, PyTorch {env.get('torch')} "
                  f"(CUDA {env.get('torch_cuda')}), Triton {env.get('triton')}, numpy "
                  f"{env.get('numpy')}, cupy {env.get('cupy')}")
        tp = env.get("triton_ptxas") or {}
        how = (f"$PTXAS = Triton's `{_rel_triton(env['PTXAS'])}` ({env.get('PTXAS_version')})"
               if env.get("PTXAS") else "$PTXAS unset: the tools find Triton's ptxas themselves")
        md.append("- Environment: CUDA toolkit hidden (no /usr/local/cuda on PATH or "
                  "LD_LIBRARY_PATH, " + ", ".join(f"${k}" for k in CUDA_VARS) + " unset; nvcc on "
                  f"PATH: {env.get('nvcc_on_path') or 'none'}); {how}; Triton's ptxas: "
                  + (", ".join(f"`{_rel_triton(p)}` {v}" for p, v in tp.items()) or "none"))
        for w in env.get("warnings", []):
            md.append(f"- Note: {w}")
        md.append(f"- Date: {env.get('date')}")
    if command:
        md.append(f"- Command: `{command}`")
    md += ["", "| step | what | result | time (s) | reason |", "| --- | --- | --- | ---: | --- |"]
    for key, _, what in STEPS:
        r = rows.get(key)
        if r is None:
            md.append(f"| {key} | {what} | not run | | |")
        else:
            md.append(f"| {key} | {what} | **{r['status']}** | {r['seconds']} | "
                      f"{r['reason'].replace('|', '/')} |")
    for key, d, what in STEPS:
        details = os.path.join(out, d, "details.md")
        if os.path.exists(details):
            with open(details) as f:
                body = f.read().strip()
            md += ["", f"## {key}. {what}", "", body]
    md.append("")
    return "\n".join(md)


def _rel_triton(path):
    if not path:
        return "?"
    i = path.find("triton" + os.sep)
    return path[i:] if i >= 0 else os.path.basename(path)


def cmd_summary(args):
    text = build_summary(args.out, args.wheel, args.command)
    write_text(os.path.join(args.out, "summary.md"), text)
    print(text)
    return 0


# ---------------------------------------------------------------------------

def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    p = sub.add_parser("env")
    p.add_argument("--site")
    p.add_argument("--json")
    p = sub.add_parser("ldd")
    p.add_argument("dir")
    p.add_argument("--json")
    p = sub.add_parser("triton-ptxas")
    p.add_argument("--isa")
    p = sub.add_parser("manifest-check")
    p.add_argument("manifest")
    p.add_argument("cubin")
    p = sub.add_parser("gpu-dialect-report")
    p.add_argument("log")
    p.add_argument("dir")
    p.add_argument("--cubin-note")
    p = sub.add_parser("trace-check")
    p.add_argument("tracedir")
    p.add_argument("--copy-to")
    p.add_argument("--outputs", nargs=2)
    p.add_argument("--details")
    p = sub.add_parser("summary")
    p.add_argument("out")
    p.add_argument("--wheel")
    p.add_argument("--command")
    args = ap.parse_args(argv)
    return {"env": cmd_env, "ldd": cmd_ldd, "triton-ptxas": cmd_triton_ptxas,
            "manifest-check": cmd_manifest_check, "gpu-dialect-report": cmd_gpu_dialect_report,
            "trace-check": cmd_trace_check, "summary": cmd_summary}[args.cmd](args)


if __name__ == "__main__":
    sys.exit(main())
