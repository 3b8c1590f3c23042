"""CPU tests of dispatch_cost.py: prepare with the real gpu-opt, measure with
a stand-in gpu-run (no GPU) that writes the checked launches' outputs and a
report.

usage: python3 -m pytest benchmarks/fusion/test_dispatch_cost.py
"""

import json
import os
import shutil
import stat
import textwrap

import pytest

import dispatch_cost as dc

GPU_OPT = os.path.join(dc.ROOT, "build", "bin", "gpu-opt")

# Writes every "out" buffer (a variant's launch 2 of `corrupt` gets other
# bytes) and times each "also" kernel at 10 us + 1 us per 1000 fused blocks
# of its manifest.
FAKE_GPU_RUN = textwrap.dedent("""\
    #!/usr/bin/env python3
    import json, sys
    spec = json.load(open(sys.argv[sys.argv.index("--spec") + 1]))
    report = sys.argv[sys.argv.index("--json") + 1]
    corrupt = CORRUPT
    for k in spec["kernels"]:
        for index, path in k.get("out", {}).items():
            bad = k["label"] == corrupt + ".2"
            open(path, "wb").write(b"x" if bad else b"out")
    t = lambda ms: {"median_ms": ms, "spread": 0.01}
    groups = []
    for g in spec["groups"]:
        also = {}
        for k in spec["kernels"]:
            if k["label"] in g["also"]:
                grid = json.load(open(k["manifest"]))["kernels"][0]["launch"]["grid"][0]
                also[k["label"]] = t(0.010 + grid * 1e-6)
        groups.append({"name": g["name"], "alone": {n: t(0.005) for n in g["kernels"]},
                       "serial": t(0.011), "also": also})
    json.dump({"device": {"name": "Fake GPU", "multiprocessors": 100},
               "groups": groups}, open(report, "w"))
""")


def fake(tmp_path, corrupt=""):
    path = tmp_path / "gpu-run"
    path.write_text(FAKE_GPU_RUN.replace("CORRUPT", repr(corrupt)))
    path.chmod(path.stat().st_mode | stat.S_IEXEC)
    return str(path)


@pytest.fixture(scope="module")
def prepared(tmp_path_factory):
    if not os.path.exists(GPU_OPT):
        pytest.skip("gpu-opt is not built")
    d = tmp_path_factory.mktemp("dispatch")
    dc.main(["prepare", "--gpu-opt", GPU_OPT, "--dir", str(d)])
    return d


def test_prepare(prepared):
    plan = json.load(open(prepared / "plan.json"))
    tiny = {v["name"]: v for v in plan["pairs"]["tiny"]["variants"]}
    assert set(tiny) == {"interleave", "dynamic_u1", "dynamic_u2", "dynamic_u4",
                         "sm_aware_u1", "sm_aware_u2", "sm_aware_u4"}
    # 784 + 1024 blocks; dynamic: ceil(1808 / units); sm_aware: per part.
    assert tiny["interleave"]["grid"] == 1808
    assert tiny["dynamic_u4"]["grid"] == 452
    assert tiny["sm_aware_u4"]["grid"] == 196 + 256
    short = {v["name"]: v for v in plan["pairs"]["short"]["variants"]}
    assert short["sm_aware_u1"]["ratio"] == short["interleave"]["ratio"] == [1, 5]
    manifest = json.load(open(prepared / tiny["sm_aware_u2"]["manifest"]))
    assert manifest["kernels"][0]["fusion_strategy"] == "sm_aware"


def test_measure(prepared, tmp_path, capsys):
    assert dc.main(["measure", "--gpu-run", fake(tmp_path), "--dir", str(prepared),
                    "--only", "tiny"]) == 0
    result = json.load(open(prepared / "dispatch-cost.json"))
    rows = {r["name"]: r for r in result["pairs"]["tiny"]["variants"]}
    # 1808 blocks: 11.808 us; 452: 10.452 us; 100 SMs.
    assert rows["interleave"]["cost_us_per_block"] == 0
    assert rows["dynamic_u4"]["delta_ms"] == pytest.approx(-0.001356)
    assert rows["dynamic_u4"]["cost_us_per_block"] == pytest.approx(-1.356 * 100 / 452)
    assert rows["dynamic_u4"]["cost_us_per_unit"] == pytest.approx(-1.356 * 100 / 1808)
    out = capsys.readouterr().out
    assert "check tiny: 7 variants x 2 launches: bit-identical" in out


def test_measure_finds_a_wrong_second_launch(prepared, tmp_path, capsys):
    assert dc.main(["measure", "--gpu-run", fake(tmp_path, "sm_aware_u2"), "--dir",
                    str(prepared), "--only", "tiny"]) == 1
    out = capsys.readouterr().out
    assert "FAIL tiny: sm_aware_u2 launch 2" in out
