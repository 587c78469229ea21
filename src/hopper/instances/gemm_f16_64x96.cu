// One instantiation of braid's Hopper GEMM (a translation unit each, so they build in parallel).
// 64x96: twice 64x192's CTAs on a weight-streaming GEMM with few tokens (GPT-3's W2 at T <= 64: 128 CTAs
// against 64). Built for GPT-3's W1 at T = 128 (128 tiles where 64x128 has 96), where it streamed 56.5 us
// against 64x128-staged's 43.6: a 96-column weight tile is not whole 128-byte swizzled rows
// (bench/results/x96-tiles-h200-20261129/). Direct stores (96 columns are not whole 64-column TMA-store panels).
#include "braid/kernels/hopper/gemm_device.cuh"

namespace braid::hopper {
std::unique_ptr<GemmKernelBase> make_gemm_kernel_f16_64x96(bool segmented) {
  return make_gemm_kernel_pair<cutlass::half_t, 64, 96>(segmented);
}
}  // namespace braid::hopper
