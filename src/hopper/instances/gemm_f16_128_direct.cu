// One instantiation of braid's Hopper GEMM (a translation unit each, so they build in parallel):
// 128x128 tiles storing straight from the accumulators (one pipeline stage more than the default,
// staged one; for the bandwidth-bound shapes, see EpilogueStore in gemm_config.hpp).
#include "braid/kernels/hopper/gemm_device.cuh"

namespace braid::hopper {
std::unique_ptr<GemmKernelBase> make_gemm_kernel_f16_128_direct(bool segmented) { return make_gemm_kernel_pair<cutlass::half_t, 128, 128, false>(segmented); }
}  // namespace braid::hopper
