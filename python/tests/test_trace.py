"""trace.py: dynamic maps' counts, valid records, clock unwrapping and
fused parts, on synthetic traces written as gpu-run writes them."""

import json
import os

import numpy as np
import pytest

from gpuopt import synthetic as syn
from gpuopt import trace as tr


def _dmat(tmp_path, counts, cap=3):
    rec = np.zeros((2, 2, cap), syn.dtype_of("dmat"))
    rec["addr"] = 0xDEAD  # every record holds something: only counts tell
    rec["info"] = 4
    gmem = np.ones((2, 64, 1), syn.dtype_of("gmem_bytes"))
    return tr.load(syn.write_trace(str(tmp_path / "t"), [
        {"name": "dmat", "records": rec, "counts": counts},
        {"name": "gmem_bytes", "records": gmem, "overflow": 0}], [2, 1, 1], [64, 1, 1]))


def test_counts_mask_records(tmp_path):
    t = _dmat(tmp_path, [[0, 1], [3, 7]])
    info = t.map_info("dmat")
    assert info["dynamic"] and info["counts"] == "dmat.counts.npy"
    assert t.counts["dmat"].dtype == np.uint32
    assert t.counts["dmat"].tolist() == [[0, 1], [3, 7]]
    v = t.valid("dmat")
    assert v.shape == (2, 2, 3)
    assert v[0, 0].tolist() == [False, False, False]
    assert v[0, 1].tolist() == [True, False, False]
    assert v[1, 0].tolist() == [True, True, True]
    assert v[1, 1].tolist() == [True, True, True]  # 7 saves, 3 fit
    assert int(v.sum()) == 7
    assert t.dropped("dmat") == 4 and t.overflow["dmat"] == 4
    recs, block, unit = t.valid_records("dmat")
    assert len(recs) == 7
    assert block.tolist() == [0, 1, 1, 1, 1, 1, 1]
    assert unit.tolist() == [1, 0, 0, 0, 1, 1, 1]


def test_static_map_is_all_valid(tmp_path):
    t = _dmat(tmp_path, [[1, 1], [1, 1]])
    assert t.counts["gmem_bytes"] is None and t.dropped("gmem_bytes") is None
    v = t.valid("gmem_bytes")
    assert v.shape == (2, 64, 1) and v.all()
    assert len(t.valid_records("gmem_bytes")[0]) == 128


def test_counts_shape_checked(tmp_path):
    t = str(tmp_path / "t")
    _dmat(tmp_path, [[1, 1], [1, 1]])
    np.save(os.path.join(t, "dmat.counts.npy"), np.zeros((2, 3), np.uint32))
    with pytest.raises(tr.TraceError, match="counts.npy: shape"):
        tr.load(t)


def test_require_names_the_probe(tmp_path):
    t = _dmat(tmp_path, [[1, 1], [1, 1]])
    with pytest.raises(tr.TraceError, match="no 'warp_sched' map .*--probe=warp_sched"):
        t.require("warp_sched", ["gend"])
    with pytest.raises(tr.TraceError, match="no field site"):
        t.require("dmat", ["addr", "site"])


def test_warp_times_unwrap_per_warp():
    clock = [(1 << 32) - 10, 5, 20, 7, 7, 100, (1 << 32) - 1]
    warp = [0, 0, 0, 3, 3, 4, 4]
    assert tr.warp_times(clock, warp).tolist() == [0, 15, 30, 0, 0, 0, (1 << 32) - 101]
    assert tr.warp_times([], []).tolist() == []


def test_part_names(tmp_path):
    rec = np.zeros((1, 2, 1), syn.dtype_of("tensorop_count", part=True))
    t = tr.load(syn.write_trace(str(tmp_path / "f"), [{"name": "tensorop_count",
                                                       "records": rec}],
                                [1, 1, 1], [64, 1, 1], kernel="fused_ab",
                                fused_from=["a_kernel", "b_kernel"]))
    assert tr.part_names(t) == {0: "a_kernel", 1: "b_kernel"}
    assert tr.part_label(tr.part_names(t), 1) == "b_kernel"
    assert tr.part_label({}, 2) == "part 2"
    assert tr.part_label({}, tr.NO_PART) == "(no part)"
    os.remove(str(tmp_path / "f" / "manifest.json"))
    assert tr.part_names(tr.load(str(tmp_path / "f"))) == {}


def test_synthetic_layout_matches_the_probe_pass():
    # configs/probes: fields in order, each aligned to its size, the record
    # rounded up to its largest field (as --probe-plan lays them out, ProbeRecordLayout).
    d, fields, size = syn.layout(syn.FIELDS["warp_sched"] + [("part", "u32")])
    assert [o for _, _, o in fields] == [0, 8, 16, 20, 24] and size == 32
    assert syn.layout(syn.FIELDS["dmat"])[2] == 16
    assert d.itemsize == 32


def test_trace_json_as_gpu_run_writes_it(tmp_path):
    _dmat(tmp_path, [[1, 1], [1, 1]])
    info = json.load(open(tmp_path / "t" / "trace.json"))
    m = info["maps"][0]
    assert set(m) >= {"name", "probe", "level", "capacity", "record_bytes", "shape",
                      "file", "overflow", "counts", "dynamic"}
    assert m["capacity"] == 3 and m["shape"] == [2, 2, 3]


# A replicated thread split, as --hfuse replicas=1,3 builds it: part a
# (256 threads, warps 0-7 of the fused block) and three copies of part b
# (128 threads each, warps 8-11, 12-15, 16-19). Part b has 5 blocks: fused
# block 1's copies 2 (its block 5) skips the part, so its records have none.
REPLICATED = [{"kernel": "a", "threads": [0, 256], "block": [256, 1, 1], "grid": [2, 1, 1]},
              {"kernel": "b", "threads": [256, 640], "block": [128, 1, 1], "grid": [5, 1, 1],
               "replicas": 3}]


def _replicated(tmp_path, strategy="thread"):
    warps = np.zeros((2, 20, 1), syn.dtype_of("warp_sched", part=True, copy=True))
    threads = np.zeros((2, 640, 1), syn.dtype_of("gmem_bytes", part=True, copy=True))
    for fused in range(2):
        for u in range(20):
            part, copy = (0, 0) if u < 8 else (1, (u - 8) // 4)
            if part == 1 and fused * 3 + copy >= 5:
                part = copy = tr.NO_PART
            warps[fused, u, 0] = (1, 2, 0, u, part, copy)
            threads[fused, u * 32:(u + 1) * 32, 0] = (4, 0, part, copy)
    return tr.load(syn.write_trace(str(tmp_path / "r"), [
        {"name": "warp_sched", "records": warps},
        {"name": "gmem_bytes", "records": threads}], [2, 1, 1], [640, 1, 1],
        kernel="a_b_fused", fused_from=REPLICATED, strategy=strategy))


def test_replicated_parts_own_blocks(tmp_path):
    t = _replicated(tmp_path)
    assert t.manifest["manifest_version"] == 6
    recs, block, unit = t.valid_records("warp_sched")
    pb = tr.part_blocks(t, recs, block)
    pw = tr.part_units(t, "warp_sched", recs, unit)
    a = recs["part"] == 0
    # part a: the fused block and warp
    assert pb[a].tolist() == block[a].tolist() and pw[a].tolist() == unit[a].tolist()
    # part b: fused block x 3 + copy, its warps 0-3 in each copy
    b = recs["part"] == 1
    assert sorted(set(pb[b].tolist())) == [0, 1, 2, 3, 4]
    for blk in range(5):
        assert sorted(pw[b & (pb == blk)].tolist()) == [0, 1, 2, 3]
    assert pb[(block == 1) & (unit == 13)].tolist() == [4]  # fused block 1, copy 1
    # the copy past b's grid wrote as no part
    none = recs["part"] == tr.NO_PART
    assert none.sum() == 4 and (pb[none] == -1).all() and (pw[none] == -1).all()
    # threads: b's copy 1 of fused block 0 is b's block 1, threads 0-127
    recs, block, unit = t.valid_records("gmem_bytes")
    pb = tr.part_blocks(t, recs, block)
    pt = tr.part_units(t, "gmem_bytes", recs, unit)
    sel = (recs["part"] == 1) & (pb == 1)
    assert sorted(pt[sel].tolist()) == list(range(128))
    assert unit[sel].min() == 384 and unit[sel].max() == 511


def test_part_blocks_unknown_or_unfused(tmp_path):
    # Block-level strategies: the records do not say which block of its part
    # a fused block ran.
    t = _replicated(tmp_path, strategy="interleave")
    recs, block, unit = t.valid_records("warp_sched")
    assert (tr.part_blocks(t, recs, block) == -1).all()
    assert (tr.part_units(t, "warp_sched", recs, unit) == -1).all()
    # An unfused kernel: its own blocks and units.
    rec = np.zeros((3, 2, 1), syn.dtype_of("warp_sched"))
    u = tr.load(syn.write_trace(str(tmp_path / "u"), [{"name": "warp_sched", "records": rec}],
                                [3, 1, 1], [64, 1, 1]))
    recs, block, unit = u.valid_records("warp_sched")
    assert tr.part_blocks(u, recs, block).tolist() == [0, 0, 1, 1, 2, 2]
    assert tr.part_units(u, "warp_sched", recs, unit).tolist() == [0, 1] * 3
    # A fused kernel without replicas has no copy field: copy 0.
    rec = np.zeros((2, 2, 1), syn.dtype_of("warp_sched", part=True))
    rec["part"][:, 0, 0] = 0
    rec["part"][:, 1, 0] = 1
    f = tr.load(syn.write_trace(str(tmp_path / "f"), [{"name": "warp_sched", "records": rec}],
                                [2, 1, 1], [64, 1, 1], kernel="f",
                                fused_from=[{"kernel": "a", "threads": [0, 32]},
                                            {"kernel": "b", "threads": [32, 64]}]))
    recs, block, unit = f.valid_records("warp_sched")
    assert tr.part_blocks(f, recs, block).tolist() == [0, 0, 1, 1]
    assert tr.part_units(f, "warp_sched", recs, unit).tolist() == [0, 0, 0, 0]
