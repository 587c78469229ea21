// One instantiation of braid's Hopper GEMM (a translation unit each, so they build in parallel).
// 128x96: 128 tiles on GPT-3's W1 (6144 columns, 64 column blocks) at 256 tokens, where 128x128 has 96 and
// 128x192 64: a weight-streaming GEMM's CTA is bound by what it takes in (A + B bytes per k-step,
// bench/results/inflight-h200-20261129/), and 96 columns cut a CTA's intake by an eighth against 128x128
// while a third more SMs stream. Direct stores (96 columns are not whole 64-column TMA-store panels).
#include "braid/kernels/hopper/gemm_device.cuh"

namespace braid::hopper {
std::unique_ptr<GemmKernelBase> make_gemm_kernel_f16_128x96(bool segmented) {
  return make_gemm_kernel_pair<cutlass::half_t, 128, 96>(segmented);
}
}  // namespace braid::hopper
