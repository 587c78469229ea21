#!/usr/bin/env bash
# Sets up a fresh machine for braid and builds it. Idempotent: installs only what is missing.
#   - Debian packages: cmake, ninja, g++, GoogleTest (the CUDA 13.0 toolkit is expected at /usr/local/cuda)
#   - PyPI: matplotlib (plots), pinned
# Then configures and builds into ./build (BRAID_BUILD_DIR to change).
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD=${BRAID_BUILD_DIR:-build}

need_apt=()
for pkg in cmake ninja-build g++ libgtest-dev python3-pip; do
  dpkg -s "$pkg" >/dev/null 2>&1 || need_apt+=("$pkg")
done
if [ ${#need_apt[@]} -gt 0 ]; then
  echo "setup: installing Debian packages: ${need_apt[*]}"
  SUDO=""; [ "$(id -u)" -ne 0 ] && SUDO=sudo
  $SUDO apt-get update -qq && $SUDO apt-get install -y -qq "${need_apt[@]}"
fi

if ! python3 -c "import matplotlib" >/dev/null 2>&1; then
  echo "setup: installing matplotlib (plots)"
  python3 -m pip install -q "matplotlib==3.9.2" || echo "setup: warning: matplotlib not installed; plots will be skipped"
fi

# CUTLASS/CuTe headers, pinned, from PyPI's nvidia-cutlass wheel (its C++ headers sit under
# cutlass_library/source/include; the 4.2.0.0 wheel holds CUTLASS 4.2.0 headers). Into .deps/ (ignored).
CUTLASS_WHEEL_VERSION=4.2.0.0
if [ ! -f .deps/cutlass/VERSION ] || [ "$(cat .deps/cutlass/VERSION)" != "$CUTLASS_WHEEL_VERSION" ]; then
  echo "setup: fetching CUTLASS headers (nvidia-cutlass==$CUTLASS_WHEEL_VERSION)"
  tmp=$(mktemp -d)
  if python3 -m pip download -q --no-deps --only-binary=:all: -d "$tmp" "nvidia-cutlass==$CUTLASS_WHEEL_VERSION"; then
    rm -rf .deps/cutlass && mkdir -p .deps/cutlass
    (cd "$tmp" && python3 -m zipfile -e nvidia_cutlass-*.whl x >/dev/null)
    mv "$tmp/x/cutlass_library/source/include" .deps/cutlass/include
    mv "$tmp/x/cutlass_library/source/tools/util/include" .deps/cutlass/util-include
    echo "$CUTLASS_WHEEL_VERSION" > .deps/cutlass/VERSION
  else
    echo "setup: warning: could not fetch CUTLASS; the CUTLASS kernels and peers will not be built"
  fi
  rm -rf "$tmp"
fi

export PATH=/usr/local/cuda/bin:$PATH
CUDA_FLAG=-DBRAID_ENABLE_CUDA=ON
if ! command -v nvcc >/dev/null 2>&1; then
  echo "setup: warning: nvcc not found: building the CPU parts only (generator, simulator, their tests)"
  CUDA_FLAG=-DBRAID_ENABLE_CUDA=OFF
fi
cmake -S . -B "$BUILD" -G Ninja -DCMAKE_BUILD_TYPE=Release $CUDA_FLAG >/dev/null
# CUDA translation units take ~1.5 GB each; two jobs fit the 2-core / 24 GB machines.
cmake --build "$BUILD" -j "${BRAID_JOBS:-$(nproc)}"
echo "setup: built into $BUILD"
