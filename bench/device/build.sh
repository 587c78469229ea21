#!/usr/bin/env bash
# Builds braid on the GPU machine, which has nvcc, CMake and ninja but no network, no CUTLASS headers and
# no GoogleTest: both travel compressed in .carry/ (the working tree may carry 64 MiB in all, and
# bench/results/ alone holds ~45 MB, so braid's own binaries -- 35-70 MB each -- are built there).
#   here:  bash bench/device/build.sh --pack          writes .carry/cutlass.tar.xz and .carry/googletest.tar.xz
#   there: BUILD=/tmp/b bash bench/device/build.sh [target ...]
#          (default targets: braid-gemm braid-bench-conv braid-bench-mlp braid_gpu_tests; binaries end up
#          in $BUILD/bin)
# (Written 2026-11-26 and its GoogleTest step tried on the dev machine; not yet run on the GPU machine --
#  that day the binaries were built here and carried xz-packed instead, bench/device/unpack.py.)
set -euo pipefail
cd "$(dirname "$0")/../.."
if [ "${1:-}" = --pack ]; then
  mkdir -p .carry
  [ -f .deps/cutlass/VERSION ] || { echo "build.sh: run scripts/setup.sh first (.deps/cutlass)"; exit 2; }
  tar -cJf .carry/cutlass.tar.xz .deps/cutlass
  tar -C / -cJf .carry/googletest.tar.xz usr/src/googletest
  ls -la .carry/*.tar.xz
  exit 0
fi
BUILD=${BUILD:-/tmp/b}
targets=("$@")
[ ${#targets[@]} -gt 0 ] || targets=(braid-gemm braid-bench-conv braid-bench-mlp braid_gpu_tests)
# (python's tarfile: the machine may lack the xz command)
untar() { python3 -c "import sys, tarfile; tarfile.open(sys.argv[1]).extractall(sys.argv[2])" "$1" "$2"; }
[ -f .deps/cutlass/VERSION ] || untar .carry/cutlass.tar.xz .
if [ ! -f /tmp/gtest/lib/libgtest.a ] && [ ! -f /tmp/gtest/lib64/libgtest.a ]; then
  rm -rf /tmp/gtest-src && mkdir -p /tmp/gtest-src
  untar .carry/googletest.tar.xz /tmp/gtest-src
  cmake -S /tmp/gtest-src/usr/src/googletest -B /tmp/gtest-build -G Ninja -DCMAKE_BUILD_TYPE=Release \
    -DCMAKE_INSTALL_PREFIX=/tmp/gtest -DBUILD_GMOCK=OFF > /tmp/gtest-build.log 2>&1
  cmake --build /tmp/gtest-build >> /tmp/gtest-build.log 2>&1
  cmake --install /tmp/gtest-build >> /tmp/gtest-build.log 2>&1
fi
export PATH=/usr/local/cuda/bin:$PATH
cmake -S . -B "$BUILD" -G Ninja -DCMAKE_BUILD_TYPE=Release -DBRAID_ENABLE_CUDA=ON -DCMAKE_PREFIX_PATH=/tmp/gtest > "$BUILD.cmake.log" 2>&1 ||
  { tail -30 "$BUILD.cmake.log"; exit 1; }
start=$(date +%s)
cmake --build "$BUILD" -j "$(nproc)" --target "${targets[@]}" > "$BUILD.build.log" 2>&1 || { grep -B2 -A12 -m3 "error" "$BUILD.build.log"; exit 1; }
mkdir -p "$BUILD/bin"
for t in "${targets[@]}"; do
  f=$(find "$BUILD" -maxdepth 3 -type f -name "$t" -perm -u+x | head -1)
  [ -n "$f" ] && cp "$f" "$BUILD/bin/"
done
echo "build.sh: ${targets[*]} built in $(( $(date +%s) - start )) s on $(nproc) cores"
