#!/usr/bin/env bash
# Kernels whose threads leave before their block's barriers (early_exit.cu),
# fused by thread split (with and without replicas), interleave (a part
# smaller than the fused block) and dynamic dispatch:
# each fused kernel must finish (a hang is killed after 60 s and reported)
# and give outputs bit-identical to the kernels run apart.
#
# usage: run-early-exit.sh OUT_DIR   ($BIN: the folder with gpu-opt and gpu-run)
set -euo pipefail
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
OUT=$1
mkdir -p "$OUT"
BIN=${BIN:-}
run() { "${BIN:+$BIN/}$@"; }
PTX=$HERE/early_exit.ptx

# 64 blocks of 256 threads, 200 of which stay; 100 blocks of 128 threads
# over 12763 values (the last block's 37 last threads leave).
REVERSE=(--arg buf:f32:16384:out --arg buf:f32:16384:random:1 --arg scalar:s32:200)
SCAN=(--arg buf:u32:12800:out --arg buf:u32:12800:random:2 --arg scalar:s32:12763)
SCALE=(--arg buf:f32:16384:out --arg buf:f32:16384:random:3 --arg scalar:f32:1.5)
run gpu-run "$PTX" --kernel early_exit_reverse --grid 64 --block 256 "${REVERSE[@]}" \
  --out 0:"$OUT/early_exit_reverse.apart" --repeat 0 >/dev/null
run gpu-run "$PTX" --kernel early_exit_scan --grid 100 --block 128 "${SCAN[@]}" \
  --out 0:"$OUT/early_exit_scan.apart" --repeat 0 >/dev/null
run gpu-run "$PTX" --kernel scale_rows --grid 64 --block 256 "${SCALE[@]}" \
  --out 0:"$OUT/scale_rows.apart" --repeat 0 >/dev/null

# name, kernels, options
check() {
  local name=$1 kernels=$2 options=$3
  local args=() outs=() index=0 k
  run gpu-opt "$PTX" -o "$OUT/$name.ptx" --manifest "$OUT/$name.json" \
    --hfuse="kernels=$kernels $options" 2>/dev/null
  for k in ${kernels//,/ }; do
    case $k in
      early_exit_reverse) args+=("${REVERSE[@]}") ;;
      early_exit_scan) args+=("${SCAN[@]}") ;;
      scale_rows) args+=("${SCALE[@]}") ;;
    esac
    outs+=(--out "$index:$OUT/$name.$k")
    index=$((index + 3))
  done
  local status=0
  timeout 60 "${BIN:+$BIN/}gpu-run" "$OUT/$name.ptx" --manifest "$OUT/$name.json" \
    "${args[@]}" "${outs[@]}" --repeat 0 >/dev/null || status=$?
  if [ "$status" = 124 ]; then
    echo "run-early-exit.sh: $name: did not finish in 60 s"
    return 1
  fi
  [ "$status" = 0 ]
  for k in ${kernels//,/ }; do
    cmp "$OUT/$k.apart" "$OUT/$name.$k"
  done
  echo "run-early-exit.sh: $name: finished, bit-identical to the kernels apart"
}

check thread early_exit_reverse,scale_rows \
  "strategy=thread blocks=256,256 grids=64,64"
check thread_both early_exit_reverse,early_exit_scan \
  "strategy=thread blocks=256,128 grids=64,100"
check thread_replicas early_exit_scan,early_exit_reverse \
  "strategy=thread blocks=128,256 grids=100,64 replicas=2,1"
check interleave early_exit_scan,scale_rows \
  "strategy=interleave blocks=128,256 grids=100,64"
check dynamic early_exit_scan,early_exit_reverse \
  "strategy=dynamic blocks=128,256 grids=100,64"
