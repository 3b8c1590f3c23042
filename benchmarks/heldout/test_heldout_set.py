"""The held-out set is whole and unchanged: every pair names kernels that exist
in the committed PTX with the launch kernels.json records, in the fixed
categories; the selection matches the one fixed on 2026-11-24, and each dated
addition (pairs-YYYY-MM-DD.json) the one fixed with it.  Reads
committed files only (no Triton, no GPU); the import check runs where
gpu-translate and gpu-opt are built."""

import hashlib
import json
import os
import re
import subprocess

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
REPO_ROOT = os.path.dirname(os.path.dirname(HERE))
CATEGORIES = ["memory+memory", "compute+memory", "tensor+memory", "reduction+elementwise", "short+long",
              "sub-wave+sub-wave"]
# SHA-256 of the selection (pair ids, categories, kernels and launches) as
# fixed on 2026-11-24.  The rule (README.md) forbids changing it: new pairs
# go in a separate dated file.
SELECTION_SHA256 = "10a47c1c528f879197b5bd008e519c459a840f4bc56808abbae0dfaf6127c8b3"
MAX_PTX_BYTES = 300 * 1024
# Dated additions: file -> (date, SHA-256 of its selection as fixed on that
# date).  The same rule: never changed; more pairs go in another dated file.
ADDITIONS = {
    "pairs-2026-11-28.json": ("2026-11-28", "dcda487fc4b7a859ccc663e564e75888ae5d292a74bcae6dca8b88ea03bd8199"),
}


def load(name):
    with open(os.path.join(HERE, name)) as f:
        return json.load(f)


PAIRS = load("pairs.json")
KERNELS = {k["id"]: k for k in load("kernels.json")["kernels"]}
ADDED = {name: load(name) for name in ADDITIONS}
ALL_PAIRS = PAIRS["pairs"] + [p for a in ADDED.values() for p in a["pairs"]]


def selection_digest(pairs):
    sel = [[p["id"], p["category"],
            [[k["label"], k["module"], k["entry"], k["grid"], k["block"], k["smem"]] for k in p["kernels"]]]
           for p in pairs["pairs"]]
    return hashlib.sha256(json.dumps(sel, sort_keys=True).encode()).hexdigest()


def ptx_text(module):
    with open(os.path.join(REPO_ROOT, module)) as f:
        return f.read()


def entries(ptx):
    """{entry name: its .maxntid or .reqntid x (None if neither)} of a PTX text."""
    out = {}
    for m in re.finditer(r"^\.(?:visible|weak) \.entry (\S+?)\((.*?)\{", ptx, flags=re.MULTILINE | re.DOTALL):
        ntid = re.search(r"\.(?:maxntid|reqntid) (\d+)", m.group(2))
        out[m.group(1)] = int(ntid.group(1)) if ntid else None
    return out


def test_selection_is_the_fixed_one():
    assert PAIRS["fixed_on"] == "2026-11-24"
    assert selection_digest(PAIRS) == SELECTION_SHA256, \
        "pairs.json's selection changed: the held-out set is fixed; add pairs in a dated file instead"


def test_pairs_cover_the_fixed_categories():
    assert PAIRS["categories"] == CATEGORIES
    pairs = PAIRS["pairs"]
    assert 8 <= len(pairs) <= 12
    assert len({p["id"] for p in pairs}) == len(pairs)
    for p in pairs:
        assert p["category"] in CATEGORIES, p["id"]
        assert len(p["kernels"]) == 2, p["id"]
        assert p["why"].strip(), p["id"]
    assert {p["category"] for p in pairs} == set(CATEGORIES)


def test_dated_files_are_the_listed_ones():
    on_disk = sorted(f for f in os.listdir(HERE) if re.fullmatch(r"pairs-\d{4}-\d{2}-\d{2}\.json", f))
    assert on_disk == sorted(ADDITIONS), "a dated pairs file needs its fixed hash in ADDITIONS"


@pytest.mark.parametrize("name", sorted(ADDITIONS))
def test_addition_is_the_fixed_one(name):
    date, sha = ADDITIONS[name]
    added = ADDED[name]
    assert added["fixed_on"] == date and name == f"pairs-{date}.json"
    assert selection_digest(added) == sha, \
        f"{name}'s selection changed: it is fixed; add pairs in another dated file instead"


@pytest.mark.parametrize("name", sorted(ADDITIONS))
def test_addition_is_apart_from_the_set(name):
    """New pair ids, the fixed categories, and kernels of its own: recorded as
    added on its date, none of them in pairs.json."""
    date, _ = ADDITIONS[name]
    added = ADDED[name]
    assert added["categories"] == CATEGORIES
    pairs = added["pairs"]
    assert 4 <= len(pairs) <= 6
    ids = [p["id"] for p in ALL_PAIRS]
    assert len(set(ids)) == len(ids), "pair ids repeat across the set and its additions"
    # evaluate.py --only selects by substring: no id may contain another.
    assert not [(a, b) for a in ids for b in ids if a != b and a in b]
    old_kernels = {k["label"] for p in PAIRS["pairs"] for k in p["kernels"]}
    for p in pairs:
        assert p["category"] in CATEGORIES, p["id"]
        assert len(p["kernels"]) == 2 and p["why"].strip(), p["id"]
        for k in p["kernels"]:
            assert k["label"] not in old_kernels, (p["id"], k["label"])
            assert KERNELS[k["label"]].get("added") == date, (p["id"], k["label"])


@pytest.mark.parametrize("pair", ALL_PAIRS, ids=lambda p: p["id"])
def test_pair_kernels_exist_with_their_launch(pair):
    for k in pair["kernels"]:
        rec = KERNELS[k["label"]]
        assert k["module"] == "benchmarks/heldout/" + rec["ptx"]
        assert (k["entry"], k["grid"], k["block"], k["smem"]) == \
            (rec["entry"], rec["grid"], rec["block"], rec["dynamic_smem"]), k["label"]
        ptx = ptx_text(k["module"])
        found = entries(ptx)
        assert k["entry"] in found, f"{k['label']}: no .entry {k['entry']} in {k['module']}"
        assert len(k["grid"]) == 3 and all(isinstance(g, int) and g > 0 for g in k["grid"]), k["label"]
        assert len(k["block"]) == 3 and all(isinstance(b, int) and b > 0 for b in k["block"]), k["label"]
        threads = k["block"][0] * k["block"][1] * k["block"][2]
        assert threads <= 1024 and threads % 32 == 0, k["label"]
        assert found[k["entry"]] == k["block"][0], f"{k['label']}: .maxntid/.reqntid differs from the block"
        assert isinstance(k["smem"], int) and 0 <= k["smem"] + rec["static_smem"] <= 227 * 1024, k["label"]
        assert k["problem"] == rec["problem"]


def test_kernel_records_are_complete():
    for kid, rec in KERNELS.items():
        for field in ("source", "function", "problem", "launch_rule", "registers"):
            assert rec[field], f"{kid}: {field}"
        if rec["kind"] == "triton":
            assert rec["block"] == [rec["num_warps"] * 32, 1, 1], kid
            pins = load("kernels.json")["pins"]
            for pkg in ("liger-kernel", "sglang", "unsloth", "mamba-ssm"):
                if rec["source"].startswith(pkg + " "):
                    assert re.match(rf"{re.escape(pkg)} {re.escape(pins[pkg])}( \(sdist\))?,", rec["source"]), kid
        else:
            assert rec["kind"] == "cuda", kid


def test_ptx_files_are_sm90a_and_small():
    files = sorted({rec["ptx"] for rec in KERNELS.values()})
    on_disk = sorted("ptx/" + f for f in os.listdir(os.path.join(HERE, "ptx")))
    assert files == on_disk, "ptx/ holds files kernels.json does not name, or misses some"
    for f in files:
        path = os.path.join(HERE, f)
        assert os.path.getsize(path) < MAX_PTX_BYTES, f
        assert re.search(r"^\.target sm_90a\b", open(path).read(), flags=re.MULTILINE), f


def tool(name):
    path = os.path.join(os.environ.get("BUILD_DIR", os.path.join(REPO_ROOT, "build")), "bin", name)
    return path if os.access(path, os.X_OK) else None


@pytest.mark.skipif(not (tool("gpu-translate") and tool("gpu-opt")), reason="gpu-translate/gpu-opt not built")
@pytest.mark.parametrize("ptx", sorted({rec["ptx"] for rec in KERNELS.values()}))
def test_ptx_imports_and_analyses(ptx, tmp_path):
    mlir = tmp_path / "m.mlir"
    subprocess.run([tool("gpu-translate"), "--import-ptx", os.path.join(HERE, ptx), "-o", str(mlir)], check=True)
    r = subprocess.run([tool("gpu-opt"), "--print-kernel-analysis", str(mlir), "-o", os.devnull],
                       capture_output=True, text=True, check=True)
    analysed = re.findall(r"^kernel (\S+) ", r.stdout + r.stderr, flags=re.MULTILINE)
    for rec in KERNELS.values():
        if rec["ptx"] == ptx:
            assert rec["entry"] in analysed, rec["id"]
