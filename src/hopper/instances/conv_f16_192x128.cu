// One instantiation of braid's Hopper convolution (a translation unit each, so they build in parallel):
// 192-pixel x 128-filter tiles, three consumer warpgroups (as the 192-row GEMM tiles). Why: a layer whose
// 128x128 tile count is just over a wave (C=128 28x28 at batch 24: 147 tiles on 132 SMs, two rounds of
// 18 k-steps) is 98 tiles of 192x128 -- one round (docs/hopper-conv.md).
#include "braid/kernels/hopper/conv_device.cuh"

namespace braid::hopper {
std::unique_ptr<ConvKernelBase> make_conv_kernel_f16_192x128(bool segmented) { return make_conv_kernel_pair<cutlass::half_t, 192, 128>(segmented); }
}  // namespace braid::hopper
