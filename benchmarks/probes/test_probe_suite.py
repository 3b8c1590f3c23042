"""probe_suite.py without a GPU: the dynamic-map check on synthetic traces,
and the gpu-run command `check` composes (stand-in tools)."""

import json
import os
import stat

import numpy as np

import probe_suite as ps

from gpuopt import synthetic as syn

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


# gpu-run MODULE ... --arg A ... --out I:PATH: writes each output from the
# argument texts (as the real one, equal texts give equal contents), one
# byte off when the module's name has "bad"; logs its argv.
FAKE_GPU_RUN = """#!/usr/bin/env python3
import hashlib, json, os, sys
args = sys.argv[1:]
open(os.environ['PROBE_SUITE_TEST_LOG'], 'a').write(json.dumps(args) + '\\n')
kargs = [args[i + 1] for i, a in enumerate(args) if a == '--arg']
for i, a in enumerate(args):
    if a == '--out':
        idx, path = args[i + 1].split(':', 1)
        data = bytearray(hashlib.sha256(' '.join(kargs).encode()).digest())
        if 'bad' in os.path.basename(args[0]):
            data[3] ^= 1
        open(path, 'wb').write(data)
print('device: Fake GPU (132 SMs)')
"""


def tool(path, exit_code, body=None):
    """A stand-in that appends its argv to $PROBE_SUITE_TEST_LOG and exits."""
    with open(path, "w") as f:
        f.write(body or "#!/usr/bin/env python3\nimport json, os, sys\n"
                "open(os.environ['PROBE_SUITE_TEST_LOG'], 'a').write("
                "json.dumps(sys.argv[1:]) + '\\n')\n"
                f"sys.exit({exit_code})\n")
    os.chmod(path, os.stat(path).st_mode | stat.S_IEXEC)
    return str(path)


def test_check_command(tmp_path, monkeypatch):
    log = tmp_path / "argv.log"
    monkeypatch.setenv("PROBE_SUITE_TEST_LOG", str(log))
    gpu_run = tool(tmp_path / "gpu-run", 0, FAKE_GPU_RUN)
    sanitizer = tool(tmp_path / "compute-sanitizer", 86)
    (tmp_path / "m.ptx").write_text("// original\n")
    spec = {"label": "two", "kernel": "second", "module": str(tmp_path / "m.ptx"),
            "grid": [8], "block": [128], "smem": 0,
            "args": ["scalar:u32:7", "buf:u32:8:out"]}
    runs = [{"kernel": name, "probe": "block_sched", "entry": "second", "spec": spec,
             "ptx": str(tmp_path / f"{name}.bad.probed.ptx"),
             "manifest": str(tmp_path / f"{name}.json")} for name in ("two", "other")]
    for name in ("two", "other"):
        (tmp_path / f"{name}.json").write_text(json.dumps(
            {"kernels": [{"name": "second", "params": []}]}))
    with open(tmp_path / "probes.json", "w") as f:
        json.dump({"runs": runs}, f)
    argv = ["check", "--dir", str(tmp_path), "--gpu-run", gpu_run, "--only", "tw",
            "--probes", "block_sched", "--date", "2026-01-01"]
    # The probed kernel's output differs from the original's: FAIL; only the
    # kernel --only names runs: the original, then the chosen entry of the
    # probed module with its manifest, on the same arguments and launch.
    assert ps.main(argv) == 1
    calls = [json.loads(line) for line in log.read_text().splitlines()]
    assert len(calls) == 2
    assert calls[0][0] == str(tmp_path / "m.ptx")
    assert calls[1][0] == str(tmp_path / "two.bad.probed.ptx")
    for c in calls:
        assert c[c.index("--kernel") + 1] == "second"
        assert c[c.index("--grid") + 1] == "8" and c[c.index("--block") + 1] == "128"
        assert [c[i + 1] for i, a in enumerate(c) if a == "--arg"] == spec["args"]
    assert calls[1][calls[1].index("--manifest") + 1] == str(tmp_path / "two.json")
    assert calls[1][calls[1].index("--trace") + 1] == str(
        tmp_path / "traces" / "block_sched" / "two")
    result = json.loads((tmp_path / "check.json").read_text())["results"]
    assert [(r["kernel"], r["result"]) for r in result] == [("two", "FAIL")]
    assert "two arg 1: 1 of 8 elements differ" in result[0]["detail"]
    # Under memcheck: the sanitizer runs the probed kernel's gpu-run, its
    # error exit fails the kernel; the results go where --results says.
    log.write_text("")
    assert ps.main(argv + ["--sanitizer", sanitizer, "--results", "mem.json"]) == 1
    calls = [json.loads(line) for line in log.read_text().splitlines()]
    assert calls[1][:5] == ["--tool", "memcheck", "--error-exitcode", "86", gpu_run]
    result = json.loads((tmp_path / "mem.json").read_text())["results"]
    assert result[0]["result"] == "FAIL" and "exit 86" in result[0]["detail"]
