#!/usr/bin/env bash
# Regenerates the nvcc-produced PTX corpus in test/corpus/nvcc/ from the
# project's benchmark kernels in benchmarks/kernels/.
#
#   <name>.ptx     -ptx -arch=sm_90a -O3 -lineinfo   (every kernel)
#   <name>.O0.ptx  -ptx -arch=sm_90a -G              (debug builds of a few
#                                                     kernels, so the corpus
#                                                     has .debug_* sections)
#
# Set NVCC to use a compiler other than the nvcc on PATH. The output depends
# on the nvcc version; regenerate all files together.
#
# nvcc records the absolute source path (.file directives, and DW_AT_comp_dir
# inside the byte-encoded .debug_info of -G builds). To keep the corpus
# independent of where the repository is checked out, the sources are
# compiled from a copy in a fixed scratch directory.
set -euo pipefail

NVCC=${NVCC:-nvcc}
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
src_dir=$root/benchmarks/kernels
out_dir=$root/test/corpus/nvcc

# Kernels that also get an unoptimised debug build.
debug_kernels=(reduce_shfl histogram)

scratch=/tmp/gpu-opt-nvcc-corpus
build_dir=$scratch/benchmarks/kernels

shopt -s nullglob
sources=("$src_dir"/*.cu)
if [ ${#sources[@]} -eq 0 ]; then
  echo "error: no .cu files in $src_dir" >&2
  exit 1
fi

rm -rf "$scratch"
trap 'rm -rf "$scratch"' EXIT
mkdir -p "$build_dir" "$out_dir"
cp "${sources[@]}" "$build_dir/"

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
