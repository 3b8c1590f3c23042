#!/usr/bin/env bash
# Builds the self-contained gpuopt wheel into DIR: the Python package
# (gpuopt._core, gpuopt._runtime) and the tools gpu-opt, gpu-translate and
# gpu-run (on PATH after pip install), with MLIR, LLVM (NVPTX only), yaml-cpp
# and zstd linked into one shared library whose only exported symbols are
# gpu-opt's in-process API. It installs on any x86-64 Linux with glibc as
# new as this machine's and Python 3.10 or later, and needs no LLVM, MLIR or
# CUDA toolkit there: ptxas comes from the toolkit when there is one, else
# from Triton's wheel or NVIDIA's (docs/python.md, "Installing").
#
#   0. builds yaml-cpp as a position-independent static library (from the
#      Debian source of the installed one) into build/yaml-cpp-pic;
#   1. configures build/ with -DGPUOPT_SELF_CONTAINED=ON and builds it (the
#      developer build and build/self-contained: libgpuopt.so, the tools);
#   2. installs it into build/install, which the extensions build against;
#   3. builds one wheel per Python: 3.10, 3.11 (their own ABI) and 3.12
#      (the stable ABI, for 3.12 and later), with each python3.X found on
#      PATH or in pyenv ($GPUOPT_WHEEL_PYTHONS: other interpreters);
#   4. merges them into one wheel (utils/merge-wheels.py), tags it with the
#      manylinux platform `auditwheel show` names, and checks it: no ELF file
#      in it needs a library outside libc, libm, libstdc++, libgcc_s and libz
#      (utils/check-needed.py), and it is at most 60 MB.
#
# usage: utils/build-wheel.sh DIR
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/bootstrap.sh"
out=${1:?usage: utils/build-wheel.sh DIR}
mkdir -p "$out"
out=$(cd "$out" && pwd)
MAX_WHEEL_MB=60

_gpuopt_apt_packages="$_gpuopt_apt_packages libzstd-dev dpkg-dev"
gpuopt_install_packages

# yaml-cpp as a position-independent static library (Debian's libyaml-cpp.a
# is not), built from the Debian source of the installed libyaml-cpp-dev, so
# that its headers, which gpu-opt was compiled with, match. Fetched through
# apt's own configuration, with deb-src entries in a private list.
yaml_cpp_pic() {
  local prefix=$BUILD_DIR/yaml-cpp-pic version apt work
  version=$(dpkg-query -W -f='${source:Version}' libyaml-cpp-dev)
  if [ -f "$prefix/lib/libyaml-cpp.a" ] && [ "$(cat "$prefix/VERSION" 2>/dev/null)" = "$version" ]; then
    echo "$prefix/lib/libyaml-cpp.a"
    return
  fi
  work=$(mktemp -d)
  apt=(-o Dir::Etc::SourceList=/dev/null -o Dir::Etc::SourceParts="$work/sources"
    -o Dir::State::Lists="$work/lists")
  mkdir -p "$work/sources" "$work/lists/partial" "$work/src"
  for f in /etc/apt/sources.list.d/*.sources; do
    sed -n '/^Types:/s/^Types:.*/Types: deb-src/;p' "$f" >"$work/sources/$(basename "$f")"
  done
  apt-get -qq "${apt[@]}" update >&2
  (cd "$work/src" && apt-get -qq "${apt[@]}" source --download-only "yaml-cpp=$version" >&2 &&
    dpkg-source -x ./*.dsc yaml-cpp >&2)
  cmake -S "$work/src/yaml-cpp" -B "$work/build" -G Ninja -DCMAKE_BUILD_TYPE=Release \
    -DCMAKE_POSITION_INDEPENDENT_CODE=ON -DYAML_BUILD_SHARED_LIBS=OFF \
    -DYAML_CPP_BUILD_TESTS=OFF -DYAML_CPP_BUILD_TOOLS=OFF \
    -DYAML_CPP_BUILD_CONTRIB=OFF -DCMAKE_INSTALL_PREFIX="$prefix" >&2
  cmake --build "$work/build" >&2
  cmake --install "$work/build" >&2
  echo "$version" >"$prefix/VERSION"
  rm -rf "$work"
  echo "$prefix/lib/libyaml-cpp.a"
}
yaml_cpp=$(yaml_cpp_pic)
if [ -f "$BUILD_DIR/build.ninja" ]; then
  cmake -S "$GPUOPT_ROOT" -B "$BUILD_DIR" -DGPUOPT_SELF_CONTAINED=ON \
    -DGPUOPT_YAML_CPP_STATIC="$yaml_cpp" >/dev/null
else
  cmake -S "$GPUOPT_ROOT" -B "$BUILD_DIR" -G Ninja -DCMAKE_BUILD_TYPE=Release \
    -DMLIR_DIR="$LLVM_PREFIX/lib/cmake/mlir" \
    -DLLVM_EXTERNAL_LIT="$LLVM_PREFIX/bin/lit" -DGPUOPT_SELF_CONTAINED=ON \
    -DGPUOPT_YAML_CPP_STATIC="$yaml_cpp" >/dev/null
fi
echo "=== building gpu-opt and the self-contained gpu-opt in $BUILD_DIR"
cmake --build "$BUILD_DIR"
rm -rf "$BUILD_DIR/install"
cmake --install "$BUILD_DIR" --prefix "$BUILD_DIR/install" >/dev/null

# The interpreters: python3.X on PATH, else pyenv's newest 3.X (a pyenv
# shim on PATH that has none fails the check).
find_python() {
  local version=$1 candidates=() c
  candidates+=("$(command -v "python$version" || true)")
  if command -v pyenv >/dev/null; then
    c=$(pyenv versions --bare | grep -E "^$version\.[0-9]+$" | sort -t. -k3 -n | tail -n 1)
    [ -z "$c" ] || candidates+=("$(pyenv root)/versions/$c/bin/python3")
  fi
  for c in "${candidates[@]}"; do
    if [ -n "$c" ] && [ -x "$c" ] &&
      [ "$("$c" -c 'import sys; print("%d.%d" % sys.version_info[:2])' 2>/dev/null)" = "$version" ]; then
      echo "$c"
      return 0
    fi
  done
  return 1
}
pythons=()
if [ -n "${GPUOPT_WHEEL_PYTHONS:-}" ]; then
  read -r -a pythons <<<"$GPUOPT_WHEEL_PYTHONS"
else
  for version in 3.10 3.11 3.12; do
    if py=$(find_python $version); then
      pythons+=("$py")
    else
      echo "build-wheel.sh: no Python $version found; the wheel will not serve it" >&2
    fi
  done
fi
[ ${#pythons[@]} -gt 0 ] || { echo "build-wheel.sh: no Python 3.10-3.12 found" >&2; exit 1; }

parts=$(mktemp -d)
trap 'rm -rf "$parts"' EXIT
for py in "${pythons[@]}"; do
  echo "=== the gpuopt wheel for $("$py" --version)"
  GPUOPT_SELF_CONTAINED_DIR="$BUILD_DIR/self-contained" \
    CMAKE_PREFIX_PATH="$BUILD_DIR/install${CMAKE_PREFIX_PATH:+:$CMAKE_PREFIX_PATH}" \
    "$py" -m pip wheel -q --no-deps -w "$parts" "$GPUOPT_ROOT/python"
done

# The manylinux platform the merged wheel's ELF files allow.
tools=$parts/tools
python3 -m venv "$tools"
grep -E '^(auditwheel|pyelftools)==' "$GPUOPT_ROOT/requirements-test.txt" |
  xargs "$tools/bin/python" -m pip install -q
merged=$("$tools/bin/python" "$GPUOPT_ROOT/utils/merge-wheels.py" --out-dir "$parts/merged" "$parts"/*.whl)
show=$("$tools/bin/auditwheel" show "$merged")
echo "$show"
platform=$(echo "$show" | grep -oE 'manylinux_[0-9]+_[0-9]+_x86_64' | head -n 1)
[ -n "$platform" ] || { echo "build-wheel.sh: auditwheel names no manylinux tag" >&2; exit 1; }
rm -f "$out"/gpuopt-*.whl
wheel=$("$tools/bin/python" "$GPUOPT_ROOT/utils/merge-wheels.py" --out-dir "$out" \
  --platform "$platform" "$parts"/*.whl)

echo "=== checking $wheel"
python3 "$GPUOPT_ROOT/utils/check-needed.py" "$wheel"
bytes=$(stat -c %s "$wheel")
if [ "$bytes" -gt $((MAX_WHEEL_MB * 1000 * 1000)) ]; then
  echo "build-wheel.sh: $wheel is $bytes bytes, over $MAX_WHEEL_MB MB" >&2
  exit 1
fi
echo "OK: $wheel ($((bytes / 1000 / 1000)) MB, $platform)"
