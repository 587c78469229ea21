// One instantiation of braid's Hopper GEMM (a translation unit each, so they build in parallel).
// 192x96: 128 tiles on GPT-3's W1 at 384 tokens (2 row blocks x 64 column blocks), one wave where 192x128
// leaves 36 of 132 SMs idle (96 tiles: W1 105 us against W2's 90 us on 192x192's 128 tiles, same bytes and
// FLOPs; bench/results/mlp-hopper-h100-20261125-8b7bf72-gpt3.log). Direct stores (96 columns are not
// whole 64-column TMA-store panels).
#include "braid/kernels/hopper/gemm_device.cuh"

namespace braid::hopper {
std::unique_ptr<GemmKernelBase> make_gemm_kernel_f16_192x96(bool segmented) {
  return make_gemm_kernel_pair<cutlass::half_t, 192, 96>(segmented);
}
}  // namespace braid::hopper
