// One instantiation unit of braid's Hopper GEMM (a translation unit each, so they build in parallel).
// Transposed (GemmConfig::transposed): 64 tokens x 320 weight columns (five 64-row MMA blocks: a width the
// row-major kernels cannot have) on one consumer warpgroup, computed as D^T = B^T A^T with the weights as the
// MMA's M operand; whole tiles. GPT-3's QKV GEMM (N = 4608) at 512 tokens is 15 x 8 = 120 such tiles --
// cuBLASLt's tiling there, whose kernel runs them in clusters of 4 along the tokens, the weights multicast.
// multicast 4: the tiles of four consecutive token blocks on the same weight columns as one cluster, each CTA
// loading a quarter of the weight tile for all four (-mc4; the one cluster size measured to pay: clusters of 2
// ran 20% slower, bench/results/transposed-multicast-h100-20261127/).
#include "braid/kernels/hopper/gemm_device.cuh"
#include "braid/kernels/hopper/epilogue_transposed.cuh"

namespace braid::hopper {
std::unique_ptr<GemmKernelBase> make_gemm_kernel_f16_64x320_t(int multicast) {
  if (multicast == 4) return std::make_unique<GemmKernel<cutlass::half_t, 64, 320, false, 4, false, false, true>>();
  return std::make_unique<GemmKernel<cutlass::half_t, 64, 320, false, 1, false, false, true>>();
}
}  // namespace braid::hopper
