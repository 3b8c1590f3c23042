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
# usage: utils/run-example.sh [PTX_FILE]
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/bootstrap.sh"
log=$(mktemp)
echo "=== building gpu-opt in $BUILD_DIR (log: $log)"
gpuopt_build >"$log" 2>&1 || {
  tail -n 40 "$log"
  echo "run-example.sh: building gpu-opt failed (the whole log: $log)" >&2
  exit 1
}
rm -f "$log"

input=${1:-$GPUOPT_ROOT/test/corpus/nvcc/sha256d.ptx}
out=$BUILD_DIR/example
mkdir -p "$out"
bin=$BUILD_DIR/bin

echo "=== 1. gpu dialect in, fused and probed PTX and cubin out (examples/gpu-dialect)"
if nvidia-smi -L 2>/dev/null | grep -q GPU; then
  gpuopt_install_pytest # numpy (and matplotlib) for comparing and analysing
fi
BIN=$bin bash "$GPUOPT_ROOT/examples/gpu-dialect/run.sh" all "$out/gpu-dialect"

echo "=== 2. PTX round trip: $input"
"$bin/gpu-translate" --import-ptx "$input" -o "$out/kernel.mlir"
"$bin/gpu-translate" --export-ptx "$out/kernel.mlir" -o "$out/kernel.ptx"
"$bin/gpu-translate" --export-cubin --chip=sm_90a "$out/kernel.mlir" -o "$out/kernel.cubin"
"$PTXAS" -arch=sm_90a "$input" -o "$out/original.cubin"
python3 "$GPUOPT_ROOT/utils/compare-cubin-text.py" "$out/original.cubin" "$out/kernel.cubin"
echo "OK: $input imported ($(wc -l <"$out/kernel.mlir") lines of MLIR), exported" \
  "and assembled (ptxas -arch=sm_90a, $PTXAS) to $out/kernel.cubin;" \
  "its code sections are identical to the original's."
