#!/usr/bin/env bash
# Regenerates the LLVM NVPTX corpus: test/corpus/nvptx/<name>.ptx from
# test/corpus/nvptx/src/<name>.mlir (MLIR gpu dialect) and <name>.ll (LLVM IR
# with NVPTX intrinsics), targeting sm_90a with LLVM/MLIR 22.
#
#   .mlir: mlir-opt (gpu.module -> NVVM/LLVM dialect) -> unwrap gpu.module
#          -> mlir-translate --mlir-to-llvmir -> opt -O3 -> llc
#   .ll:   opt -O3 -> llc
#
# Usage: test/corpus/regenerate-nvptx.sh [OUT_DIR]   (default: test/corpus/nvptx)
# Environment: LLVM_BIN (LLVM/MLIR tools), MCPU (default sm_90a),
#   PTX_ATTR (default +ptx80), PTXAS (default ptxas; every output is checked
#   with it when it is found, skip with CHECK_PTXAS=0).
set -euo pipefail

LLVM_BIN=${LLVM_BIN:-/usr/lib/llvm-22/bin}
MCPU=${MCPU:-sm_90a}
PTX_ATTR=${PTX_ATTR:-+ptx80}
PTXAS=${PTXAS:-ptxas}
CHECK_PTXAS=${CHECK_PTXAS:-1}
TRIPLE=nvptx64-nvidia-cuda

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
src_dir=$here/nvptx/src
out_dir=${1:-$here/nvptx}

for tool in mlir-opt mlir-translate opt llc; do
  if [[ ! -x $LLVM_BIN/$tool ]]; then
    echo "error: $LLVM_BIN/$tool not found (set LLVM_BIN)" >&2
    exit 1
  fi
done

# gpu.module contents -> NVVM + LLVM dialect.  math ops go to LLVM intrinsics
# (not libdevice calls, which would leave unresolved externs in the PTX).
MLIR_PIPELINE='builtin.module(gpu.module(convert-scf-to-cf,convert-math-to-llvm,convert-gpu-to-nvvm,canonicalize,cse),reconcile-unrealized-casts)'

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
mkdir -p "$out_dir"

opt_and_llc() { # in.ll out.ptx
  "$LLVM_BIN/opt" -mtriple=$TRIPLE -mcpu="$MCPU" -O3 -S "$1" -o "$tmp/opt.ll"
  "$LLVM_BIN/llc" -mtriple=$TRIPLE -mcpu="$MCPU" -mattr="$PTX_ATTR" -O3 "$tmp/opt.ll" -o "$2"
}

shopt -s nullglob
count=0
for src in "$src_dir"/*.mlir "$src_dir"/*.ll; do
  name=$(basename "${src%.*}")
  out=$out_dir/$name.ptx
  case $src in
    *.mlir)
      "$LLVM_BIN/mlir-opt" "$src" -pass-pipeline="$MLIR_PIPELINE" -o "$tmp/lowered.mlir"
      # mlir-translate skips gpu.module bodies, so hoist the (single) lowered
      # gpu.module's ops into the top-level module: drop its opening line and
      # its closing brace (the only two-space-indented lines of that shape).
      if [[ $(grep -c '^  gpu\.module ' "$tmp/lowered.mlir") -ne 1 ]]; then
        echo "error: $src must contain exactly one gpu.module" >&2
        exit 1
      fi
      sed -e '/^  gpu\.module @[A-Za-z0-9_$.]*.*{$/d' -e '/^  }$/d' "$tmp/lowered.mlir" > "$tmp/flat.mlir"
      "$LLVM_BIN/mlir-translate" --mlir-to-llvmir "$tmp/flat.mlir" -o "$tmp/in.ll"
      if ! grep -q '^define ptx_kernel ' "$tmp/in.ll"; then
        echo "error: no kernel in the LLVM IR translated from $src" >&2
        exit 1
      fi
      opt_and_llc "$tmp/in.ll" "$out"
      ;;
    *.ll)
      opt_and_llc "$src" "$out"
      ;;
  esac
  if [[ $CHECK_PTXAS != 0 ]] && command -v "$PTXAS" >/dev/null 2>&1; then
    "$PTXAS" -arch="$MCPU" "$out" -o "$tmp/check.cubin"
  fi
  echo "wrote $out"
  count=$((count + 1))
done

if [[ $count -eq 0 ]]; then
  echo "error: no sources in $src_dir" >&2
  exit 1
fi
if [[ $CHECK_PTXAS != 0 ]] && ! command -v "$PTXAS" >/dev/null 2>&1; then
  echo "note: $PTXAS not found, outputs were not checked with ptxas" >&2
fi
echo "$count PTX files in $out_dir"
