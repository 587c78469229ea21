// One instantiation of braid's Hopper GEMM (a translation unit each, so they build in parallel).
// Transposed (GemmConfig::transposed): 192 tokens x 192 weight columns, computed as D^T = B^T A^T with
// the weights as the MMA's M operand and the two consumer warpgroups splitting the tokens; whole tiles.
#include "braid/kernels/hopper/gemm_device.cuh"
#include "braid/kernels/hopper/epilogue_transposed.cuh"

namespace braid::hopper {
std::unique_ptr<GemmKernelBase> make_gemm_kernel_f16_192x192_t() {
  return std::make_unique<GemmKernel<cutlass::half_t, 192, 192, false, 1, false, false, true>>();
}
}  // namespace braid::hopper
