// One instantiation of braid's Hopper GEMM (a translation unit each, so they build in parallel).
#include "braid/kernels/hopper/gemm_device.cuh"

namespace braid::hopper {
std::unique_ptr<GemmKernelBase> make_gemm_kernel_bf16_64x256(bool segmented) { return make_gemm_kernel_pair<cutlass::bfloat16_t, 64, 256>(segmented); }
}  // namespace braid::hopper
