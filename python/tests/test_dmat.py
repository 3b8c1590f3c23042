"""dmat.py on a synthetic dynamic trace whose accesses are known."""

import json
import os
import subprocess
import sys

import numpy as np
import pytest

from gpuopt import dmat
from gpuopt import synthetic as syn
from gpuopt import trace as tr

BASE = 0x7F00_0000_0000
ST = 0x80000000
WRAP = 1 << 32
GARBAGE = (0xFFFF_FFFF_FFF0, 0, ST | 256)

# (block, warp): [(addr offset, clock, info)], the records the warp saved.
WARPS = {
    # clocks wrap: times 0, 60, 160; the second access straddles pages 1, 2
    (0, 0): [(0, WRAP - 100, 16), (8188, WRAP - 40, 8), (0x100000, 60, ST | 4)],
    (0, 1): [],
    # six saves, four fit: the last two are dropped
    (1, 0): [(0x200000, 1000, ST | 4), (0x200004, 1100, ST | 4), (16, 1200, 16),
             (0x300000 - 16, 1300, 16), (0, 1400, 4), (0, 1500, 4)],
    (1, 1): [(32, 5, 4), (36, 5, 4)],
}
CAP = 4


def records(part=False, parts=None):
    rec = np.zeros((2, 2, CAP), syn.dtype_of("dmat", part))
    rec[...] = np.array(GARBAGE + ((7,) if part else ()), rec.dtype)  # unwritten: garbage
    counts = np.zeros((2, 2), np.uint32)
    for (b, w), accs in WARPS.items():
        counts[b, w] = len(accs)
        for i, (off, clock, info) in enumerate(accs[:CAP]):
            rec[b, w, i] = (BASE + off, clock, info) + ((parts[b, w],) if part else ())
    return rec, counts


def _trace(tmp_path, part=False, **kw):
    rec, counts = records(part, {(0, 0): 0, (0, 1): 0, (1, 0): 1, (1, 1): 0})
    return tr.load(syn.write_trace(str(tmp_path / "t"), [
        {"name": "dmat", "records": rec, "counts": counts}], [2, 1, 1], [64, 1, 1], **kw))


def test_accesses_and_times(tmp_path):
    a = dmat.accesses(_trace(tmp_path))
    assert a["time"].tolist() == [0, 60, 160, 0, 100, 200, 300, 0, 0]
    assert a["store"].tolist() == [False, False, True, True, True, False, False,
                                   False, False]
    assert a["bytes"].tolist() == [16, 8, 4, 4, 4, 16, 16, 4, 4]
    assert a["warp"].tolist() == [0, 0, 0, 2, 2, 2, 2, 3, 3]


def test_summary(tmp_path):
    s = dmat.summary(_trace(tmp_path))
    assert (s["accesses"], s["loads"], s["stores"]) == (9, 6, 3)
    assert (s["bytes"], s["load_bytes"], s["store_bytes"]) == (76, 64, 12)
    # pages above BASE: 0, 1 and 2 (straddled), 256, 512, 767
    assert s["pages"] == 6
    assert (s["addr_min"], s["addr_end"]) == (BASE, BASE + 0x300000)
    assert s["warps"] == 3 and s["max_time_clocks"] == 300
    assert s["dropped"] == 2 and s["overflow"] == 2
    assert "parts" not in s


def test_per_part(tmp_path):
    s = dmat.summary(_trace(tmp_path, part=True, kernel="fused",
                            fused_from=["gather", "scatter"]))
    p = {d["kernel"]: d for d in s["parts"]}
    assert sorted(p) == ["gather", "scatter"]
    assert (p["gather"]["accesses"], p["gather"]["stores"], p["gather"]["bytes"]) == (5, 1, 36)
    assert (p["scatter"]["accesses"], p["scatter"]["stores"], p["scatter"]["pages"]) == (4, 2, 3)
    assert p["scatter"]["max_time_clocks"] == 300 and p["gather"]["max_time_clocks"] == 160


def _colours(png):
    import matplotlib.image as mpimg
    img = mpimg.imread(png)[..., :3]
    half = img.shape[1] // 2
    red = lambda x: ((x[..., 0] - x[..., 2]) > 0.3).sum()  # noqa: E731
    blue = lambda x: ((x[..., 2] - x[..., 0]) > 0.3).sum()  # noqa: E731
    return blue(img[:, :half]), red(img[:, half:])


def test_cli_plot_and_json(tmp_path, capsys):
    _trace(tmp_path)
    png, js = str(tmp_path / "d.png"), str(tmp_path / "d.json")
    assert dmat.main([str(tmp_path / "t"), "--plot", png, "--json", js]) == 0
    out = capsys.readouterr().out
    assert "9 accesses (6 loads, 3 stores/atomics) of 3 warps, 76 bytes" in out
    assert "6 distinct 4 KiB pages" in out and "dropped 2" in out
    with open(png, "rb") as f:
        assert f.read(8) == b"\x89PNG\r\n\x1a\n"
    blue, red = _colours(png)
    assert blue > 50 and red > 50  # loads in blue (left), stores in red (right)
    assert json.load(open(js))["pages"] == 6
    # page-index axis too
    assert dmat.main([str(tmp_path / "t"), "--plot", png, "--y", "page"]) == 0


def test_plot_without_stores_has_no_red(tmp_path):
    rec, counts = records()
    rec["info"] &= ~np.uint32(ST)
    syn.write_trace(str(tmp_path / "l"), [{"name": "dmat", "records": rec,
                                           "counts": counts}], [2, 1, 1], [64, 1, 1])
    png = str(tmp_path / "l.png")
    assert dmat.main([str(tmp_path / "l"), "--plot", png]) == 0
    blue, red = _colours(png)
    assert blue > 50 and red == 0


def test_script_without_display(tmp_path):
    _trace(tmp_path)
    png = str(tmp_path / "s.png")
    env = {k: v for k, v in os.environ.items() if k not in ("DISPLAY", "MPLBACKEND")}
    p = subprocess.run([sys.executable, "-m", "gpuopt.dmat", str(tmp_path / "t"),
                        "--plot", png], capture_output=True, text=True, env=env)
    assert p.returncode == 0, p.stderr
    assert os.path.getsize(png) > 1000


def test_errors(tmp_path, capsys):
    gm = np.zeros((2, 64, 1), syn.dtype_of("gmem_bytes"))
    syn.write_trace(str(tmp_path / "g"), [{"name": "gmem_bytes", "records": gm}],
                    [2, 1, 1], [64, 1, 1])
    assert dmat.main([str(tmp_path / "g")]) == 2
    assert "no 'dmat' map" in capsys.readouterr().err
    with pytest.raises(tr.TraceError, match="no 'dmat' map"):
        dmat.accesses(tr.load(str(tmp_path / "g")))
    rec, _ = records()
    syn.write_trace(str(tmp_path / "z"), [{"name": "dmat", "records": rec,
                                           "counts": np.zeros((2, 2))}], [2, 1, 1],
                    [64, 1, 1])
    assert dmat.main([str(tmp_path / "z")]) == 2
    assert "no records were written" in capsys.readouterr().err
