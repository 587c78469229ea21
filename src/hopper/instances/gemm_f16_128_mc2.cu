// One instantiation of braid's Hopper GEMM (a translation unit each, so they build in parallel):
// 128x128 tiles (staged epilogue) in clusters of two CTAs on vertically adjacent tiles, the weights
// (B) multicast to both (GemmConfig::multicast).
#include "braid/kernels/hopper/gemm_device.cuh"

namespace braid::hopper {
std::unique_ptr<GemmKernelBase> make_gemm_kernel_f16_128_mc2() {
  return std::make_unique<GemmKernel<cutlass::half_t, 128, 128, true, 2>>();
}
}  // namespace braid::hopper
