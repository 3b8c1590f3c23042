#!/usr/bin/env bash
# The GPU part of the kernel suite in one go, so that a GPU machine is needed
# once: a smoke test of gpu-run, --compare and cubin runs, every kernel against
# its reference (check_suite.py), then the baselines (baselines.py). Logs and
# results go to OUT_DIR; large temporary files go to $TMPDIR.
#
# usage: benchmarks/gpu-session.sh GPU_RUN OUT_DIR [DATE]
#
# When the given gpu-run does not start there (built against a newer C
# library, say), it is rebuilt from lib/Runtime and tools/gpu-run with g++;
# $NLOHMANN_INCLUDE names the folder holding nlohmann/json.hpp
# (default /usr/include). Exit status: non-zero when a check or the
# baselines failed.
set -uo pipefail
GPU_RUN=${1:?usage: gpu-session.sh GPU_RUN OUT_DIR [DATE]}
OUT=${2:?usage: gpu-session.sh GPU_RUN OUT_DIR [DATE]}
DATE=${3:-$(date +%F)}
cd "$(dirname "${BASH_SOURCE[0]}")/.."
mkdir -p "$OUT"
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
export PYTHONUNBUFFERED=1
# The scripts import the gpuopt package (python/); offline, pip builds it with
# the setuptools at hand.
python3 -c 'import gpuopt' 2>/dev/null || python3 -m pip install -q ./python ||
  python3 -m pip install -q --no-build-isolation --no-deps ./python

nvidia-smi -L
python3 -c 'import sys, numpy, torch; print("python", sys.version.split()[0], "numpy", numpy.__version__, "torch", torch.__version__)'
if ! "$GPU_RUN" --help >/dev/null; then
  echo "gpu-session: $GPU_RUN does not run here; building it with g++"
  g++ -std=c++17 -O2 -Iinclude -I"${NLOHMANN_INCLUDE:-/usr/include}" lib/Runtime/*.cpp \
    tools/gpu-run/gpu-run.cpp -ldl -lpthread -o "$TMP/gpu-run" || exit 2
  GPU_RUN=$TMP/gpu-run
fi
GPU_RUN=$(realpath "$GPU_RUN")

# Stop early (and cheaply) when gpu-run cannot use the GPU at all.
"$GPU_RUN" test/corpus/nvcc/reduce_shfl.ptx --grid 8 --block 256 --arg buf:f32:4096:fill:1 \
  --arg scalar:s64:4096 --arg buf:f32:1:zero --out 2:"$TMP/smoke.bin" --repeat 2 || exit 2
python3 -c 'import numpy, sys; v = numpy.fromfile(sys.argv[1], numpy.float32)[0]; print("smoke sum", v); sys.exit(int(v != 4096))' "$TMP/smoke.bin" || exit 2

# --compare on an original and a transformed module (nvcc -O3 against -G),
# and cubins, whose parameter layout comes from the driver.
{
  n=$((1 << 24))
  hist=(--grid 1056 --block 256 --smem 4096 --arg buf:u32:$n:random:1:0:1024
        --arg scalar:s64:$n --arg scalar:u32:1024 --arg buf:u32:1024:zero --repeat 5)
  red=(--grid 1056 --block 256 --arg buf:f32:$n:random:2:0:1 --arg scalar:s64:$n
       --arg buf:f32:1:zero --repeat 5)
  "$GPU_RUN" test/corpus/nvcc/histogram.ptx "${hist[@]}" --compare test/corpus/nvcc/histogram.O0.ptx
  echo "exit $?"
  "$GPU_RUN" test/corpus/nvcc/reduce_shfl.ptx "${red[@]}" --compare test/corpus/nvcc/reduce_shfl.O0.ptx
  echo "exit $? (without a tolerance)"
  "$GPU_RUN" test/corpus/nvcc/reduce_shfl.ptx "${red[@]}" --compare test/corpus/nvcc/reduce_shfl.O0.ptx --tolerance 1e-5
  echo "exit $?"
  PTXAS=${PTXAS:-$(command -v ptxas || echo /usr/local/cuda/bin/ptxas)}
  if [ -x "$PTXAS" ]; then
    "$PTXAS" -arch=sm_90a test/corpus/nvcc/histogram.ptx -o "$TMP/histogram.cubin" &&
      "$GPU_RUN" "$TMP/histogram.cubin" --kernel histogram_shared "${hist[@]}" \
        --compare test/corpus/nvcc/histogram.ptx
    echo "exit $?"
  else
    echo "no ptxas: cubin run skipped"
  fi
} 2>&1 | tee "$OUT/compare.log"

start=$SECONDS
python3 benchmarks/check_suite.py --gpu-run "$GPU_RUN" --json "$OUT/check.json" \
  --markdown "$OUT/check-suite.md" --date "$DATE" 2>&1 | tee "$OUT/check.log"
check=${PIPESTATUS[0]}
echo "check_suite: exit $check after $((SECONDS - start)) s"

start=$SECONDS
python3 benchmarks/baselines.py --gpu-run "$GPU_RUN" --out-dir "$OUT" --date "$DATE" 2>&1 | tee "$OUT/baselines.log"
base=${PIPESTATUS[0]}
echo "baselines: exit $base after $((SECONDS - start)) s"
[ "$check" -eq 0 ] && [ "$base" -eq 0 ]
