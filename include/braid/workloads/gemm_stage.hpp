// workloads::GemmStage: one GEMM stage of a chain, on the kernel its configuration names -- braid's
// persistent Hopper GEMM (hopper::GemmOp: TMA + wgmma; tiles, split-K, stream-K, tile order), or the
// weight-streaming skinny GEMM for M <= 64 rows (skinny::SkinnyGemmOp: decode, small token counts).
// Both take the same arguments, wait for their produced A operand and post their tiles, so a workload
// picks per stage.
#pragma once
#include <string>

#include "braid/kernels/hopper/gemm_op.hpp"
#include "braid/kernels/skinny/skinny_op.hpp"
#include "braid/plan/plan.hpp"
#include "braid/workloads/dynamic_dispatch.hpp"

namespace braid::workloads {

// Rows to allocate for an activation that a GemmStage reads (an MLP's Hid, an attention block's Attn) so that no tile
// braid picks -- token tiles of up to 320 rows, the skinny GEMM's 8-64 -- reads across the tensor's edge when the
// stage is told about them (GemmArgs::a_rows): a TMA box crossing the edge is slow (bench/results/padded-rows-h200-20261129/).
inline int padded_rows(int M) { return (M + 63) / 64 * 64 + 320; }

struct GemmChoice {
  hopper::GemmConfig hopper;  // used unless is_skinny
  bool is_skinny = false;
  skinny::SkinnyConfig skinny_config;
  GemmChoice(const hopper::GemmConfig& c = {}) : hopper(c) {}  // NOLINT: a config is a choice
  static GemmChoice skinny(const skinny::SkinnyConfig& c = {}) {
    GemmChoice g;
    g.is_skinny = true;
    g.skinny_config = c;
    return g;
  }
  std::string name() const { return is_skinny ? skinny_config.name() : hopper.name(); }
  // The stage's tile order (the skinny GEMM's tiles are taken in column order: row-major on its 1-row grid).
  OrderKind order() const { return is_skinny ? OrderKind::RowMajor : hopper.order; }
  // Width of the column blocks a SwiGLU weight must be packed in (hopper::pack_swiglu_columns).
  int swiglu_pack() const { return is_skinny ? skinny::kTileCols : hopper.swiglu_block(); }
};

class GemmStage {
 public:
  std::string prepare(const hopper::GemmArgs& a, const GemmChoice& c) {
    choice_ = c;
    return c.is_skinny ? skinny_.prepare(a, c.skinny_config) : hopper_.prepare(a, c.hopper);
  }
  Grid grid() const { return choice_.is_skinny ? skinny_.grid() : hopper_.grid(); }
  TileShape tile() const { return choice_.is_skinny ? skinny_.tile() : hopper_.tile(); }
  int ctas() const { return choice_.is_skinny ? skinny_.ctas() : hopper_.ctas(); }
  int occupancy() const { return choice_.is_skinny ? skinny_.ctas_per_sm() : 1; }
  const GemmChoice& choice() const { return choice_; }
  // Diagnostic: the skinny GEMM's per-CTA phase stamps (SkinnyGemmOp::set_phases); a Hopper GEMM records none.
  void set_skinny_phases(unsigned long long* stamps) {
    if (choice_.is_skinny) skinny_.set_phases(stamps);
  }
  void launch(const LaunchCtx& ctx) const {
    if (choice_.is_skinny) skinny_.launch(ctx);
    else hopper_.launch(ctx);
  }
  // trace: Hopper GEMMs only (the skinny GEMM records no per-tile trace when run plain).
  void run(cudaStream_t s, bool pdl = false, bool trigger = false) const {
    if (choice_.is_skinny) skinny_.run(s, pdl, trigger);
    else hopper_.run(s, pdl, trigger);
  }

 private:
  GemmChoice choice_;
  hopper::GemmOp hopper_;
  skinny::SkinnyGemmOp skinny_;
};

// A chain stage taking its tiles by ticket (the stage's dynamic order: the MLP's GEMM 2, the attention block's output
// GEMM): "" when `c` can, under `ordering`, else why not -- tile sync (stream order has no tickets to wait for) and a
// Hopper GEMM configuration that dynamic_dispatch_refusal accepts.
inline std::string dynamic_stage_refusal(const GemmChoice& c, Ordering ordering) {
  if (ordering == Ordering::StreamOrder) return "dynamic dispatch needs tile sync (ordering PDL or wait kernel)";
  if (c.is_skinny) return "the skinny GEMM (" + c.name() + ") has no dynamic dispatch -- use a Hopper GEMM configuration";
  return dynamic_dispatch_refusal(c.hopper);
}

}  // namespace braid::workloads
