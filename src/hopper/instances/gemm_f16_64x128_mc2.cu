// One instantiation of braid's Hopper GEMM: 64x128 tiles in clusters of two on vertically adjacent tiles, the
// weight tile (B) multicast to both (GemmConfig::multicast). Built for the weight-streaming shapes with two
// row blocks per column block (fewer L2 -> SM bytes per k-step); measured slower than own loads there at
// M = 128-384 (docs/hopper-gemm.md, "Few tokens"), so the MLP tuner does not try them.
#include "braid/kernels/hopper/gemm_device.cuh"

namespace braid::hopper {
std::unique_ptr<GemmKernelBase> make_gemm_kernel_f16_64x128_mc2() {
  return std::make_unique<GemmKernel<cutlass::half_t, 64, 128, stages_epilogue_by_default(64, 128), 2>>();
}
}  // namespace braid::hopper
