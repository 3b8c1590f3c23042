"""warp_sched.py on synthetic traces whose tail is known."""

import json
import os

import numpy as np
import pytest

from gpuopt import synthetic as syn
from gpuopt import trace as tr
from gpuopt import warp_sched as ws

G = 5_000_000_000  # %globaltimer at the kernel's start, ns

# (block, warp): (start, end, sm, slot), ns after G. Block 2's warp 1 wrote
# nothing (its record stays zero).
WARPS = {(0, 0): (0, 600, 0, 0), (0, 1): (10, 1000, 0, 1),
         (1, 0): (5, 500, 1, 0), (1, 1): (20, 900, 1, 1),
         (2, 0): (600, 800, 0, 0)}  # slot 0 of SM 0 again


def records(part=False):
    rec = np.zeros((3, 2, 1), syn.dtype_of("warp_sched", part))
    for (b, w), (s, e, sm, slot) in WARPS.items():
        rec[b, w, 0] = (G + s, G + e, sm, slot) + ((0 if b == 0 else 1,) if part else ())
    return rec


def _trace(tmp_path, part=False, **kw):
    return tr.load(syn.write_trace(str(tmp_path / "t"), [
        {"name": "warp_sched", "records": records(part), "overflow": None}],
        [3, 1, 1], [64, 1, 1], **kw))


def test_span_tail_and_sms(tmp_path):
    s = ws.analyse(_trace(tmp_path))
    assert s["missing_warps"] == 1 and s["warps"] == 5 and s["sms"] == 2
    assert (s["start_ns"], s["end_ns"], s["span_ns"]) == (0, 1000, 1000)
    # SM 1's last warp ends at 900, 100 ns before the kernel's end
    assert s["first_idle_sm"] == 1 and s["tail_start_ns"] == 900
    assert s["tail_ns"] == 100 and s["tail_share"] == pytest.approx(0.1)
    sm = {d["sm"]: d for d in s["per_sm"]}
    assert (sm[0]["warps"], sm[0]["busy_ns"], sm[0]["end_ns"]) == (3, 1000, 1000)
    assert (sm[1]["warps"], sm[1]["start_ns"], sm[1]["busy_ns"]) == (2, 5, 895)
    assert s["warps_per_sm"] == {"min": 2, "mean": 2.5, "max": 3}
    # the last 10% of 5 warps: one, block 0's warp 1 on SM 0
    assert s["last_warps"]["count"] == 1 and s["last_warps"]["sms"] == {0: 1}
    assert s["last_warps"]["warps"] == [{"block": 0, "warp": 1, "sm": 0, "slot": 1,
                                         "end_ns": 1000}]
    assert s["device_sms"] == 132


def test_last_tenth(tmp_path):
    # 20 warps end 100 ns apart; the last two both ran on SM 3.
    rec = np.zeros((10, 2, 1), syn.dtype_of("warp_sched"))
    for i in range(20):
        rec[i // 2, i % 2, 0] = (G, G + 100 * (i + 1), 3 if i >= 18 else i % 3, i % 2)
    s = ws.analyse(tr.load(syn.write_trace(str(tmp_path / "l"), [
        {"name": "warp_sched", "records": rec}], [10, 1, 1], [64, 1, 1])))
    lw = s["last_warps"]
    assert lw["count"] == 2 and lw["sms"] == {3: 2} and lw["from_ns"] == 1900
    assert [w["block"] for w in lw["warps"]] == [9, 9]
    # SM 0's last warp is i = 15 (ends 1600), before SM 1 (i = 16) and SM 2 (i = 17)
    assert s["first_idle_sm"] == 0 and s["tail_ns"] == 2000 - 1600


def test_per_part(tmp_path):
    s = ws.analyse(_trace(tmp_path, part=True, kernel="fused", fused_from=["a", "b"]))
    a, b = s["parts"]
    assert (a["kernel"], a["warps"], a["sms"], a["span_ns"], a["tail_ns"]) == ("a", 2, 1,
                                                                             1000, 0)
    assert (b["kernel"], b["warps"], b["start_ns"], b["end_ns"]) == ("b", 3, 5, 900)
    # part b: SM 0's last warp ends at 800, SM 1's at 900
    assert b["first_idle_sm"] == 0 and b["tail_ns"] == 100
    assert b["tail_share"] == pytest.approx(100 / 895)


def test_running_warps():
    w = {"gstart": np.array([G, G, G]), "gend": np.array([G + 1000, G + 500, G + 150]),
         "sm": np.array([0, 0, 7])}
    sms, run, edges = ws.running(w, 10)
    assert sms.tolist() == [0, 7] and edges[-1] == 1000
    assert run[0].tolist() == pytest.approx([2, 2, 2, 2, 2, 1, 1, 1, 1, 1])
    assert run[1].tolist() == pytest.approx([1, 0.5, 0, 0, 0, 0, 0, 0, 0, 0])


def test_cli_outputs(tmp_path, capsys):
    _trace(tmp_path, part=True, kernel="fused", fused_from=["a", "b"])
    png, pf, js = (str(tmp_path / n) for n in ("w.png", "w.json", "s.json"))
    assert ws.main([str(tmp_path / "t"), "--plot", png, "--perfetto", pf,
                    "--json", js]) == 0
    out = capsys.readouterr().out
    assert "2 of 132 SMs used; 1 warps without a record" in out
    assert "tail: 0.100 µs (10.0% of the span) after SM 1 went idle at 0.900 µs" in out
    assert "part 1 (b):" in out
    with open(png, "rb") as f:
        assert f.read(8) == b"\x89PNG\r\n\x1a\n"
    assert os.path.getsize(png) > 5000
    events = json.load(open(pf))["traceEvents"]
    slices = [e for e in events if e["ph"] == "X"]
    assert len(slices) == 5
    assert min(e["ts"] for e in slices) == 0
    by = {(e["args"]["block"], e["args"]["warp"]): e for e in slices}
    e = by[(2, 0)]
    assert (e["pid"], e["tid"], e["ts"], e["dur"]) == (0, 0, 0.6, pytest.approx(0.2))
    assert e["args"]["part"] == "b" and by[(0, 1)]["args"]["part"] == "a"
    procs = [e for e in events if e["name"] == "process_name"]
    threads = [e for e in events if e["name"] == "thread_name"]
    assert sorted(e["args"]["name"] for e in procs) == ["SM 0", "SM 1"]
    assert len(threads) == 4  # slots 0, 1 on each SM
    d = json.load(open(js))
    assert d["tail_ns"] == 100 and d["parts"][0]["kernel"] == "a"


def test_errors(tmp_path, capsys):
    bs = np.zeros((2, 2, 1), syn.dtype_of("block_sched"))
    syn.write_trace(str(tmp_path / "b"), [{"name": "block_sched", "records": bs}],
                    [2, 1, 1], [64, 1, 1])
    assert ws.main([str(tmp_path / "b")]) == 2
    assert "no 'warp_sched' map" in capsys.readouterr().err
    z = np.zeros((2, 2, 1), syn.dtype_of("warp_sched"))
    syn.write_trace(str(tmp_path / "z"), [{"name": "warp_sched", "records": z}],
                    [2, 1, 1], [64, 1, 1])
    assert ws.main([str(tmp_path / "z")]) == 2
    assert "no 'warp_sched' records were written" in capsys.readouterr().err


def test_replicated_part_blocks(tmp_path):
    # Two fused blocks of part a (2 warps) and two copies of part b (1 warp
    # each): b's blocks are fused block x 2 + copy.
    rec = np.zeros((2, 4, 1), syn.dtype_of("warp_sched", part=True, copy=True))
    for b in range(2):
        for w in range(4):
            part, copy = (0, 0) if w < 2 else (1, w - 2)
            rec[b, w, 0] = (G + 10 * w, G + 100 + 10 * w + b, 0, w, part, copy)
    t = tr.load(syn.write_trace(str(tmp_path / "r"), [{"name": "warp_sched", "records": rec}],
                                [2, 1, 1], [128, 1, 1], kernel="fused",
                                fused_from=[{"kernel": "a", "threads": [0, 64]},
                                            {"kernel": "b", "threads": [64, 128],
                                             "replicas": 2}]))
    w, missing = ws.warps_of(t)
    assert missing == 0
    b = w["part"] == 1
    assert w["part_block"][b].tolist() == [0, 1, 2, 3] and (w["part_warp"][b] == 0).all()
    s = ws.analyse(t, w)
    # the last warp: fused block 1's copy 1, b's block 3
    assert s["last_warps"]["warps"][0] | {} == {"block": 1, "warp": 3, "sm": 0, "slot": 3,
                                                "end_ns": 131, "part_block": 3, "part_warp": 0}
    events = [e for e in ws.perfetto(t, w)["traceEvents"] if e["ph"] == "X"]
    e = next(e for e in events if e["args"]["block"] == 1 and e["args"]["warp"] == 2)
    assert (e["args"]["part"], e["args"]["part_block"], e["args"]["part_warp"]) == ("b", 2, 0)
    assert e["name"] == "block 1 warp 2 b block 2 warp 0"
