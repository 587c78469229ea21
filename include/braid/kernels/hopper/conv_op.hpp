// braid::hopper::ConvOp: braid's Hopper implicit-GEMM 3x3 (R x S) convolution behind a plain
// (non-template) interface: NHWC activations, KRSC filters, fp16/bf16, fp32 accumulation, stride 1,
// same padding, bias (+ a residual tensor) + ReLU (or no activation) fused in the epilogue.
//
//   hopper::ConvOp c;
//   if (auto why = c.prepare({DType::F16, X, Wt, bias, Y, N, H, W, C, K}, cfg); !why.empty()) ...
//   c.run(stream);                                                       // plain, stream-ordered
//   chain.set_launcher(i, [&](const LaunchCtx& ctx) { c.launch(ctx); });  // a stage of a Chain
//
// The GEMM view (conv_traits.cuh): M = N*H*W pixels, N = K filters, K = R*S*C; GemmConfig picks the
// tile (tile_m 64/128 pixels x tile_n 64/128 filters, or 192 x 128 for fp16) and the work
// decomposition (split-K, stream-K).
#pragma once
#include <memory>
#include <string>

#include "braid/kernels/hopper/gemm_op.hpp"

namespace braid::hopper {

struct ConvArgs {
  DType dtype = DType::F16;
  const void* X = nullptr;     // [N, H, W, C]
  const void* Wt = nullptr;    // [K, R, S, C]
  const void* bias = nullptr;  // [K]
  void* Y = nullptr;           // [N, H, W, K]
  int N = 0, H = 0, W = 0, C = 0, K = 0;
  int R = 3, S = 3, pad = 1;
  Activation act = Activation::ReLU;  // ReLU or None
  const void* residual = nullptr;     // optional [N, H, W, K]: Y = act(conv + bias + residual)

  int pixels() const { return N * H * W; }
};

class ConvKernelBase : public KernelBase {
 public:
  virtual void set_problem(const ConvArgs& a, const WorkSchedule& sched, void* partials,
                           unsigned long long* arrivals) = 0;
};

// The instantiation for (dtype, tile_m, tile_n, staged epilogue, multicast cluster size, CTAs per SM)
// (src/hopper/instances/conv_*.cu); nullptr when none (192x128 is fp16 only; the non-default store exists
// for fp16 128x64 only; filters multicast to clusters of two (-mc2) for fp16 128x64, 64x64, 64x128 with
// default stores; two CTAs per SM (-o2) for fp16 64x64 and 64x32 with default stores). segmented: the schedule cuts tiles into segments (split-K, stream-K); otherwise the
// whole-tile instantiation (no fixup compiled in).
std::unique_ptr<ConvKernelBase> make_conv_kernel(DType dtype, int tile_m, int tile_n, bool staged, bool segmented = true,
                                                 int multicast = 1, int ctas_per_sm = 1);

class ConvOp : public PersistentOp {
 public:
  std::string prepare(const ConvArgs& args, const GemmConfig& config);
  static std::string can_implement(const ConvArgs& args, const GemmConfig& config);
  // Which kernel function a configuration runs: tile, epilogue store, whole-tile or segmented (split-K
  // and stream-K share one). The first run of a function after another one is slower (instruction
  // fetch: docs/hopper-conv.md), so choosers weigh a switch between neighbours in a chain.
  // (bench/conv_picks.py's kernel_function is the same rule, on configuration names.)
  static std::string kernel_function(const GemmConfig& config);
  // Points the prepared convolution at another input and residual of the same shape (host only: no
  // allocation, no launch, so it may run while a CUDA graph is being captured). Frameworks whose
  // tensors move between calls rebind before each launch. "" or what is wrong.
  std::string rebind(const void* X, const void* residual);
  const ConvArgs& args() const { return args_; }
  std::string name() const;

 private:
  ConvArgs args_;
};

}  // namespace braid::hopper
