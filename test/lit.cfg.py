# lit configuration for gpu-opt's regression tests.
import os
import shutil
import subprocess
import sys

import lit.formats
from lit.llvm import llvm_config
from lit.llvm.subst import ToolSubst

config.name = "gpu-opt"
config.test_format = lit.formats.ShTest(not llvm_config.use_lit_shell)
config.suffixes = [".mlir", ".ptx", ".test"]
config.test_source_root = os.path.dirname(__file__)
config.test_exec_root = os.path.join(config.gpuopt_obj_root, "test")
# The corpus holds test data, not tests; its sources are inputs to generators.
config.excludes = ["corpus", "Inputs", "fuzz-regressions", "lit.cfg.py", "lit.site.cfg.py", "CMakeLists.txt"]

llvm_config.use_default_substitutions()
# Prepend: the project's tools first, then LLVM's (FileCheck, not).
llvm_config.with_environment(
    "PATH", [config.gpuopt_tools_dir, config.llvm_tools_dir], append_path=True)
config.substitutions.append(("%gpuopt_src_root", config.gpuopt_src_root))
config.substitutions.append(("%gpuopt_tools_dir", config.gpuopt_tools_dir))

# %python: use_default_substitutions makes it lit's own interpreter, which
# may lack the tests' Python requirements (requirements-test.txt: numpy, to
# read gpu-run's .npy traces). Prefer the first of python3 on PATH and lit's
# interpreter that imports numpy, resolved to its real executable.
def find_python():
    for candidate in (shutil.which("python3"), sys.executable):
        if not candidate:
            continue
        try:
            out = subprocess.run(
                [candidate, "-c", "import sys, numpy; print(sys.executable)"],
                capture_output=True, text=True, timeout=60)
        except (OSError, subprocess.SubprocessError):
            continue
        if out.returncode == 0 and out.stdout.strip():
            return out.stdout.strip()
    return sys.executable

config.substitutions = [s for s in config.substitutions if s[0] != "%python"]
config.substitutions.append(("%python", '"%s"' % find_python()))

llvm_config.add_tool_substitutions(
    ["gpu-opt", "gpu-translate"], [config.gpuopt_tools_dir])

# ptxas: from $PTXAS, PATH or $CUDA_HOME/bin (same search as gpu-translate).
def find_ptxas():
    candidates = [os.environ.get("PTXAS"), shutil.which("ptxas")]
    for var in ("CUDA_HOME", "CUDA_PATH"):
        if os.environ.get(var):
            candidates.append(os.path.join(os.environ[var], "bin", "ptxas"))
    candidates.append("/usr/local/cuda/bin/ptxas")
    for c in candidates:
        if c and os.path.isfile(c) and os.access(c, os.X_OK):
            return c
    return None

ptxas = find_ptxas()
if ptxas:
    config.available_features.add("ptxas")
    config.substitutions.append(("%ptxas", ptxas))
    config.environment["PTXAS"] = ptxas

# A GPU is present when nvidia-smi lists one; tests marked `REQUIRES: cuda`
# run only then.
smi = shutil.which("nvidia-smi")
if smi:
    try:
        out = subprocess.run([smi, "-L"], capture_output=True, text=True,
                             timeout=30).stdout
        if "GPU" in out:
            config.available_features.add("cuda")
    except (OSError, subprocess.SubprocessError):
        pass

# The runtime: gpu-run, its GoogleTest unit tests, and the stand-in CUDA
# driver that lets gpu-run's tests run without a GPU (unittests/Runtime).
llvm_config.add_tool_substitutions(["gpu-run"], [config.gpuopt_tools_dir])
config.substitutions.append(
    ("%gpuopt_runtime_unittests",
     os.path.join(config.gpuopt_obj_root, "unittests", "Runtime",
                  "GPUOptRuntimeTests")))
config.substitutions.append(
    ("%fakecuda",
     os.path.join(config.gpuopt_obj_root, "unittests", "Runtime",
                  "libfakecuda_emulated.so")))

# Unit tests of the dialect and the libraries the passes use
# (unittests/Analysis, Dialect, Target, Transforms).
for name, folder, binary in (
        ("analysis", "Analysis", "GPUOptAnalysisTests"),
        ("dialect", "Dialect", "GPUOptDialectTests"),
        ("target", "Target", "GPUOptTargetTests"),
        ("transforms", "Transforms", "GPUOptTransformsTests")):
    config.substitutions.append(
        ("%gpuopt_" + name + "_unittests",
         os.path.join(config.gpuopt_obj_root, "unittests", folder, binary)))

# gpu-opt as a library (README: Using gpu-opt as a library). The plugin,
# loaded into upstream's mlir-opt of the same LLVM release: `mlir-opt-22` on
# PATH or mlir-opt beside FileCheck (test/Plugin).
config.substitutions.append(("%gpuopt_plugin", config.gpuopt_plugin))
mlir_opt = shutil.which("mlir-opt-22")
if not mlir_opt:
    candidate = os.path.join(config.llvm_tools_dir, "mlir-opt")
    if os.access(candidate, os.X_OK):
        mlir_opt = candidate
if mlir_opt:
    config.available_features.add("mlir-opt-22")
    llvm_config.add_tool_substitutions(
        [ToolSubst("mlir-opt-22", command=mlir_opt)])

# The installed package and the out-of-tree consumer built against it
# (examples/embed), both made by utils/run-tests.sh (test/Examples).
installed_plugin = os.path.join(
    config.gpuopt_install_dir, "lib", os.path.basename(config.gpuopt_plugin))
if os.path.isfile(installed_plugin):
    config.available_features.add("gpuopt-installed")
    config.substitutions.append(("%gpuopt_installed_plugin", installed_plugin))
embed_opt = os.path.join(config.gpuopt_embed_dir, "embed-opt")
if os.access(embed_opt, os.X_OK):
    config.available_features.add("embed-example")
    config.substitutions.append(("%embed_opt", embed_opt))
