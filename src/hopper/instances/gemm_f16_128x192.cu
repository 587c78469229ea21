// One instantiation of braid's Hopper GEMM (a translation unit each, so they build in parallel).
// Tiles sized for the SM count (docs/hopper-gemm.md, "Tiles that fit the SM count").
#include "braid/kernels/hopper/gemm_device.cuh"

namespace braid::hopper {
std::unique_ptr<GemmKernelBase> make_gemm_kernel_f16_128x192(bool segmented) { return make_gemm_kernel_pair<cutlass::half_t, 128, 192>(segmented); }
}  // namespace braid::hopper
