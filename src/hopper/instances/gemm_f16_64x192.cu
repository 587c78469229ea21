// One instantiation of braid's Hopper GEMM (a translation unit each, so they build in parallel).
// 64x192: 128 tiles on the MLP's narrow-token shapes (GPT-3 W2 at 128 tokens, W1 at 256), the tile shape
// cuBLASLt's kernels pick there (bench/results/gemm-shapes-h100-20261125-aa090a4.log).
#include "braid/kernels/hopper/gemm_device.cuh"

namespace braid::hopper {
std::unique_ptr<GemmKernelBase> make_gemm_kernel_f16_64x192(bool segmented) { return make_gemm_kernel_pair<cutlass::half_t, 64, 192>(segmented); }
}  // namespace braid::hopper
