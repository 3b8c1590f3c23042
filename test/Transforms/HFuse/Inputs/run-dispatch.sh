#!/usr/bin/env bash
# Counter-based block dispatch on a GPU: fuses scale, tile and saxpy_once
# (three kernels, each run alone as the reference) by dynamic and sm_aware
# dispatch with 1 to 3 units per ticket, runs each fused kernel twice in a
# row on one module instance (the second launch finds the counters the first
# one's last block reset) and compares every output of both launches byte
# for byte with the kernels run apart.
#
# scale gets as many elements as threads: none of its threads leaves before
# its barrier (run-early-exit.sh runs kernels whose threads do).
#
# usage: run-dispatch.sh OUT_DIR   ($BIN: the folder with gpu-opt and gpu-run)
# On a machine without gpu-opt, DISPATCH_SKIP_FUSE=1 reuses the fused kernels
# that DISPATCH_FUSE_ONLY=1 made in OUT_DIR elsewhere (without a GPU).
set -euo pipefail
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
OUT=$1
mkdir -p "$OUT"
BIN=${BIN:-}
run() { "${BIN:+$BIN/}$@"; }

SCALE=(--arg buf:u32:128000:out --arg scalar:u32:128000)
TILE=(--arg buf:u32:32:out)
SAXPY=(--arg buf:f32:102400:random:1 --arg buf:f32:102400:random:2
       --arg scalar:f32:0.5 --arg scalar:s32:100000)
if [ "${DISPATCH_FUSE_ONLY:-0}" != 1 ]; then
  run gpu-run "$HERE/scale.ptx" --grid 1000 --block 128 "${SCALE[@]}" \
    --out 0:"$OUT/scale.apart" --repeat 0 >/dev/null
  run gpu-run "$HERE/tile.ptx" --grid 8,4 --block 16,4 --smem 64 "${TILE[@]}" \
    --out 0:"$OUT/tile.apart" --repeat 0 >/dev/null
  run gpu-run "$HERE/grid_stride.ptx" --kernel saxpy_once --grid 400 --block 256 \
    "${SAXPY[@]}" --out 0:"$OUT/saxpy.apart" --repeat 0 >/dev/null
fi

# name, inputs, kernels, options
check() {
  local name=$1 kernels=$2 options=$3
  local inputs=() args=() outs=() k
  for k in ${kernels//,/ }; do
    case $k in
      scale) inputs+=("$HERE/scale.ptx") ;;
      tile) inputs+=("$HERE/tile.ptx") ;;
      saxpy_once) inputs+=("$HERE/grid_stride.ptx") ;;
    esac
  done
  if [ "${DISPATCH_SKIP_FUSE:-0}" != 1 ]; then
    run gpu-opt "${inputs[@]}" -o "$OUT/$name.ptx" --manifest "$OUT/$name.json" \
      --hfuse="kernels=$kernels $options" 2>/dev/null
  fi
  if [ "${DISPATCH_FUSE_ONLY:-0}" = 1 ]; then
    echo "run-dispatch.sh: $name: fused"
    return
  fi
  local index=0 launch
  for k in ${kernels//,/ }; do
    case $k in
      scale) args+=("${SCALE[@]}"); outs+=("$index:scale"); index=$((index + 2)) ;;
      tile) args+=("${TILE[@]}"); outs+=("$index:tile"); index=$((index + 1)) ;;
      saxpy_once) args+=("${SAXPY[@]}"); outs+=("$index:saxpy"); index=$((index + 4)) ;;
    esac
  done
  local cmd=()
  for launch in 1 2; do
    [ "$launch" = 2 ] && cmd+=(+)
    cmd+=("$OUT/$name.ptx" --manifest "$OUT/$name.json" "${args[@]}" --label "$name.$launch")
    for o in "${outs[@]}"; do
      cmd+=(--out "${o%%:*}:$OUT/$name.$launch.${o#*:}")
    done
  done
  run gpu-run "${cmd[@]}" --repeat 0 >/dev/null
  for launch in 1 2; do
    for o in "${outs[@]}"; do
      cmp "$OUT/${o#*:}.apart" "$OUT/$name.$launch.${o#*:}"
    done
  done
  echo "run-dispatch.sh: $name: both launches bit-identical to the kernels apart"
}

check sm_aware_3way scale,tile,saxpy_once \
  "strategy=sm_aware blocks=128,16x4,256 grids=1000,8x4,400 smem=0,64,0 ratio=3,1,2"
check dynamic_3way scale,tile,saxpy_once \
  "strategy=dynamic blocks=128,16x4,256 grids=1000,8x4,400 smem=0,64,0 ratio=3,1,2"
check sm_aware_units3 tile,saxpy_once \
  "strategy=sm_aware units=3 blocks=16x4,256 grids=8x4,400 smem=64,0"
check dynamic_units2 tile,saxpy_once \
  "strategy=dynamic units=2 blocks=16x4,256 grids=8x4,400 smem=64,0"
check sm_aware_ratio_1_8 scale,saxpy_once \
  "strategy=sm_aware units=1 blocks=128,256 grids=1000,400 ratio=1,8"
