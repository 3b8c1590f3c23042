"""gpuopt-trace without a GPU: the traced process opens a probe session,
its Triton compiles are probed, and the run directory holds the event log,
each kernel's PTX before and after, its build log and a summary; the
program's own sitecustomize still runs."""

import json
import os
import subprocess
import sys

import pytest

from gpuopt import tracer

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
# The traced process imports the gpuopt these tests import.
PACKAGE_PARENT = os.path.dirname(os.path.dirname(os.path.abspath(tracer.__file__)))


def test_no_command_is_an_error(capsys):
    with pytest.raises(SystemExit) as e:
        tracer.main(["-p", "block_sched"])
    assert e.value.code == 2
    assert "no command given" in capsys.readouterr().err


def test_missing_spec_file_is_an_error(tmp_path, capsys):
    with pytest.raises(SystemExit):
        tracer.main(["-p", str(tmp_path / "nope.yaml"), "python3", "-c", "1"])
    assert "no such file" in capsys.readouterr().err


def test_unknown_probe_name_is_an_error_before_the_program_runs(tmp_path, capsys):
    mark = tmp_path / "ran"
    with pytest.raises(SystemExit) as e:
        tracer.main(["-p", "block_sched", "-p", "blok_sched", "--tracedir",
                     str(tmp_path / "traces"), sys.executable, "-c",
                     f"open({str(mark)!r}, 'w')"])
    assert e.value.code == 2
    err = capsys.readouterr().err
    assert "probe spec blok_sched: not a built-in probe nor a YAML file" in err
    assert "block_sched, dmat, gmem_bytes, program_progress, tensorop_count, warp_sched" in err
    assert not mark.exists() and not (tmp_path / "traces").exists()


def test_probe_spec_file_without_yaml_suffix(tmp_path):
    spec = tmp_path / "my_probe.spec"
    spec.write_text("name: x\n")
    assert tracer.probe_specs(["gmem_bytes", str(spec)]) == ["gmem_bytes", str(spec)]


def test_builtin_probes_are_configs_probes():
    # gpu-opt compiles in configs/probes/*.yaml, by file stem.
    d = os.path.join(ROOT, "configs", "probes")
    if not os.path.isdir(d):
        pytest.skip("no source tree")
    names = sorted(f[:-len(".yaml")] for f in os.listdir(d) if f.endswith(".yaml"))
    assert list(tracer.BUILTIN_PROBES) == names


def test_reasons_for_nothing_probed():
    assert tracer.nothing_probed({"error": "gpuopt.triton needs Triton", "kernels": []}) \
        == ["no probes: gpuopt.triton needs Triton"]
    assert "no Triton kernel named by --kernel (k) was compiled" in \
        tracer.nothing_probed({"kernels": []}, ["k"])[0]
    assert tracer.nothing_probed({"kernels": [
        {"kernel": "a", "probed": False, "reason": "Proton"}]}) == \
        ["kernel a left unprobed: Proton"]
    assert tracer.nothing_probed({"kernels": [
        {"kernel": "a", "probed": False, "reason": "Proton"},
        {"kernel": "b", "probed": True, "reason": None}]}) == []


def run_traced(tmp_path, program, *extra):
    prog = tmp_path / "prog.py"
    prog.write_text(program)
    user_site = tmp_path / "user-site"
    user_site.mkdir()
    (user_site / "sitecustomize.py").write_text(
        "import os\nopen(os.environ['USER_SITE_MARK'], 'w').write('ran')\n")
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(user_site), HERE,
                                                       PACKAGE_PARENT]),
               USER_SITE_MARK=str(tmp_path / "mark"))
    r = subprocess.run([sys.executable, "-m", "gpuopt.tracer", "-p", "block_sched",
                        "--tracedir", str(tmp_path / "traces"), *extra,
                        sys.executable, str(prog)],
                       env=env, capture_output=True, text=True, timeout=300)
    runs = os.listdir(tmp_path / "traces")
    assert len(runs) == 1, r.stderr
    return r, tmp_path / "traces" / runs[0]


def test_traced_program_without_triton_kernels(tmp_path):
    r, run = run_traced(tmp_path, "print('hello')\n")
    assert r.returncode == 0, r.stderr
    assert "hello" in r.stdout
    summary = json.loads((run / "summary.json").read_text())
    assert summary["kernels"] == [] and summary["launches"] == 0
    events = [json.loads(line) for line in (run / "events.jsonl").read_text().splitlines()]
    if summary.get("error"):  # no Triton here: the program ran unprobed
        assert [e["event"] for e in events] == ["error"]
        assert events[0]["message"] == f"no probes: {summary['error']}"
    else:
        assert [e["event"] for e in events][0] == "start"
        assert events[-1]["event"] == "stop"
    assert (tmp_path / "mark").read_text() == "ran"  # the user's sitecustomize
    # Nothing was probed, and the terminal says why (not only events.jsonl).
    assert "gpuopt-trace: warning: nothing probed: " in r.stderr
    if summary.get("error"):  # no Triton here
        assert f"no probes: {summary['error']}" in r.stderr
    else:
        assert "no Triton kernel was compiled" in r.stderr


def test_strict_exits_non_zero_when_nothing_is_probed(tmp_path):
    r, run = run_traced(tmp_path, "print('hello')\n", "--strict")
    assert "hello" in r.stdout
    assert r.returncode == tracer.NOTHING_PROBED, r.stderr
    assert "gpuopt-trace: error: nothing probed: " in r.stderr


def test_strict_keeps_the_programs_own_failure(tmp_path):
    r, run = run_traced(tmp_path, "import sys; sys.exit(5)\n", "--strict")
    assert r.returncode == 5, r.stderr


def test_traced_program_compiling_triton_kernels(tmp_path):
    pytest.importorskip("triton")
    r, run = run_traced(tmp_path, "import triton_kernels as tk\n"
                                  "tk.compile_add(); tk.compile_row_sum()\n"
                                  "import os; print(os.environ.get('GPUOPT_TRACE_CONFIG'))\n",
                        "--kernel", "add_kernel")
    assert r.returncode == 0, r.stderr
    assert r.stdout.splitlines()[0] == "None"  # not passed on to the program
    assert "1 kernels (1 probed), 0 launches recorded" in r.stdout
    k = run / "kernels" / "add_kernel"
    assert "%globaltimer" in (k / "probed.ptx").read_text()
    assert "%globaltimer" not in (k / "original.ptx").read_text()
    assert "probed" in (k / "build.log").read_text()
    assert json.loads((k / "manifest.json").read_text())["kernels"][0]["probe_scratch"]
    assert not (run / "kernels" / "row_sum_kernel").exists()
    summary = json.loads((run / "summary.json").read_text())
    assert summary["kernels"] == [{"kernel": "add_kernel", "binary": "add_kernel",
                                   "probed": True, "reason": None, "launches": 0}]
    probe = json.loads((run / "probe.json").read_text())
    assert probe["probes"] == ["block_sched"] and probe["kernels"] == ["add_kernel"]
    events = [json.loads(line) for line in (run / "events.jsonl").read_text().splitlines()]
    assert any(e["event"] == "compile" and e["kernel"] == "add_kernel" and e["probed"]
               for e in events)


def synthetic_block_sched(tmp_path):
    """A block_sched launch of 6 blocks of 2 warps on 2 SMs, in memory."""
    import numpy as np

    from gpuopt.trace import Trace
    dt = np.dtype({"names": ["gend", "start", "end", "sm"],
                   "formats": ["<u8", "<u4", "<u4", "<u4"],
                   "offsets": [0, 8, 12, 16], "itemsize": 24})
    rec = np.zeros((6, 2, 1), dt)
    for b in range(6):
        rec["sm"][b] = b % 2
        rec["start"][b] = 1000 * (b // 2)
        rec["end"][b] = 1000 * (b // 2) + 900
        rec["gend"][b] = 10_000 + 500 * (b // 2)
    info = {"kernel": "k", "grid": [6, 1, 1], "block": [64, 1, 1]}
    return Trace.from_records(info, {"block_sched": (rec, None, 0)})


class _Launch:
    def __init__(self, trace):
        self.maps = trace.maps


def test_analyses_plots_and_perfetto_of_a_launch(tmp_path):
    pytest.importorskip("matplotlib")
    trace = synthetic_block_sched(tmp_path)
    d = tmp_path / "launch"
    trace.save(str(d))
    png = tmp_path / "k.png"
    out = tracer._analyse(str(d), _Launch(trace), str(png))
    assert out["block_sched"]["blocks"] == 6 and out["block_sched"]["sms"] == 2
    assert png.exists()
    perfetto = json.loads((tmp_path / "k.perfetto.json").read_text())
    assert len([e for e in perfetto["traceEvents"] if e.get("ph") == "X"]) == 6


def test_dataframe_of_a_trace(tmp_path):
    pytest.importorskip("pandas")
    trace = synthetic_block_sched(tmp_path)
    df = trace.dataframe("block_sched")
    assert len(df) == 12 and list(df.columns)[:3] == ["block", "unit", "index"]
    assert (df.groupby("block")["sm"].first().tolist() == [0, 1, 0, 1, 0, 1])
