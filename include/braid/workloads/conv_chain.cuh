// braid::workloads::ConvChain: dependent 3x3 convolutions (bias + ReLU each) as a tile-synchronized
// chain of braid's Hopper implicit-GEMM convolutions (issue 5): ResNet/VGG layer pairs, or longer.
//
//   workloads::ConvChain c({DType::F16, {N, H, W}, C, X, {{K1, W1, b1, Y1, cfg1}, {K2, W2, b2, Y2, cfg2}}}, variant);
//   c.run(stream);     // conv 1 -> Y1 -> conv 2 -> Y2, graph-capturable
//   c.check(stream);   // sync; throws braid::SyncError if a wait got stuck
//
// Each conv-2 tile waits, k-tile by k-tile in its TMA producer warp, for the conv-1 tiles under its
// 3x3 window (Conv2DTileSync: one semaphore per conv-1 tile; RowSync: one per conv-1 pixel block).
#pragma once
#include <memory>
#include <string>
#include <vector>

#include "braid/kernels/hopper/conv_op.hpp"
#include "braid/runtime/chain.cuh"
#include "braid/workloads/conv_chain_plan.hpp"
#include "braid/workloads/dynamic_dispatch.hpp"

namespace braid::workloads {

struct ConvLayer {
  int K = 0;                   // filters
  const void* Wt = nullptr;    // [K, 3, 3, C_in]
  const void* bias = nullptr;  // [K]
  void* Y = nullptr;           // [N, H, W, K]
  hopper::GemmConfig cfg;      // tile and decomposition (tile_n 64 or 128)
  // Optional [N, H, W, K], added before the ReLU (a ResNet basic block's shortcut): the chain's input
  // X, an earlier layer's Y (complete for this tile's pixels once its waits pass: every window holds
  // its own pixels), or a tensor written before run() in stream order.
  const void* residual = nullptr;
};

struct ConvChainProblem {
  hopper::DType dtype = hopper::DType::F16;
  ConvImage img;
  int C = 0;                  // input channels
  const void* X = nullptr;    // [N, H, W, C]
  std::vector<ConvLayer> layers;
};

struct ConvChainVariant {
  enum class Sync : uint8_t { Conv2DTileSync, RowSync } sync = Sync::Conv2DTileSync;
  Ordering ordering = Ordering::PDL;  // StreamOrder: braid's kernels, stream-ordered, no tile sync
  bool pdl_only = false;              // with StreamOrder: each conv launched with PDL (prologue overlap)
  bool weights_first = true;          // R: load the filters before waiting for the input tiles
  // Dynamic dispatch (tile_scheduler.cuh): each CTA takes its next tile from a ticket counter, so the
  // CTAs that start early (on the SMs the producer conv leaves first) take more of the work.
  bool dynamic = false;

  std::string name() const {
    if (ordering == Ordering::StreamOrder) return pdl_only ? "pdl-only" : "stream";
    std::string n = std::string(sync == Sync::RowSync ? "rowsync-" : "conv2dtilesync-") + ordering_name(ordering);
    return n + (weights_first ? "" : "-noR") + (dynamic ? "-dyn" : "");
  }
  // The inverse of name(): "stream", "pdl-only", "<conv2dtilesync|rowsync>-<ordering>[-noR][-dyn]".
  // Throws PlanError on anything else.
  static ConvChainVariant parse(const std::string& text) {
    ConvChainVariant v;
    if (text == "stream" || text == "pdl-only") {
      v.ordering = Ordering::StreamOrder;
      v.pdl_only = text == "pdl-only";
      return v;
    }
    std::string rest = text;
    if (rest.size() > 4 && rest.compare(rest.size() - 4, 4, "-dyn") == 0) {
      v.dynamic = true;
      rest.resize(rest.size() - 4);
    }
    if (rest.size() > 4 && rest.compare(rest.size() - 4, 4, "-noR") == 0) {
      v.weights_first = false;
      rest.resize(rest.size() - 4);
    }
    const size_t dash = rest.find('-');
    const std::string sync = rest.substr(0, dash);
    if (dash == std::string::npos || (sync != "conv2dtilesync" && sync != "rowsync"))
      throw PlanError("conv chain variant '" + text +
                      "': expected stream, pdl-only or <conv2dtilesync|rowsync>-<ordering>[-noR][-dyn]");
    v.sync = sync == "rowsync" ? Sync::RowSync : Sync::Conv2DTileSync;
    v.ordering = parse_ordering(rest.substr(dash + 1));
    if (v.ordering == Ordering::StreamOrder) throw PlanError("conv chain variant '" + text + "': a sync policy needs an overlapping ordering");
    return v;
  }
};

class ConvChain {
 public:
  ConvChain(const ConvChainProblem& p, const ConvChainVariant& v, ChainOptions opt = {}) : p_(p), v_(v) {
    BRAID_REQUIRE(!p.layers.empty(), "ConvChain: no layers");
    const GroupPolicy pol = v.sync == ConvChainVariant::Sync::RowSync ? RowSync() : Conv2DTileSync();
    std::vector<ConvStageDesc> stages;
    std::vector<TileShape> shapes;
    ops_.resize(p.layers.size());
    const void* in = p.X;
    int C = p.C;
    for (size_t i = 0; i < p.layers.size(); ++i) {
      const ConvLayer& l = p.layers[i];
      const hopper::ConvArgs a{p.dtype, in, l.Wt, l.bias, l.Y, p.img.N, p.img.H, p.img.W, C, l.K,
                               p.img.R, p.img.R, p.img.pad, hopper::Activation::ReLU, l.residual};
      for (size_t j = i; j < p.layers.size(); ++j)
        BRAID_REQUIRE(l.residual == nullptr || l.residual != p.layers[j].Y,
                      "ConvChain layer " + std::to_string(i) + ": its residual is written by this or a later layer");
      if (auto why = ops_[i].prepare(a, l.cfg); !why.empty())
        throw PlanError("ConvChain layer " + std::to_string(i) + ": " + why);
      stages.push_back(ConvStageDesc{"conv" + std::to_string(i + 1), C, l.K, l.cfg.tile_m, l.cfg.tile_n, pol, l.cfg.order});
      shapes.push_back(ops_[i].tile());
      in = l.Y;
      C = l.K;
    }
    Plan plan = make_conv_chain_plan("conv-chain", p.img, stages);
    for (size_t i = 0; i < ops_.size(); ++i) {
      plan.stages[i].block_count = uint32_t(ops_[i].ctas());
      plan.stages[i].dynamic_order = v.dynamic;
      if (v.dynamic)
        if (const std::string why = dynamic_dispatch_refusal(p.layers[i].cfg); !why.empty())
          throw PlanError("ConvChain layer " + std::to_string(i) + ": " + why + " (variant " + v.name() + ")");
      // A reduce-scatter tile's segments wait for each other: they must all be running, which static
      // dispatch under PDL or stream order guarantees (a wait kernel lets the next stage start early).
      BRAID_REQUIRE(!p.layers[i].cfg.segments_wait_for_peers() || (!v.dynamic && v.ordering != Ordering::WaitKernel),
                    "ConvChain layer " + std::to_string(i) + ": reduce-scatter split-K (" + p.layers[i].cfg.name() +
                        ") needs static dispatch and PDL or stream ordering (variant " + v.name() + ")");
    }
    opt.weights_first = v.weights_first;
    chain_ = std::make_unique<Chain>(plan, shapes, opt);
    for (size_t i = 0; i < ops_.size(); ++i)
      chain_->set_launcher(int(i), [this, i](const LaunchCtx& c) { ops_[i].launch(c); });
  }

  void run(cudaStream_t s) {
    if (v_.ordering == Ordering::StreamOrder && v_.pdl_only) chain_->run_pdl_only(s);
    else chain_->run(s, v_.ordering);
  }
  void check(cudaStream_t s) { chain_->check(s); }

  // The same chain on another input X and other residuals (one per layer, null for none), same
  // shapes; the outputs stay. Host only (may run during graph capture). Throws PlanError.
  void bind(const void* X, const std::vector<const void*>& residuals) {
    BRAID_REQUIRE(residuals.size() == p_.layers.size(), "ConvChain::bind: one residual per layer (null for none)");
    p_.X = X;
    for (size_t i = 0; i < p_.layers.size(); ++i) {
      for (size_t j = i; j < p_.layers.size(); ++j)
        BRAID_REQUIRE(residuals[i] == nullptr || residuals[i] != p_.layers[j].Y,
                      "ConvChain::bind layer " + std::to_string(i) + ": its residual is written by this or a later layer");
      p_.layers[i].residual = residuals[i];
      const std::string why = ops_[i].rebind(i == 0 ? X : p_.layers[i - 1].Y, residuals[i]);
      BRAID_REQUIRE(why.empty(), "ConvChain::bind layer " + std::to_string(i) + ": " + why);
    }
  }

  Chain& chain() { return *chain_; }
  const hopper::ConvOp& op(int i) const { return ops_.at(size_t(i)); }
  int layers() const { return int(ops_.size()); }
  const ConvChainProblem& problem() const { return p_; }
  const ConvChainVariant& variant() const { return v_; }

 private:
  ConvChainProblem p_;
  ConvChainVariant v_;
  std::vector<hopper::ConvOp> ops_;
  std::unique_ptr<Chain> chain_;
};

}  // namespace braid::workloads
