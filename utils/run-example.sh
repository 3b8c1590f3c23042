#!/usr/bin/env bash
# The main job on the bundled examples, on a fresh machine (bootstrap.sh
# installs what is missing and builds gpu-opt):
#
#  1. examples/gpu-dialect: two kernels in MLIR's gpu dialect, as an ML
#     compiler hands them over (a compute-bound and a memory-bound one),
#     lowered in gpu-opt through NVVM and LLVM's NVPTX backend, fused as the
#     fusion model chooses (a thread split), probed for block scheduling,
#     written as PTX and as a cubin; the fused kernel's launch manifest and
#     ptxas's report.
#     With a GPU (nvidia-smi -L lists one), the kernels run apart and fused
#     on the same random inputs, outputs compared bit for bit, and timed
#     (examples/gpu-dialect/run.sh says how).
#  2. A PTX round trip: import a real PTX kernel (nvcc's build of
#     benchmarks/kernels/sha256d.cu, or the PTX file given), export it back,
#     assemble both with ptxas and check that the machine code is identical.
#
# Where the tools come from: $GPUOPT_BIN_DIR when set; else, on a machine
# without LLVM/MLIR 22 where python3 has the self-contained gpuopt wheel
# installed (utils/build-wheel.sh), the wheel's tools, with the ptxas they
# find (the CUDA toolkit's, else Triton's); else gpu-opt built here.
#
# usage: utils/run-example.sh [PTX_FILE]
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/bootstrap.sh"
wheel_bin=$(python3 -c 'from gpuopt._tools import BIN_DIR, bundled_tool
assert bundled_tool("gpu-opt"); print(BIN_DIR)' 2>/dev/null || true)
if [ -n "${GPUOPT_BIN_DIR:-}" ]; then
  bin=$GPUOPT_BIN_DIR
  echo "=== gpu-opt from \$GPUOPT_BIN_DIR: $bin"
elif [ -n "$wheel_bin" ] && [ ! -d "$LLVM_PREFIX/lib/cmake/mlir" ]; then
  bin=$wheel_bin
  echo "=== gpu-opt from the installed gpuopt wheel: $bin"
else
  log=$(mktemp)
  echo "=== building gpu-opt in $BUILD_DIR (log: $log)"
  gpuopt_build >"$log" 2>&1 || {
    tail -n 40 "$log"
    echo "run-example.sh: building gpu-opt failed (the whole log: $log)" >&2
    exit 1
  }
  rm -f "$log"
  bin=$BUILD_DIR/bin
fi
if [ -z "${PTXAS:-}" ]; then
  # The ptxas gpu-opt itself runs (the toolkit's, else a Python package's).
  PTXAS=$(GPUOPT_PYTHON_PATH=$(python3 -c 'import os, sys
print(os.pathsep.join(p for p in sys.path if p))') \
    "$bin/gpu-opt" --print-ptxas 2>/dev/null || true)
  [ -n "$PTXAS" ] || PTXAS=$(gpuopt_find_ptxas)
  export PTXAS
fi
echo "=== ptxas: $PTXAS ($("$PTXAS" --version | grep -o 'release [0-9.]*'))"

input=${1:-$GPUOPT_ROOT/test/corpus/nvcc/sha256d.ptx}
out=${BUILD_DIR}/example
mkdir -p "$out"

echo "=== 1. gpu dialect in, fused and probed PTX and cubin out (examples/gpu-dialect)"
if nvidia-smi -L 2>/dev/null | grep -q GPU; then
  gpuopt_install_pytest # numpy (and matplotlib) for comparing and analysing
fi
BIN=$bin bash "$GPUOPT_ROOT/examples/gpu-dialect/run.sh" all "$out/gpu-dialect"

echo "=== 2. PTX round trip: $input"
"$bin/gpu-translate" --import-ptx "$input" -o "$out/kernel.mlir"
"$bin/gpu-translate" --export-ptx "$out/kernel.mlir" -o "$out/kernel.ptx"
"$bin/gpu-translate" --export-cubin --chip=sm_90a "$out/kernel.mlir" -o "$out/kernel.cubin"
# An older ptxas (Triton's, CUDA 12.8) gets the .version it takes, as
# gpu-opt gives it (the kernel must use nothing newer).
max_isa=$("$bin/gpu-opt" --print-ptxas-isa 2>/dev/null || true)
original=$input
if [ -n "$max_isa" ]; then
  original=$out/original.ptx
  python3 - "$input" "$original" "$max_isa" <<'PY'
import re, sys
text = open(sys.argv[1]).read()
m = re.search(r"^\.version\s+(\d+)\.(\d+)", text, re.M)
want, have = (int(m.group(1)), int(m.group(2))), tuple(map(int, sys.argv[3].split(".")))
if want > have:
    text = text[:m.start()] + f".version {sys.argv[3]}" + text[m.end():]
open(sys.argv[2], "w").write(text)
PY
fi
"$PTXAS" -arch=sm_90a "$original" -o "$out/original.cubin"
python3 "$GPUOPT_ROOT/utils/compare-cubin-text.py" "$out/original.cubin" "$out/kernel.cubin"
echo "OK: $input imported ($(wc -l <"$out/kernel.mlir") lines of MLIR), exported" \
  "and assembled (ptxas -arch=sm_90a, $PTXAS) to $out/kernel.cubin;" \
  "its code sections are identical to the original's."
