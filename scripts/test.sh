#!/usr/bin/env bash
# Runs every test: CPU tests (generator, policy math, plan checks, simulator) always; GPU tests
# (tile-sync proof on a real GPU) run where a CUDA device is present and are skipped elsewhere.
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD=${BRAID_BUILD_DIR:-build}
[ -f "$BUILD/build.ninja" ] || bash scripts/setup.sh
cmake --build "$BUILD" -j "${BRAID_JOBS:-$(nproc)}"
cd "$BUILD" && ctest --output-on-failure -j "${BRAID_JOBS:-$(nproc)}"
