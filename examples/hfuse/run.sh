#!/usr/bin/env bash
# Horizontal fusion end to end on two bundled kernels: blake2b hashing
# (compute-bound) and a shared-memory histogram (memory-bound).
#
#  1. fuse them with gpu-opt (block interleave; `strategy=auto` asks the model);
#  2. run each alone and the fused kernel with gpu-run on the same seeded
#     inputs and compare every output byte for byte;
#  3. time them apart (serial, two streams, a CUDA graph) and fused, side by
#     side in one gpu-run process.
#
# usage: examples/hfuse/run.sh [OUT_DIR]   (default build/hfuse-example)
# $BIN names the folder with gpu-opt and gpu-run (default build/bin). Steps 2
# and 3 need a GPU; on a machine without gpu-opt, HFUSE_SKIP_FUSE=1 reuses
# OUT_DIR/fused.ptx and fused.json made elsewhere.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../.."
BIN=${BIN:-build/bin}
OUT=${1:-build/hfuse-example}
mkdir -p "$OUT"

NONCES=1048576            # blake2b: one nonce per thread, 8 u64 of hash each
N=16777216                # histogram: 16M values in 1024 bins
BLAKE=(--arg buf:u64:10:random:9 --arg scalar:u32:0 --arg scalar:u32:$NONCES
       --arg buf:u64:$((NONCES * 8)):out)
HIST=(--arg buf:u32:$N:random:5:0:1024 --arg scalar:s64:$N --arg scalar:u32:1024
      --arg buf:u32:1024:zero)

if [ "${HFUSE_SKIP_FUSE:-0}" != 1 ]; then
  "$BIN/gpu-opt" test/corpus/nvcc/blake2b.ptx test/corpus/nvcc/histogram.ptx \
    --hfuse="strategy=interleave blocks=256,256 grids=4096,1056 smem=0,4096" \
    -o "$OUT/fused.ptx" --manifest "$OUT/fused.json"
fi

# The fused kernel takes blake2b's arguments, then the histogram's; the
# manifest gives its grid, block and shared memory.
"$BIN/gpu-run" test/corpus/nvcc/blake2b.ptx --grid 4096 --block 256 "${BLAKE[@]}" \
  --out 3:"$OUT/hash.apart" --repeat 0
"$BIN/gpu-run" test/corpus/nvcc/histogram.ptx --grid 1056 --block 256 --smem 4096 \
  "${HIST[@]}" --out 3:"$OUT/bins.apart" --repeat 0
"$BIN/gpu-run" "$OUT/fused.ptx" --manifest "$OUT/fused.json" "${BLAKE[@]}" "${HIST[@]}" \
  --out 3:"$OUT/hash.fused" --out 7:"$OUT/bins.fused" --repeat 0
cmp "$OUT/hash.apart" "$OUT/hash.fused"
cmp "$OUT/bins.apart" "$OUT/bins.fused"
echo "run.sh: fused outputs bit-identical to the kernels run apart"

# "--arg A --arg B" as the JSON list ["A", "B"].
args() {
  local sep="" a
  printf '['
  for a in "$@"; do
    [ "$a" = --arg ] && continue
    printf '%s"%s"' "$sep" "$a"
    sep=", "
  done
  printf ']'
}
cat >"$OUT/time.json" <<JSON
{"warmup": 10, "repeat": 50,
 "kernels": [
  {"label": "blake2b", "module": "test/corpus/nvcc/blake2b.ptx", "grid": [4096],
   "block": [256], "smem": 0, "args": $(args "${BLAKE[@]}")},
  {"label": "histogram", "module": "test/corpus/nvcc/histogram.ptx", "grid": [1056],
   "block": [256], "smem": 4096, "args": $(args "${HIST[@]}")},
  {"label": "fused", "module": "$OUT/fused.ptx", "manifest": "$OUT/fused.json",
   "time_alone": false, "args": $(args "${BLAKE[@]}" "${HIST[@]}")}],
 "groups": [{"kernels": ["blake2b", "histogram"],
             "modes": ["serial", "concurrent", "graph"], "also": ["fused"]}]}
JSON
"$BIN/gpu-run" --spec "$OUT/time.json" --json "$OUT/time.out.json" | grep '^time'
