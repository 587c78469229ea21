// braid::workloads::Mlp: the transformer MLP of one tensor-parallel GPU as a tile-synchronized chain
// of two GEMM stages (issue 3), each braid's Hopper GEMM or, for T <= 64 tokens, the weight-streaming
// skinny GEMM (workloads::GemmChoice).
//
//   GPT-3: Y[T,H] = GeLU(X[T,H] . W1[H,F]) . W2[F,H]
//   LLaMA: Y[T,H] = (silu(X.Wg) * (X.Wu)) . W2[F,H]   with W1 = [Wg | Wu] packed by
//          hopper::pack_swiglu_columns (width g1.swiglu_pack(); mlp_w1_cols() columns, zero-padded to
//          whole blocks), so GEMM 1's epilogue writes the product.
//
//   workloads::Mlp mlp({DType::F16, Activation::GeLU, T, H, F, X, W1, W2, Hid, Y}, variant);
//   mlp.run(stream);            // one forward: GEMM 1 -> Hid -> GEMM 2 -> Y, graph-capturable
//   mlp.check(stream);          // sync; throws braid::SyncError if a wait got stuck
//
// The plan behind it is the generator's: two GEMM stages, GEMM 2's A is GEMM 1's output, each GEMM 2
// tile (row block r) reads row block r of Hid over all of F; GEMM 1 posts with the variant's policy
// (TileSync: one semaphore per tile; RowSync: one per row block), GEMM 2 waits k-tile by k-tile in its
// TMA producer. examples/specs/gpt3-mlp.spec and llama-mlp.spec describe the same chains as text.
#pragma once
#include <memory>
#include <string>

#include "braid/kernels/hopper/gemm_op.hpp"
#include "braid/runtime/chain.cuh"
#include "braid/workloads/gemm_chain_plan.hpp"
#include "braid/workloads/gemm_stage.hpp"

namespace braid::workloads {

struct MlpProblem {
  hopper::DType dtype = hopper::DType::F16;
  hopper::Activation act = hopper::Activation::GeLU;  // GeLU (GPT-3) or SwiGLU (LLaMA)
  int T = 0, H = 0, F = 0;
  const void* X = nullptr;   // [T, H]
  const void* W1 = nullptr;  // [H, F] (GeLU) or [H, mlp_w1_cols(...)] packed gate|up per g1.swiglu_pack() (SwiGLU)
  const void* W2 = nullptr;  // [F, H]
  void* Hid = nullptr;       // [T, F], the activation output
  void* Y = nullptr;         // [T, H]
  // Rows allocated (>= T; 0: T) of X and of Hid. Where a buffer has rows past T, the GEMM reading it loads whole
  // row tiles without crossing the tensor's edge (GemmArgs::a_rows: faster at few tokens); what those rows hold
  // never reaches Y or Hid's first T rows. padded_rows(T) (gemm_stage.hpp) covers every tile braid picks.
  int x_rows = 0, hid_rows = 0;
};

// Columns of W1 as the Mlp reads it: F (GeLU), or 2F packed for GEMM 1's tile width and padded to whole
// blocks (SwiGLU: hopper::swiglu_packed_cols).
inline int mlp_w1_cols(hopper::Activation act, int F, const GemmChoice& g1) {
  return act == hopper::Activation::SwiGLU ? hopper::swiglu_packed_cols(F, g1.swiglu_pack()) : F;
}

struct MlpVariant {
  GemmChoice g1, g2;
  enum class Sync : uint8_t { TileSync, RowSync } sync = Sync::TileSync;
  Ordering ordering = Ordering::PDL;  // StreamOrder: braid's kernels, stream-ordered, no tile sync
  bool pdl_only = false;              // with StreamOrder: GEMM 2 launched with PDL (prologue overlap only)
  bool weights_first = true;          // R: GEMM 2 loads its weights before waiting for Hid
  // Both GEMMs skinny, as one launch (skinny::SkinnyChainOp): GEMM 2's chunks wait for the Hid tiles
  // they read inside the kernel. Needs ordering PDL (the chain's semaphores; the launch is stage 0's).
  bool fused = false;
  // "-dyn": GEMM 2 takes its tiles by ticket (the stage's dynamic order, in g2's order) instead of a static persistent
  // schedule, so that its CTAs resident early -- on the SMs GEMM 1's last wave leaves idle -- take every tile whose
  // rows of Hid are done, not just their own share. Tile sync only (a Hopper GEMM 2 that dispatch_refusal accepts).
  bool dynamic = false;
  // The stages' tile orders are g1.order() and g2.order().

  std::string name() const {
    if (fused) return std::string(sync == Sync::RowSync ? "fused-rowsync/" : "fused-tilesync/") + g1.name() + "+" + g2.name();
    std::string n = ordering == Ordering::StreamOrder ? (pdl_only ? "pdl-only" : "stream")
                                                      : std::string(sync == Sync::RowSync ? "rowsync-" : "tilesync-") +
                                                            ordering_name(ordering);
    if ((ordering != Ordering::StreamOrder || pdl_only) && !weights_first) n += "-noR";
    if (dynamic) n += "-dyn";
    return n + "/" + g1.name() + "+" + g2.name();
  }
};

class Mlp {
 public:
  Mlp(const MlpProblem& p, const MlpVariant& v, ChainOptions opt = {}) : p_(p), v_(v) {
    using hopper::Activation;
    BRAID_REQUIRE(p.act == Activation::GeLU || p.act == Activation::SwiGLU, "Mlp: activation must be GeLU or SwiGLU");
    const int F1 = mlp_w1_cols(p.act, p.F, v.g1);
    BRAID_REQUIRE(p.x_rows == 0 || p.x_rows >= p.T, "Mlp: x_rows must be 0 or at least T");
    BRAID_REQUIRE(p.hid_rows == 0 || p.hid_rows >= p.T, "Mlp: hid_rows must be 0 or at least T");
    hopper::GemmArgs a1{p.dtype, p.X, p.W1, p.Hid, p.T, F1, p.H, p.act};
    a1.n_out = p.F;  // (Hid's width, also where W1's packing is padded)
    a1.a_rows = p.x_rows;
    if (auto why = g1_.prepare(a1, v.g1); !why.empty())
      throw PlanError("Mlp GEMM 1: " + why);
    hopper::GemmArgs a2{p.dtype, p.Hid, p.W2, p.Y, p.T, p.H, p.F, Activation::None};
    a2.a_rows = p.hid_rows;
    if (auto why = g2_.prepare(a2, v.g2); !why.empty())
      throw PlanError("Mlp GEMM 2: " + why);
    // A reduce-scatter tile's segments wait for each other: they must all be running, which PDL or
    // stream order guarantees (a wait kernel lets the next stage start early).
    for (const GemmChoice* g : {&v.g1, &v.g2})
      BRAID_REQUIRE(g->is_skinny || !g->hopper.segments_wait_for_peers() || v.ordering != Ordering::WaitKernel,
                    "Mlp: reduce-scatter split-K (" + g->name() + ") needs PDL or stream ordering (variant " +
                        v.name() + ")");
    const GroupPolicy pol = v.sync == MlpVariant::Sync::RowSync ? RowSync() : TileSync();
    GemmStageDesc s1{"gemm1", p.T, p.F, p.H, -1, -1, pol, v.g1.order()};
    s1.tile_m = int(g1_.tile().rows);
    s1.tile_n = int(g1_.tile().cols);
    GemmStageDesc s2{"gemm2", p.T, p.H, p.F, 0, -1, TileSync(), v.g2.order()};
    s2.tile_m = int(g2_.tile().rows);
    s2.tile_n = int(g2_.tile().cols);
    Plan plan = make_gemm_chain_plan("mlp", {s1, s2}, GemmTile{hopper::kTileM, 128, hopper::kTileK});
    plan.stages[0].block_count = uint32_t(g1_.ctas());
    plan.stages[1].block_count = uint32_t(g2_.ctas());
    plan.stages[0].occupancy = uint32_t(g1_.occupancy());
    plan.stages[1].occupancy = uint32_t(g2_.occupancy());
    if (v.dynamic) {
      BRAID_REQUIRE(!v.fused, "Mlp " + v.name() + ": a fused chain has no GEMM 2 launch to take tickets");
      const std::string why = dynamic_stage_refusal(v.g2, v.ordering);
      BRAID_REQUIRE(why.empty(), "Mlp " + v.name() + " GEMM 2: " + why);
      plan.stages[1].dynamic_order = true;
    }
    opt.weights_first = v.weights_first;
    chain_ = std::make_unique<Chain>(plan, std::vector<TileShape>{g1_.tile(), g2_.tile()}, opt);
    if (v.fused) {
      BRAID_REQUIRE(v.g1.is_skinny && v.g2.is_skinny && v.ordering == Ordering::PDL,
                    "Mlp: a fused variant needs two skinny GEMMs and ordering PDL (variant " + v.name() + ")");
      if (auto why = fused_.prepare(a1, v.g1.skinny_config, a2, v.g2.skinny_config);
          !why.empty())
        throw PlanError("Mlp (fused): " + why);
      // One launch stands for both stages: stage 0's launcher makes it, with stage 1's parameters too.
      chain_->set_launcher(0, [this](const LaunchCtx& c) { fused_.launch(c, chain_->params(1, Ordering::PDL)); });
      chain_->set_launcher(1, [](const LaunchCtx&) {});
      return;
    }
    chain_->set_launcher(0, [this](const LaunchCtx& c) { g1_.launch(c); });
    chain_->set_launcher(1, [this](const LaunchCtx& c) { g2_.launch(c); });
  }

  void run(cudaStream_t s) {
    if (v_.ordering == Ordering::StreamOrder && v_.pdl_only) chain_->run_pdl_only(s);
    else chain_->run(s, v_.ordering);
  }
  void check(cudaStream_t s) { chain_->check(s); }

  Chain& chain() { return *chain_; }
  const GemmStage& gemm1() const { return g1_; }
  const GemmStage& gemm2() const { return g2_; }
  skinny::SkinnyChainOp& fused_op() { return fused_; }  // (MlpVariant::fused only)
  const MlpProblem& problem() const { return p_; }
  const MlpVariant& variant() const { return v_; }

 private:
  MlpProblem p_;
  MlpVariant v_;
  GemmStage g1_, g2_;
  skinny::SkinnyChainOp fused_;  // MlpVariant::fused
  std::unique_ptr<Chain> chain_;
};

}  // namespace braid::workloads
