"""CPU tests of the serving workloads (benchmarks/workloads): the committed
kernels, the workloads' run specs, prepare on the small configuration, measure
with a stand-in gpu-run, and the report from a hand-written fixture. The test
that runs on a GPU skips without one.

usage: python3 -m pytest benchmarks/workloads
"""

import importlib.util
import json
import os
import re
import shutil
import stat
import subprocess
import sys

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, HERE)

import workloads as wl  # noqa: E402

# run.py under a name no other test folder uses.
_spec = importlib.util.spec_from_file_location("workloads_run", os.path.join(HERE, "run.py"))
run = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(run)
from gpuopt.launch_args import parse_arg  # noqa: E402

FIXTURE = os.path.join(HERE, "fixtures", "results-small.json")


def built(name):
    path = os.path.join(os.environ.get("BUILD_DIR", os.path.join(ROOT, "build")), "bin", name)
    return path if os.access(path, os.X_OK) else None


def ptx_params(path, entry):
    with open(path) as f:
        text = f.read()
    m = re.search(r"\.entry\s+" + re.escape(entry) + r"\s*\((.*?)\)", text, re.S)
    assert m, f"{path}: no .entry {entry}"
    return len(re.findall(r"\.param\b", m.group(1))), text


def test_committed_kernels():
    table = wl.load_kernels()
    assert len(table) == 12
    for stem, k in table.items():
        path = os.path.join(HERE, k["ptx"])
        n, text = ptx_params(path, k["entry"])
        # Triton's two scratch pointers follow the kernel's own arguments.
        assert n == len(k["signature"]) + 2, stem
        assert re.search(r"\.reqntid\s+%d\b" % k["block"], text), stem
        assert ".target sm_90a" in text
        assert not re.search(r'\.file\s+\d+\s+"/', text), f"{stem}: an absolute path"
        assert k["block"] == 32 * k["num_warps"]
    # The launch shapes the brief asks for.
    assert table["prefill_attn_causal_d128"]["num_warps"] == 8
    assert table["prefill_attn_causal_d128"]["constexprs"]["BLOCK_M"] == 128
    assert table["decode_attn_d128"]["num_warps"] == 4
    # sglang's split-KV decode launch: 4 warps, 2 stages, 64-key steps, 8 splits.
    s1, s2 = table["decode_splitkv_stage1_d128"], table["decode_splitkv_stage2_d128_s8"]
    assert s1["num_warps"] == s2["num_warps"] == 4 and s1["num_stages"] == 2
    assert s1["constexprs"]["BLOCK_N"] == 64 and s2["constexprs"]["MAX_KV_SPLITS"] == 8
    assert "wgmma" in open(os.path.join(HERE, table["matmul_fp16_128x128x64_w8_s3"]["ptx"])).read()


def test_workload_specs():
    works = wl.build()
    assert [w["name"] for w in works] == [w[0] for w in wl.WORKLOADS]
    by = {w["name"]: w for w in works}
    for w in works:
        for k in w["kernels"] + w["tail"]:
            run.check_params(k)  # raises on a wrong argument count
            for a in k["args"]:
                p = parse_arg(a)
                assert p["kind"] in ("buf", "scalar", "null"), a
                if p["kind"] == "buf":
                    assert p["count"] > 0 and p["type"] in ("f16", "bf16", "f32", "s32"), a
                    assert p["init"] in ("out", "random", "fill"), a
            assert any(parse_arg(a).get("init") == "out" for a in k["args"]), k["label"]
        seeds = [a.split(":")[4] for k in w["kernels"] + w["tail"] for a in k["args"]
                 if ":random:" in a]
        assert len(seeds) == len(set(seeds)), f"{w['name']}: a seed used twice"
    # Attention at serving sizes: 32 heads, d = 128.
    bal = by["attn-balanced"]["kernels"]
    assert bal[0]["grid"] == [2048 // 128, 32, 1] and bal[1]["grid"] == [16, 32, 1]
    assert by["attn-prefill-heavy"]["kernels"][1]["grid"] == [4, 32, 1]
    assert by["attn-decode-heavy"]["kernels"][1]["grid"] == [64, 32, 1]
    # Split-KV decode: stage 1 (one program per sequence, head and KV split)
    # fused with the prefill; stage 2 (the merge) a dependent tail, never fused.
    spl = by["attn-splitkv-balanced"]
    assert [k["label"] for k in spl["kernels"]] == ["prefill", "stage1"]
    assert spl["kernels"][1]["grid"] == [12, 32, 8]
    assert [k["label"] for k in spl["tail"]] == ["stage2"] and spl["tail"][0]["grid"] == [12, 32, 1]
    assert [parse_arg(a)["count"] for a in spl["kernels"][1]["args"]
            if parse_arg(a).get("init") == "out"] == [12 * 32 * 8 * 128, 12 * 32 * 8]
    assert by["attn-splitkv-prefill-heavy"]["kernels"][0]["grid"] == [4096 // 128, 32, 1]
    assert all(not w["tail"] for w in works if "splitkv" not in w["name"])
    # Decode-step kernels: each under one wave of an H100 (132 SMs, by threads).
    for name in ("decode-step-5", "decode-step-6"):
        ks = by[name]["kernels"]
        assert len(ks) == int(name[-1])
        for k in ks:
            assert k["grid"][0] * k["grid"][1] < 132 * (2048 // k["block"][0]), k["label"]
    # The whole prepare output is carried to the GPU: no data files, small buffers
    # only on the device; the largest workload fits an H100 several times.
    for w in works:
        assert sum(run.args_bytes(k["args"]) for k in w["kernels"]) < 8 << 30


def test_ratios_and_variant_table():
    assert wl.ratio("even", [512, 512]) == [1, 1]
    assert wl.ratio("grids", [1024, 65536]) == [1, 64]
    assert wl.ratio("grids", [128, 4096]) == [1, 32]
    assert wl.ratio("first2", [128, 4096]) == [1, 16]
    assert wl.ratio("last2", [128, 4096]) == [1, 64]
    assert wl.ratio("grids", [64, 64, 256, 128, 64]) == [1, 1, 4, 2, 1]
    assert wl.ratio("first2", [64, 64, 256]) is None
    assert run.expand("ratio={ratio:grids} maxnreg=0", [10, 40]) == "ratio=1,4 maxnreg=0"
    assert run.expand("ratio={ratio:last2}", [1, 1, 1]) is None
    assert wl.replicas("small3", [256, 128]) == [1, 3]
    assert wl.replicas("small2", [128, 128]) == [1, 2]
    assert wl.replicas("small2", [128, 128, 256]) is None
    assert wl.setmaxnreg("own", [256, 128], [180, 96]) == [184, 96]
    # 256 x 184 + 384 x 96 > 65536: both scaled by 0.78, down to multiples of 8.
    assert wl.setmaxnreg("fit", [256, 128], [180, 96], [1, 3]) == [136, 72]
    assert wl.setmaxnreg("fit", [256, 128], [180, 96]) == [184, 96]  # 59392 fits
    assert wl.setmaxnreg("fit", [256, 128], [180, None]) is None
    assert run.expand("replicas={replicas:small2} setmaxnreg={setmaxnreg:fit}", [16, 16],
                      [256, 128], [180, 20]) == "replicas=1,2 setmaxnreg=184,24"
    rows = run.variant_rows(["x:thread:maxnreg=96"])
    assert rows[-1] == ("x", "thread", "maxnreg=96")
    assert {r[1] for r in rows} >= {"thread", "interleave", "dynamic", "auto"}
    with pytest.raises(ValueError):
        run.variant_rows(["thread:thread:"])
    with pytest.raises(ValueError):
        run.variant_rows(["nostrategy"])
    # 103 registers x 768 threads: 6 warps x 3328 per sub-partition > 16384.
    assert "would not launch" in run.launch_problem(103, 768, 0)
    assert run.launch_problem(167, 384, 132096) is None
    assert run.launch_problem(255, 256, 0) is None and run.launch_problem(32, 1024, 0) is None
    assert "shared memory" in run.launch_problem(32, 128, 240 * 1024)
    w = {"kernels": [{"kernel": "a", "block": [256, 1, 1], "grid": [16, 32, 1], "smem": 4},
                     {"kernel": "b", "block": [128, 1, 1], "grid": [8, 1, 1], "smem": 0}]}
    assert run.hfuse_options(w, "interleave", "ratio=1,2", "n") == (
        "strategy=interleave kernels=a,b blocks=256,128 grids=16x32,8 smem=4,0 ratio=1,2 name=n")
    assert run.hfuse_options(w, "auto", "", "n").endswith("name=n chip=sm_90a require=true")


# A stand-in for gpu-run: the checked launch writes zeros into each --out
# buffer (so fused and original outputs agree, except for a kernel whose module
# path has "bad" in it), --spec writes a report with made-up samples.
FAKE_GPU_RUN = r'''#!/usr/bin/env python3
import json, sys, zlib
SIZE = {"f16": 2, "bf16": 2, "f32": 4, "s32": 4, "u32": 4, "u8": 1}
argv = sys.argv[1:]
def opt(name):
    return [argv[i + 1] for i, a in enumerate(argv) if a == name]
dev = {"name": "Stand-in GPU", "multiprocessors": 132, "compute_capability": "9.0"}
if "--spec" in argv:
    spec = json.load(open(opt("--spec")[0]))
    def t(key):
        base = 0.1 + (zlib.crc32(key.encode()) % 1000) / 1000.0
        s = [base * (1 + 0.01 * i) for i in range(spec["repeat"])]
        return {"median_ms": s[len(s) // 2], "samples_ms": s}
    groups = []
    for g in spec.get("groups", []):
        r = {"name": g["name"], "kernels": g["kernels"]}
        if "alone" in g["modes"]:
            r["alone"] = {k: t(k) for k in g["kernels"]}
        for m in ("serial", "concurrent", "graph"):
            if m in g["modes"]:
                r[m] = t(g["name"] + m)
        r["also"] = {k: t(k) for k in g.get("also", [])}
        groups.append(r)
    kernels = []
    for k in spec["kernels"]:
        if k.get("time_alone") is False:
            continue
        e = {"label": k["label"], "kernel": k["kernel"], "time": t(k["label"])}
        if "--occupancy-sweep" in argv:
            e["occupancy"] = {"blocks_per_sm": 2, "sweep": [
                {"blocks_per_sm": 1, "dynamic_smem": 4096, "time": t(k["label"] + "1")}]}
        kernels.append(e)
    json.dump({"device": dev, "kernels": kernels, "groups": groups},
              open(opt("--json")[0], "w"))
    sys.exit(0)
args = opt("--arg")
for o in opt("--out"):
    i, path = o.split(":", 1)
    kind, ty, count, init = args[int(i)].split(":")[:4]
    n = eval(count) * SIZE[ty]
    fill = b"\1" if "bad" in argv[0] else b"\0"
    open(path, "wb").write(fill * n)
json.dump({"device": dev, "kernels": [{"grid": [1, 1, 1], "block": [1, 1, 1]}]},
          open(opt("--json")[0], "w"))
'''


@pytest.fixture(scope="module")
def prepared(tmp_path_factory):
    if not built("gpu-opt"):
        pytest.skip("gpu-opt not built")
    out = tmp_path_factory.mktemp("workloads")
    r = subprocess.run([sys.executable, os.path.join(HERE, "run.py"), "prepare", "--out",
                        str(out), "--small", "--only", "attn-balanced", "--only",
                        "decode-step-6", "--only", "attn-splitkv-balanced", "--gpu-opt",
                        built("gpu-opt"), "--jobs", "4"],
                       capture_output=True, text=True, cwd=ROOT)
    assert r.returncode == 0, r.stderr + r.stdout
    with open(out / "workloads.json") as f:
        return out, json.load(f), r.stdout


def test_prepare_small(prepared):
    out, meta, stdout = prepared
    assert meta["small"] and [w["name"] for w in meta["workloads"]] == [
        "attn-balanced", "attn-splitkv-balanced", "decode-step-6"]
    by = {w["name"]: {v["name"]: v for v in w["variants"]} for w in meta["workloads"]}
    att = by["attn-balanced"]
    for name in ("thread", "interleave-even", "interleave-grids", "dynamic-even"):
        assert att[name]["status"] == "ok", att[name]
    # grids 1x32 and 2x32: even and grids are different ratios, first2 doubles the first.
    assert att["interleave-grids"]["options"] == "ratio=1,2"
    assert att["interleave-first2"]["options"] == "ratio=1,1"
    assert att["interleave-first2"]["status"] == "skipped"  # = interleave-even
    dec = by["decode-step-6"]
    assert dec["thread"]["status"] == "refused" and "1024" in dec["thread"]["message"]
    assert dec["interleave-first2"]["status"] == "skipped"  # two kernels only
    assert dec["dynamic-grids"]["status"] == "ok"
    spl = by["attn-splitkv-balanced"]
    for name in ("thread", "interleave-even", "interleave-grids", "dynamic-grids"):
        assert spl[name]["status"] == "ok", spl[name]
    for w in meta["workloads"]:
        for v in w["variants"]:
            assert v["status"] in ("ok", "refused", "declined", "skipped"), v
            if v["status"] != "ok":
                continue
            with open(os.path.join(ROOT, v["manifest"])) as f:
                man = json.load(f)
            k = man["kernels"][0]
            # gpu-run sets the shape parameters of a runtime-shapes kernel itself.
            shape = len(k.get("shape_params") or [])
            assert len(k["params"]) == len(v["args"]) + shape
            assert len(k["fused_from"]) == len(w["kernels"])
            assert v["label"].startswith("f_") and os.path.exists(os.path.join(ROOT, v["ptx"]))
    for w in meta["workloads"]:  # each workload's kernels as a gpu-run run spec
        with open(os.path.join(ROOT, w["spec"])) as f:
            spec = json.load(f)
        assert [k["label"] for k in spec["kernels"]] == spec["groups"][0]["kernels"] == [
            k["label"] for k in w["kernels"]]
        assert all(os.path.exists(os.path.join(ROOT, k["module"])) for k in spec["kernels"])
        gpu_run = built("gpu-run")
        if gpu_run:
            r = subprocess.run([gpu_run, "--spec", os.path.join(ROOT, w["spec"]), "--list"],
                               capture_output=True, text=True, cwd=ROOT)
            assert r.returncode == 0, r.stderr
    size = sum(os.path.getsize(os.path.join(d, f)) for d, _, fs in os.walk(out) for f in fs)
    assert size < 64 << 20
    assert "wrote" in stdout


def test_timing_specs(prepared):
    out, meta, _ = prepared
    w = meta["workloads"][0]
    ok = [v for v in w["variants"] if v["status"] == "ok"]
    specs = run.timing_specs(w, ok, 2, 3, 48 << 30)
    assert len(specs) == 1
    s = specs[0]
    labels = [k["label"] for k in w["kernels"]]
    assert [g["name"] for g in s["groups"]] == ["fwd", "rev"]
    assert s["groups"][0]["kernels"] == labels and s["groups"][1]["kernels"] == labels[::-1]
    assert s["groups"][0]["modes"] == ["alone", "serial", "concurrent", "graph"]
    assert s["groups"][1]["also"] == [v["label"] for v in ok]
    assert all(k.get("time_alone") is False for k in s["kernels"][len(labels):])
    # Attention at other sizes, named on the command line.
    row = wl.attention_sizes("attn-x", "1024:2048:24:4096")
    ks = wl.build(only=["attn-x"], extra=[row])[0]["kernels"]
    assert ks[0]["grid"] == [8, 32, 1] and ks[1]["grid"] == [24, 32, 1]
    assert "scalar:s32:2048" in ks[0]["args"] and "buf:s32:24:fill:4096" in ks[1]["args"]
    with pytest.raises(ValueError):
        wl.attention_sizes("attn-y", "100:2048:4:4096")
    # A budget of one fused kernel's buffers: one process per variant.
    one = run.args_bytes(ok[0]["args"])
    base = sum(run.args_bytes(k["args"]) for k in w["kernels"])
    assert len(run.timing_specs(w, ok, 2, 3, base + one)) == len(ok)
    # A dependent tail (split-KV stage 2): timed alone in the "fwd" rounds only.
    sw = next(x for x in meta["workloads"] if x["name"] == "attn-splitkv-balanced")
    sok = [v for v in sw["variants"] if v["status"] == "ok"]
    ss = run.timing_specs(sw, sok, 2, 3, 48 << 30)[0]
    assert ss["groups"][0]["kernels"] == ["prefill", "stage1"]
    assert ss["groups"][0]["also"] == ["stage2"] + [v["label"] for v in sok]
    assert "stage2" not in ss["groups"][1]["also"]
    assert next(k for k in ss["kernels"] if k["label"] == "stage2")["time_alone"] is False
    gpu_run = built("gpu-run")
    if gpu_run:  # gpu-run parses the spec and every module without a GPU
        path = out / "spec-check.json"
        with open(path, "w") as f:
            json.dump(s, f)
        r = subprocess.run([gpu_run, "--spec", str(path), "--list"], capture_output=True,
                           text=True, cwd=ROOT)
        assert r.returncode == 0, r.stderr


def test_measure_and_report_with_stand_in(prepared, tmp_path):
    out, meta, _ = prepared
    fake = tmp_path / "gpu-run"
    fake.write_text(FAKE_GPU_RUN)
    fake.chmod(fake.stat().st_mode | stat.S_IEXEC)
    # One variant made to compute something else: it must fail the check and
    # not be timed.
    wdir = tmp_path / "w"
    shutil.copytree(out, wdir)
    with open(wdir / "workloads.json") as f:
        m = json.load(f)
    bad = next(v for v in m["workloads"][0]["variants"] if v["name"] == "thread")
    bad_ptx = os.path.join(ROOT, bad["ptx"]).replace(".ptx", "")
    shutil.copyfile(bad_ptx + ".ptx", tmp_path / "bad.ptx")
    bad["ptx"] = str(tmp_path / "bad.ptx")
    with open(wdir / "workloads.json", "w") as f:
        json.dump(m, f)
    results = tmp_path / "results.json"
    r = subprocess.run([sys.executable, os.path.join(HERE, "run.py"), "measure", "--out",
                        str(wdir), "--json", str(results), "--gpu-run", str(fake),
                        "--warmup", "1", "--repeat", "5"], capture_output=True, text=True,
                       cwd=tmp_path)
    assert r.returncode == 0, r.stderr + r.stdout
    res = json.load(open(results))
    assert res["device"]["name"] == "Stand-in GPU"
    w = res["workloads"][0]
    assert set(w["baselines_ms"]) == {"serial", "concurrent", "graph", "serial-rev",
                                      "concurrent-rev", "graph-rev"}
    assert w["best_baseline_ms"] == min(w["baselines_ms"].values())
    assert w["limit_ms"] == max(k["alone_ms"] for k in w["kernels"])
    vs = {v["name"]: v for v in w["variants"]}
    assert vs["thread"]["verify"]["result"] == "FAIL" and vs["thread"]["ms"] is None
    assert vs["interleave-even"]["verify"]["result"] == "PASS"
    v = vs["interleave-even"]
    assert v["ms"] and abs(v["speedup"] - w["best_baseline_ms"] / v["ms"]) < 1e-12
    gap = w["best_baseline_ms"] - w["limit_ms"]
    if gap > 0:
        assert abs(v["gap_captured"] - (w["best_baseline_ms"] - v["ms"]) / gap) < 1e-12
    assert "best baseline" in r.stdout and "gap captured" in r.stdout
    sw = next(x for x in res["workloads"] if x["name"] == "attn-splitkv-balanced")
    assert [k["label"] for k in sw["kernels"]] == ["prefill", "stage1"]
    assert sw["tail"][0]["label"] == "stage2" and sw["tail"][0]["alone_ms"] > 0
    assert sw["limit_ms"] == max(k["alone_ms"] for k in sw["kernels"])  # without the tail
    assert "left out of every time below" in r.stdout
    md = tmp_path / "report.md"
    r = subprocess.run([sys.executable, os.path.join(HERE, "run.py"), "report", "--json",
                        str(results), "--md", str(md)], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    text = md.read_text()
    assert "Stand-in GPU" in text and "| interleave-even |" in text and "FAIL" in text
    assert "| stage2 (after) |" in text and "left out of every time below" in text
    # The profiles measure wrote feed auto's model in a second prepare.
    prof = w["profile"]["kernels"]
    assert [k["label"] for k in prof] == [k["label"] for k in w["kernels"]]
    assert prof[0]["occupancy"]["sweep"]
    again = tmp_path / "again"
    r = subprocess.run([sys.executable, os.path.join(HERE, "run.py"), "prepare", "--out",
                        str(again), "--small", "--only", "attn-balanced", "--rows", "auto",
                        "--profile", str(results), "--gpu-opt", built("gpu-opt")],
                       capture_output=True,
                       text=True, cwd=ROOT)
    assert r.returncode == 0, r.stderr + r.stdout
    m = json.load(open(again / "workloads.json"))
    assert [v["name"] for v in m["workloads"][0]["variants"]] == ["auto", "auto-any"]
    auto = next(v for v in m["workloads"][0]["variants"] if v["name"] == "auto")
    assert "profile=" in auto["hfuse"] and auto["status"] in ("ok", "declined"), auto
    assert json.load(open(os.path.join(ROOT, m["workloads"][0]["profile"])))["kernels"] == prof


def test_report_from_fixture(tmp_path):
    with open(FIXTURE) as f:
        fixture = json.load(f)
    assert "hand-written" in fixture["fixture"]  # not a measurement
    md = tmp_path / "out.md"
    assert run.main(["report", "--json", FIXTURE, "--md", str(md)]) == 0
    text = md.read_text()
    assert text.startswith("# Serving workloads fused horizontally: NVIDIA H100 80GB HBM3")
    assert "**Fixture:**" in text
    # Summary row: best variant, its speedup and the gap it captures.
    assert re.search(r"\| attn-balanced \| prefill 0\.3000, decode 0\.4000 \| 0\.6500 "
                     r"\(graph-rev\) \| 0\.4000 \| 1\.625 \| thread \| 0\.5000 \| 1\.300 "
                     r"\| 0\.60 \|", text)
    assert "| 2 streams reversed | 0.6600 |" in text
    assert "refused: " in text and "declined" in text
    assert run.gpu_slug("NVIDIA H100 80GB HBM3") == "h100"
    # Workloads measured in two calls: one report.
    other = dict(fixture, workloads=[dict(fixture["workloads"][0], name="gemm-reduce")])
    with open(tmp_path / "b.json", "w") as f:
        json.dump(other, f)
    assert run.main(["report", "--json", FIXTURE, "--json", str(tmp_path / "b.json"), "--md",
                     str(md), "--merged", str(tmp_path / "m.json")]) == 0
    assert "## attn-balanced" in md.read_text() and "## gemm-reduce" in md.read_text()
    assert len(json.load(open(tmp_path / "m.json"))["workloads"]) == 2


def have_gpu():
    return bool(built("gpu-run") and shutil.which("nvidia-smi") and
                subprocess.run(["nvidia-smi", "-L"], capture_output=True).returncode == 0)


@pytest.mark.skipif(not have_gpu(), reason="no GPU")
def test_measure_small_on_gpu(prepared, tmp_path):
    out, _, _ = prepared
    results = tmp_path / "results.json"
    r = subprocess.run([sys.executable, os.path.join(HERE, "run.py"), "measure", "--out",
                        str(out), "--json", str(results), "--warmup", "2", "--repeat", "5",
                        "--gpu-run", built("gpu-run")],
                       capture_output=True, text=True, cwd=ROOT)
    assert r.returncode == 0, r.stderr + r.stdout
    res = json.load(open(results))
    for w in res["workloads"]:
        for v in w["variants"]:
            if v["status"] == "ok":
                assert v["verify"]["result"] == "PASS", (w["name"], v["name"], v["verify"])
                assert v["ms"] > 0
