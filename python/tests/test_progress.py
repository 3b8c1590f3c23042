"""progress.py on a synthetic dynamic trace whose branch records are known."""

import json
import os

import numpy as np
import pytest

from gpuopt import progress as pg
from gpuopt import synthetic as syn
from gpuopt import trace as tr

WRAP = 1 << 32
CAP = 5
# (block, warp): [(clock, site)] the warp saved, in order.
WARPS = {
    (0, 0): [(WRAP - 100, 1), (WRAP - 50, 2), (30, 1), (130, 3)],  # wraps: 0 50 130 230
    (0, 1): [],
    # seven saves, five fit
    (1, 0): [(1000, 1), (1010, 1), (1020, 1), (1030, 1), (1040, 2), (1050, 9), (1060, 9)],
    (1, 1): [(77, 4)],
}


def records(part=False):
    rec = np.zeros((2, 2, CAP), syn.dtype_of("program_progress", part))
    rec["clock"], rec["site"] = 12345, 99  # unwritten records hold garbage
    counts = np.zeros((2, 2), np.uint32)
    for (b, w), rs in WARPS.items():
        counts[b, w] = len(rs)
        for i, r in enumerate(rs[:CAP]):
            rec[b, w, i] = r + ((b,) if part else ())  # block 0: part 0, block 1: part 1
    return rec, counts


def _trace(tmp_path, part=False, **kw):
    rec, counts = records(part)
    return tr.load(syn.write_trace(str(tmp_path / "t"), [
        {"name": "program_progress", "records": rec, "counts": counts}],
        [2, 1, 1], [64, 1, 1], **kw))


def test_times_and_summary(tmp_path):
    t = _trace(tmp_path)
    p = pg.progress_of(t)
    assert p["time"].tolist() == [0, 50, 130, 230, 0, 10, 20, 30, 40, 0]
    assert p["site"].tolist() == [1, 2, 1, 3, 1, 1, 1, 1, 2, 4]
    s = pg.summary(t, p)
    assert (s["records"], s["warps"], s["sites"]) == (10, 3, 4)  # 9 and 99 never written
    assert s["top_sites"] == [{"site": 1, "count": 6}, {"site": 2, "count": 2},
                              {"site": 3, "count": 1}, {"site": 4, "count": 1}]
    # 230 clocks over 3 steps, 40 over 4, none for the one-record warp
    assert s["mean_step_clocks"] == pytest.approx(270 / 7)
    assert s["max_warp_clocks"] == 230
    assert s["dropped"] == 2 and s["overflow"] == 2


def test_top_ten():
    p = {"site": np.repeat(np.arange(15), np.arange(1, 16)), "warp": np.zeros(120, int),
         "time": np.arange(120)}
    top = pg._summary(p, np.ones(120, bool))["top_sites"]
    assert [d["site"] for d in top] == list(range(14, 4, -1))
    assert top[0]["count"] == 15 and len(top) == 10


def test_per_part(tmp_path):
    s = pg.summary(_trace(tmp_path, part=True, kernel="fused", fused_from=["a", "b"]))
    a, b = s["parts"]
    assert (a["kernel"], a["records"], a["warps"], a["sites"]) == ("a", 4, 1, 3)
    assert a["mean_step_clocks"] == pytest.approx(230 / 3)
    assert (b["kernel"], b["records"], b["warps"], b["mean_step_clocks"]) == ("b", 6, 2, 10)


def test_sample_warps():
    chosen = pg.sample_warps(np.repeat(np.arange(100) * 3, 2))
    assert len(chosen) == 64 and len(set(chosen.tolist())) == 64
    assert chosen[0] == 0 and chosen[-1] == 297
    assert pg.sample_warps(np.array([5, 5, 7])).tolist() == [5, 7]


def test_cli_outputs(tmp_path, capsys):
    _trace(tmp_path)
    png, js = str(tmp_path / "p.png"), str(tmp_path / "p.json")
    assert pg.main([str(tmp_path / "t"), "--plot", png, "--json", js]) == 0
    out = capsys.readouterr().out
    assert "10 records of 3 warps, 4 distinct sites, mean 38.6 clocks" in out
    assert "top sites 1: 6, 2: 2" in out and "dropped 2" in out
    with open(png, "rb") as f:
        assert f.read(8) == b"\x89PNG\r\n\x1a\n"
    assert os.path.getsize(png) > 5000
    assert json.load(open(js))["sites"] == 4


def test_errors(tmp_path, capsys):
    d = np.zeros((2, 2, 3), syn.dtype_of("dmat"))
    syn.write_trace(str(tmp_path / "d"), [{"name": "dmat", "records": d,
                                           "counts": np.ones((2, 2))}], [2, 1, 1], [64, 1, 1])
    assert pg.main([str(tmp_path / "d")]) == 2
    assert "no 'program_progress' map" in capsys.readouterr().err
    rec, _ = records()
    syn.write_trace(str(tmp_path / "z"), [{"name": "program_progress", "records": rec,
                                           "counts": np.zeros((2, 2))}], [2, 1, 1],
                    [64, 1, 1])
    assert pg.main([str(tmp_path / "z")]) == 2
    assert "no records were written" in capsys.readouterr().err
