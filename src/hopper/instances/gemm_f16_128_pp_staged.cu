// One instantiation of braid's Hopper GEMM (a translation unit each, so they build in parallel):
// 128x128 tiles, the two consumer warpgroups taking alternate tiles (pingpong, GemmConfig::pingpong),
// each staging its tile in 64-column panels stored by TMA ("-staged-pp", epilogue.cuh
// store_tile_tma_panels).
#include "braid/kernels/hopper/gemm_device.cuh"

namespace braid::hopper {
std::unique_ptr<GemmKernelBase> make_gemm_kernel_f16_128_pp_staged() {
  return std::make_unique<GemmKernel<cutlass::half_t, 128, 128, true, 1, true>>();
}
}  // namespace braid::hopper
