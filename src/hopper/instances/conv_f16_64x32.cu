// One instantiation of braid's Hopper convolution (a translation unit each, so they build in parallel).
// 64x32: twice the CTAs of 64x64 on the deep layers (512 filters, few pixels), whose time is the
// 72 k-steps a tile walks through K = 4608 whatever its width.
#include "braid/kernels/hopper/conv_device.cuh"

namespace braid::hopper {
std::unique_ptr<ConvKernelBase> make_conv_kernel_f16_64x32(bool segmented) { return make_conv_kernel_pair<cutlass::half_t, 64, 32>(segmented); }
}  // namespace braid::hopper
