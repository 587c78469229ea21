// The device layer of braid's Hopper convolution for one element type and tile: the im2col TMA
// descriptors (CUTLASS's implicit-GEMM collective arguments -> params) and the launch.
// Included only by the instantiation units in src/hopper/instances/conv_*.cu.
#pragma once
#include "braid/kernels/hopper/conv_op.hpp"
#include "braid/kernels/hopper/conv_traits.cuh"
#include "braid/kernels/hopper/gemm_device.cuh"

namespace braid::hopper {

// ClusterM = 2: clusters of two CTAs on vertically adjacent tiles sharing the filter tiles (multicast).
// CtasPerSm = 2: two CTAs per SM, each with half the shared memory (GemmConfig::ctas_per_sm).
template <class Element, int TileM, int TileN, bool Staged = stages_epilogue_by_default(TileM, TileN),
          bool Segmented = true, int ClusterM = 1, int CtasPerSm = 1>
class ConvKernel final : public ConvKernelBase {
 public:
  using Traits = ConvTraits<Element, TileM, TileN, Staged, Segmented, ClusterM, CtasPerSm>;
  using Mainloop = typename Traits::Mainloop;

  // The lean and synced forms (gemm_config.hpp, "The forms of braid's GEMM kernels") of the whole-tile
  // instantiations, for the two activations a convolution has (bias and residual stay run-time inputs of all).
  static constexpr bool kHasLeanForms = !Traits::kSegmented;
  using Lean = LeanForms<Traits, Activation::None, Activation::ReLU>;

  ConvKernel() {
    reserve_kernel_smem<Traits>("hopper conv");
    if constexpr (kHasLeanForms) Lean::reserve("hopper conv (lean form)");
  }

  void set_problem(const ConvArgs& a, const WorkSchedule& sched, void* partials,
                   unsigned long long* arrivals) override {
    const Conv2dProblem problem(cutlass::conv::Mode::kCrossCorrelation, {a.N, a.H, a.W, a.C}, {a.K, a.R, a.S, a.C},
                                {a.pad, a.pad}, {a.pad, a.pad}, {1, 1}, {1, 1}, 1);
    params_.mainloop = Mainloop::to_underlying_arguments(problem, reinterpret_cast<const Element*>(a.X),
                                                         reinterpret_cast<const Element*>(a.Wt));
    params_.problem = problem;
    params_.M = a.pixels();
    params_.N = a.K;
    params_.K = a.R * a.S * a.C;
    params_.n_out = a.K;
    params_.D = reinterpret_cast<Element*>(a.Y);
    params_.bias = reinterpret_cast<const Element*>(a.bias);
    params_.residual = reinterpret_cast<const Element*>(a.residual);
    params_.act = a.act;
    params_.sched = sched;
    params_.partials = reinterpret_cast<float4*>(partials);
    params_.arrivals = arrivals;
    params_.img_w = a.W;
    params_.pad = a.pad;
    params_.channels = a.C;
    params_.channel_blocks = FastDiv(uint32_t(a.C / kTileK));
    Traits::set_output_map(params_, TileN);
  }

  void launch(cudaStream_t s, bool pdl, int ctas, const StageParams& sp) override {
    if constexpr (kHasLeanForms)
      if (Lean::launch(params_, s, pdl, ctas, sp, "hopper conv (lean form)")) return;
    launch_kernel_persistent<Traits>(params_, s, pdl, ctas, sp, "hopper conv");
  }

  size_t smem_bytes() const override { return Traits::kSmemBytes; }
  int max_active_clusters(int size) const override { return hopper::max_active_clusters<Traits>(size); }
  bool cluster_pairs_in_rounds() const override { return !cluster_pulls<Traits>(2); }
  int multicast() const override { return Traits::kMulticast; }
  int ctas_per_sm() const override { return hopper::resident_ctas_per_sm<Traits>(); }
  bool segmented() const override { return Traits::kSegmented; }
  bool set_unit_trace(UnitTrace* records, uint32_t stride) override { return hopper::set_unit_trace(params_, records, stride); }

 private:
  typename Traits::Params params_{};
};

// With and without the split-K fixup (as make_gemm_kernel_pair).
template <class Element, int TileM, int TileN, bool Staged = stages_epilogue_by_default(TileM, TileN), int ClusterM = 1,
          int CtasPerSm = 1>
std::unique_ptr<ConvKernelBase> make_conv_kernel_pair(bool segmented) {
  if (segmented) return std::make_unique<ConvKernel<Element, TileM, TileN, Staged, true, ClusterM, CtasPerSm>>();
  return std::make_unique<ConvKernel<Element, TileM, TileN, Staged, false, ClusterM, CtasPerSm>>();
}

}  // namespace braid::hopper
