// One instantiation of braid's Hopper convolution (a translation unit each, so they build in parallel).
#include "braid/kernels/hopper/conv_device.cuh"

namespace braid::hopper {
std::unique_ptr<ConvKernelBase> make_conv_kernel_bf16_64x64(bool segmented) { return make_conv_kernel_pair<cutlass::bfloat16_t, 64, 64>(segmented); }
}  // namespace braid::hopper
