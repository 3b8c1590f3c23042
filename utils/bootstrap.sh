# Sourced by the scripts in utils/: installs what is missing on a fresh
# Debian 12 machine and configures and builds gpu-opt in $BUILD_DIR.
#
# Installs: cmake, ninja, g++, LLVM/MLIR 22 (llvm-22-dev libmlir-22-dev
# mlir-22-tools), yaml-cpp; and, when no ptxas is found, NVIDIA's ptxas wheel
# (requirements-test.txt); numpy and pytest for the Python tests
# (gpuopt_install_pytest), or a virtualenv with them and the gpuopt package
# (gpuopt_python_venv, whose extensions build against $BUILD_DIR/install).
# Installs the build into $BUILD_DIR/install and builds examples/embed
# against it (gpuopt_build_embed). Exports GPUOPT_ROOT,
# BUILD_DIR and PTXAS.

GPUOPT_ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
BUILD_DIR=${BUILD_DIR:-$GPUOPT_ROOT/build}
LLVM_PREFIX=${LLVM_PREFIX:-/usr/lib/llvm-22}
export GPUOPT_ROOT BUILD_DIR

_gpuopt_apt_packages="cmake ninja-build g++ llvm-22-dev libmlir-22-dev mlir-22-tools libyaml-cpp-dev nlohmann-json3-dev libgtest-dev"

gpuopt_install_packages() {
  local missing=()
  for p in $_gpuopt_apt_packages; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" ||
      missing+=("$p")
  done
  if [ ${#missing[@]} -gt 0 ]; then
    echo "gpu-opt: installing ${missing[*]}"
    local sudo=""
    [ "$(id -u)" -eq 0 ] || sudo="sudo"
    $sudo apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq "${missing[@]}" >/dev/null
  fi
}

gpuopt_find_ptxas() {
  local candidates=("${PTXAS:-}" "$(command -v ptxas || true)")
  [ -n "${CUDA_HOME:-}" ] && candidates+=("$CUDA_HOME/bin/ptxas")
  candidates+=(/usr/local/cuda/bin/ptxas)
  for c in "${candidates[@]}"; do
    if [ -n "$c" ] && [ -x "$c" ]; then
      echo "$c"
      return 0
    fi
  done
  # NVIDIA's wheel ships ptxas; install it into the first python3 on PATH.
  python3 -m pip install -q -r "$GPUOPT_ROOT/requirements-test.txt" >&2 || return 1
  python3 -c 'import nvidia, os; print(os.path.join(nvidia.__path__[0], "cu13", "bin", "ptxas"))'
}

# numpy, matplotlib and pytest for the Python tests, at the pins of requirements-test.txt,
# into the first python3 on PATH.
gpuopt_install_pytest() {
  python3 -c 'import numpy, pytest, matplotlib' 2>/dev/null && return 0
  grep -E '^(numpy|pytest|matplotlib)==' "$GPUOPT_ROOT/requirements-test.txt" |
    xargs python3 -m pip install -q
}

# A fresh virtualenv in $BUILD_DIR/python-venv: numpy, matplotlib, pytest, Triton and pandas at
# the pins of requirements-test.txt, then the gpuopt package as users install
# it (pip install ./python), its extensions built against the gpu-opt
# installed in $BUILD_DIR/install (gpuopt_build_embed installs it). Prints
# the virtualenv's bin folder.
gpuopt_python_venv() {
  local venv="$BUILD_DIR/python-venv"
  if ! python3 -c 'import ensurepip, venv' 2>/dev/null; then
    echo "gpu-opt: installing python3-venv" >&2
    local sudo=""
    [ "$(id -u)" -eq 0 ] || sudo="sudo"
    $sudo apt-get update -qq >&2
    DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq python3-venv >/dev/null
  fi
  rm -rf "$venv"
  python3 -m venv "$venv" >&2 || return 1
  grep -E '^(numpy|pytest|matplotlib|triton|pandas)==' "$GPUOPT_ROOT/requirements-test.txt" |
    xargs "$venv/bin/python" -m pip install -q >&2 || return 1
  if [ ! -f "$BUILD_DIR/install/lib/cmake/GpuOpt/GpuOptConfig.cmake" ]; then
    echo "gpu-opt: no installed gpu-opt in $BUILD_DIR/install for the Python" \
      "package (gpuopt_build_embed installs it)" >&2
    return 1
  fi
  CMAKE_PREFIX_PATH="$BUILD_DIR/install${CMAKE_PREFIX_PATH:+:$CMAKE_PREFIX_PATH}" \
    "$venv/bin/python" -m pip install -q "$GPUOPT_ROOT/python" >&2 || return 1
  echo "$venv/bin"
}

gpuopt_build() {
  gpuopt_install_packages
  local ptxas
  ptxas=$(gpuopt_find_ptxas) && [ -x "$ptxas" ] && export PTXAS="$ptxas"
  if [ ! -f "$BUILD_DIR/build.ninja" ]; then
    cmake -S "$GPUOPT_ROOT" -B "$BUILD_DIR" -G Ninja \
      -DCMAKE_BUILD_TYPE=Release \
      -DMLIR_DIR="$LLVM_PREFIX/lib/cmake/mlir" \
      -DLLVM_EXTERNAL_LIT="$LLVM_PREFIX/bin/lit" >/dev/null
  fi
  cmake --build "$BUILD_DIR"
}

# Installs the build into $BUILD_DIR/install and builds examples/embed, a
# tool outside the tree that links the installed package
# (find_package(GpuOpt)), into $BUILD_DIR/embed, for test/Examples and
# test/Plugin/installed-plugin.mlir.
gpuopt_build_embed() {
  local prefix="$BUILD_DIR/install"
  rm -rf "$prefix"
  cmake --install "$BUILD_DIR" --prefix "$prefix" >/dev/null
  cmake -S "$GPUOPT_ROOT/examples/embed" -B "$BUILD_DIR/embed" -G Ninja \
    -DCMAKE_BUILD_TYPE=Release -DCMAKE_PREFIX_PATH="$prefix" >/dev/null
  cmake --build "$BUILD_DIR/embed"
}
