#!/usr/bin/env bash
# Builds gpu-opt, installs it into the build folder, builds examples/embed
# against the installed package, and runs every test: lit + FileCheck (with
# the C++ unit tests), then the Python tests of the gpuopt package (python/, installed
# with pip into a fresh virtualenv, its command line checked) and of
# benchmarks/ with pytest; then builds the self-contained wheel
# (utils/build-wheel.sh) and checks it in fresh virtualenvs with LLVM and
# the CUDA toolkit hidden (utils/check-wheel.sh). Exits non-zero on any failure. Tests that need a GPU are marked
# (`REQUIRES: cuda`, pytest skips) and skip without one.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/bootstrap.sh"
gpuopt_build
# gpu-opt as a library: installed, and an out-of-tree tool built against it.
gpuopt_build_embed
# The self-contained wheel, as users install it: built from the same objects,
# installed for the stable ABI (3.12) and a version-specific build (this
# python3), its outputs compared with the developer build's.
bash "$GPUOPT_ROOT/utils/build-wheel.sh" "$BUILD_DIR/dist"
wheel_pythons=(python3)
if py312=$(command -v python3.12 2>/dev/null) && "$py312" -c '' 2>/dev/null; then
  wheel_pythons+=("$py312")
elif command -v pyenv >/dev/null && v=$(pyenv versions --bare | grep -E '^3\.12\.[0-9]+$' | tail -n 1) &&
  [ -n "$v" ]; then
  wheel_pythons+=("$(pyenv root)/versions/$v/bin/python3")
fi
bash "$GPUOPT_ROOT/utils/check-wheel.sh" "$BUILD_DIR"/dist/gpuopt-*.whl "$BUILD_DIR/bin" "${wheel_pythons[@]}"
# The Python package installed as users install it, into a fresh virtualenv
# whose python3 comes first on PATH: lit tests read gpu-run's .npy traces
# with its numpy, and the benchmarks' scripts import the package.
venv_bin=$(gpuopt_python_venv)
export PATH="$venv_bin:$PATH"
python3 -m gpuopt.verify --help >/dev/null
"$LLVM_PREFIX/bin/lit" -sv "$BUILD_DIR/test"
cd "$GPUOPT_ROOT"
python3 -m pytest -q python/tests benchmarks/fusion benchmarks/inductor benchmarks/probes benchmarks/heldout \
  benchmarks/workloads benchmarks/wheel
