// workloads::GemmStage: one GEMM stage of a chain, on the kernel its configuration names -- braid's
// persistent Hopper GEMM (hopper::GemmOp: TMA + wgmma; tiles, split-K, stream-K, tile order), or the
// weight-streaming skinny GEMM for M <= 8 rows (skinny::SkinnyGemmOp: decode). Both take the same
// arguments, wait for their produced A operand and post their tiles, so a workload picks per stage.
#pragma once
#include <string>

#include "braid/kernels/hopper/gemm_op.hpp"
#include "braid/kernels/skinny/skinny_op.hpp"

namespace braid::workloads {

struct GemmChoice {
  hopper::GemmConfig hopper;  // used when skinny_splits == 0
  int skinny_splits = 0;      // > 0: the skinny GEMM with this many K splits
  GemmChoice(const hopper::GemmConfig& c = {}) : hopper(c) {}  // NOLINT: a config is a choice
  static GemmChoice skinny(int splits) {
    GemmChoice g;
    g.skinny_splits = splits;
    return g;
  }
  std::string name() const { return skinny_splits ? "skinny-s" + std::to_string(skinny_splits) : hopper.name(); }
  // The stage's tile order (the skinny GEMM's tiles follow its launch grid: row-major).
  OrderKind order() const { return skinny_splits ? OrderKind::RowMajor : hopper.order; }
};

class GemmStage {
 public:
  std::string prepare(const hopper::GemmArgs& a, const GemmChoice& c) {
    choice_ = c;
    return c.skinny_splits ? skinny_.prepare(a, c.skinny_splits) : hopper_.prepare(a, c.hopper);
  }
  Grid grid() const { return choice_.skinny_splits ? skinny_.grid() : hopper_.grid(); }
  TileShape tile() const { return choice_.skinny_splits ? skinny_.tile() : hopper_.tile(); }
  int ctas() const { return choice_.skinny_splits ? skinny_.ctas() : hopper_.ctas(); }
  const GemmChoice& choice() const { return choice_; }
  void launch(const LaunchCtx& ctx) const {
    if (choice_.skinny_splits) skinny_.launch(ctx);
    else hopper_.launch(ctx);
  }
  void run(cudaStream_t s, bool pdl = false, bool trigger = false) const {
    if (choice_.skinny_splits) skinny_.run(s, pdl, trigger);
    else hopper_.run(s, pdl, trigger);
  }

 private:
  GemmChoice choice_;
  hopper::GemmOp hopper_;
  skinny::SkinnyGemmOp skinny_;
};

}  // namespace braid::workloads
