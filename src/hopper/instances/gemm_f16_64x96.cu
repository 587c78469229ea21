// One instantiation of braid's Hopper GEMM (a translation unit each, so they build in parallel).
// 64x96: 128 tiles on GPT-3's W1 (6144 columns, 64 column blocks) at 128 tokens, where 64x128 has 96 and
// 64x192 64: a weight-streaming GEMM's CTA is bound by what it takes in (A + B bytes per k-step,
// bench/results/inflight-h200-20261129/), and 96 columns cut a CTA's intake by a sixth against 64x128
// while a third more SMs stream. Direct stores (96 columns are not whole 64-column TMA-store panels).
#include "braid/kernels/hopper/gemm_device.cuh"

namespace braid::hopper {
std::unique_ptr<GemmKernelBase> make_gemm_kernel_f16_64x96(bool segmented) {
  return make_gemm_kernel_pair<cutlass::half_t, 64, 96>(segmented);
}
}  // namespace braid::hopper
