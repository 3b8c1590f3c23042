#!/usr/bin/env bash
# Builds gpu-opt, installs it into the build folder, builds examples/embed
# against the installed package, and runs every test: lit + FileCheck (with
# the C++ unit tests), then the Python tests of the gpuopt package (python/, installed
# with pip into a fresh virtualenv, its command line checked) and of
# benchmarks/ with pytest. Exits non-zero on any failure. Tests that need a GPU are marked
# (`REQUIRES: cuda`, pytest skips) and skip without one.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/bootstrap.sh"
gpuopt_build
# gpu-opt as a library: installed, and an out-of-tree tool built against it.
gpuopt_build_embed
# The Python package installed as users install it, into a fresh virtualenv
# whose python3 comes first on PATH: lit tests read gpu-run's .npy traces
# with its numpy, and the benchmarks' scripts import the package.
venv_bin=$(gpuopt_python_venv)
export PATH="$venv_bin:$PATH"
python3 -m gpuopt.verify --help >/dev/null
"$LLVM_PREFIX/bin/lit" -sv "$BUILD_DIR/test"
cd "$GPUOPT_ROOT"
python3 -m pytest -q python/tests benchmarks/fusion benchmarks/inductor benchmarks/probes benchmarks/heldout \
  benchmarks/workloads
