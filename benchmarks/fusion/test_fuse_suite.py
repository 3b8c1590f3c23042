"""CPU tests of fuse_suite.py: variant planning, result tables, and generate -> check -> bench end to end with
stand-in gpu-opt, gpu-run and compute-sanitizer scripts (no GPU).

usage: python3 -m pytest benchmarks/fusion/test_fuse_suite.py
"""

import csv
import json
import math
import os
import stat
import sys
import textwrap

import numpy as np
import pytest

import fuse_suite as fs


# Variant planning -----------------------------------------------------------------

SPECS = {"x": {"block": [256], "grid": [1000]}, "y": {"block": [512], "grid": [250]},
         "z": {"block": [768], "grid": [10]}, "histogram": {"block": [256], "grid": [1056]},
         "reduce_shfl": {"block": [256], "grid": [1056]}}


def test_ratios():
    assert fs.ratio_of(12544, 25088) == (1, 2)
    assert fs.ratio_of(262144, 8192) == (32, 1)
    assert fs.ratio_of(3, 2) == (3, 2)
    assert fs.ratio_of(512, 131072) == (1, 64)  # capped
    assert fs.interleave_ratios(512, 131072) == [(1, 1), (1, 64), (2, 1)]  # no 1:128
    assert fs.interleave_ratios(1000, 250) == [(1, 1), (4, 1), (8, 1)]
    assert fs.interleave_ratios(100, 100) == [(1, 1), (2, 1), (1, 2)]
    # per-block times: A's blocks take 1/2 of B's -> 2 A blocks per B block
    assert fs.interleave_ratios(1000, 250, 1.0, 2.0) == [(1, 1), (4, 1), (2, 1)]


def test_maxnreg_caps():
    assert fs.blocks_per_sm(32, 256) == 8
    assert fs.blocks_per_sm(123, 512) == 1
    assert fs.maxnreg_caps(123, 512) == [64]        # 1 -> 2 blocks per SM
    assert fs.maxnreg_caps(48, 512) == []           # caps above the need
    assert fs.maxnreg_caps(None, 512) == [128, 64]  # unknown: try both
    assert fs.maxnreg_caps(None, 1024) == [64]      # 128 x 1024 > 64K registers


def test_plan_variants():
    v, notes = fs.plan_variants("y", "z", SPECS)
    assert [x for x in v if x["strategy"] == "thread"] == [
        {"variant": "thread", "strategy": "thread", "options": {}, "skip": notes[0]}]
    assert "512 + 768 threads > 1024" in notes[0]
    v, _ = fs.plan_variants("x", "histogram", SPECS, {"x": {"registers": 40, "median_ms": 1},
                                                      "histogram": {"registers": 14,
                                                                    "median_ms": 1}})
    names = [x["variant"] for x in v]
    assert names[0] == "thread"
    assert {"thread-256-128", "thread-256-512", "thread-256-768"} <= set(names)
    assert {x["strategy"] for x in v} == set(fs.STRATEGIES)
    assert "auto" in names and "auto-static" in names
    split = next(x for x in v if x["variant"] == "thread-256-512")
    assert split["options"] == {"threads": [256, 512], "resizable": [False, True]}
    opt = fs.hfuse_option("thread", SPECS["x"], SPECS["histogram"], split["options"], "n")
    assert opt == ("strategy=thread blocks=256,256 grids=1000,1056 smem=0,0 threads=256,512 "
                   "resizable=false,true name=n")
    opt = fs.hfuse_option("interleave", {"block": [16, 16], "grid": [64, 64]},
                          {**SPECS["x"], "smem": 16}, {"ratio": [1, 3]}, smem=False)
    assert opt == "strategy=interleave blocks=16x16,256 grids=64x64,1000 ratio=1,3"
    opt = fs.hfuse_option("auto", SPECS["x"], {**SPECS["x"], "smem": 16}, {"profile": True},
                          "n", "p.json", candidates="c.json", chip="sm_90a")
    # auto requires fusion: a decline fails, and the suite records it.
    assert opt == ("strategy=auto blocks=256,256 grids=1000,1000 smem=0,16 profile=p.json "
                   "name=n require=true candidates-out=c.json chip=sm_90a")
    v, _ = fs.plan_variants("x", "y", SPECS)
    assert [x["variant"] for x in v if x["strategy"] == "auto"] == ["auto"]


def test_unknown_option():
    h = "strategy=auto blocks=256,256 smem=0,16 name=n candidates-out=c.json"
    assert fs.unknown_option("<Pass-Options-Parser>: no such option candidates-out", h) == \
        "candidates-out"
    assert fs.unknown_option("error: unknown option 'smem'", h) == "smem"
    # the pass asking for smem= is no reason to leave it out
    assert fs.unknown_option("it declares dynamic shared memory: give the bytes it is "
                             "launched with (smem= option, or dynamic_smem: in the config)",
                             h) is None
    assert fs.drop_option(h, "smem") == "strategy=auto blocks=256,256 name=n candidates-out=c.json"
    assert fs.drop_option(h, "candidates-out") == "strategy=auto blocks=256,256 smem=0,16 name=n"


def test_candidate_search():
    cands = [{"strategy": "thread", "threads": [256, 256], "ratio": [1, 1], "maxnreg": 0,
              "feasible": True},
             {"strategy": "thread", "threads": [256, 256], "ratio": [1, 1], "maxnreg": 64,
              "feasible": False},
             {"strategy": "interleave", "threads": [256, 256], "ratio": [1, 4], "maxnreg": 0},
             {"strategy": "dynamic", "threads": [256, 256], "ratio": [1, 1], "maxnreg": 0}]
    thread = {"strategy": "thread", "options": {},
              "fused": {"fusion_strategy": "thread",
                        "parts": [{"threads": [0, 256]}, {"threads": [256, 512]}]}}
    inter = {"strategy": "interleave", "options": {"ratio": [1, 4]},
             "fused": {"fusion_strategy": "interleave",
                       "parts": [{"threads": [0, 256], "ratio": 1},
                                 {"threads": [0, 256], "ratio": 4}]}}
    assert fs.variant_plan_key(thread) == ("thread", (256, 256), (), 0)
    assert fs.variant_plan_key(inter) == ("interleave", (), (1, 4), 0)
    measured = {fs.variant_plan_key(thread): 2.0, fs.variant_plan_key(inter): 1.0}
    # the best (interleave 1:4, 1.0 ms) is the 2nd feasible candidate of 3
    assert fs.candidate_search(cands, measured, 1.0) == {
        "candidates": 3, "matched": 2, "measure": 2, "share": pytest.approx(2 / 3)}
    assert fs.candidate_search(cands, {fs.variant_plan_key(thread): 2.0}, 1.0)["measure"] is None


def test_suite_pairs():
    pairs = fs.suite_pairs()
    assert len(pairs) == 23 + len(fs.TRITON_PAIRS)
    assert len(fs.MEMORY_COMPUTE) == 10 and len(fs.LONG_MIXED) == 4
    names = {f"{a}+{b}" for _, a, b in pairs}
    assert set(fs.MEMORY_COMPUTE) <= names and set(fs.LONG_MIXED) <= names


# Comparison -------------------------------------------------------------------------

def write(tmp_path, name, array):
    p = tmp_path / name
    np.ascontiguousarray(array).tofile(p)
    return str(p)


# Results ------------------------------------------------------------------------------

def test_geomean():
    assert fs.geomean([2.0, 8.0]) == pytest.approx(4.0)
    assert fs.geomean([]) is None


def t(ms):
    return {"median_ms": ms, "min_ms": ms * 0.99, "max_ms": ms * 1.01, "spread": 0.02}


def fake_saved():
    pairs = [{"name": "ethash_like+blake2b", "set": "crypto", "a": "ethash_like",
              "b": "blake2b", "notes": []},
             {"name": "im2col+maxpool", "set": "dl", "a": "im2col", "b": "maxpool",
              "notes": []},
             {"name": "im2col+histogram", "set": "dl", "a": "im2col", "b": "histogram",
              "notes": []}]
    variants = {}
    for pair, times in (("ethash_like+blake2b", {"thread": 6.5, "interleave-1-1": 6.2,
                                                 "dynamic-1-1": 6.0, "auto": 6.2}),
                        ("im2col+maxpool", {"thread": 0.17, "auto": 0.158})):
        for n in times:
            variants[f"{pair}/{n}"] = {"pair": pair, "variant": n,
                                       "strategy": n.split("-")[0], "options": {},
                                       "fused": {"fusion_strategy": "interleave"}}
    groups = [{"name": "ethash_like+blake2b", "kernels": ["ethash_like", "blake2b"],
               "alone": {"ethash_like": t(5.8), "blake2b": t(1.9)}, "serial": t(7.7),
               "concurrent": t(7.0), "graph": t(7.1),
               "also": {f"ethash_like+blake2b/{n}": t(x) for n, x in
                        {"thread": 6.5, "interleave-1-1": 6.2, "dynamic-1-1": 6.0,
                         "auto": 6.2}.items()}},
              {"name": "im2col+maxpool", "kernels": ["im2col", "maxpool"],
               "alone": {"im2col": t(0.05), "maxpool": t(0.11)}, "serial": t(0.16),
               "concurrent": t(0.162),
               "also": {"im2col+maxpool/thread": t(0.17)}},  # no graph, auto from alone
              {"name": "im2col+histogram", "kernels": ["im2col", "histogram"],
               "alone": {"im2col": t(0.05), "histogram": t(0.12)}, "serial": t(0.17),
               "concurrent": t(0.16), "graph": t(0.165), "also": {}}]
    kernels = [{"label": "im2col+maxpool/auto", "time": t(0.158)}]
    return {"command": "python3 benchmarks/fusion/fuse_suite.py bench", "date": "2026-01-01",
            "sm_count_generated": 132, "warmup": 10, "repeat": 30,
            "processes": [{"pairs": [p["name"] for p in pairs], "rc": 0, "wall_s": 1}],
            "pairs": pairs, "variants": variants, "left_out": [{"id": "x/y", "why": "FAIL: z"}],
            "declined": {"im2col+histogram": "hfuse: not fusing: ..."},
            "report": {"device": {"name": "NVIDIA H100 80GB HBM3", "multiprocessors": 132,
                                  "compute_capability": "9.0", "l2_bytes": 50 << 20},
                       "kernels": kernels, "groups": groups}}


def test_analyse():
    rows, s = fs.analyse(fake_saved())
    eth, dl, declined = rows
    assert declined["auto_declined"] and declined["auto"] is None
    assert declined["speedup_auto"] is None and "exhaustive" not in declined
    assert eth["best_baseline"] == 7.0 and eth["best_baseline_mode"] == "streams"
    assert eth["max"] == 5.8
    assert eth["per_strategy"]["dynamic"] == {"variant": "dynamic-1-1", "ms": 6.0}
    assert eth["best_fused"] == {"variant": "dynamic-1-1", "ms": 6.0}
    assert eth["speedup_auto"] == pytest.approx(7.0 / 6.2)
    assert eth["overlap_auto"] == pytest.approx((7.7 - 6.2) / (7.7 - 5.8))
    assert eth["exhaustive"]["auto_rank"] == 2 and eth["exhaustive"]["variants"] == 4
    assert eth["exhaustive"]["rank_share"] == 0.5 and eth["exhaustive"]["search"] is None
    assert eth["exhaustive"]["within_3pct"] is False  # 6.2 > 1.03 * 6.0
    assert dl["graph"] is None and dl["best_baseline"] == 0.16
    assert dl["variants"]["auto"]["from"] == "alone"
    assert dl["exhaustive"]["within_3pct"] is True
    assert s["geomean_speedup_auto"] == pytest.approx(math.sqrt(7.0 / 6.2 * 0.16 / 0.158))
    assert s["auto_above_1_01"] == 2 and s["auto_below_0_99"] == 0
    assert s["mean_overlap_auto_or_apart_memory_compute"] == pytest.approx((7.7 - 6.2) / 1.9)
    assert s["geomean_speedup_auto_long_mixed_declined_as_1"] == pytest.approx(7.0 / 6.2)
    assert s["memory_compute_pairs"] == ["ethash_like+blake2b"]
    assert s["mean_overlap_auto_memory_compute"] == pytest.approx((7.7 - 6.2) / 1.9)
    assert s["geomean_speedup_auto_long_mixed"] == pytest.approx(7.0 / 6.2)
    assert s["auto_declined"] == ["im2col+histogram"]
    assert s["geomean_speedup_auto_declined_as_1"] == pytest.approx(
        (7.0 / 6.2 * 0.16 / 0.158) ** (1 / 3))


def test_write_bench(tmp_path):
    fs.write_bench(fake_saved(), str(tmp_path))
    md = (tmp_path / "fusion-h100.md").read_text()
    assert "# Horizontal fusion on NVIDIA H100 80GB HBM3" in md
    assert ("| crypto | ethash_like+blake2b | 5.8000 | 1.9000 | 5.8000 | 7.7000 | 7.0000 | "
            "7.1000 | 7.0000 | 6.5000 | 6.2000 | 6.0000 | - | 6.2000 | interleave | 1.129 | "
            "1.167 | 0.789 | 0.895 |") in md
    assert ("| im2col+maxpool | 2 | auto | 0.1580 | 0.1580 | 1.000 | yes | 1 | 0.50 | - | - | "
            "- |") in md
    assert "auto within 3% of the best of all variants in 1 of 2 pairs" in md
    assert "- x/y: FAIL: z" in md
    assert "| dl | im2col+histogram | 0.0500 | 0.1200 |" in md and "| declined |" in md
    assert "auto declined to fuse 1 pairs" in md
    with open(tmp_path / "fusion-h100.csv") as f:
        rows = list(csv.DictReader(f))
    assert len(rows) == (2 + 3 + 4) + (2 + 2 + 2) + (2 + 3)
    saved = json.loads((tmp_path / "fusion-h100.json").read_text())
    assert saved["summary"]["pairs"] == 3
    # --from-json gives the same tables
    out2 = tmp_path / "again"
    assert fs.main(["bench", "--from-json", str(tmp_path / "fusion-h100.json"),
                    "--out-dir", str(out2)]) == 0
    assert (out2 / "fusion-h100.md").read_text() == md
    try:
        import matplotlib  # noqa: F401
        assert (tmp_path / "fusion-h100.png").stat().st_size > 1000
    except ImportError:
        pass


def test_merge_saved():
    old = fake_saved()
    new = fake_saved()
    new["date"] = "2026-01-05"
    new["command"] = "second"
    new["pairs"] = [p for p in new["pairs"] if p["name"] == "im2col+maxpool"]
    new["report"]["groups"] = [g for g in new["report"]["groups"]
                               if g["name"] == "im2col+maxpool"]
    new["report"]["groups"][0]["serial"] = t(0.2)
    new["variants"] = {k: v for k, v in new["variants"].items() if v["pair"] == "im2col+maxpool"}
    new["declined"] = {}
    merged = fs.merge_saved(old, new)
    # suite order: the DL pairs before the crypto pair
    assert [p["name"] for p in merged["pairs"]] == ["im2col+maxpool", "im2col+histogram",
                                                    "ethash_like+blake2b"]
    groups = {g["name"]: g for g in merged["report"]["groups"]}
    assert groups["im2col+maxpool"]["serial"]["median_ms"] == 0.2
    assert set(merged["variants"]) == set(old["variants"])
    assert merged["declined"] == {"im2col+histogram": "hfuse: not fusing: ..."}
    assert merged["merged_dates"] == ["2026-01-01", "2026-01-05"]
    assert merged["command"].endswith("; then second")
    rows, _ = fs.analyse(merged)
    assert len(rows) == 3


def test_batch_groups():
    pairs = [{"name": "a+b", "a": "a", "b": "b"}, {"name": "a+c", "a": "a", "b": "c"},
             {"name": "d+e", "a": "d", "b": "e"}]
    fused = {"a+b/t": {"pair": "a+b"}, "a+c/t": {"pair": "a+c"}, "d+e/t": {"pair": "d+e"},
             "d+e/u": {"pair": "d+e"}}
    size = {k: 10 for k in ["a", "b", "c", "d", "e"] + list(fused)}

    def names(batches):
        return [[(p["name"], also) for p, also in b] for b in batches]

    assert names(fs.batch_groups(pairs, fused, size, 1000)) == \
        [[("a+b", ["a+b/t"]), ("a+c", ["a+c/t"]), ("d+e", ["d+e/t", "d+e/u"])]]
    # a+c adds c and a+c/t only (a is in the process already): 30 + 20 = 50
    assert names(fs.batch_groups(pairs, fused, size, 50)) == \
        [[("a+b", ["a+b/t"]), ("a+c", ["a+c/t"])], [("d+e", ["d+e/t", "d+e/u"])]]
    # d+e with both variants (40) does not fit in 30: two processes, one variant each
    assert names(fs.batch_groups(pairs, fused, size, 30))[-2:] == \
        [[("d+e", ["d+e/t"])], [("d+e", ["d+e/u"])]]


def test_describe_command():
    cmd = fs.describe_command("bench", ["--gpu-run", "/opt/x/gpu-run", "--dir", "/tmp/q",
                                        "--out-dir", os.path.join(fs.ROOT, "docs", "results"),
                                        "--repeat", "5"])
    assert cmd == ("python3 benchmarks/fusion/fuse_suite.py bench --gpu-run gpu-run --dir DIR "
                   "--out-dir docs/results --repeat 5")


# End to end with stand-in tools ------------------------------------------------------------

FAKE_GPU_OPT = r'''
import json, os, re, sys
args = sys.argv[1:]
inputs = [a for a in args if a.endswith(".ptx") and a not in (args[args.index("-o") + 1],)]
hfuse = next(a for a in args if a.startswith("--hfuse=")).split("=", 1)[1]
opts = dict(kv.split("=", 1) for kv in hfuse.split())
if os.environ.get("FAKE_NO_SMEM") and "smem" in opts:
    print("<Pass-Options-Parser>: no such option smem", file=sys.stderr)
    sys.exit(1)
if "candidates-out" in opts:
    json.dump([{"strategy": "interleave", "threads": [256, 256], "ratio": [12, 1],
                "maxnreg": 0, "feasible": True, "predicted": 0.2},
               {"strategy": "thread", "threads": [256, 256], "ratio": [1, 1],
                "maxnreg": 0, "feasible": True, "predicted": 0.3}],
              open(opts["candidates-out"], "w"))
if os.environ.get("FAKE_REFUSE") and os.environ["FAKE_REFUSE"] in hfuse:
    print("error: strategy refused for this pair", file=sys.stderr)
    sys.exit(1)
out, man = args[args.index("-o") + 1], args[args.index("--manifest") + 1]
counts, names = [], []
for path in inputs:
    text = open(path).read()
    m = re.search(r"\.entry\s+(\w+)\s*\(([^)]*)\)", text)
    names.append(m.group(1))
    counts.append(m.group(2).count(".param"))
na, nb = counts
params = nb + na + (1 if opts["strategy"] == "dynamic" else 0)
open(out, "w").write("// fused\n")
json.dump({"manifest_version": 2, "module": {"path": os.path.basename(out), "format": "ptx"},
           "kernels": [{"name": opts.get("name", "fused"),
                        "params": [{"name": f"p{i}", "type": "u64", "size": 8, "align": 8,
                                    "offset": 8 * i, "kind": "scalar"} for i in range(params)],
                        "launch": {"block": [512, 1, 1], "grid": [100, 1, 1],
                                   "dynamic_smem": 4096},
                        "fusion_strategy": "interleave" if opts["strategy"] == "auto"
                                           else opts["strategy"],
                        "fused_from": [
                            {"kernel": names[0], "threads": [0, 256],
                             "arg_map": [nb + i for i in range(na)], "dynamic_smem": 0,
                             "ratio": int(opts.get("ratio", "1,1").split(",")[0])},
                            {"kernel": names[1], "threads": [256, 512],
                             "arg_map": list(range(nb)), "dynamic_smem": 4096,
                             "ratio": int(opts.get("ratio", "1,1").split(",")[1])}]}]},
          open(man, "w"))
'''

FAKE_GPU_RUN = r'''
import hashlib, json, os, sys, time
args = sys.argv[1:]
device = {"name": "NVIDIA H100 80GB HBM3", "compute_capability": "9.0",
          "multiprocessors": int(os.environ.get("FAKE_SMS", "132")), "l2_bytes": 50 << 20,
          "total_memory": 80 << 30, "driver_version": 13000}
def value(i):
    return {"median_ms": i, "min_ms": i * 0.99, "max_ms": i * 1.01, "spread": 0.02}
if args[0] == "--spec":
    spec = json.load(open(args[1]))
    rep = {"device": device, "kernels": [], "groups": []}
    times = {}
    for n, k in enumerate(spec["kernels"]):
        times[k["label"]] = 1.0 + (int(hashlib.md5(k["label"].encode()).hexdigest(), 16) % 97) / 100
        rep["kernels"].append({"label": k["label"], "time": value(times[k["label"]])})
    for g in spec["groups"]:
        a, b = g["kernels"]
        rep["groups"].append({"name": g["name"], "kernels": g["kernels"],
                              "alone": {a: value(times[a]), b: value(times[b])},
                              "serial": value(times[a] + times[b]),
                              "concurrent": value(max(times[a], times[b]) * 1.2),
                              "graph": value(max(times[a], times[b]) * 1.25),
                              "also": {l: value(times[l]) for l in g["also"]}})
    json.dump(rep, open(args[args.index("--json") + 1], "w"))
    sys.exit(0)
module = args[0]
if os.environ.get("FAKE_HANG") and os.environ["FAKE_HANG"] in module:
    time.sleep(60)
kargs, outs, report = [], [], None
i = 1
while i < len(args):
    if args[i] == "--arg":
        kargs.append(args[i + 1])
    elif args[i] == "--out":
        outs.append(args[i + 1])
    elif args[i] == "--json":
        report = args[i + 1]
    i += 2 if args[i].startswith("--") and i + 1 < len(args) else 1
for o in outs:
    idx, path = o.split(":", 1)
    data = bytearray(hashlib.sha256(kargs[int(idx)].encode()).digest() * 2)
    if os.environ.get("FAKE_CORRUPT") and os.environ["FAKE_CORRUPT"] in module:
        data[5] ^= 1
    open(path, "wb").write(data)
if report:
    json.dump({"device": device, "kernels": [{"label": "k", "grid": [1, 1, 1],
                                              "block": [1, 1, 1], "dynamic_smem": 0,
                                              "registers": 32}]}, open(report, "w"))
'''

FAKE_SANITIZER = r'''
import subprocess, sys
args = sys.argv[1:]
while args[0].startswith("--"):
    args = args[2:]
rc = subprocess.run(args).returncode
print("========= ERROR SUMMARY: 0 errors")
sys.exit(rc)
'''


FAKE_PTXAS = r'''
import sys
ptx = [a for a in sys.argv[1:] if a.endswith(".ptx")][0]
if "/dynamic-" in ptx and "/dynamic-1-1" not in ptx:
    print("ptxas error   : Entry function uses too much shared data", file=sys.stderr)
    sys.exit(255)
'''


def tool(tmp_path, name, body):
    p = tmp_path / name
    p.write_text(f"#!{sys.executable}\n" + textwrap.dedent(body))
    p.chmod(p.stat().st_mode | stat.S_IEXEC)
    return str(p)


def test_end_to_end(tmp_path, monkeypatch, capsys):
    gpu_opt = tool(tmp_path, "gpu-opt", FAKE_GPU_OPT)
    gpu_run = tool(tmp_path, "gpu-run", FAKE_GPU_RUN)
    san = tool(tmp_path, "compute-sanitizer", FAKE_SANITIZER)
    d = tmp_path / "fz"
    monkeypatch.setenv("FAKE_REFUSE", "ratio=1,1")
    monkeypatch.setenv("FAKE_NO_SMEM", "1")
    ptxas = tool(tmp_path, "ptxas", FAKE_PTXAS)
    assert fs.main(["generate", "--gpu-opt", gpu_opt, "--out-dir", str(d), "--only",
                    "im2col+histogram", "--jobs", "4", "--ptxas", ptxas, "--profile",
                    os.path.join(fs.ROOT, "docs", "results", "baselines-h100.json")]) == 0
    meta = json.loads((d / "variants.json").read_text())
    by_id = {v["id"]: v for v in meta["variants"]}
    # The pair as hfuse_search's input: both kernels, no output files.
    assert fs.main(["search-specs", "--dir", str(d), "--out-dir", str(tmp_path / "si")]) == 0
    spec = json.loads((tmp_path / "si" / "im2col__histogram.json").read_text())
    assert [k["label"] for k in spec["kernels"]] == ["im2col", "histogram"]
    assert spec["kernels"][0]["args"] == meta["kernels"]["im2col"]["args"]
    assert all("out" not in k for k in spec["kernels"])
    # ptxas's refusal to assemble a variant is recorded, not run.
    fitted = [i for i in by_id if "/dynamic-" in i and not i.endswith("/dynamic-1-1")]
    assert fitted
    for i in fitted:
        assert by_id[i]["status"] == "refused"
        assert "too much shared data" in by_id[i]["message"]
    assert by_id["im2col+histogram/interleave-1-1"]["status"] == "refused"
    assert "strategy refused" in by_id["im2col+histogram/interleave-1-1"]["message"]
    ok = [v for v in meta["variants"] if v["status"] == "ok"]
    assert len(ok) >= 8
    auto = by_id["im2col+histogram/auto"]
    assert "profile=" in auto["hfuse"] and auto["hfuse"].endswith("chip=sm_90a")
    assert "smem=" not in auto["hfuse"] and auto["dropped_options"] == ["smem"]
    assert "gpu-opt does not know smem=: generated without it" in auto["warnings"]
    assert (d / auto["candidates"]).exists()
    assert auto["fused"]["fusion_strategy"] == "interleave"
    assert any("receives no original argument" in w
               for w in by_id["im2col+histogram/dynamic-12-1"]["warnings"])
    assert meta["sm_count"] == 132

    monkeypatch.setenv("FAKE_CORRUPT", "thread-256-512")
    monkeypatch.setenv("FAKE_HANG", "thread-256-768")
    rc = fs.main(["check", "--gpu-run", gpu_run, "--dir", str(d), "--timeout", "3",
                  "--sanitizer", san, "--sanitize-sample", "2", "--jobs", "2"])
    assert rc == 1
    check = json.loads((d / "check.json").read_text())
    res = {e["id"]: e for e in check["variants"]}
    assert res["im2col+histogram/thread"]["result"] == "PASS"
    bad = res["im2col+histogram/thread-256-512"]
    assert bad["result"] == "FAIL" and "first at 1: got" in bad["detail"]
    assert res["im2col+histogram/thread-256-768"]["detail"] == "hang after 3 s"
    assert res["im2col+histogram/interleave-1-1"]["result"] == "SKIP"
    assert sum("sanitizer" in e for e in check["variants"]) == 2
    assert "| im2col+histogram | thread | thread-256-512 | FAIL |" in (d / "check.md").read_text()

    # --stop-after: nothing new is started, the results so far are kept.
    assert fs.main(["check", "--gpu-run", gpu_run, "--dir", str(d), "--stop-after", "0",
                    "--only", "auto"]) == 3
    again = {e["id"]: e for e in json.loads((d / "check.json").read_text())["variants"]}
    assert again == res
    # --resume keeps the earlier results; a fixed variant checked again passes.
    monkeypatch.delenv("FAKE_CORRUPT")
    monkeypatch.delenv("FAKE_HANG")
    assert fs.main(["check", "--gpu-run", gpu_run, "--dir", str(d), "--only",
                    "thread-256-768"]) == 0
    check = json.loads((d / "check.json").read_text())
    res = {e["id"]: e for e in check["variants"]}
    assert res["im2col+histogram/thread-256-768"]["result"] == "PASS"
    assert res["im2col+histogram/thread-256-512"]["result"] == "FAIL"  # kept

    out = tmp_path / "results"
    monkeypatch.setenv("FAKE_SMS", "114")
    rc = fs.main(["bench", "--gpu-run", gpu_run, "--dir", str(d), "--out-dir", str(out),
                  "--warmup", "1", "--repeat", "2", "--date", "2026-01-02",
                  "--max-gib", "1.2"])  # a fused variant: about 0.4 GiB
    assert rc == 0
    saved = json.loads((out / "fusion-h100.json").read_text())
    assert "im2col+histogram/thread-256-512" not in saved["variants"]
    assert "im2col+histogram/thread-256-768" in saved["variants"]
    assert len(saved["specs"]) > 1  # the pair's variants split over processes
    group = saved["specs"][0]["groups"][0]
    assert group["modes"] == ["alone", "serial", "concurrent", "graph"]
    assert "im2col+histogram/thread" in group["also"]
    merged = saved["report"]["groups"]
    assert len(merged) == 1 and merged[0]["parts"] == len(saved["specs"])
    assert set(merged[0]["also"]) == set(saved["variants"])
    fused = next(k for k in saved["specs"][0]["kernels"] if k["label"] == "im2col+histogram/thread")
    assert set(fused) == {"label", "module", "manifest", "kernel", "args"}
    assert fused["args"][-1] == meta["kernels"]["im2col"]["args"][-1]  # A's after B's
    md = (out / "fusion-h100.md").read_text()
    assert "WARNING: this GPU has 114" in md
    assert "| im2col+histogram/thread-256-512: FAIL" in md or \
        "- im2col+histogram/thread-256-512: FAIL" in md
    assert str(tmp_path) not in json.dumps(saved)
    # auto's candidates: interleave 12:1 first, then thread
    ex = {r["pair"]: r for r in fs.analyse(saved)[0]}["im2col+histogram"]["exhaustive"]
    assert ex["search"]["candidates"] == 2 and ex["search"]["matched"] == 2
