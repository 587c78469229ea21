// One instantiation of braid's Hopper GEMM (a translation unit each, so they build in parallel).
// A wide tile with the staged epilogue, whole tiles only: the TMA-store epilogue (epilogue.cuh,
// store_tile_tma) costs the pipeline one stage of shared memory for the staging buffer; segmented
// schedules (split-K, stream-K) keep the direct stores of make_gemm_kernel_f16_192x192.
#include "braid/kernels/hopper/gemm_device.cuh"

namespace braid::hopper {
std::unique_ptr<GemmKernelBase> make_gemm_kernel_f16_192x192_staged(bool segmented) {
  if (segmented) return nullptr;
  return std::make_unique<GemmKernel<cutlass::half_t, 192, 192, true, 1, false, false>>();
}
}  // namespace braid::hopper
