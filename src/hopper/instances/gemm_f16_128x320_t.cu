// One instantiation of braid's Hopper GEMM (a translation unit each, so they build in parallel).
// Transposed (GemmConfig::transposed): 128 tokens x 320 weight columns (five 64-row MMA blocks: a width the
// row-major kernels cannot have), computed as D^T = B^T A^T with the weights as the MMA's M operand;
// two consumer warpgroups of 64 tokens; whole tiles. GPT-3's QKV GEMM (N = 4608) at 1024 tokens is 120 such tiles.
// multicast 4: clusters of four CTAs on vertically adjacent tiles, the weight tile multicast to all four (the
// tiling and clusters of cuBLASLt's 320x128 kernel there: 30 clusters, one wave).
#include "braid/kernels/hopper/gemm_device.cuh"
#include "braid/kernels/hopper/epilogue_transposed.cuh"

namespace braid::hopper {
std::unique_ptr<GemmKernelBase> make_gemm_kernel_f16_128x320_t(int multicast) {
  if (multicast == 4) return std::make_unique<GemmKernel<cutlass::half_t, 128, 320, false, 4, false, false, true>>();
  return std::make_unique<GemmKernel<cutlass::half_t, 128, 320, false, 1, false, false, true>>();
}
}  // namespace braid::hopper
