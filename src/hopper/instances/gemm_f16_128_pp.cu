// One instantiation of braid's Hopper GEMM (a translation unit each, so they build in parallel):
// 128x128 tiles, the two consumer warpgroups taking alternate tiles (pingpong, GemmConfig::pingpong),
// direct epilogue stores.
#include "braid/kernels/hopper/gemm_device.cuh"

namespace braid::hopper {
std::unique_ptr<GemmKernelBase> make_gemm_kernel_f16_128_pp() {
  return std::make_unique<GemmKernel<cutlass::half_t, 128, 128, false, 1, true>>();
}
}  // namespace braid::hopper
