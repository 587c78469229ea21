// One instantiation of braid's Hopper convolution (a translation unit each, so they build in parallel):
// two CTAs per SM (GemmConfig::ctas_per_sm, -o2), each with half the shared memory.
#include "braid/kernels/hopper/conv_device.cuh"

namespace braid::hopper {
std::unique_ptr<ConvKernelBase> make_conv_kernel_f16_64x32_o2(bool segmented) {
  return make_conv_kernel_pair<cutlass::half_t, 64, 32, stages_epilogue_by_default(64, 32), 1, 2>(segmented);
}
}  // namespace braid::hopper
