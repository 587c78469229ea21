// One instantiation of braid's Hopper GEMM: 64x128 tiles in clusters of two on vertically adjacent tiles, the
// weight tile (B) multicast to both (GemmConfig::multicast). For the weight-streaming shapes with two row
// blocks per column block, where the L2 -> SM bytes per k-step bound the mainloop (docs/hopper-gemm.md).
#include "braid/kernels/hopper/gemm_device.cuh"

namespace braid::hopper {
std::unique_ptr<GemmKernelBase> make_gemm_kernel_f16_64x128_mc2() {
  return std::make_unique<GemmKernel<cutlass::half_t, 64, 128, stages_epilogue_by_default(64, 128), 2>>();
}
}  // namespace braid::hopper
