// One instantiation of braid's Hopper convolution (a translation unit each, so they build in parallel).
#include "braid/kernels/hopper/conv_device.cuh"

namespace braid::hopper {
std::unique_ptr<ConvKernelBase> make_conv_kernel_f16_64x128(bool segmented) { return make_conv_kernel_pair<cutlass::half_t, 64, 128>(segmented); }
}  // namespace braid::hopper
