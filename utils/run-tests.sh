#!/usr/bin/env bash
# Builds gpu-opt and runs every test: lit + FileCheck (with the C++ unit
# tests), then the Python tests of the tools in python/ and benchmarks/ with
# pytest. Exits non-zero on any failure. Tests that need a GPU are marked
# (`REQUIRES: cuda`, pytest skips) and skip without one.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/bootstrap.sh"
gpuopt_build
# numpy first: lit tests read gpu-run's .npy traces with it.
gpuopt_install_pytest
"$LLVM_PREFIX/bin/lit" -sv "$BUILD_DIR/test"
cd "$GPUOPT_ROOT"
python3 -m pytest -q python benchmarks/fusion benchmarks/inductor benchmarks/probes
