"""gpuopt.profile without a GPU: batching by memory, the occupancy sweep
asked of gpu-run, the merged report, errors (stand-in gpu-run, conftest.py)."""

import json

import pytest

from gpuopt import profile as pf


def kernels(tmp_path):
    (tmp_path / "k.ptx").write_text("// k\n")
    return [{"label": label, "module": str(tmp_path / "k.ptx"), "grid": [8], "block": [128],
             "args": [f"buf:f32:{n}:random:1", f"buf:f32:{n}:out"]}
            for label, n in (("a", 1024), ("b", 2048), ("c", 512))]


def test_profile_batches_and_merges(tmp_path, gpu_run):
    gpu_run.configure(times={"a": 2.0, "b": 1.0, "c": 0.5})
    lines = []
    # 20 KiB per process: a (8 KiB) + b (16 KiB) do not fit together
    report = pf.profile(gpu_run.path, kernels(tmp_path), warmup=1, repeat=2,
                        max_gib=20480 / 2 ** 30, log=lines.append)
    calls = gpu_run.calls()
    assert len(calls) == 2 and all("--occupancy-sweep" in c for c in calls)
    assert lines == ["profile: [1/2] a", "profile: [2/2] b, c"]
    assert [k["label"] for k in report["kernels"]] == ["a", "b", "c"]
    assert report["device"]["name"] == "Fake GPU"
    assert pf.describe(report)[0] == "a: 2 ms at 4 blocks/SM; 3: 2.667, 2: 4, 1: 8"
    # one process when everything fits
    pf.profile(gpu_run.path, kernels(tmp_path))
    assert len(gpu_run.calls()) == 3


def test_profile_errors(tmp_path, gpu_run):
    gpu_run.configure(fail=["k.ptx"])
    with pytest.raises(pf.ProfileError, match=r"gpu-run failed on \['a', 'b', 'c'\]: exit 2"):
        pf.profile(gpu_run.path, kernels(tmp_path))
    ks = kernels(tmp_path)
    ks[1]["label"] = "a"
    with pytest.raises(pf.ProfileError, match="labels are not unique"):
        pf.profile(gpu_run.path, ks)


def test_cli(tmp_path, gpu_run, capsys):
    spec = tmp_path / "spec.json"
    spec.write_text(json.dumps({"kernels": [{k: v for k, v in x.items() if k != "label"}
                                            for x in kernels(tmp_path)[:1]]}))
    out = tmp_path / "o" / "profile.json"
    assert pf.main(["--spec", str(spec), "--out", str(out), "--gpu-run", gpu_run.path]) == 0
    report = json.loads(out.read_text())
    assert report["kernels"][0]["label"] == "k0"
    assert report["kernels"][0]["occupancy"]["blocks_per_sm"] == 4
    assert "profile: wrote" in capsys.readouterr().out
    gpu_run.configure(fail=["k.ptx"])
    assert pf.main(["--spec", str(spec), "--out", str(out), "--gpu-run", gpu_run.path]) == 2
    assert "profile: error: gpu-run failed" in capsys.readouterr().err
