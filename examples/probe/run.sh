#!/usr/bin/env bash
# Block scheduling of a zero-fill kernel end to end (the torch.zeros((4096,
# 4096)) case of the Neutrino paper): 32768 blocks of 128 threads, each
# writing one float4 per thread.
#
#  1. instrument it with gpu-opt --probe=block_sched;
#  2. run the probed kernel with gpu-run against the original on the same
#     inputs (--compare: bit-identical outputs) and write the trace;
#  3. time the original and the probed kernel side by side;
#  4. analyse the trace: per-SM scheduling gaps against block running time,
#     a timeline PNG and a Perfetto/Chrome trace.
#
# usage: examples/probe/run.sh [OUT_DIR]   (default build/probe-example)
# $BIN names the folder with gpu-opt and gpu-run (default build/bin). Steps 2
# to 4 need a GPU; PROBE_SKIP_COMPILE=1 reuses OUT_DIR/zero_fill.probed.ptx
# and .json made elsewhere.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../.."
BIN=${BIN:-build/bin}
OUT=${1:-build/probe-example}
mkdir -p "$OUT"

N4=4194304                       # 4096 x 4096 floats as float4
ARGS=(--arg buf:f32:$((N4 * 4)):out --arg scalar:s64:$N4)
LAUNCH=(--grid $((N4 / 128)) --block 128)

if [ "${PROBE_SKIP_COMPILE:-0}" != 1 ]; then
  "$BIN/gpu-opt" examples/probe/zero_fill.ptx --probe=block_sched \
    -o "$OUT/zero_fill.probed.ptx" --manifest "$OUT/zero_fill.probed.json"
fi

rm -rf "$OUT/trace"
"$BIN/gpu-run" "$OUT/zero_fill.probed.ptx" --manifest "$OUT/zero_fill.probed.json" \
  "${LAUNCH[@]}" "${ARGS[@]}" --compare examples/probe/zero_fill.ptx:zero_fill \
  --trace "$OUT/trace" --repeat 0

cat >"$OUT/time.json" <<JSON
{"warmup": 20, "repeat": 200,
 "kernels": [
  {"label": "original", "module": "examples/probe/zero_fill.ptx", "kernel": "zero_fill",
   "grid": [$((N4 / 128))], "block": [128], "smem": 0,
   "args": ["buf:f32:$((N4 * 4)):out", "scalar:s64:$N4"]},
  {"label": "probed", "module": "$OUT/zero_fill.probed.ptx",
   "manifest": "$OUT/zero_fill.probed.json", "grid": [$((N4 / 128))], "block": [128],
   "smem": 0, "args": ["buf:f32:$((N4 * 4)):out", "scalar:s64:$N4"]}],
 "groups": [{"kernels": ["original", "probed"], "modes": ["alone"]}]}
JSON
"$BIN/gpu-run" --spec "$OUT/time.json" --json "$OUT/time.out.json" | grep '/ alone'

python3 -c "import gpuopt" 2>/dev/null || python3 -m pip install -q ./python
python3 -m gpuopt.block_sched "$OUT/trace" --plot "$OUT/timeline.png" \
  --perfetto "$OUT/timeline.json" --json "$OUT/block_sched.json"
