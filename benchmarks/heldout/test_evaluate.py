"""The held-out evaluation harness: every kernel's gpu-run arguments fit its
PTX .entry, the inputs that stand for earlier launches are what those
launches leave, and the report computes issue 21's targets from measurements
(here a small hand-made fixture, not measured data). No GPU, no network."""

import json
import os
import re
import shutil
import struct
import subprocess
import sys

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(ROOT, "python"))

import evaluate  # noqa: E402
import specs  # noqa: E402

GPU_RUN = os.environ.get("GPU_RUN") or os.path.join(ROOT, "build", "bin", "gpu-run")
PAIRS = [p for name in sorted(os.listdir(HERE)) if re.fullmatch(r"pairs(-\d{4}-\d{2}-\d{2})?\.json", name)
         for p in json.load(open(os.path.join(HERE, name)))["pairs"]]
PAIR_KERNELS = sorted({k["label"] for p in PAIRS for k in p["kernels"]})


def entry_params(ptx_path, entry):
    """The .param declarations of one .entry, read from the PTX text:
    [(type, array size or None)]."""
    import re
    text = open(ptx_path).read()
    start = text.index(f".entry {entry}(")
    header = text[start:text.index(")", start)]
    params = []
    for line in header.splitlines()[1:]:
        m = re.match(r"\s*\.param\s+(?:\.align\s+\d+\s+)?\.(\w+)\s.*?(?:\[(\d+)\])?,?\s*$", line)
        if m:
            params.append((m.group(1), int(m.group(2)) if m.group(2) else None))
    return params


@pytest.fixture(scope="module")
def data_dir(tmp_path_factory):
    d = tmp_path_factory.mktemp("data")
    specs.write_data(str(d))
    return str(d)


def test_every_pair_kernel_has_a_spec(data_dir):
    kernels = specs.load_kernels()
    for kid in PAIR_KERNELS:
        spec = specs.kernel_spec(kid, data_dir, kernels)
        meta = specs.kernel_meta(kid, data_dir)
        assert spec["args"], kid
        for i in meta["check"]:
            a = evaluate.parse_arg(spec["args"][i])
            assert a["kind"] == "buf", (kid, i)
        # A kernel's outputs are compared: one at least.
        assert meta["check"], kid


@pytest.mark.parametrize("kid", PAIR_KERNELS)
def test_args_match_the_ptx_entry(kid, data_dir):
    """Argument count and kinds against the .entry's parameters: from the PTX
    text, and as gpu-run reads the header when it is built."""
    kernels = specs.load_kernels()
    spec = specs.kernel_spec(kid, data_dir, kernels)
    params = entry_params(spec["module"], spec["kernel"])
    assert len(params) == len(spec["args"]), (kid, params)
    for a, (ty, array) in zip(spec["args"], params):
        kind = a.split(":")[0]
        if kind == "bytes":
            assert ty == "b8" and array == len(a.split(":")[1]) // 2, (kid, a, ty, array)
        elif kind == "scalar":
            t = a.split(":")[1]
            assert array is None and specs.TYPE_BYTES[t] * 8 == int(ty[1:]), (kid, a, ty)
            assert (t[0] == "f") == (ty[0] == "f") or ty[0] == "b", (kid, a, ty)
        else:  # an address: a 64-bit scalar or an aggregate of 8 bytes or more
            assert (array is None and ty in ("u64", "b64", "s64")) or \
                (ty == "b8" and array >= 8), (kid, a, ty, array)
    if os.access(GPU_RUN, os.X_OK):
        listed = specs.ptx_params(GPU_RUN, spec["module"], spec["kernel"])
        assert specs.check_args(spec["args"], listed) == []


def test_file_inputs_hold_their_counts(data_dir):
    kernels = specs.load_kernels()
    for kid in PAIR_KERNELS:
        for a in specs.kernel_spec(kid, data_dir, kernels)["args"]:
            p = evaluate.parse_arg(a)
            if p["kind"] == "buf" and p["init"] == "file":
                path = a.split(":file:")[1]
                assert os.path.getsize(path) == p["bytes"], (kid, a)


def test_scan_tile_state_is_what_the_init_kernel_writes(data_dir):
    path = specs.data_files(data_dir)["scan_tile_state"]
    words = struct.unpack(f"<{os.path.getsize(path) // 4}I", open(path, "rb").read())
    assert words[:2 * specs.SCAN_PADDING] == (0,) * (2 * specs.SCAN_PADDING)  # OOB
    assert set(words[2 * specs.SCAN_PADDING::2]) == {specs.SCAN_TILE_INVALID}
    assert set(words[2 * specs.SCAN_PADDING + 1::2]) == {0}
    assert len(words) // 2 - specs.SCAN_PADDING == 5462


def test_onesweep_bins_are_an_exclusive_digit_sum(data_dir):
    import numpy as np
    bins = np.fromfile(specs.data_files(data_dir)["sort_bins"], dtype="<u4")
    assert bins[0] == 0 and len(bins) == 256
    counts = np.diff(np.append(bins.astype(np.int64), specs.SORT_ITEMS))
    assert (counts > 0).all() and counts.sum() == specs.SORT_ITEMS
    # splitmix64 as ArgSpec.cpp computes it: the reference value of seed 0,
    # element 0 (0xE220A8397B1DCDAF is splitmix64's first output for state 0).
    assert int(specs.splitmix_u64(0, 1)[0]) == 0xE220A8397B1DCDAF


def test_even_share_matches_the_dispatch():
    raw = bytes.fromhex(specs.even_share(1 << 24, 8 * 132 * 5, 4096)[6:])
    f = struct.unpack("<10I", raw)
    # total_tiles, big_shares, big_share_items, normal_share_items,
    # normal_base_offset, num_items, grid_size, block_offset, block_end, stride
    assert f == (4096, 0, 8192, 4096, 0, 1 << 24, 4096, 1 << 24, 1 << 24, 0)
    f = struct.unpack("<10I", bytes.fromhex(specs.even_share(1000, 3, 100)[6:]))
    assert f[:7] == (10, 1, 400, 300, 100, 1000, 3)


def test_options_key_and_k():
    assert evaluate.options_key("strategy=interleave ratio=2,1 maxnreg=0 name=x") == \
        evaluate.options_key("ratio=2,1 strategy=interleave")
    assert evaluate.options_key("strategy=dynamic ratio=1,1 units=2") != \
        evaluate.options_key("strategy=dynamic ratio=1,1")
    assert evaluate.k_for(47) == 9 and evaluate.k_for(3) == 1 and evaluate.k_for(10) == 2
    assert evaluate.describe("strategy=thread threads=256,128 maxnreg=32") == \
        "thread split 256+128, maxnreg 32"


def fixture_pair(d, pid, cands, base_ms, cand_ms, model_alone, top, not_timeable=None,
                 verify=None):
    """A hand-made pair: candidates with constant samples (even and odd
    samples alike unless cand_ms gives a pair)."""
    os.makedirs(d, exist_ok=True)
    rec = {"id": pid, "category": "fixture", "labels": ["a", "b"], "check": {"a": [0], "b": [0]},
           "setup": {}, "not_timeable": not_timeable or {},
           "candidates": [{"label": c, "description": f"desc {c}", "status": "built",
                           "key": c} for c in cands],
           "model_alone": model_alone,
           "model_profiled": {"top": [{"label": t, "description": f"desc {t}"} for t in top],
                              "k": len(top), "n": len(cands), "choice": top[0],
                              "declined": False} if top else None}
    json.dump(rec, open(os.path.join(d, "eval.json"), "w"))

    def samples(ms):
        even, odd = ms if isinstance(ms, tuple) else (ms, ms)
        return [even, odd] * 10

    measured = {"verify": verify or {c: {"result": "PASS", "detail": ""} for c in cands},
                "timing": {"device": "Fixture GPU (hand-made data)",
                           "baselines": {"serial": [samples(base_ms * 1.1)],
                                         "concurrent": [samples(base_ms)],
                                         "graph": [samples(base_ms * 1.05)]},
                           "candidates": {c: samples(cand_ms[c]) for c in cands}}}
    if not_timeable:  # checked, not timed
        measured["timing"] = {"baselines": {}, "candidates": {}, "device": None, "errors": []}
    json.dump(measured, open(os.path.join(d, "measured.json"), "w"))


def test_report_from_a_hand_made_fixture(tmp_path, monkeypatch):
    monkeypatch.chdir(ROOT)  # evaluate.main works from the repository root
    out = tmp_path / "eval"
    sdir = out / "heldout"
    # p1: the exhaustive best is c3 (2.0x); the model alone picks c1 (1.25x);
    # measured auto's top 2 holds c2 (1.6x): captures 60% of the gain.
    fixture_pair(str(sdir / "p1"), "p1", ["c1", "c2", "c3"], 1.0,
                 {"c1": 0.8, "c2": 0.625, "c3": 0.5},
                 {"declined": False, "label": "c1"}, ["c2", "c1"])
    # p2: fusing loses everywhere; the model alone fuses (a loser), measured
    # auto's top candidate looks fast on the even samples only: chosen there,
    # judged on the odd ones (0.5x), so the floor target fails.
    fixture_pair(str(sdir / "p2"), "p2", ["c1", "c2"], 1.0,
                 {"c1": 2.0, "c2": (0.9, 2.0)},
                 {"declined": False, "label": "c1"}, ["c2"])
    # p3: verified only (a kernel that cannot be timed).
    fixture_pair(str(sdir / "p3"), "p3", ["c1"], 1.0, {"c1": 1.0},
                 {"declined": True, "label": None}, [],
                 not_timeable={"a": "hand-made: cannot be timed"})
    json.dump({"pairs": ["p1", "p2", "p3"]}, open(sdir / "index.json", "w"))

    held, pending = evaluate.collect(str(out), False)
    r1, r2, r3 = held
    assert r1["best_baseline"] == {"mode": "concurrent", "ms": 1.0}
    assert r1["exhaustive"]["label"] == "c3" and r1["exhaustive"]["ratio"] == pytest.approx(2.0)
    assert r1["model_alone"]["ratio"] == pytest.approx(1.25) and not r1["model_alone"]["loser"]
    ma = r1["measured_auto"]
    assert ma["label"] == "c2" and ma["ratio"] == pytest.approx(1.6)
    assert ma["captured"] == pytest.approx(0.6)
    # The exhaustive search is fooled too: chosen on the even samples.
    assert r2["exhaustive"]["label"] == "c2"
    assert r2["exhaustive"]["ratio"] == pytest.approx(0.5)
    assert r2["model_alone"]["loser"]
    assert r2["measured_auto"]["label"] == "c2"
    assert r2["measured_auto"]["ratio"] == pytest.approx(0.5)
    assert r3["status"] == "verified only"
    t = evaluate.targets(held, [])
    assert t["floor"]["below"] == ["p2"] and not t["floor"]["met"]
    assert t["capture"]["share"] == pytest.approx(0.6 / 1.0)
    assert not t["capture"]["met"]
    assert t["model_alone"]["losers"] == ["p2"] and not t["model_alone"]["met"]
    text = evaluate.render(held, [], t, "fixture", pending)
    assert "Fixture GPU (hand-made data)" in text
    assert "| p1 | 3 | 3/0/0 | 1.0000 (concurrent) | desc c3 | 2.000 |" in text
    assert "**loser**" in text and "verified only" in text
    assert "hand-made: cannot be timed" in text
    # The command line writes the same, and the JSON beside it.
    md = tmp_path / "report.md"
    assert evaluate.main(["report", "--out-dir", str(out), "--out", str(md)]) == 0
    assert json.load(open(tmp_path / "report.json"))["targets"]["floor"]["below"] == ["p2"]


GPU_OPT = os.path.join(ROOT, "build", "bin", "gpu-opt")


@pytest.mark.skipif(not os.access(GPU_OPT, os.X_OK), reason="needs gpu-opt (a build)")
def test_pipeline_with_a_stand_in_for_gpu_run(tmp_path, monkeypatch):
    """prepare (gpu-opt) -> measure -> prepare-profiled -> report on one pair,
    with testdata/fake-gpu-run standing in for the GPU: its outputs follow
    the argument texts (so the fused kernels pass the check, but one made to
    fail), its times are made up. Checks the plumbing, not any result."""
    monkeypatch.chdir(ROOT)
    out = str(tmp_path / "eval")
    assert evaluate.main(["prepare", "--out-dir", out, "--only", "sub-wave-1"]) == 0
    rec = json.load(open(os.path.join(out, "heldout", "sub-wave-1", "eval.json")))
    built = [c for c in rec["candidates"] if c["status"] == "built"]
    assert len(built) >= 20 and {"planner", "ladder"} <= {c["source"] for c in built}
    # Every candidate's arguments fit its fused .entry.
    for c in built[:3]:
        assert specs.check_args(c["args"], specs.ptx_params(GPU_RUN, c["ptx"], c["kernel"])) \
            == [] if os.access(GPU_RUN, os.X_OK) else True
    monkeypatch.setenv("FAKE_WRONG", built[1]["label"])
    fake = os.path.join(HERE, "testdata", "fake-gpu-run")
    assert evaluate.main(["measure", "--out-dir", out, "--gpu-run", fake, "--repeat", "6"]) == 0
    m = json.load(open(os.path.join(out, "heldout", "sub-wave-1", "measured.json")))
    assert m["verify"][built[1]["label"]]["result"] == "FAIL"
    assert sum(v["result"] == "PASS" for v in m["verify"].values()) == len(built) - 1
    assert set(m["timing"]["candidates"]) == {c["label"] for c in built} - {built[1]["label"]}
    assert evaluate.main(["prepare-profiled", "--out-dir", out]) == 0
    rec = json.load(open(os.path.join(out, "heldout", "sub-wave-1", "eval.json")))
    mp = rec["model_profiled"]
    assert 1 <= len(mp["top"]) <= mp["k"] == evaluate.k_for(mp["n"])
    md = str(tmp_path / "r.md")
    assert evaluate.main(["report", "--out-dir", out, "--out", md]) == 0
    text = open(md).read()
    assert "Fake GPU (test stand-in)" in text and "| sub-wave-1 |" in text


@pytest.mark.skipif(shutil.which("nvidia-smi") is None, reason="needs a GPU")
def test_measure_runs_on_a_gpu(tmp_path):
    """The measure step on one small pair (GPU machines only)."""
    out = tmp_path / "eval"
    r = subprocess.run([sys.executable, os.path.join(HERE, "evaluate.py"), "prepare",
                        "--out-dir", str(out), "--only", "sub-wave-1"])
    if r.returncode != 0:
        pytest.skip("prepare needs gpu-opt (the build machine)")
    assert evaluate.main(["measure", "--out-dir", str(out), "--only", "sub-wave-1",
                          "--repeat", "4"]) == 0


def test_dated_addition_is_prepared_from_its_own_file(data_dir):
    """prepare --pairs FILE reads a dated addition instead of pairs.json: its
    pairs only, with the launches the file fixes."""
    name = os.path.join("benchmarks", "heldout", "pairs-2026-11-28.json")
    fixed = json.load(open(os.path.join(ROOT, name)))["pairs"]
    pairs = evaluate.heldout_pairs(data_dir, name)
    assert [p["id"] for p in pairs] == [p["id"] for p in fixed]
    for p, f in zip(pairs, fixed):
        assert [(k["label"], k["grid"], k["block"], k["smem"]) for k in p["kernels"]] == \
            [(k["label"], k["grid"], k["block"], k["smem"]) for k in f["kernels"]]
        assert all(p["check"][k["label"]] for k in f["kernels"])
    assert [p["id"] for p in evaluate.heldout_pairs(data_dir)] == \
        [p["id"] for p in json.load(open(os.path.join(HERE, "pairs.json")))["pairs"]]
