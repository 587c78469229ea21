// Kernels that tell the kernel-switch penalty's causes apart (braid-gemm --before icache|tiny): a braid
// GEMM runs 1.02-1.09x its own time right after another braid kernel function and not after itself
// (docs/hopper-gemm.md). Between the L2 eviction and the timed GEMM, one of these runs on every SM:
//   tiny    a kernel of a few instructions: any other kernel in between, nothing displaced;
//   icache  a kernel of ~12k distinct instructions (~190 KB of SASS, about a braid kernel's size) and no
//           memory traffic: it displaces the GEMM's code from the SMs' instruction caches, nothing else.
// If "after icache" costs what "after another braid GEMM" costs, the penalty is instruction fetch.
#pragma once
#include <cuda_runtime.h>

#include <cstdint>
#include <utility>

namespace braid::bench {

// One multiply-add per index with a distinct immediate and a runtime factor, so that neither the
// front end nor ptxas can fold the chain: N SASS instructions.
template <int I>
__device__ __forceinline__ void mad_step(uint32_t& x, uint32_t y) {
  asm volatile("mad.lo.u32 %0, %0, %1, %2;" : "+r"(x) : "r"(y), "n"(I));
}
template <int... Is>
__device__ __forceinline__ uint32_t long_straight_line(uint32_t x, uint32_t y, std::integer_sequence<int, Is...>) {
  (mad_step<Is>(x, y), ...);
  return x;
}

constexpr int kFootprintInstructions = 12288;

__global__ void __launch_bounds__(128) icache_footprint_kernel(uint32_t y, uint32_t* out) {
  const uint32_t x = long_straight_line(threadIdx.x, y, std::make_integer_sequence<int, kFootprintInstructions>{});
  if (x == 0x9e3779b9u) out[0] = x;  // (never true in practice; keeps the chain)
}

__global__ void tiny_kernel(uint32_t y, uint32_t* out) {
  if (threadIdx.x == y) out[0] = y;
}

// Two CTAs per SM of 128 threads: every SM runs the code.
inline void launch_footprint(bool large, int sms, uint32_t* out, cudaStream_t s) {
  if (large) icache_footprint_kernel<<<2 * sms, 128, 0, s>>>(3u, out);
  else tiny_kernel<<<2 * sms, 128, 0, s>>>(1u << 20, out);
}

}  // namespace braid::bench
