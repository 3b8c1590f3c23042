"""CPU tests of check-gpu-machine.sh and its helpers (no GPU, torch, Triton or
gpuopt needed): `python3 -m pytest benchmarks/wheel`."""

import json
import os
import shutil
import subprocess
import sys

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
SCRIPT = os.path.join(HERE, "check-gpu-machine.sh")
sys.path.insert(0, HERE)

import heldout_measure  # noqa: E402
import wheelcheck  # noqa: E402


def test_script_parses():
    subprocess.run(["bash", "-n", SCRIPT], check=True)


@pytest.mark.skipif(shutil.which("shellcheck") is None, reason="no shellcheck")
def test_shellcheck():
    subprocess.run(["shellcheck", SCRIPT], check=True)


def test_dry_run_prints_every_step_and_writes_nothing(tmp_path):
    out = tmp_path / "out"
    r = subprocess.run(["bash", SCRIPT, "--dry-run", "x.whl", str(out)], cwd=ROOT,
                       capture_output=True, text=True, check=True)
    for text in ("pip install --no-deps", "wheelcheck.py ldd", "gpu-opt --version",
                 "gpu-opt --hfuse --probe=block_sched examples/gpu-dialect/pair.mlir",
                 "run.sh all", "gpu_dialect_pair.py", "heldout_measure.py",
                 "gpuopt-trace -p block_sched", "compiled_program.py",
                 "triton_fuse_check.py", "wheelcheck.py summary"):
        assert text in r.stdout, text
    assert not out.exists()


def test_steps_option_and_usage(tmp_path):
    r = subprocess.run(["bash", SCRIPT, "--dry-run", "--steps", "b", "x.whl", str(tmp_path)],
                       cwd=ROOT, capture_output=True, text=True, check=True)
    assert "heldout_measure.py" in r.stdout and "triton_fuse_check.py" not in r.stdout
    r = subprocess.run(["bash", SCRIPT, "--steps", "z", "x.whl", str(tmp_path)], cwd=ROOT,
                       capture_output=True, text=True)
    assert r.returncode == 2
    r = subprocess.run(["bash", SCRIPT], cwd=ROOT, capture_output=True, text=True)
    assert r.returncode == 2 and "WHEEL OUT_DIR" in r.stderr


LDD = """\tlinux-vdso.so.1 (0x00007ffd)
\tlibMLIR.so.22.1 => not found
\tlibLLVM.so.22.1 => /usr/lib/llvm-22/lib/libLLVM.so.22.1 (0x00007f)
\tlibyaml-cpp.so.0.7 => /lib/x86_64-linux-gnu/libyaml-cpp.so.0.7 (0x00007f)
\tlibstdc++.so.6 => /lib/x86_64-linux-gnu/libstdc++.so.6 (0x00007f)
\t/lib64/ld-linux-x86-64.so.2 (0x00007f)
"""


def test_ldd_parsing_and_forbidden_libraries():
    deps = wheelcheck.parse_ldd(LDD)
    assert [d[0] for d in deps] == ["libMLIR.so.22.1", "libLLVM.so.22.1", "libyaml-cpp.so.0.7",
                                    "libstdc++.so.6", "/lib64/ld-linux-x86-64.so.2"]
    problems = wheelcheck.ldd_problems(deps)
    assert "libMLIR.so.22.1 not found" in problems
    assert sum("needs" in p for p in problems) == 3  # MLIR, LLVM, yaml-cpp
    clean = wheelcheck.parse_ldd("\tlibc.so.6 => /lib/x86_64-linux-gnu/libc.so.6 (0x1)\n"
                                 "\tstatically linked\n")
    assert wheelcheck.ldd_problems(clean) == []
    for name in ("libz3.so.4", "libicuuc.so.72", "libxml2.so.2"):
        assert wheelcheck.ldd_problems([(name, "/x/" + name, False)])


def test_ldd_command_on_a_folder(tmp_path, capsys):
    assert wheelcheck.main(["ldd", str(tmp_path)]) == 1  # no ELF
    shutil.copy(sys.executable, tmp_path / "python")
    if not wheelcheck.is_elf(str(tmp_path / "python")):
        pytest.skip("the interpreter is not an ELF file here")
    rc = wheelcheck.main(["ldd", str(tmp_path), "--json", str(tmp_path / "ldd.json")])
    assert "RESULT:" in capsys.readouterr().out
    report = json.loads((tmp_path / "ldd.json").read_text())
    assert report[0]["file"] == "python" and rc == (1 if report[0]["problems"] else 0)


def test_heldout_pair_spec_and_options(tmp_path):
    pair = heldout_measure.load_pair("sub-wave-1")
    spec = heldout_measure.run_spec(pair, str(tmp_path))
    assert [k["kernel"] for k in spec["kernels"]] == ["_rms_norm_forward_kernel", "_triton_rope"]
    assert all(os.path.isabs(k["module"]) and os.path.exists(k["module"])
               for k in spec["kernels"])
    text = heldout_measure.hfuse_text(heldout_measure.hfuse_options(pair, "r.json", "C", "/p"))
    assert text == ("strategy=auto kernels=_rms_norm_forward_kernel,_triton_rope "
                    "blocks=256,128 grids=64,64 smem=32,0 measure=r.json measure-top=3 "
                    "cache=C ptxas=/p")
    assert wheelcheck.ptx_isa(spec["kernels"][0]["module"]) == "8.8"


@pytest.mark.parametrize("messages,decision,problem", [
    (["remark: hfuse: chose interleave 1:8: predicted 6.6 ms vs 7.4 ms apart (1.13x); x; "
      "measured 5.9 ms vs 7.4 ms apart (1.25x; apart: serial 7.6), outputs bit-identical to "
      "the kernels apart; 3 of 16 candidates measured"], "fuse: interleave 1:8", None),
    (["remark: hfuse: chose thread split 2x256+128: measured 0.0065 ms vs 0.0072 ms apart; "
      "cached decision from 'c.json'"], "fuse: thread split 2x256+128 (cached)", None),
    (["error: hfuse: not fusing: no candidate measured is 1% faster than running the kernels "
      "apart (best apart: 0.0072 ms, graph)", "note: thread split: 0.0080 ms"], "decline", None),
    (["remark: hfuse: chose thread split 256+128: predicted 1 ms vs 2 ms apart (2.00x); "
      "model's choice, unmeasured: CUDA driver libcuda.so.1 not found"], None,
     "not measured: CUDA driver libcuda.so.1 not found"),
    (["error: something else"], None, "error: something else"),
])
def test_heldout_classify(messages, decision, problem):
    assert heldout_measure.classify(messages) == (decision, problem)


def test_summary(tmp_path):
    (tmp_path / "0-setup").mkdir()
    (tmp_path / "0-setup" / "env.json").write_text(json.dumps({
        "nvidia_smi_L": "GPU 0: NVIDIA H100 80GB HBM3 (UUID: x)", "python": "3.12.3",
        "torch": "2.11.0", "torch_cuda": "13.0", "triton": "3.6.0", "numpy": "2.3",
        "cupy": "13", "PTXAS": "/site/triton/backends/nvidia/bin/ptxas",
        "PTXAS_version": "12.8", "torch_device": {"name": "NVIDIA H100 80GB HBM3"},
        "warnings": ["nvcc is still on PATH"]}))
    (tmp_path / "b-heldout-measure").mkdir()
    (tmp_path / "b-heldout-measure" / "details.md").write_text("pair details\n")
    (tmp_path / "results.tsv").write_text("0\tPASS\t12\tok\nb\tFAIL\t3\tbad | pipe\n")
    text = wheelcheck.build_summary(str(tmp_path), command="bash x.sh W OUT")
    assert text.startswith("# The gpuopt wheel on a GPU machine without LLVM/MLIR or the CUDA "
                           "toolkit: NVIDIA H100 80GB HBM3")
    assert "| 0 | install, environment, libraries, tools | **PASS** | 12 | ok |" in text
    assert "| b | strategy=auto measure= on a held-out pair | **FAIL** | 3 | bad / pipe |" in text
    assert "| a |" in text and "not run" in text
    assert "## b. strategy=auto measure= on a held-out pair\n\npair details" in text
    assert "`triton/backends/nvidia/bin/ptxas` (12.8)" in text
    assert "- Note: nvcc is still on PATH" in text


def test_gpu_dialect_report(tmp_path):
    log = tmp_path / "log.txt"
    log.write_text("== 5. block scheduling\nblocks 528\n== 6. registers and times\n"
                   "device: H100\n  mlir.fused 12 1024 5.2 0.67\n"
                   "run.sh: every output (x: 135000 floats, sums: 528 floats) bit-identical to "
                   "the MLIR kernels run apart: nvcc's apart, and fused\n"
                   "  logistic against numpy: 135000 floats, bit-identical\n"
                   "  blocksum against numpy: max abs error 2.4e-06 over 528 sums\n"
                   "== host executables: skipped: no mlir-opt-22\n")
    assert wheelcheck.main(["gpu-dialect-report", str(log), str(tmp_path)]) == 0
    details = (tmp_path / "details.md").read_text()
    assert "bit-identical" in details and "mlir.fused 12" in details
    log.write_text(log.read_text() + "DIFFER: mlir.fused.x and mlir.x\n")
    assert wheelcheck.main(["gpu-dialect-report", str(log), str(tmp_path)]) == 1


def test_helpers_import_without_gpu_packages():
    for name in ("compiled_program", "triton_fuse_check", "gpu_dialect_pair"):
        __import__(name)
