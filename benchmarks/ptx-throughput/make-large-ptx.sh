#!/usr/bin/env bash
# Generates large PTX files for the import/export speed benchmark
# (ptx-throughput); they are not checked in.
#
#   make-large-ptx.sh [--no-ptxas] [OUT_DIR]      (default OUT_DIR: build/large-ptx)
#
#   flash_attn_like.ptx          nvcc -O3 -lineinfo of flash_attn_like.cu: a
#                                template-heavy flash-attention forward pass
#                                (161 kernels, mma.sync m16n8k16, ldmatrix,
#                                cp.async, online softmax), about 28 MB
#   cccl_debug_large.1.O0.ptx    nvcc -G of cccl_debug_large.cu, instantiation
#   cccl_debug_large.2.O0.ptx    sets 1 and 2: CUB collectives and thrust::seq
#                                algorithms over many types, about 8 MB each
#   thrust_sort_scan.O0.ptx      nvcc -G of thrust_sort_scan.cu: thrust::sort,
#                                inclusive_scan and reduce from a host
#                                program, about 9 MB
#
# Then, unless --no-ptxas, each file is assembled with ptxas -arch=sm_90a
# (-g for the -G builds, as utils/check-roundtrip.py does) to check that
# ptxas accepts it, and the seconds are printed. NVCC and PTXAS name the
# tools (default: on PATH, else /usr/local/cuda/bin). nvcc takes about 35 s
# and ptxas about 35 s in all (one core each); the outputs depend on the nvcc
# version.
#
# Measure with:
#   build/bin/ptx-throughput --ptxas /usr/local/cuda/bin/ptxas build/large-ptx
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(cd "$here/../.." && pwd)

run_ptxas=1
if [ "${1:-}" = "--no-ptxas" ]; then
  run_ptxas=0
  shift
fi
out_dir=${1:-$root/build/large-ptx}

find_tool() {
  local name=$1 override=$2
  if [ -n "$override" ]; then
    echo "$override"
  elif command -v "$name" >/dev/null 2>&1; then
    command -v "$name"
  elif [ -x "/usr/local/cuda/bin/$name" ]; then
    echo "/usr/local/cuda/bin/$name"
  else
    echo "error: $name not found (set ${name^^})" >&2
    exit 1
  fi
}
NVCC=$(find_tool nvcc "${NVCC:-}")
if [ $run_ptxas = 1 ]; then
  PTXAS=$(find_tool ptxas "${PTXAS:-}")
fi

mkdir -p "$out_dir"
now() { date +%s.%N; }
seconds() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.1f", b - a }'; }
size_mb() { awk -v n="$(wc -c <"$1")" 'BEGIN { printf "%.1f MB", n / 1e6 }'; }

# name | nvcc flags | ptxas flags
builds=(
  "flash_attn_like.ptx|$here/flash_attn_like.cu -O3 -lineinfo|"
  "cccl_debug_large.1.O0.ptx|$here/cccl_debug_large.cu -G -DCCCL_DEBUG_SET=1|-g"
  "cccl_debug_large.2.O0.ptx|$here/cccl_debug_large.cu -G -DCCCL_DEBUG_SET=2|-g"
  "thrust_sort_scan.O0.ptx|$here/thrust_sort_scan.cu -G|-g"
)

for b in "${builds[@]}"; do
  IFS='|' read -r name nvcc_flags ptxas_flags <<<"$b"
  t0=$(now)
  # shellcheck disable=SC2086
  "$NVCC" -ptx -arch=sm_90a $nvcc_flags -o "$out_dir/$name"
  echo "$name: $(size_mb "$out_dir/$name") ($(wc -c <"$out_dir/$name") bytes), nvcc $(seconds "$t0" "$(now)") s"
done

if [ $run_ptxas = 1 ]; then
  tmp=$(mktemp -d)
  trap 'rm -rf "$tmp"' EXIT
  for b in "${builds[@]}"; do
    IFS='|' read -r name _ ptxas_flags <<<"$b"
    t0=$(now)
    # shellcheck disable=SC2086
    "$PTXAS" -arch=sm_90a $ptxas_flags "$out_dir/$name" -o "$tmp/out.cubin"
    echo "$name: ptxas -arch=sm_90a${ptxas_flags:+ $ptxas_flags} accepts it, $(seconds "$t0" "$(now)") s"
  done
fi
