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
