// One instantiation of braid's Hopper GEMM (a translation unit each, so they build in parallel).
// Transposed (GemmConfig::transposed): 64 tokens x 320 weight columns (five 64-row MMA blocks: a width the
// row-major kernels cannot have), computed as D^T = B^T A^T with the weights as the MMA's M operand;
// two consumer warpgroups of 32 tokens; whole tiles. GPT-3's QKV GEMM (N = 4608) at 512 tokens is 120 such tiles.
#include "braid/kernels/hopper/gemm_device.cuh"
#include "braid/kernels/hopper/epilogue_transposed.cuh"

namespace braid::hopper {
std::unique_ptr<GemmKernelBase> make_gemm_kernel_f16_64x320_t() {
  return std::make_unique<GemmKernel<cutlass::half_t, 64, 320, false, 1, false, false, true>>();
}
}  // namespace braid::hopper
