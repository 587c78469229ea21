// One instantiation of braid's Hopper GEMM (a translation unit each, so they build in parallel).
#include "braid/kernels/hopper/gemm_device.cuh"

namespace braid::hopper {
std::unique_ptr<GemmKernelBase> make_gemm_kernel_f16_128(bool segmented) { return make_gemm_kernel_pair<cutlass::half_t, 128, 128>(segmented); }
}  // namespace braid::hopper
