#!/usr/bin/env bash
# The main job on a bundled example: import a real PTX kernel (nvcc's build
# of benchmarks/kernels/sha256d.cu), print it as MLIR, export it back to PTX,
# assemble both with ptxas and check that the machine code is identical.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/bootstrap.sh"
gpuopt_build >/dev/null

input=${1:-$GPUOPT_ROOT/test/corpus/nvcc/sha256d.ptx}
out=$BUILD_DIR/example
mkdir -p "$out"
bin=$BUILD_DIR/bin

echo "== import: $input -> $out/kernel.mlir"
"$bin/gpu-translate" --import-ptx "$input" -o "$out/kernel.mlir"
head -n 24 "$out/kernel.mlir"
echo "   ... ($(wc -l <"$out/kernel.mlir") lines)"

echo "== export: $out/kernel.mlir -> $out/kernel.ptx"
"$bin/gpu-translate" --export-ptx "$out/kernel.mlir" -o "$out/kernel.ptx"

echo "== assemble: ptxas -arch=sm_90a ($PTXAS)"
"$bin/gpu-translate" --export-cubin --chip=sm_90a "$out/kernel.mlir" -o "$out/kernel.cubin"
"$PTXAS" -arch=sm_90a "$input" -o "$out/original.cubin"
python3 "$GPUOPT_ROOT/utils/compare-cubin-text.py" "$out/original.cubin" "$out/kernel.cubin"
echo "OK: $input imported, exported and assembled to $out/kernel.cubin;" \
  "its code sections are identical to the original's."
