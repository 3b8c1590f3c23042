#!/usr/bin/env bash
# Regenerates the nvcc-produced PTX corpus in test/corpus/nvcc/ from the
# project's benchmark kernels in benchmarks/kernels/ and the feature sources
# in test/corpus/cuda/ (public-style CUDA: CCCL, TMA, clusters, fp8, inline
# asm as CUTLASS writes it, separate compilation, warp specialisation with
# setmaxnreg as FlashAttention-3 writes it).
#
# From benchmarks/kernels/*.cu:
#   <name>.ptx      -ptx -arch=sm_90a -O3 -lineinfo   (every kernel)
#   <name>.O0.ptx   -ptx -arch=sm_90a -G              (debug builds of a few
#                                                      kernels, so the corpus
#                                                      has .debug_* sections)
# From test/corpus/cuda/*.cu:
#   <name>.O0.ptx   -ptx -arch=sm_90a -G              (the CCCL sources:
#                                                      cub_block, thrust_device)
#   <name>.rdc.ptx  -ptx -arch=sm_90a -O3 -lineinfo -rdc=true
#                                                     (rdc_*: relocatable; the
#                                                      .rdc.ptx name tells
#                                                      utils/check-roundtrip.py
#                                                      to use ptxas -c)
#   <name>.ptx      -ptx -arch=sm_90a -O3 -lineinfo   (all other sources)
#
# Set NVCC to use a compiler other than the nvcc on PATH. The output depends
# on the nvcc version (and, for -G builds, on where the CUDA headers are
# installed: their paths are in the .file directives); regenerate all files
# together.
#
# nvcc records the absolute source path (.file directives, and DW_AT_comp_dir
# inside the byte-encoded .debug_info of -G builds). To keep the corpus
# independent of where the repository is checked out, the sources are
# compiled from a copy in a fixed scratch directory.
#
# nvcc also puts a module id into the names of internal-linkage functions
# (_INTERNAL_<hash>_..., visible as .func names in -G builds). In a file that
# defines no non-template external function, that id changes from run to
# run; every source here defines a non-template kernel or device function,
# which keeps the output reproducible.
set -euo pipefail

NVCC=${NVCC:-nvcc}
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
src_dir=$root/benchmarks/kernels
feature_dir=$root/test/corpus/cuda
out_dir=$root/test/corpus/nvcc

# Benchmark kernels that also get an unoptimised debug build.
debug_kernels=(reduce_shfl histogram)
# Feature sources built only with -G.
debug_features=(cub_block thrust_device)

scratch=/tmp/gpu-opt-nvcc-corpus
build_dir=$scratch/benchmarks/kernels
feature_build_dir=$scratch/test/corpus/cuda

shopt -s nullglob
sources=("$src_dir"/*.cu)
features=("$feature_dir"/*.cu)
if [ ${#sources[@]} -eq 0 ]; then
  echo "error: no .cu files in $src_dir" >&2
  exit 1
fi
if [ ${#features[@]} -eq 0 ]; then
  echo "error: no .cu files in $feature_dir" >&2
  exit 1
fi

rm -rf "$scratch"
trap 'rm -rf "$scratch"' EXIT
mkdir -p "$build_dir" "$feature_build_dir" "$out_dir"
cp "${sources[@]}" "$build_dir/"
cp "${features[@]}" "$feature_build_dir/"

for src in "${sources[@]}"; do
  name=$(basename "$src" .cu)
  echo "nvcc -O3: $name"
  (cd "$build_dir" &&
    "$NVCC" -ptx -arch=sm_90a -O3 -lineinfo "$name.cu" -o "$out_dir/$name.ptx")
done

for name in "${debug_kernels[@]}"; do
  echo "nvcc -G:  $name"
  (cd "$build_dir" &&
    "$NVCC" -ptx -arch=sm_90a -G "$name.cu" -o "$out_dir/$name.O0.ptx")
done

is_debug_feature() {
  local d
  for d in "${debug_features[@]}"; do
    [ "$d" = "$1" ] && return 0
  done
  return 1
}

for src in "${features[@]}"; do
  name=$(basename "$src" .cu)
  if is_debug_feature "$name"; then
    echo "nvcc -G:  $name"
    (cd "$feature_build_dir" &&
      "$NVCC" -ptx -arch=sm_90a -G "$name.cu" -o "$out_dir/$name.O0.ptx")
  elif [[ $name == rdc_* ]]; then
    echo "nvcc -O3 -rdc=true: $name"
    (cd "$feature_build_dir" &&
      "$NVCC" -ptx -arch=sm_90a -O3 -lineinfo -rdc=true "$name.cu" -o "$out_dir/$name.rdc.ptx")
  else
    echo "nvcc -O3: $name"
    (cd "$feature_build_dir" &&
      "$NVCC" -ptx -arch=sm_90a -O3 -lineinfo "$name.cu" -o "$out_dir/$name.ptx")
  fi
done
