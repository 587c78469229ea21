// One instantiation of braid's Hopper convolution (a translation unit each, so they build in
// parallel): 128x64 tiles whose epilogue stages the tile in shared memory (whole-sector stores, one
// pipeline stage fewer than the default, direct one; see EpilogueStore in gemm_config.hpp).
#include "braid/kernels/hopper/conv_device.cuh"

namespace braid::hopper {
std::unique_ptr<ConvKernelBase> make_conv_kernel_f16_128x64_staged(bool segmented) { return make_conv_kernel_pair<cutlass::half_t, 128, 64, true>(segmented); }
}  // namespace braid::hopper
