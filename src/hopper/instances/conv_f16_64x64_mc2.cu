// One instantiation of braid's Hopper convolution (a translation unit each, so they build in parallel):
// 64x64 tiles in clusters of two CTAs on vertically adjacent tiles, each loading half of the
// filter tile for both (TMA multicast, GemmConfig::multicast). Why: the deep layers (512 channels at
// 7x7, batch 8-20) run 100-128 CTAs whose k-steps are bound by the L2's aggregate bandwidth (~7 TB/s:
// 128 CTAs x 24 KB per 0.44 us k-step, 128x64 split 4); multicast reads each filter tile from L2 once
// per pair (docs/hopper-conv.md).
#include "braid/kernels/hopper/conv_device.cuh"

namespace braid::hopper {
std::unique_ptr<ConvKernelBase> make_conv_kernel_f16_64x64_mc2(bool segmented) {
  return make_conv_kernel_pair<cutlass::half_t, 64, 64, stages_epilogue_by_default(64, 64), 2>(segmented);
}
}  // namespace braid::hopper
