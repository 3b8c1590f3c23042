"""probe_suite.py without a GPU: the dynamic-map check on synthetic traces,
and the gpu-run command `check` composes (stand-in tools)."""

import json
import os
import stat
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(HERE)), "python"))
import probe_suite as ps  # noqa: E402
from gpuopt import synthetic as syn  # noqa: E402

CAP = 4


def dynamic_trace(tmp_path, counts):
    rec = np.zeros((2, 2, CAP), syn.dtype_of("program_progress"))
    counts = np.array(counts, np.uint32)
    for (b, w), n in np.ndenumerate(counts):
        rec[b, w, :min(n, CAP)]["clock"] = 1 + np.arange(min(n, CAP))
    return syn.write_trace(str(tmp_path / "t"), [
        {"name": "program_progress", "records": rec, "counts": counts}],
        [2, 1, 1], [64, 1, 1])


def test_dynamic_sized_exactly(tmp_path):
    problems, info = ps.check_dynamic(dynamic_trace(tmp_path, [[4, 1], [0, 2]]),
                                      "program_progress")
    assert problems == []
    assert (info["records"], info["capacity"], info["slots_with_records"]) == (7, 4, 3)


def test_dynamic_below_the_counting_run(tmp_path):
    # The counting run saw 4 at most, this run 3: wrong sizing, unless the
    # kernel spins (its trip counts depend on timing).
    path = dynamic_trace(tmp_path, [[3, 1], [0, 2]])
    problems, _ = ps.check_dynamic(path, "program_progress")
    assert problems == ["capacity 4 but the largest count is 3"]
    problems, _ = ps.check_dynamic(path, "program_progress", spins=True)
    assert problems == []


def test_dynamic_overflow_fails_even_when_spinning(tmp_path):
    problems, _ = ps.check_dynamic(dynamic_trace(tmp_path, [[6, 1], [0, 2]]),
                                   "program_progress", spins=True)
    assert "overflow 2 after the counting run" in problems
    assert "capacity 4 but the largest count is 6" in problems


def tool(path, exit_code):
    """A stand-in that appends its argv to $PROBE_SUITE_TEST_LOG and exits."""
    with open(path, "w") as f:
        f.write("#!/usr/bin/env python3\nimport json, os, sys\n"
                "open(os.environ['PROBE_SUITE_TEST_LOG'], 'a').write("
                "json.dumps(sys.argv[1:]) + '\\n')\n"
                f"sys.exit({exit_code})\n")
    os.chmod(path, os.stat(path).st_mode | stat.S_IEXEC)
    return str(path)


def test_check_command(tmp_path, monkeypatch):
    log = tmp_path / "argv.log"
    monkeypatch.setenv("PROBE_SUITE_TEST_LOG", str(log))
    gpu_run = tool(tmp_path / "gpu-run", 1)
    sanitizer = tool(tmp_path / "compute-sanitizer", 86)
    spec = {"label": "two", "kernel": "second", "module": str(tmp_path / "m.ptx"),
            "grid": [8], "block": [128], "smem": 0, "args": ["scalar:u32:7"]}
    runs = [{"kernel": name, "probe": "block_sched", "entry": "second", "spec": spec,
             "ptx": str(tmp_path / f"{name}.probed.ptx"),
             "manifest": str(tmp_path / f"{name}.json")} for name in ("two", "other")]
    with open(tmp_path / "probes.json", "w") as f:
        json.dump({"runs": runs}, f)
    argv = ["check", "--dir", str(tmp_path), "--gpu-run", gpu_run, "--only", "tw",
            "--probes", "block_sched", "--date", "2026-01-01"]
    # Outputs differ (exit 1): FAIL; only the kernel --only names runs, and
    # it runs the chosen entry of the probed module.
    assert ps.main(argv) == 1
    calls = [json.loads(line) for line in log.read_text().splitlines()]
    assert len(calls) == 1
    assert calls[0][0] == str(tmp_path / "two.probed.ptx")
    i = calls[0].index("--kernel")
    assert calls[0][i + 1] == "second"
    assert f"{tmp_path / 'm.ptx'}:second" in calls[0]
    result = json.loads((tmp_path / "check.json").read_text())["results"]
    assert [(r["kernel"], r["result"]) for r in result] == [("two", "FAIL")]
    # Under memcheck: the sanitizer runs gpu-run, its error exit fails the
    # kernel; the results go where --results says.
    log.write_text("")
    assert ps.main(argv + ["--sanitizer", sanitizer, "--results", "mem.json"]) == 1
    calls = [json.loads(line) for line in log.read_text().splitlines()]
    assert calls[0][:5] == ["--tool", "memcheck", "--error-exitcode", "86", gpu_run]
    result = json.loads((tmp_path / "mem.json").read_text())["results"]
    assert result[0]["result"] == "FAIL" and "86" in result[0]["detail"]
