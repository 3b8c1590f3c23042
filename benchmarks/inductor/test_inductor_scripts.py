"""CPU tests of the Inductor comparison scripts (no GPU, no torch needed):
argument specs, PTX entry parsing, argument mapping through a manifest, the
fuse_and_spec.py and report.py flows with stand-ins for gpu-opt and gpu-run,
and the report's arithmetic. With a real build/bin/gpu-opt, one test fuses two
Triton kernels of test/corpus through fuse_and_spec.py; with torch and triton
installed, one test drives the launch hook through Inductor's launcher code.

usage: python3 -m pytest benchmarks/inductor
"""

import json
import math
import os
import subprocess
import textwrap

import fuse_and_spec as fs
import pytest
import report as rp

from gpuopt.capture import inductor as dk

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))

PTX = """
.version 8.7
.target sm_90a
.address_size 64
.extern .shared .align 16 .b8 global_smem[];
.visible .entry triton_red_fused_sum_1(
	.param .u64 .ptr .global .align 1 triton_red_fused_sum_1_param_0,
	.param .u64 .ptr .global .align 1 triton_red_fused_sum_1_param_1,
	.param .u32 triton_red_fused_sum_1_param_2,
	.param .f32 triton_red_fused_sum_1_param_3,
	.param .u64 .ptr .global .align 1 triton_red_fused_sum_1_param_4,
	.param .u64 .ptr .global .align 1 triton_red_fused_sum_1_param_5
)
.reqntid 256
{
	ret;
}
"""


def tensor(index, name, role, dtype="float32", count=1024, input=None, output=None, buffer=None):
    return {"index": index, "name": name, "kind": "tensor", "sig_type": "*fp32", "dtype": dtype,
            "count": count, "role": role, "input": input, "output": output,
            "input_name": None if input is None else f"in{input}",
            "output_name": None if output is None else f"output {output}",
            "buffer": buffer if buffer is not None else 1000 + index}


def scratch(index, name):
    return {"index": index, "name": name, "kind": "scratch_null", "sig_type": "*i8"}


# fuse_and_spec.py --------------------------------------------------------------

def two_launches():
    k1 = {"kernel": "ka", "ptx": "separate_0.ptx", "grid": [8192, 1, 1], "block": [256, 1, 1],
          "dynamic_smem": 64, "args": ["buf:f32:1024:random:1000", "buf:f32:1024:out",
                                       "scalar:s32:4096", "null", "null"],
          "out_params": [1], "time_ms": {"median_ms": 0.1},
          "params": [tensor(0, "in_ptr0", "in", input=0), tensor(1, "out_ptr0", "out", output=0),
                     {"index": 2, "kind": "scalar"}, scratch(3, "g"), scratch(4, "p")]}
    k2 = {"kernel": "kb", "ptx": "separate_1.ptx", "grid": [64, 128, 1], "block": [128, 1, 1],
          "dynamic_smem": 0, "args": ["buf:f32:1024:random:1000", "buf:s32:16:zero",
                                      "buf:f32:512:out", "null", "null"],
          "out_params": [1, 2], "time_ms": {"median_ms": 0.2},
          "params": [tensor(0, "in_ptr0", "in", input=0),
                     tensor(1, "out_ptr0", "out", dtype="int32", count=16, input=1),
                     tensor(2, "out_ptr1", "out", count=512, output=1),
                     scratch(3, "g"), scratch(4, "p")]}
    return [k1, k2]


def manifest_for(launches, name="ka_kb", swap=False, grid=None):
    n0 = len(launches[0]["args"])
    parts = [{"kernel": "ka", "threads": [0, 256], "grid": launches[0]["grid"],
              "arg_map": list(range(n0))},
             {"kernel": "kb", "threads": [256, 384], "grid": launches[1]["grid"],
              "arg_map": list(range(n0, n0 + len(launches[1]["args"])))}]
    if swap:
        parts.reverse()
    nparams = n0 + len(launches[1]["args"])
    params = [{"name": f"p{i}", "type": "u64", "size": 8, "align": 8, "offset": 8 * i,
               "kind": "pointer"} for i in range(nparams)]
    return {"manifest_version": 1, "module": {"path": "f.ptx", "format": "ptx"},
            "kernels": [{"name": name, "params": params,
                         "launch": {"block": [384, 1, 1], "grid": grid or [8192, 128, 1],
                                    "dynamic_smem": 64},
                         "fused_from": parts}]}


def test_hfuse_option():
    L = two_launches()
    assert fs.hfuse_option("thread", [x["grid"] for x in L], [64, 0]) == \
        "--hfuse=strategy=thread grids=8192,64x128 smem=64,0"
    assert fs.hfuse_option("auto", [x["grid"] for x in L], [0, 0], "profile.json") == \
        "--hfuse=strategy=auto grids=8192,64x128 profile=profile.json require=true"
    opt = "--hfuse=strategy=auto grids=1,2 smem=4,0 profile=p.json"
    assert fs.unknown_option("gpu-opt: error: unknown option 'smem'", opt) == "smem"
    assert fs.unknown_option("refused: slower than apart", opt) is None
    assert fs.drop_option(opt, "smem") == "--hfuse=strategy=auto grids=1,2 profile=p.json"


def test_map_args():
    L = two_launches()
    k = fs.fused_kernel_of(manifest_for(L))
    args, mapping = fs.map_args(k, L)
    assert args == L[0]["args"] + L[1]["args"]
    assert mapping[(1, 2)] == 7 and mapping[(0, 1)] == 1
    # Parts listed in another order still map by kernel name.
    k = fs.fused_kernel_of(manifest_for(L, swap=True))
    args, mapping = fs.map_args(k, L)
    assert args == L[0]["args"] + L[1]["args"] and mapping[(1, 0)] == 5
    # A shared input may share a parameter; outputs may not.
    k = fs.fused_kernel_of(manifest_for(L))
    k["fused_from"][1]["arg_map"][0] = 0
    args, _ = fs.map_args(k, L)
    assert args[5] == "null"  # now fed by nobody: a pointer gets null
    k["fused_from"][1]["arg_map"][2] = 1
    with pytest.raises(fs.SpecError):
        fs.map_args(k, L)
    k = fs.fused_kernel_of(manifest_for(L))
    k["fused_from"][0]["arg_map"].pop()
    with pytest.raises(fs.SpecError, match="arg_map has 4 entries"):
        fs.map_args(k, L)


def test_fused_launch():
    L = two_launches()
    k = fs.fused_kernel_of(manifest_for(L))
    assert fs.fused_launch(k, L)[:3] == ([8192, 128, 1], [384, 1, 1], 64)
    k = fs.fused_kernel_of(manifest_for(L, grid="runtime"))
    grid, block, smem, notes = fs.fused_launch(k, L)
    assert grid == [8192, 128, 1] and notes


def test_combo_pairs():
    L = two_launches()
    refs = {(0, 1): "r01.bin", (1, 1): "r11.bin", (1, 2): "r12.bin"}
    combo = {"args": ["buf:f32:1024:random:1000", "buf:f32:512:out", "buf:f32:1024:out",
                      "buf:s32:16:zero", "null", "null"], "out_params": [1, 2, 3],
             "params": [tensor(0, "in_ptr0", "in", input=0),
                        tensor(1, "out_ptr0", "out", count=512, output=1),
                        tensor(2, "out_ptr1", "out", output=0),
                        tensor(3, "out_ptr2", "out", dtype="int32", count=16, input=1),
                        scratch(4, "g"), scratch(5, "p")]}
    pairs, out = fs.combo_pairs(combo, L, "check/p", refs)
    assert {(p["fused"], p["ref"]) for p in pairs} == {
        ("check/p/combo_arg1.bin", "r12.bin"), ("check/p/combo_arg2.bin", "r01.bin"),
        ("check/p/combo_arg3.bin", "r11.bin")}
    assert out[3] == "check/p/combo_arg3.bin"
    combo["params"][1]["output"] = 7
    assert fs.combo_pairs(combo, L, "check/p", refs) == (None, None)


FAKE_GPU_OPT = textwrap.dedent("""\
    #!/usr/bin/env python3
    # Stand-in for gpu-opt --hfuse: concatenates the parameters.
    import json, re, sys
    args = sys.argv[1:]
    ptx = [a for a in args if a.endswith(".ptx") and not a.startswith("-")][:2]
    opt = [a for a in args if a.startswith("--hfuse=")][0]
    out = args[args.index("-o") + 1]
    man = args[args.index("--manifest") + 1]
    if "strategy=dynamic" in opt:
        print("error: hfuse: every candidate is predicted slower than running apart", file=sys.stderr)
        sys.exit(1)
    if " smem=" in opt:
        print("gpu-opt: error: unknown option 'smem'", file=sys.stderr)
        sys.exit(1)
    counts = []
    for p in ptx:
        text = open(p).read()
        m = re.search(r"\\.entry\\s+(\\w+)\\s*\\(([^)]*)\\)", text)
        counts.append((m.group(1), len([x for x in m.group(2).split(",") if x.strip()])))
    n = sum(c for _, c in counts)
    open(out, "w").write("// fused\\n")
    parts, base = [], 0
    for name, c in counts:
        parts.append({"kernel": name, "threads": [0, 32], "grid": "runtime",
                      "arg_map": list(range(base, base + c))})
        base += c
    json.dump({"manifest_version": 1, "module": {"path": out, "format": "ptx"},
               "kernels": [{"name": "fused", "params": [
                   {"name": f"p{i}", "type": "u64", "size": 8, "align": 8, "offset": 8 * i,
                    "kind": "pointer"} for i in range(n)],
                   "launch": {"block": [384, 1, 1], "grid": "runtime", "dynamic_smem": 64},
                   "fused_from": parts}]}, open(man, "w"))
    """)


def entry_ptx(name, nparams):
    params = ",\n".join(f"\t.param .u64 {name}_param_{i}" for i in range(nparams))
    return f".version 8.7\n.target sm_90a\n.address_size 64\n.visible .entry {name}(\n{params}\n)\n.reqntid 256\n{{\n\tret;\n}}\n"


def make_dump(tmp_path):
    dump = tmp_path / "dump"
    L = two_launches()
    for prog, ok in (("softmax_layernorm", True), ("add_softmax", False)):
        d = dump / prog
        d.mkdir(parents=True)
        for x in L:
            (d / x["ptx"]).write_text(entry_ptx(x["kernel"], len(x["args"])))
        combo = {"kernel": "kc", "ptx": "combo.ptx", "grid": [8256, 1, 1], "block": [256, 1, 1],
                 "dynamic_smem": 64, "args": ["buf:f32:1024:random:1000", "buf:f32:1024:out",
                                              "buf:s32:16:zero", "buf:f32:512:out", "null", "null"],
                 "out_params": [1, 2, 3],
                 "params": [tensor(0, "in_ptr0", "in", input=0),
                            tensor(1, "out_ptr0", "out", output=0),
                            tensor(2, "out_ptr1", "out", dtype="int32", count=16, input=1),
                            tensor(3, "out_ptr2", "out", count=512, output=1),
                            scratch(4, "g"), scratch(5, "p")]}
        (d / "combo.ptx").write_text(entry_ptx("kc", 6))
        res = {"program": prog, "description": f"{prog} test", "status": "ok" if ok else "error",
               "errors": [] if ok else ["combo off: 3 kernels"], "warnings": [],
               "combo_mode": "default",
               "variants": {"plain": {"launches": L if ok else L + L[:1]},
                            "combo": {"launches": [combo]}},
               "e2e": {"eager": {"calls": {"median_ms": 1.0}},
                       "compiled_plain": {"calls": {"median_ms": 0.5}, "graph": {"median_ms": 0.4}},
                       "compiled_combo": {"calls": {"median_ms": 0.45}, "graph": {"median_ms": 0.38}}}}
        (d / "launches.json").write_text(json.dumps(res))
    (dump / "summary.json").write_text(json.dumps({
        "environment": {"torch": "2.11.0", "triton": "3.6.0", "gpu": "NVIDIA H100 80GB HBM3"},
        "command": "python3 benchmarks/inductor/dump_kernels.py --out PATH"}))
    return dump


def write_exe(path, text):
    path.write_text(text)
    path.chmod(0o755)
    return str(path)


def test_fuse_and_spec_flow(tmp_path):
    dump = make_dump(tmp_path)
    gpu_opt = write_exe(tmp_path / "gpu-opt", FAKE_GPU_OPT)
    assert fs.main(["--dump", str(dump), "--gpu-opt", gpu_opt, "--repeat", "7"]) == 0
    fusion = json.loads((dump / "fusion.json").read_text())
    spec = json.loads((dump / "timing_spec.json").read_text())
    checks = json.loads((dump / "checks.json").read_text())
    assert fusion["programs"]["add_softmax"]["status"] == "skipped"
    e = fusion["programs"]["softmax_layernorm"]
    assert {s: r["status"] for s, r in e["strategies"].items()} == {
        "thread": "fused", "interleave": "fused", "dynamic": "refused", "auto": "fused"}
    assert "every candidate" in e["strategies"]["dynamic"]["message"]
    assert any("smem" in w for w in e["strategies"]["thread"]["warnings"])
    assert "profile=profile.json" in e["strategies"]["auto"]["command"]
    assert spec["repeat"] == 7
    (g,) = spec["groups"]
    assert g["kernels"] == ["softmax_layernorm/k1", "softmax_layernorm/k2"]
    assert g["modes"] == ["alone", "serial", "concurrent", "graph"]
    assert g["also"] == ["softmax_layernorm/combo", "softmax_layernorm/fused_thread",
                         "softmax_layernorm/fused_interleave", "softmax_layernorm/fused_auto"]
    ks = {k["label"]: k for k in spec["kernels"]}
    L = two_launches()
    f = ks["softmax_layernorm/fused_auto"]
    assert f["args"] == L[0]["args"] + L[1]["args"]
    assert f["grid"] == [8192, 128, 1] and f["block"] == [384, 1, 1] and f["smem"] == 64
    assert f["manifest"] == "softmax_layernorm/fused_auto.json"
    assert ks["softmax_layernorm/k2"]["module"] == "softmax_layernorm/separate_1.ptx"
    c = checks["programs"]["softmax_layernorm"]
    ref = json.loads((dump / c["reference"]).read_text())
    assert ref["repeat"] == 0 and len(ref["kernels"]) == 2
    assert ref["kernels"][1]["out"] == {"1": "check/softmax_layernorm/ref_k2_arg1.bin",
                                        "2": "check/softmax_layernorm/ref_k2_arg2.bin"}
    v = c["variants"]["auto"]
    assert {(p["fused"], p["ref"]) for p in v["pairs"]} == {
        ("check/softmax_layernorm/auto_arg1.bin", "check/softmax_layernorm/ref_k1_arg1.bin"),
        ("check/softmax_layernorm/auto_arg6.bin", "check/softmax_layernorm/ref_k2_arg1.bin"),
        ("check/softmax_layernorm/auto_arg7.bin", "check/softmax_layernorm/ref_k2_arg2.bin")}
    assert "dynamic" not in c["variants"]
    assert len(c["combo"]["pairs"]) == 3 and not c["combo"]["exact"]


# report.py -------------------------------------------------------------------

FAKE_GPU_RUN = textwrap.dedent("""\
    #!/usr/bin/env python3
    # Stand-in for gpu-run --spec: writes outputs (ones; twos for a label with
    # "interleave") and a report with made-up times. FAKE_OLD=1: a gpu-run that
    # knows neither mode graph nor group key also.
    import json, os, sys
    SIZE = {"f32": 4, "s32": 4, "u8": 1, "s64": 8}
    spec = json.load(open(sys.argv[sys.argv.index("--spec") + 1]))
    out = sys.argv[sys.argv.index("--json") + 1]
    old = os.environ.get("FAKE_OLD") == "1"
    if old and any("also" in g or "graph" in g.get("modes", []) for g in spec.get("groups", [])):
        print("gpu-run: error: spec: groups[0].also: unknown key", file=sys.stderr)
        sys.exit(2)
    t = {"k1": 0.10, "k2": 0.20, "combo": 0.25, "fused_thread": 0.22, "fused_interleave": 0.21,
         "fused_auto": 0.20}
    kernels = []
    for k in spec["kernels"]:
        for i, path in k.get("out", {}).items():
            parts = k["args"][int(i)].split(":")
            val = 2 if "interleave" in k["label"] else 1
            open(path, "wb").write(bytes([val]) * (SIZE[parts[1]] * int(parts[2])))
        med = t.get(k["label"].split("/")[-1], 0.3) + 0.001
        kernels.append({"label": k["label"], "kernel": k["kernel"],
                        **({"time": {"median_ms": med}} if spec.get("repeat", 1) else {})})
    groups = []
    for g in spec.get("groups", []):
        r = {"name": g["name"], "kernels": g["kernels"],
             "alone": {l: {"median_ms": t[l.split("/")[-1]]} for l in g["kernels"]},
             "serial": {"median_ms": 0.30}, "concurrent": {"median_ms": 0.29}}
        if "graph" in g.get("modes", []):
            r["graph"] = {"median_ms": 0.295}
        if g.get("also"):
            r["also"] = {l: {"median_ms": t[l.split("/")[-1]]} for l in g["also"]}
        groups.append(r)
    json.dump({"device": {"name": "NVIDIA H100 80GB HBM3", "compute_capability": "9.0",
                          "multiprocessors": 132, "driver_version": 13000},
               "kernels": kernels, "groups": groups}, open(out, "w"))
    """)


@pytest.mark.parametrize("old", [False, True])
def test_report_flow(tmp_path, monkeypatch, old):
    dump = make_dump(tmp_path)
    gpu_opt = write_exe(tmp_path / "gpu-opt", FAKE_GPU_OPT)
    gpu_run = write_exe(tmp_path / "gpu-run", FAKE_GPU_RUN)
    assert fs.main(["--dump", str(dump), "--gpu-opt", gpu_opt]) == 0
    monkeypatch.setenv("FAKE_OLD", "1" if old else "0")
    out = tmp_path / "results"
    rc = rp.main(["--dump", str(dump), "--gpu-run", gpu_run, "--out-dir", str(out),
                  "--date", "2026-01-02"])
    assert rc == 1  # fused_interleave's outputs differ
    saved = json.loads((out / "inductor-h100.json").read_text())
    md = (out / "inductor-h100.md").read_text()
    assert (out / "inductor-h100.csv").exists()
    assert saved["command"].startswith("python3 benchmarks/inductor/report.py --dump DUMP_DIR "
                                       "--gpu-run gpu-run --out-dir ")
    assert str(tmp_path) not in saved["command"] and str(tmp_path) not in md
    row = {r["program"]: r for r in saved["rows"]}["softmax_layernorm"]
    assert row["status_thread"] == "ok" and row["status_interleave"] == "WRONG"
    assert row["status_dynamic"] == "refused"
    assert row["t1"] == pytest.approx(0.10, abs=0.002) and row["combo"] == pytest.approx(0.25, abs=0.002)
    assert row["speedup_auto_vs_combo"] == pytest.approx(0.25 / 0.20, rel=0.02)
    assert row["overlap_auto"] == pytest.approx((0.30 - 0.20) / (0.30 - 0.20), rel=0.05)
    checks = {p["program"]: p["checks"] for p in saved["programs"]}["softmax_layernorm"]
    assert checks["reference"]["status"] == "ok" and checks["combo"]["status"] == "pass"
    assert "fused_interleave" not in " ".join(os.listdir(dump / "check" / "softmax_layernorm"))
    if old:
        assert row["graph"] is None and "neither mode graph" in saved["timing_note"]
    else:
        assert row["graph"] == pytest.approx(0.295) and not saved["timing_note"]
    assert "add_softmax" in md and "not fused" in md
    # --from-json writes the same tables again.
    out2 = tmp_path / "again"
    assert rp.main(["--from-json", str(out / "inductor-h100.json"), "--out-dir", str(out2)]) == 0
    assert (out2 / "inductor-h100.md").read_text() == md


def program_data(name, t1, t2, serial, combo, auto, thread=None, auto_ok=True, combo_mode="default"):
    labels = {"k1": f"{name}/k1", "k2": f"{name}/k2", "combo": f"{name}/combo" if combo else None,
              "fused": {"auto": f"{name}/fused_auto"}}
    also = {f"{name}/fused_auto": {"median_ms": auto}}
    if combo:
        also[f"{name}/combo"] = {"median_ms": combo}
    strategies = {"auto": {"ok": auto_ok, "status": "fused" if auto_ok else "refused"}}
    checks = {"auto": {"status": "pass"}}
    if thread:
        labels["fused"]["thread"] = f"{name}/fused_thread"
        also[f"{name}/fused_thread"] = {"median_ms": thread}
        strategies["thread"] = {"ok": True, "status": "fused"}
        checks["thread"] = {"status": "fail"}
    return {"program": name, "labels": labels, "combo_mode": combo_mode,
            "strategies": strategies, "checks": checks,
            "timing": {"group": {"alone": {f"{name}/k1": {"median_ms": t1},
                                           f"{name}/k2": {"median_ms": t2}},
                                 "serial": {"median_ms": serial},
                                 "concurrent": {"median_ms": serial * 0.99},
                                 "graph": {"median_ms": serial * 0.98}, "also": also}},
            "e2e": {"compiled_plain": {"calls": {"median_ms": 2.0}},
                    "compiled_combo": {"calls": {"median_ms": 1.6}}}}


def test_report_arithmetic():
    assert rp.geomean([2.0, 8.0]) == pytest.approx(4.0)
    assert rp.geomean([None, 4.0]) == pytest.approx(4.0)
    assert rp.geomean([]) is None
    assert rp.overlap_efficiency(3.0, 2.0, 1.0, 2.0) == pytest.approx(1.0)
    assert rp.overlap_efficiency(3.0, 3.0, 1.0, 2.0) == pytest.approx(0.0)
    assert rp.overlap_efficiency(3.0, 3.5, 1.0, 2.0) == pytest.approx(-0.5)
    assert rp.overlap_efficiency(2.0, 1.5, 2.0, 0.0) is None
    progs = [program_data("a", 1.0, 2.0, 3.0, 2.4, 2.0, thread=2.2),
             program_data("b", 1.0, 1.0, 2.0, None, 1.5),  # no combo kernel: serial
             program_data("c", 1.0, 1.0, 2.0, 1.8, 1.9, auto_ok=False)]  # auto declined
    rows, summary = rp.compute(progs)
    a, b, c = rows
    assert a["max12"] == 2.0 and a["speedup_auto_vs_combo"] == pytest.approx(1.2)
    assert a["overlap_auto"] == pytest.approx(1.0)
    assert a["status_thread"] == "WRONG"
    assert a["e2e_combo_speedup"] == pytest.approx(1.25)
    assert b["combo"] == 2.0 and b["combo_source"] == "no combo kernel: serial"
    assert b["speedup_auto_vs_combo"] == pytest.approx(2.0 / 1.5)
    assert c["auto"] == 2.0 and c["auto_source"].startswith("declined")
    assert c["speedup_auto_vs_combo"] == pytest.approx(0.9)
    assert summary["geomean_auto_vs_combo"] == pytest.approx((1.2 * (2 / 1.5) * 0.9) ** (1 / 3))
    assert summary["programs_in_geomean"] == 3
    assert summary["geomean_fused_thread_vs_combo"] is None  # the WRONG one does not count
    assert summary["geomean_kernel_combo_vs_serial"] == pytest.approx(math.sqrt(3 / 2.4 * 2 / 1.8))


def test_forced_combo_kernels_reported_apart(tmp_path):
    # A forced combo kernel (Inductor's default partition made none) can be
    # pathological; a speedup over it must not reach the headline geomean.
    progs = [program_data("sound", 1.0, 1.0, 2.0, 1.5, 1.6),
             program_data("forced", 1.0, 1.0, 2.0, 40.0, 2.5, combo_mode="forced")]
    rows, summary = rp.compute(progs)
    assert summary["programs"] == ["sound"]
    assert summary["geomean_auto_vs_combo"] == pytest.approx(1.5 / 1.6)
    assert summary["forced"]["programs"] == ["forced"]
    assert summary["forced"]["geomean_auto_vs_combo"] == pytest.approx(16.0)
    assert summary["forced"]["geomean_auto_vs_serial"] == pytest.approx(0.8)
    saved = {"date": "2026-01-02", "device": {"name": "NVIDIA H100"}, "programs": progs}
    md = open(rp.write_results(saved, str(tmp_path)) + ".md").read()
    lead = md[md.index("**Geomean"):]
    assert lead.startswith("**Geomean speedup of gpu-opt (auto) over Inductor's combo kernel: 0.938×**")
    assert "16.000×" not in lead.split("\n")[0]
    assert "Apart, not in the figures above: 1 program (forced)" in lead


def test_write_results_from_fake_json(tmp_path):
    saved = {"date": "2026-01-02", "device": {"name": "NVIDIA H200", "multiprocessors": 132},
             "environment": {"torch": "2.11.0"}, "warmup": 10, "repeat": 50,
             "programs": [program_data("a", 1.0, 2.0, 3.0, 2.4, 2.0)]}
    stem = rp.write_results(saved, str(tmp_path))
    assert stem.endswith("inductor-h200")
    md = open(stem + ".md").read()
    assert "1.200×" in md and "target ≥ 1.10×" in md
    rows = open(stem + ".csv").read().splitlines()
    assert rows[0].startswith("program,t1,t2,max12,serial") and rows[1].startswith("a,1.0,2.0,2.0,3.0")


def test_compare_files(tmp_path):
    a, b = tmp_path / "a.bin", tmp_path / "b.bin"
    a.write_bytes(b"\0" * 16)
    b.write_bytes(b"\0" * 16)
    assert rp.compare_files(str(a), str(b), "f32", 4)[0] == "pass"
    assert rp.compare_files(str(a), str(b), "f32", 5)[0] == "error"
    pytest.importorskip("numpy")
    import numpy as np
    np.array([1, 2, 3, 4], dtype=np.float32).tofile(a)
    np.array([1, 2, 3, 4.000001], dtype=np.float32).tofile(b)
    st, detail = rp.compare_files(str(a), str(b), "f32", 4)
    assert st == "fail" and "1 of 4" in detail
    assert rp.compare_files(str(a), str(b), "f32", 4, exact=False, tolerance=1e-5)[0] == "pass"


# With the real tools -------------------------------------------------------------

def gpu_opt_with_hfuse():
    path = os.path.join(ROOT, "build", "bin", "gpu-opt")
    if not os.path.exists(path):
        return None
    out = subprocess.run([path, "--help"], capture_output=True, text=True).stdout
    return path if "--hfuse" in out else None


@pytest.mark.skipif(gpu_opt_with_hfuse() is None, reason="no build/bin/gpu-opt with --hfuse")
def test_fuse_corpus_triton_kernels(tmp_path):
    """fuse_and_spec.py with the real gpu-opt on two Triton kernels of the
    corpus (the softmax and layernorm launches of benchmarks/baselines.py)."""
    corpus = os.path.join(ROOT, "test", "corpus", "triton")
    d = tmp_path / "dump" / "softmax_layernorm"
    d.mkdir(parents=True)
    for src, dst in (("softmax_fp32_b1024.ptx", "separate_0.ptx"),
                     ("layernorm_fwd_fp16.ptx", "separate_1.ptx")):
        (d / dst).write_text(open(os.path.join(corpus, src)).read())
    names = [dk.parse_ptx_entries((d / f).read_text())[0]["name"]
             for f in ("separate_0.ptx", "separate_1.ptx")]
    rows, stride, M, N = 65536, 1024, 16384, 4096
    k1 = {"kernel": names[0], "ptx": "separate_0.ptx", "grid": [rows, 1, 1], "block": [128, 1, 1],
          "dynamic_smem": 16, "out_params": [0],
          "args": [f"buf:f32:{rows * stride}:out", f"buf:f32:{rows * stride}:random:13",
                   "scalar:s32:1024", "scalar:s32:1024", "scalar:s32:1000", "null", "null"],
          "params": [tensor(0, "out_ptr", "out", output=0)]}
    k2 = {"kernel": names[1], "ptx": "separate_1.ptx", "grid": [M, 1, 1], "block": [256, 1, 1],
          "dynamic_smem": 32, "out_params": [1, 4, 5],
          "args": [f"buf:f16:{M * N}:random:14", f"buf:f16:{M * N}:out", f"buf:f16:{N}:random:15",
                   f"buf:f16:{N}:random:16", f"buf:f32:{M}:out", f"buf:f32:{M}:out",
                   f"scalar:s32:{N}", f"scalar:s32:{N}", "scalar:f32:1e-5", "null", "null"],
          "params": []}
    res = {"program": "softmax_layernorm", "status": "ok", "errors": [], "warnings": [],
           "combo_mode": "default", "variants": {"plain": {"launches": [k1, k2]},
                                                 "combo": {"launches": []}}}
    (d / "launches.json").write_text(json.dumps(res))
    assert fs.main(["--dump", str(tmp_path / "dump"), "--gpu-opt", gpu_opt_with_hfuse(),
                    "--programs", "softmax_layernorm", "--strategies", "thread,interleave"]) == 0
    fusion = json.loads((tmp_path / "dump" / "fusion.json").read_text())
    st = fusion["programs"]["softmax_layernorm"]["strategies"]
    assert st["thread"]["status"] == "fused", st["thread"]["message"]
    spec = json.loads((tmp_path / "dump" / "timing_spec.json").read_text())
    fused = [k for k in spec["kernels"] if k["label"].endswith("fused_thread")][0]
    assert len(fused["args"]) == 18 and fused["block"][0] == 384
    gpu_run = os.path.join(ROOT, "build", "bin", "gpu-run")
    if os.path.exists(gpu_run):  # its checks of the arguments run before the GPU
        p = subprocess.run([gpu_run, "--spec", "timing_spec.json", "--list"],
                           cwd=tmp_path / "dump", capture_output=True, text=True)
        assert "error: argument" not in p.stderr, p.stderr
