// Device-side data helpers for tests and benchmarks: fresh random fp16 data (counter-based, so a
// seed reproduces it) and a bitwise comparison that counts differing elements on the device.
#pragma once
#include <cuda_fp16.h>

#include <cstdint>

#include "braid/runtime/chain.cuh"

namespace braid {

__device__ __forceinline__ uint64_t splitmix64(uint64_t x) {
  x += 0x9e3779b97f4a7c15ull;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}

template <int = 0>
__global__ void fill_random_kernel(__half* p, size_t n, uint64_t seed, float scale) {
  for (size_t i = blockIdx.x * size_t(blockDim.x) + threadIdx.x; i < n; i += size_t(gridDim.x) * blockDim.x) {
    const uint64_t r = splitmix64(seed * 0x100000001b3ull + i);
    p[i] = __float2half(scale * (float(r >> 40) * (2.0f / 16777216.0f) - 1.0f));
  }
}

// Counts elements whose bits differ (NaN poison included: a NaN never equals a number).
template <int = 0>
__global__ void count_bit_mismatch_kernel(const __half* a, const __half* b, size_t n, unsigned long long* count) {
  unsigned long long local = 0;
  for (size_t i = blockIdx.x * size_t(blockDim.x) + threadIdx.x; i < n; i += size_t(gridDim.x) * blockDim.x)
    local += __half_as_ushort(a[i]) != __half_as_ushort(b[i]);
  if (local) atomicAdd(count, local);
}

// Uniform in [-scale, scale).
inline void fill_random(__half* p, size_t n, uint64_t seed, float scale, cudaStream_t s = nullptr) {
  fill_random_kernel<<<256, 256, 0, s>>>(p, n, seed, scale);
  BRAID_CUDA_CHECK(cudaGetLastError());
}

}  // namespace braid
