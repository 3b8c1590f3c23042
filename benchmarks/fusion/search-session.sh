#!/usr/bin/env bash
# The GPU half of an exhaustive search over several pairs: runs
# `python3 -m gpuopt.hfuse_search measure` on each folder that `prepare --exhaustive` wrote
# (build/search/<pair>), one after another, and packs the results and logs
# into OUT/search.tgz. Pairs left when LIMIT seconds have passed are skipped.
#
# usage: benchmarks/fusion/search-session.sh GPU_RUN OUT LIMIT DIR...
set -uo pipefail
GPU_RUN=${1:?usage: search-session.sh GPU_RUN OUT LIMIT DIR...}
OUT=${2:?}
LIMIT=${3:?}
shift 3
cd "$(dirname "${BASH_SOURCE[0]}")/../.."
mkdir -p "$OUT"
export PYTHONUNBUFFERED=1
# The scripts import the gpuopt package (python/); offline, pip builds it with
# the setuptools at hand.
python3 -c 'import gpuopt' 2>/dev/null || python3 -m pip install -q ./python ||
  python3 -m pip install -q --no-build-isolation --no-deps ./python
if ! "$GPU_RUN" --help >/dev/null 2>&1; then
  echo "search-session: $GPU_RUN does not run here; building it with g++"
  g++ -std=c++17 -O2 -Iinclude -I"${NLOHMANN_INCLUDE:-/usr/include}" lib/Runtime/*.cpp \
    tools/gpu-run/gpu-run.cpp -ldl -lpthread -o /tmp/gpu-run || exit 2
  GPU_RUN=/tmp/gpu-run
fi
start=$SECONDS
for dir in "$@"; do
  if [ $((SECONDS - start)) -ge "$LIMIT" ]; then
    echo "search-session: $dir skipped (time limit)"
    continue
  fi
  echo "=== $dir ($((SECONDS - start)) s)"
  python3 -m gpuopt.hfuse_search measure --out-dir "$dir" --gpu-run "$GPU_RUN" \
    >"$dir/measure.log" 2>&1
  echo "exit $?"
  tail -n 40 "$dir/measure.log"
done
tar czf "$OUT/search.tgz" $(for d in "$@"; do ls "$d"/result.json "$d"/report*.json \
  "$d"/search.json "$d"/measure.log 2>/dev/null; done)
