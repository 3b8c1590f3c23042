"""totals.py: gmem_bytes and tensorop_count totals, per fused part."""

import json
import subprocess
import sys

import numpy as np
import pytest

from gpuopt import synthetic as syn
from gpuopt import totals as tot
from gpuopt import trace as tr



def gmem(part=False):
    """2 blocks of 4 threads: thread i of block b loads 16*(b*4+i) bytes
    synchronously, and block 1's threads copy 100 bytes asynchronously."""
    rec = np.zeros((2, 4, 1), syn.dtype_of("gmem_bytes", part))
    for b in range(2):
        for i in range(4):
            rec[b, i, 0]["sync"] = 16 * (b * 4 + i)
            rec[b, i, 0]["async"] = 100 * b
    if part:  # threads 0-1 run part 0, 2 part 1, 3 none
        rec["part"][:, :, 0] = [0, 0, 1, tr.NO_PART]
    return rec


def tensor(part=False):
    rec = np.zeros((3, 2, 1), syn.dtype_of("tensorop_count", part))
    rec["mma"][:, :, 0] = [[10, 0], [20, 0], [30, 5]]
    rec["wgmma"][:, :, 0] = [[0, 7], [0, 8], [0, 1]]
    if part:  # warp 0 runs part 1, warp 1 part 0
        rec["part"][:, :, 0] = [1, 0]
    return rec


def _write(tmp_path, maps, **kw):
    return syn.write_trace(str(tmp_path / "t"), maps, [2, 1, 1], [4, 1, 1], **kw)


def test_gmem_totals(tmp_path):
    t = tr.load(_write(tmp_path, [{"name": "gmem_bytes", "records": gmem(), "overflow": 0}]))
    g = tot.gmem_totals(t)
    sync = 16 * sum(range(8))  # 448
    assert (g["threads"], g["sync"], g["async"]) == (8, sync, 400)
    assert g["bytes"] == sync + 400
    # per thread: block 0 thread 0 has 0; block 1 thread 3 has 112 + 100
    assert g["per_thread"] == {"min": 0, "mean": pytest.approx((sync + 400) / 8),
                               "max": 212}
    assert "parts" not in g


def test_tensorop_totals(tmp_path):
    t = tr.load(_write(tmp_path, [{"name": "tensorop_count", "records": tensor()}]))
    r = tot.tensorop_totals(t)
    assert (r["warps"], r["mma"], r["wgmma"]) == (6, 65, 16)
    assert r["max_per_warp"] == {"mma": 30, "wgmma": 8}


def test_per_part(tmp_path):
    t = tr.load(_write(tmp_path, [{"name": "gmem_bytes", "records": gmem(True)},
                                  {"name": "tensorop_count", "records": tensor(True)}],
                       kernel="fused", fused_from=["im2col", "maxpool"]))
    g = tot.gmem_totals(t)["parts"]
    assert [(d["part"], d["kernel"]) for d in g] == [(0, "im2col"), (1, "maxpool"),
                                                     (None, None)]
    # part 0: threads 0, 1 of both blocks: sync 0+16+64+80, async 2 x 100
    assert (g[0]["threads"], g[0]["sync"], g[0]["async"]) == (4, 160, 200)
    assert (g[1]["sync"], g[1]["async"]) == (32 + 96, 100)
    assert g[1]["per_thread"]["max"] == 196
    assert g[2]["sync"] == 48 + 112 and g[2]["threads"] == 2
    assert sum(d["bytes"] for d in g) == tot.gmem_totals(t)["bytes"]
    r = tot.tensorop_totals(t)["parts"]
    assert [(d["kernel"], d["mma"], d["wgmma"]) for d in r] == [("im2col", 5, 16),
                                                                ("maxpool", 60, 0)]
    assert r[0]["max_per_warp"] == {"mma": 5, "wgmma": 8}


def test_cli(tmp_path, capsys):
    _write(tmp_path, [{"name": "gmem_bytes", "records": gmem(True), "overflow": 0},
                      {"name": "tensorop_count", "records": tensor(), "overflow": 0}],
           kernel="fused", fused_from=["im2col", "maxpool"])
    js = str(tmp_path / "t.json")
    assert tot.main([str(tmp_path / "t"), "--json", js]) == 0
    out = capsys.readouterr().out
    assert "gmem_bytes: 848 bytes (448 sync, 400 async) over 8 threads" in out
    assert "part 1 (maxpool): 128 sync + 100 async bytes" in out
    assert "tensorop_count: 65 mma, 16 wgmma over 6 warps" in out
    d = json.load(open(js))
    assert d["gmem_bytes"]["sync"] == 448 and d["tensorop_count"]["wgmma"] == 16
    assert d["gmem_bytes"]["parts"][2]["part"] is None


def test_errors(tmp_path, capsys):
    bs = np.zeros((2, 1, 1), syn.dtype_of("block_sched"))
    _write(tmp_path, [{"name": "block_sched", "records": bs}])
    assert tot.main([str(tmp_path / "t")]) == 2
    err = capsys.readouterr().err
    assert "no 'gmem_bytes' or 'tensorop_count' map" in err and "block_sched" in err
    with pytest.raises(tr.TraceError, match="no 'gmem_bytes' map"):
        tot.gmem_totals(tr.load(str(tmp_path / "t")))
    # As a script: a non-zero exit and the message.
    p = subprocess.run([sys.executable, "-m", "gpuopt.totals",
                        str(tmp_path / "t")], capture_output=True, text=True)
    assert p.returncode == 2 and "totals: error:" in p.stderr
    assert tot.main([str(tmp_path / "nope")]) == 2
    assert "not a gpu-run trace" in capsys.readouterr().err
