#!/usr/bin/env bash
# The self-contained wheel's smoke test (no GPU needed): installs WHEEL into
# a fresh virtualenv of each Python given, with the LLVM install folder and
# the CUDA toolkit hidden (a private mount namespace mounts empty folders
# over them, when the machine allows one), and checks that
#   - `gpu-opt`, `gpu-translate` and `gpu-run` run from PATH;
#   - the README's command (gpu-opt --hfuse --probe=block_sched on
#     examples/gpu-dialect/pair.mlir) writes PTX, a cubin (through the ptxas
#     gpu-opt finds: with the toolkit hidden, Triton's) and a manifest, and
#     the PTX is byte for byte what the developer build's gpu-opt writes;
#   - real PTX (test/corpus) round-trips through gpu-translate identically
#     to the developer build, and fused + probed PTX too;
#   - gpuopt._core works in process in one interpreter with Triton (whose
#     own LLVM is then loaded): import, fuse, probe, to_ptx equal the CLI's;
#   - the README's main job, utils/run-example.sh, runs from the wheel
#     (compile steps; the GPU steps where there is a GPU).
#
# usage: utils/check-wheel.sh WHEEL DEV_BIN [PYTHON...]
#   DEV_BIN: the developer build's bin/ to compare with (build/bin).
set -euo pipefail
wheel=$(realpath "${1:?usage: utils/check-wheel.sh WHEEL DEV_BIN [PYTHON...]}")
dev_bin=$(realpath "${2:?usage: utils/check-wheel.sh WHEEL DEV_BIN [PYTHON...]}")
shift 2
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
llvm_prefix=${LLVM_PREFIX:-/usr/lib/llvm-22}
pythons=("$@")
[ ${#pythons[@]} -gt 0 ] || pythons=(python3)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# The developer build's outputs, to compare with.
dev=$work/dev
mkdir -p "$dev"
"$dev_bin/gpu-opt" --hfuse --probe=block_sched "$root/examples/gpu-dialect/pair.mlir" \
  -o "$dev/pair.ptx" --manifest "$dev/pair.json"
corpus=("$root/test/corpus/nvcc/sha256d.ptx" "$root/test/corpus/triton/softmax_fp32_b1024.ptx")
for ptx in "${corpus[@]}"; do
  name=$(basename "$ptx" .ptx)
  "$dev_bin/gpu-translate" --import-ptx "$ptx" -o "$dev/$name.mlir"
  "$dev_bin/gpu-translate" --export-ptx "$dev/$name.mlir" -o "$dev/$name.ptx"
done
"$dev_bin/gpu-opt" "$root/test/corpus/nvcc/blake2b.ptx" "$root/test/corpus/nvcc/histogram.ptx" \
  --hfuse="strategy=interleave blocks=256,256 grids=4096,1056 smem=0,4096" \
  --probe=block_sched -o "$dev/fused.ptx" --manifest "$dev/fused.json"

# Runs "$@" as on a GPU machine without LLVM and without a CUDA toolkit:
# the LLVM install folder and the toolkit's are hidden where a mount
# namespace can be had (root, unshare), else it runs as it is (the ELF
# check still holds, and ptxas is the toolkit's).
hide=("$llvm_prefix")
for cuda in /usr/local/cuda /usr/local/cuda-*; do
  [ -d "$cuda" ] && hide+=("$(realpath "$cuda")")
done
can_hide() {
  [ "$(id -u)" -eq 0 ] && command -v unshare >/dev/null &&
    unshare -m true 2>/dev/null && [ -d "$llvm_prefix" ]
}
hidden_toolchains() {
  if can_hide; then
    unshare -m bash -c 'for d in $GPUOPT_HIDE; do mount -t tmpfs none "$d"; done; exec "$@"' \
      hidden "$@"
  else
    "$@"
  fi
}
export GPUOPT_HIDE="${hide[*]}"

for py in "${pythons[@]}"; do
  version=$("$py" -c 'import sys; print("%d.%d" % sys.version_info[:2])')
  venv=$work/venv-$version
  echo "=== Python $version: pip install $(basename "$wheel")"
  "$py" -m venv "$venv"
  # The pinned numpy where it serves this Python, else the newest that does.
  grep -E '^(numpy|triton)==' "$root/requirements-test.txt" |
    xargs "$venv/bin/python" -m pip install -q 2>/dev/null ||
    grep -E '^triton==' "$root/requirements-test.txt" |
    xargs "$venv/bin/python" -m pip install -q numpy
  "$venv/bin/python" -m pip install -q --no-deps "$wheel"
  out=$work/out-$version
  mkdir -p "$out"
  hidden_toolchains env -u PTXAS -u CUDA_HOME -u CUDA_PATH -u CUDA_ROOT -u GPUOPT_BIN_DIR \
    PATH="$venv/bin:/usr/bin:/bin" GPUOPT_HIDE="$GPUOPT_HIDE" \
    out="$out" root="$root" corpus_list="${corpus[*]}" bash -c '
set -euo pipefail
if [ -d '"$llvm_prefix"'/lib/cmake ]; then
  echo "  (LLVM and CUDA visible: no mount namespace here)"
else
  echo "  hidden: $GPUOPT_HIDE"
fi
gpu-opt --version | head -n 3
gpu-run --help >/dev/null
echo "  ptxas: $(gpu-opt --print-ptxas) (PTX ISA <= $(gpu-opt --print-ptxas-isa))"
gpu-opt --hfuse --probe=block_sched "$root/examples/gpu-dialect/pair.mlir" \
  -o "$out/pair.ptx" --manifest "$out/pair.json"
gpu-opt --hfuse --probe=block_sched "$root/examples/gpu-dialect/pair.mlir" \
  -o "$out/pair.cubin" --manifest "$out/pair.cubin.json"
for ptx in $corpus_list; do
  name=$(basename "$ptx" .ptx)
  gpu-translate --import-ptx "$ptx" -o "$out/$name.mlir"
  gpu-translate --export-ptx "$out/$name.mlir" -o "$out/$name.ptx"
done
gpu-opt "$root/test/corpus/nvcc/blake2b.ptx" "$root/test/corpus/nvcc/histogram.ptx" \
  --hfuse="strategy=interleave blocks=256,256 grids=4096,1056 smem=0,4096" \
  --probe=block_sched -o "$out/fused.ptx" --manifest "$out/fused.json"
python - <<PY
import triton  # its libtriton.so (LLVM inside) first, then gpu-opt beside it
import gpuopt
from gpuopt import _core, _tools
assert _tools.bundled_tool("gpu-opt"), "the wheel has no gpu-opt"
root, out = "$root", "$out"
m = gpuopt.load_ptx(f"{root}/test/corpus/nvcc/blake2b.ptx", f"{root}/test/corpus/nvcc/histogram.ptx")
fused = m.fuse(strategy="interleave", blocks=[256, 256], grids=[4096, 1056], smem=[0, 4096])
probed = fused.probe("block_sched")
assert probed.to_ptx() == open(f"{out}/fused.ptx").read(), "in process != gpu-opt"
try:
    gpuopt.import_ptx("not ptx", "x.ptx")
    raise SystemExit("import_ptx took text that is not PTX")
except gpuopt.Error as e:
    assert (e.file, e.line) == ("x.ptx", 1), e
print("  in process with Triton", triton.__version__, ": fused + probed PTX as gpu-opt writes it")
PY
'
  for f in pair.ptx pair.json fused.ptx fused.json sha256d.ptx sha256d.mlir \
    softmax_fp32_b1024.ptx softmax_fp32_b1024.mlir; do
    cmp "$dev/$f" "$out/$f" || {
      echo "check-wheel.sh: $f from the wheel differs from the developer build's" >&2
      exit 1
    }
  done
  [ -s "$out/pair.cubin" ] || { echo "check-wheel.sh: no cubin" >&2; exit 1; }
  echo "OK: Python $version: the wheel's outputs are byte-identical to the developer build's"
  main_job_venv=${main_job_venv:-$venv}
done

# The README's main job from the installed wheel, as on a GPU machine: no
# LLVM (so utils/run-example.sh takes the wheel's tools) and no toolkit.
# Where nothing can be hidden it would build gpu-opt instead: skipped.
if ! can_hide; then
  echo "=== the README's main job: skipped (no mount namespace to hide LLVM in)"
  exit 0
fi
echo "=== the README's main job (utils/run-example.sh) from the wheel"
hidden_toolchains env -u PTXAS -u CUDA_HOME -u CUDA_PATH -u CUDA_ROOT -u GPUOPT_BIN_DIR \
  PATH="$main_job_venv/bin:/usr/bin:/bin" BUILD_DIR="$work/example" \
  bash "$root/utils/run-example.sh" >"$work/run-example.log" 2>&1 || {
  tail -n 30 "$work/run-example.log"
  echo "check-wheel.sh: utils/run-example.sh failed with the wheel's tools" >&2
  exit 1
}
grep -E '^=== (gpu-opt|ptxas)|^OK' "$work/run-example.log"
grep -q '^=== gpu-opt from the installed gpuopt wheel' "$work/run-example.log" || {
  echo "check-wheel.sh: run-example.sh did not use the wheel's tools" >&2
  exit 1
}
