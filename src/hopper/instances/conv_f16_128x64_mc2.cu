// One instantiation of braid's Hopper convolution (a translation unit each, so they build in parallel):
// 128x64 tiles in clusters of two CTAs on vertically adjacent tiles, each loading half of the
// filter tile for both (TMA multicast, GemmConfig::multicast). Built to test whether the deep layers'
// k-steps (512 channels at 7x7, batch 8-20: 128 CTAs x 24 KB per 0.44 us k-step, ~7 TB/s from L2) are bound
// by the L2's aggregate bandwidth: they are not -- with the filters read once per pair, a -mc2
// configuration ran a median 7% slower than its own-load twin over all 36 pair layers (faster in 47 of 1080
// comparisons, by at most 6%) and was never a layer's pick (bench/results/conv-pair-h100-20261124-3f1573f.*,
// docs/hopper-conv.md). Kept selectable (--configs), out of the benchmarks' default candidates.
#include "braid/kernels/hopper/conv_device.cuh"

namespace braid::hopper {
std::unique_ptr<ConvKernelBase> make_conv_kernel_f16_128x64_mc2(bool segmented) {
  return make_conv_kernel_pair<cutlass::half_t, 128, 64, stages_epilogue_by_default(128, 64), 2>(segmented);
}
}  // namespace braid::hopper
