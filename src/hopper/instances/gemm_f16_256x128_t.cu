// One instantiation of braid's Hopper GEMM (a translation unit each, so they build in parallel).
// Transposed (GemmConfig::transposed): 256 tokens x 128 weight columns, computed as D^T = B^T A^T with
// the weights as the MMA's M operand and the two consumer warpgroups splitting the tokens; whole tiles.
#include "braid/kernels/hopper/gemm_device.cuh"
#include "braid/kernels/hopper/epilogue_transposed.cuh"

namespace braid::hopper {
std::unique_ptr<GemmKernelBase> make_gemm_kernel_f16_256x128_t() {
  return std::make_unique<GemmKernel<cutlass::half_t, 256, 128, false, 1, false, false, true>>();
}
}  // namespace braid::hopper
