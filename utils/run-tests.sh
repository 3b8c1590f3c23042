#!/usr/bin/env bash
# Builds gpu-opt and runs every test (lit + FileCheck). Exits non-zero on any
# failure. Tests that need a GPU are marked `REQUIRES: cuda` and skip without
# one.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/bootstrap.sh"
gpuopt_build
"$LLVM_PREFIX/bin/lit" -sv "$BUILD_DIR/test"
