"""gpuopt.run: gpu-run's run specs in process (gpuopt._runtime, which needs
no LLVM or MLIR). Without a GPU: errors, and runs on the stand-in CUDA
driver of the build's unit tests (libfakecuda_emulated.so) where there is
one."""

import json
import os
import subprocess
import sys

import pytest

import gpuopt

try:
    from gpuopt import _runtime  # noqa: F401
except ImportError:
    _runtime = None
pytestmark = pytest.mark.skipif(_runtime is None, reason="no gpuopt._runtime")

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
CORPUS = os.path.join(ROOT, "test", "corpus")
RUNTIME = os.path.join(ROOT, "test", "Runtime", "Inputs")
BUILD = os.path.join(ROOT, "build")

COPY_SPEC = {"warmup": 1, "repeat": 2, "kernels": [{
    "label": "copy", "module": os.path.join(RUNTIME, "fake.ptx"), "kernel": "fake_copy",
    "grid": [1], "smem": 0, "args": ["buf:u8:4096:random:7", "buf:u8:4096:out",
                                     "scalar:u32:4096"]}]}


def run_in_subprocess(code, env):
    """The runtime opens the CUDA driver once per process: runs with another
    driver ($GPUOPT_CUDA_DRIVER) go to a process of their own."""
    return subprocess.run([sys.executable, "-c", code], env=dict(os.environ, **env),
                          capture_output=True, text=True)


def test_run_without_driver(tmp_path):
    result = run_in_subprocess(f"""
import gpuopt
try:
    gpuopt.run({COPY_SPEC!r})
except gpuopt.Error as e:
    print("Error", e.file, e.message)
""", {"GPUOPT_CUDA_DRIVER": str(tmp_path / "libcuda.so.1")})
    assert result.returncode == 0, result.stderr
    assert result.stdout.startswith(f"Error None CUDA driver {tmp_path}/libcuda.so.1 not found")


def test_run_bad_spec():
    with pytest.raises(gpuopt.Error, match=r"kernels\[0\]"):
        gpuopt.run({"kernels": [{"module": os.path.join(RUNTIME, "fake.ptx"), "grid": "x"}]})
    with pytest.raises(gpuopt.Error, match="block shape is unknown"):
        gpuopt.run({"kernels": [{"module": os.path.join(CORPUS, "nvcc", "histogram.ptx"),
                                 "grid": [1], "args": []}]})


FAKE_DRIVER = os.path.join(BUILD, "unittests", "Runtime", "libfakecuda_emulated.so")


FIND_GPU = """
import gpuopt
from gpuopt import api
gpu = gpuopt.find_gpu()
print(gpu and (gpu["name"], gpu["compute_capability"]), gpuopt.find_gpu(1), api._probe_gpu(0)[1])
"""


def test_find_gpu_is_none_quietly_without_a_driver(tmp_path):
    result = run_in_subprocess(FIND_GPU, {"GPUOPT_CUDA_DRIVER": str(tmp_path / "libcuda.so.1")})
    assert result.returncode == 0 and result.stderr == "", result.stderr
    assert result.stdout.startswith(f"None None CUDA driver {tmp_path}/libcuda.so.1 not found")


@pytest.mark.skipif(not os.path.exists(FAKE_DRIVER), reason="no stand-in driver built")
def test_find_gpu_on_stand_in_driver():
    result = run_in_subprocess(FIND_GPU, {"GPUOPT_CUDA_DRIVER": FAKE_DRIVER})
    assert result.returncode == 0, result.stderr
    assert result.stdout == "('Fake GPU', '9.0') None None\n"


@pytest.mark.skipif(not os.path.exists(FAKE_DRIVER), reason="no stand-in driver built")
def test_run_on_stand_in_driver(tmp_path):
    spec = json.loads(json.dumps(COPY_SPEC))
    spec["kernels"][0]["out"] = {"0": "in.bin", "1": "out.bin"}
    result = run_in_subprocess(f"""
import json, gpuopt
print(json.dumps(gpuopt.run({spec!r}, workdir={str(tmp_path)!r})))
""", {"GPUOPT_CUDA_DRIVER": FAKE_DRIVER})
    assert result.returncode == 0, result.stderr
    (kernel,) = json.loads(result.stdout)["kernels"]
    assert kernel["label"] == "copy"
    assert len(kernel["time"]["samples_ms"]) == 2
    data = (tmp_path / "in.bin").read_bytes()
    assert len(data) == 4096 and (tmp_path / "out.bin").read_bytes() == data


@pytest.mark.skipif(not os.path.exists(FAKE_DRIVER), reason="no stand-in driver built")
def test_run_returns_traces_as_arrays(tmp_path):
    kernel = {"module": os.path.join(RUNTIME, "probe.ptx"),
              "manifest": os.path.join(RUNTIME, "probe.json"), "kernel": "fake_probe",
              "grid": [3], "args": ["scalar:u32:4", "scalar:u64:42"], "trace": "t"}
    result = run_in_subprocess(f"""
import gpuopt
report = gpuopt.run({{"repeat": 0, "kernels": [{kernel!r}]}}, workdir={str(tmp_path)!r})
(k,) = report["kernels"]
a = k["trace_maps"]["counts"]
print(k["trace"], k["probes"][0]["overflow"], a.shape, a.dtype.names, a["v"].ravel().tolist())
""", {"GPUOPT_CUDA_DRIVER": FAKE_DRIVER})
    assert result.returncode == 0, result.stderr
    assert result.stdout.split("\n")[0] == "t 0 (3, 1, 1) ('v',) [0, 42, 0]"
    assert (tmp_path / "t" / "trace.json").exists()
