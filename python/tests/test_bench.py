"""gpuopt.bench without a GPU: overlap efficiency, batching, merging, and a
pair with a fused kernel timed through the stand-in gpu-run (conftest.py)."""

import json

import pytest

from gpuopt import bench as bn


def t(ms):
    return {"median_ms": ms, "min_ms": ms * 0.99, "max_ms": ms * 1.01, "spread": 0.02}


def test_overlap_efficiency():
    assert bn.overlap_efficiency(10.0, 7.0, 6.0, 4.0) == pytest.approx(0.75)
    assert bn.overlap_efficiency(10.0, 6.0, 6.0, 4.0) == pytest.approx(1.0)
    assert bn.overlap_efficiency(10.0, 12.0, 6.0, 4.0) == pytest.approx(-0.5)
    assert bn.overlap_efficiency(12.0, 9.0, 6.0, 4.0, 2.0) == pytest.approx(0.5)
    assert bn.overlap_efficiency(6.0, 5.0, 6.0, 0.0) is None  # serial == max: undefined
    assert bn.overlap_efficiency(None, 5.0, 6.0, 1.0) is None
    assert bn.overlap_efficiency(10.0, 5.0) is None


def test_batch_groups():
    groups = [{"name": "ab", "kernels": ["a", "b"], "also": ["ab1"]},
              {"name": "ac", "kernels": ["a", "c"], "also": ["ac1"]},
              {"name": "de", "kernels": ["d", "e"], "also": ["de1", "de2"]}]
    size = {k: 10 for k in ["a", "b", "c", "d", "e", "ab1", "ac1", "de1", "de2"]}

    def names(batches):
        return [[(g["name"], also) for g, also in b] for b in batches]

    assert names(bn.batch_groups(groups, size, 1000)) == \
        [[("ab", ["ab1"]), ("ac", ["ac1"]), ("de", ["de1", "de2"])]]
    # ac adds c and ac1 only (a is in the process already): 30 + 20 = 50
    assert names(bn.batch_groups(groups, size, 50)) == \
        [[("ab", ["ab1"]), ("ac", ["ac1"])], [("de", ["de1", "de2"])]]
    warnings = []
    assert names(bn.batch_groups(groups, size, 30, warnings.append))[-2:] == \
        [[("de", ["de1"])], [("de", ["de2"])]]
    assert warnings == []
    bn.batch_groups(groups, size, 25, warnings.append)
    assert len(warnings) == 3 and "need more than" in warnings[0]
    spec = bn.batch_spec([(groups[0], ["ab1"]), (groups[1], ["ac1"])],
                         {k: {"label": k} for k in size}, ["serial"], 1, 2)
    assert [k["label"] for k in spec["kernels"]] == ["a", "b", "ab1", "c", "ac1"]
    assert spec["groups"][1] == {"name": "ac", "kernels": ["a", "c"], "modes": ["serial"],
                                 "also": ["ac1"]}
    assert (spec["warmup"], spec["repeat"]) == (1, 2)


def test_merge_and_summarize():
    g1 = {"name": "a+b", "kernels": ["a", "b"], "alone": {"a": t(6.0), "b": t(4.0)},
          "serial": t(10.0), "concurrent": t(8.0), "graph": t(9.0), "also": {"x": t(7.0)}}
    g2 = {"name": "a+b", "kernels": ["a", "b"], "serial": t(11.0), "also": {"y": t(4.0)}}
    g3 = {"name": "c+d", "kernels": ["c", "d"], "serial": t(3.0)}
    merged = bn.merge_groups([g1, g3, g2])
    assert [g["name"] for g in merged] == ["a+b", "c+d"]
    assert merged[0]["serial"]["median_ms"] == 10.0 and set(merged[0]["also"]) == {"x", "y"}
    assert merged[0]["parts"] == 2 and merged[1]["also"] == {}
    row = bn.summarize_group(merged[0])
    assert row["best_baseline"] == 8.0 and row["best_baseline_mode"] == "concurrent"
    assert row["fused"]["x"] == {"ms": 7.0, "speedup": pytest.approx(8 / 7),
                                 "overlap": pytest.approx(0.75)}
    assert row["fused"]["y"]["overlap"] == pytest.approx(1.5)
    assert "x: 7.0000 ms, speedup 1.143, overlap efficiency 0.750" in bn.render([row])
    row = bn.summarize_group(merged[1])
    assert row["graph"] is None and row["best_baseline"] == 3.0


def test_cli(tmp_path, gpu_run, capsys):
    (tmp_path / "a.ptx").write_text("// a\n")
    (tmp_path / "f.ptx").write_text("// fused\n")
    a_args = ["buf:f32:16:random:1", "buf:f32:16:out"]
    b_args = ["buf:u32:8:random:2", "scalar:u32:8"]
    spec = tmp_path / "pair.json"
    spec.write_text(json.dumps({"kernels": [
        {"label": "a", "module": str(tmp_path / "a.ptx"), "kernel": "ka", "grid": [4],
         "block": [256], "args": a_args},
        {"label": "b", "module": str(tmp_path / "a.ptx"), "kernel": "kb", "grid": [4],
         "block": [256], "args": b_args}]}))
    (tmp_path / "f.json").write_text(json.dumps({"kernels": [{
        "name": "fab", "params": [{"name": f"p{i}"} for i in range(4)],
        "fused_from": [{"kernel": "ka", "arg_map": [2, 3]},
                       {"kernel": "kb", "arg_map": [0, 1]}]}]}))
    gpu_run.configure(times={"a": 6.0, "b": 4.0, "fused0": 7.0})
    out = tmp_path / "bench.json"
    assert bn.main(["--spec", str(spec), "--fused", f"{tmp_path / 'f.ptx'}:{tmp_path / 'f.json'}",
                    "--gpu-run", gpu_run.path, "--warmup", "1", "--repeat", "3",
                    "--json", str(out)]) == 0
    (call,) = gpu_run.calls()  # one gpu-run process
    assert call[0] == "--spec" and "--json" in call
    result = json.loads(out.read_text())
    (row,) = result["rows"]
    assert row["name"] == "a+b" and row["alone"] == {"a": 6.0, "b": 4.0}
    assert row["serial"] == 10.0 and row["concurrent"] == pytest.approx(7.2)
    assert row["graph"] == pytest.approx(6.6) and row["best_baseline_mode"] == "graph"
    assert row["fused"]["fused0"]["speedup"] == pytest.approx(6.6 / 7.0)
    assert row["fused"]["fused0"]["overlap"] == pytest.approx(0.75)
    assert result["reports"][0]["groups"][0]["also"].keys() == {"fused0"}
    assert "fused0: 7.0000 ms, speedup 0.943" in capsys.readouterr().out
    # a kernel that is not fused is refused
    (tmp_path / "p.json").write_text(json.dumps({"kernels": [{"name": "ka"}]}))
    assert bn.main(["--spec", str(spec), "--fused", f"{tmp_path / 'f.ptx'}:{tmp_path / 'p.json'}",
                    "--gpu-run", gpu_run.path]) == 2
    assert "p.json" in capsys.readouterr().err
