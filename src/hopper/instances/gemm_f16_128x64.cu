// One instantiation of braid's Hopper GEMM (a translation unit each, so they build in parallel).
// 128x64 (direct stores) and 128x64 staged for the TMA store (whole tiles): at 128 tokens one row block
// holds every token, so each weight column block is read once (64x128 reads it twice), and the two
// consumer warpgroups share the epilogue (half the fragment per thread, two warps per scheduler to hide
// the GeLU's latency: 64x128's GeLU epilogue took 4.3 us of a one-wave GEMM, unit traces in
// bench/results/gemm-staged64-h100-20261125-a16e3d4/).
#include "braid/kernels/hopper/gemm_device.cuh"

namespace braid::hopper {
std::unique_ptr<GemmKernelBase> make_gemm_kernel_f16_128x64(bool segmented) {
  return make_gemm_kernel_pair<cutlass::half_t, 128, 64>(segmented);
}
std::unique_ptr<GemmKernelBase> make_gemm_kernel_f16_128x64_staged(bool segmented) {
  if (segmented) return nullptr;
  return std::make_unique<GemmKernel<cutlass::half_t, 128, 64, true, 1, false, false>>();
}
}  // namespace braid::hopper
