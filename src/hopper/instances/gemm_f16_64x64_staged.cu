// One instantiation of braid's Hopper GEMM (a translation unit each, so they build in parallel).
// 64x64 staged for the TMA-store epilogue (whole tiles only): twice the CTAs of 64x128 on a weight-streaming GEMM with
// few tokens -- under ~90 CTAs a weight stream is bound by each CTA's intake (bench/results/inflight-h200-20261129/),
// and GPT-3's W1 has 48 tiles of 64x128 at 64 tokens. Its ring is deep (16 KB a stage): see GemmConfig::inflight.
#include "braid/kernels/hopper/gemm_device.cuh"

namespace braid::hopper {
std::unique_ptr<GemmKernelBase> make_gemm_kernel_f16_64x64_staged(bool segmented) {
  if (segmented) return nullptr;
  return std::make_unique<GemmKernel<cutlass::half_t, 64, 64, true, 1, false, false>>();
}
}  // namespace braid::hopper
