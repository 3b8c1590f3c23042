#!/usr/bin/env bash
# The self-contained wheel on a GPU machine as users have it, in one go (run
# from the repository root, as root, on a machine that may be thrown away):
#
#   1. the CUDA toolkit made unreachable: /usr/local/cuda* moved aside (put
#      back at the end), so that nothing, not even gpu-opt's last-resort
#      /usr/local/cuda/bin/ptxas, can use it; `gpu-opt --print-ptxas` must
#      then name Triton's ptxas;
#   2. benchmarks/wheel/check-gpu-machine.sh WHEEL OUT_DIR/check (the four
#      checks of the issue: the user's command, measured auto on a held-out
#      pair, gpuopt-trace, gpuopt.triton.fuse);
#   3. the README's main job from the installed wheel: `pip install --no-deps`
#      into a fresh folder, then `bash utils/run-example.sh` (which uses the
#      installed tools when there is no LLVM).
#
# usage: benchmarks/wheel/gpu-machine-session.sh WHEEL OUT_DIR
set -uo pipefail
wheel=$(realpath "${1:?usage: gpu-machine-session.sh WHEEL OUT_DIR}")
out=${2:?usage: gpu-machine-session.sh WHEEL OUT_DIR}
mkdir -p "$out"
out=$(realpath "$out")
cd "$(dirname "${BASH_SOURCE[0]}")/../.."

moved=()
restore() {
  for d in "${moved[@]}"; do mv "$d.hidden-by-gpuopt" "$d"; done
}
trap restore EXIT
for d in /usr/local/cuda /usr/local/cuda-*; do
  [ -e "$d" ] && [[ "$d" != *.hidden-by-gpuopt ]] || continue
  if mv "$d" "$d.hidden-by-gpuopt" 2>/dev/null; then
    moved+=("$d")
  else
    echo "gpu-machine-session.sh: cannot move $d aside" >&2
  fi
done
export PATH=$(echo "$PATH" | tr ':' '\n' | grep -v '/usr/local/cuda' | paste -sd:)
unset CUDA_HOME CUDA_PATH CUDA_ROOT PTXAS
echo "== toolkit moved aside: ${moved[*]:-none}; nvcc on PATH: $(command -v nvcc || echo none)"

echo "== 2. benchmarks/wheel/check-gpu-machine.sh"
bash benchmarks/wheel/check-gpu-machine.sh "$wheel" "$out/check" >"$out/check.log" 2>&1
check=$?
grep -E '^\[[0-9a-d]\] (PASS|FAIL)' "$out/check.log"

echo "== 3. the README's main job from the installed wheel"
site=$(mktemp -d)
python3 -m pip install -q --no-deps --no-index --target "$site" "$wheel"
export PATH="$site/bin:$PATH" PYTHONPATH="$site${PYTHONPATH:+:$PYTHONPATH}"
echo "gpu-opt: $(command -v gpu-opt); ptxas it runs: $(gpu-opt --print-ptxas)" \
  "(PTX ISA <= $(gpu-opt --print-ptxas-isa))"
bash utils/run-example.sh >"$out/run-example.log" 2>&1
example=$?
grep -E '^(===|== |OK|compiled|  (mlir|nvcc|both|user)|.*bit-identical|.*identical)' \
  "$out/run-example.log" | head -n 60
echo "run-example.sh exit status $example; check-gpu-machine.sh exit status $check"
[ $example -eq 0 ] && [ $check -eq 0 ]
