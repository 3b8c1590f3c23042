"""block_sched analysis on synthetic traces whose scheduling gaps are known."""

import json
import os

import numpy as np
import pytest

from gpuopt import block_sched as bs
from gpuopt import trace as tr

DTYPE = np.dtype({"names": ["gend", "start", "end", "sm"],
                  "formats": ["<u8", "<u4", "<u4", "<u4"],
                  "offsets": [0, 8, 12, 16], "itemsize": 24})


def write_trace(path, records, grid, block, overflow=0):
    """records: (blocks, warps) array of DTYPE, as gpu-run writes it."""
    os.makedirs(path)
    arr = records.reshape(records.shape + (1,))
    np.save(os.path.join(path, "block_sched.npy"), arr)
    with open(os.path.join(path, "trace.json"), "w") as f:
        json.dump({"kernel": "k", "grid": grid, "block": block,
                   "maps": [{"name": "block_sched", "probe": "block_sched",
                             "level": "warp", "capacity": 1, "record_bytes": 32,
                             "shape": list(arr.shape), "file": "block_sched.npy",
                             "overflow": overflow}]}, f)


def synthetic(slots=2, blocks_per_sm=6, sms=3, run=1000, gap=250, warps=2, base=10):
    """Each SM runs `slots` blocks at a time; every block runs `run` clocks
    and the next block in its slot starts `gap` clocks after it ends. SM
    clocks start at `base` (near 2^32: they wrap); the global timer ticks
    one ns per clock."""
    n = sms * blocks_per_sm
    rec = np.zeros((n, warps), DTYPE)
    b = 0
    for sm in range(sms):
        for i in range(blocks_per_sm):
            slot, k = i % slots, i // slots
            start = slot * 3 + k * (run + gap)
            for w in range(warps):
                s, e = start + w, start + run - w
                rec[b, w] = (5000 + e, (base + s) % (1 << 32), (base + e) % (1 << 32), sm)
            b += 1
    return rec


def test_scheduling_cost_matches_the_gaps(tmp_path):
    rec = synthetic()
    write_trace(str(tmp_path / "t"), rec, [18, 1, 1], [64, 1, 1])
    t = tr.load(str(tmp_path / "t"))
    blocks, missing = bs.blocks_of(t)
    assert missing == 0 and len(blocks["sm"]) == 18
    # block = first warp's start to last warp's end
    assert blocks["end"][0] - blocks["start"][0] == 1000
    cost = bs.scheduling_cost(blocks)
    # per SM: 6 blocks, 2 slots -> 4 later starts, each 250 after a slot freed
    assert cost["gaps"] == 3 * 4
    assert cost["mean_gap_clocks"] == pytest.approx(250)
    assert cost["mean_block_clocks"] == pytest.approx(1000)
    assert cost["scheduling_share"] == pytest.approx(12 * 250 / (12 * 250 + 18 * 1000))


def test_slot_idle_needs_no_pairing(tmp_path):
    blocks = bs.blocks_of(_load(tmp_path, synthetic()))[0]
    idle = bs.slot_idle(blocks)
    # Per SM: 2 slots, dispatch window 0..2503 (slot 1 starts 3 clocks late);
    # blocks run 4003 clocks inside it: 2 x 2503 - 4003 idle, the two 250
    # gaps of each slot and slot 1's 3 clocks.
    assert idle["max_resident"] == 2
    assert idle["per_sm"][0]["idle_slot_clocks"] == pytest.approx(1003)
    assert idle["idle_share"] == pytest.approx(1003 / 5006)
    # Back to back: only slot 1's late start is idle.
    back = bs.slot_idle(bs.blocks_of(_load(tmp_path / "b", synthetic(gap=0)))[0])
    assert back["per_sm"][0]["idle_slot_clocks"] == pytest.approx(3)


def test_clock_wrap(tmp_path):
    rec = synthetic(base=(1 << 32) - 1500)  # wraps during the second block
    cost = bs.scheduling_cost(bs.blocks_of(_load(tmp_path, rec))[0])
    assert cost["mean_gap_clocks"] == pytest.approx(250)
    assert cost["mean_block_clocks"] == pytest.approx(1000)


def test_no_gap_when_back_to_back(tmp_path):
    cost = bs.scheduling_cost(bs.blocks_of(_load(tmp_path, synthetic(gap=0)))[0])
    assert cost["mean_gap_clocks"] == 0 and cost["gaps"] == 12


def _load(tmp_path, rec):
    write_trace(str(tmp_path / "t"), rec, [len(rec), 1, 1], [64, 1, 1])
    return tr.load(str(tmp_path / "t"))


def test_unwritten_warps_are_counted_not_used(tmp_path):
    rec = synthetic()
    rec[0, 1] = (0, 0, 0, 0)
    t = _load(tmp_path, rec)
    blocks, missing = bs.blocks_of(t)
    assert missing == 1 and len(blocks["sm"]) == 18
    assert blocks["end"][0] - blocks["start"][0] == 1000  # warp 0 alone


def test_cli_outputs(tmp_path, capsys):
    write_trace(str(tmp_path / "t"), synthetic(), [18, 1, 1], [64, 1, 1], overflow=0)
    png, pf, js = (str(tmp_path / n) for n in ("tl.png", "tl.json", "c.json"))
    assert bs.main([str(tmp_path / "t"), "--plot", png, "--perfetto", pf,
                    "--json", js, "--clock-ghz", "1.0"]) == 0
    out = capsys.readouterr().out
    assert "18 blocks on 3 SMs" in out and "scheduling share: 14.3%" in out
    assert "idle slots while blocks start: 20.0%" in out
    assert json.load(open(js))["idle_share"] == pytest.approx(1003 / 5006)
    with open(png, "rb") as f:
        assert f.read(8) == b"\x89PNG\r\n\x1a\n"
    events = json.load(open(pf))["traceEvents"]
    slices = [e for e in events if e["ph"] == "X"]
    assert len(slices) == 18 and all(e["dur"] == pytest.approx(1.0) for e in slices)
    assert min(e["ts"] for e in slices) == 0
    assert json.load(open(js))["gaps"] == 12


def test_errors(tmp_path, capsys):
    assert bs.main([str(tmp_path / "nope")]) == 2
    assert "not a gpu-run trace" in capsys.readouterr().err
    rec = np.zeros((4, 2), DTYPE)
    write_trace(str(tmp_path / "z"), rec, [4, 1, 1], [64, 1, 1])
    assert bs.main([str(tmp_path / "z")]) == 2
    assert "no records were written" in capsys.readouterr().err
