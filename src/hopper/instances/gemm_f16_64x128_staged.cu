// One instantiation of braid's Hopper GEMM (a translation unit each, so they build in parallel).
// 64x128 staged for the TMA-store epilogue (whole tiles only): at few tokens a one-wave GEMM's epilogue
// is exposed, and the direct stores' half-sector writes took 1.9-2.4 us of it without an activation
// (64x192) and 4.3-6.4 us with GeLU (unit traces, bench/results/gemm-switch-trace-h100-20261125-a16e3d4/).
// Costs one pipeline stage (the staging buffer).
#include "braid/kernels/hopper/gemm_device.cuh"

namespace braid::hopper {
std::unique_ptr<GemmKernelBase> make_gemm_kernel_f16_64x128_staged(bool segmented) {
  if (segmented) return nullptr;
  return std::make_unique<GemmKernel<cutlass::half_t, 64, 128, true, 1, false, false>>();
}
}  // namespace braid::hopper
