#!/usr/bin/env bash
# Two probe checks beyond the suite's (probe_suite.py check):
#  - fused: blake2b + histogram fused by block interleave and probed with
#    warp_sched in one pipeline; outputs bit-identical to the fused kernel
#    without probes, and every warp record names its part (blake2b's 4096
#    blocks and the histogram's 1056, 8 warps each);
#  - overflow: dmat with a fixed capacity of 2 records per warp on
#    reduce_shfl, under compute-sanitizer memcheck: the overflow counter
#    equals what the dynamic dmat's slot counts say did not fit, and the
#    outputs are bit-identical.
# usage: extra_checks.sh generate BIN OUT   (no GPU: gpu-opt)
#        extra_checks.sh check BIN OUT      (GPU: gpu-run, compute-sanitizer)
set -euo pipefail
MODE=${1:?usage: extra_checks.sh generate|check BIN OUT}
BIN=${2:?}
OUT=${3:?}
cd "$(dirname "${BASH_SOURCE[0]}")/../.."
# The scripts import the gpuopt package (python/); offline, pip builds it with
# the setuptools at hand.
python3 -c 'import gpuopt' 2>/dev/null || python3 -m pip install -q ./python ||
  python3 -m pip install -q --no-build-isolation --no-deps ./python
NONCES=1048576
N=16777216
BLAKE=(--arg buf:u64:10:random:9 --arg scalar:u32:0 --arg scalar:u32:$NONCES
       --arg buf:u64:$((NONCES * 8)):out)
HIST=(--arg buf:u32:$N:random:5:0:1024 --arg scalar:s64:$N --arg scalar:u32:1024
      --arg buf:u32:1024:zero)
RED=(--grid 1056 --block 256 --arg buf:f32:67108864:random:6:0:1
     --arg scalar:s64:67108864 --arg buf:f32:1:zero)
FUSE=(test/corpus/nvcc/blake2b.ptx test/corpus/nvcc/histogram.ptx
      --hfuse="strategy=interleave blocks=256,256 grids=4096,1056 smem=0,4096")

if [ "$MODE" = generate ]; then
  mkdir -p "$OUT"
  "$BIN/gpu-opt" "${FUSE[@]}" -o "$OUT/fused.ptx" --manifest "$OUT/fused.json"
  "$BIN/gpu-opt" "${FUSE[@]}" --probe=warp_sched -o "$OUT/fused-probed.ptx" \
    --manifest "$OUT/fused-probed.json"
  "$BIN/gpu-opt" test/corpus/nvcc/reduce_shfl.ptx --probe=dmat \
    -o "$OUT/red-dmat.ptx" --manifest "$OUT/red-dmat.json"
  sed 's/capacity: dynamic/capacity: 2/' configs/probes/dmat.yaml > "$OUT/dmat2.yaml"
  "$BIN/gpu-opt" test/corpus/nvcc/reduce_shfl.ptx --probe="$OUT/dmat2.yaml" \
    -o "$OUT/red-dmat2.ptx" --manifest "$OUT/red-dmat2.json"
  exit 0
fi

rm -rf "$OUT/fused-trace" "$OUT/dmat-trace" "$OUT/dmat2-trace"
FUSED_NAME=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["kernels"][0]["name"])' "$OUT/fused.json")
"$BIN/gpu-run" "$OUT/fused-probed.ptx" --manifest "$OUT/fused-probed.json" \
  "${BLAKE[@]}" "${HIST[@]}" --compare "$OUT/fused.ptx:$FUSED_NAME" \
  --trace "$OUT/fused-trace" --repeat 0
python3 -m gpuopt.warp_sched "$OUT/fused-trace" --json "$OUT/fused-warp-sched.json" \
  --plot "$OUT/fused-tail.png"
python3 - "$OUT/fused-trace" <<'PY'
import sys
from gpuopt.trace import load
import numpy as np
t = load(sys.argv[1])
a = t.maps["warp_sched"][..., 0]
parts = {int(p): int(n) for p, n in zip(*np.unique(a["part"], return_counts=True))}
print("fused: warp records per part", parts)
assert parts == {0: 4096 * 8, 1: 1056 * 8}, parts
assert (a["gend"] != 0).all() and (a["gstart"] <= a["gend"]).all()
print("fused: PASS")
PY

"$BIN/gpu-run" "$OUT/red-dmat.ptx" --manifest "$OUT/red-dmat.json" "${RED[@]}" \
  --trace "$OUT/dmat-trace" --repeat 0
compute-sanitizer --tool memcheck --error-exitcode 3 \
  "$BIN/gpu-run" "$OUT/red-dmat2.ptx" --manifest "$OUT/red-dmat2.json" "${RED[@]}" \
  --compare test/corpus/nvcc/reduce_shfl.ptx:reduce_sum_shfl --tolerance 1e-5 \
  --trace "$OUT/dmat2-trace" --repeat 0
python3 -m gpuopt.dmat "$OUT/dmat-trace" --plot "$OUT/reduce-dmat.png" \
  --json "$OUT/reduce-dmat.json"
python3 - "$OUT/dmat-trace" "$OUT/dmat2-trace" <<'PY'
import sys
from gpuopt.trace import load
import numpy as np
dyn, fixed = load(sys.argv[1]), load(sys.argv[2])
counts = dyn.counts["dmat"].astype(np.int64)
want = int(np.maximum(counts - 2, 0).sum())
kept = np.minimum(counts, 2)
got = fixed.overflow["dmat"]
print(f"overflow: counted {got}, expected {want} (dynamic run: {int(counts.sum())} records)")
assert got == want, (got, want)
a = fixed.maps["dmat"]
written = (a["addr"] != 0).sum(axis=2)
assert (written == kept).all(), "fixed map: records written differ from min(count, 2)"
print("overflow: PASS")
PY
