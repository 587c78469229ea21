// braid::workloads::AttentionBlock: the attention block of one tensor-parallel GPU (issue 4) as a
// tile-synchronized chain. The modern chain, three kernels:
//
//   QKV = X[M, H] . Wqkv[H, 3*NH*128]            braid's Hopper GEMM, M = B * S_new tokens
//   A   = attention(Q, K, V) per head            braid's fused attention (flash_kernel.cuh): causal,
//                                                dropout, KV cache (read S_cached keys, append the new)
//   Y   = A[M, NH*128] . Wo[NH*128, H]           braid's Hopper GEMM
//
// The paper's chain (variant.fused = false) replaces the middle kernel by three: P = Q.K^T, R =
// dropout(softmax(P)), T = R.V (unfused_kernels.cuh), five stages in all.
//
//   workloads::AttentionBlock blk(problem, variant);
//   blk.run(stream);     // graph-capturable
//   blk.check(stream);   // sync; throws braid::SyncError if a wait got stuck
//
// Each attention tile waits only for the QKV tiles of its head and rows (TileSync: per QKV tile;
// StridedSync: one semaphore per head's Q|K|V tiles of a row block; RowSync: per QKV row block), and
// each output-GEMM tile waits, k-tile by k-tile in its TMA producer, for the attention tiles it reads
// (TileSync: per head; RowSync: all heads of a row block).
#pragma once
#include <memory>
#include <string>

#include "braid/kernels/attention/attention_op.hpp"
#include "braid/kernels/hopper/gemm_op.hpp"
#include "braid/workloads/dynamic_dispatch.hpp"
#include "braid/workloads/gemm_stage.hpp"
#include "braid/runtime/chain.cuh"
#include "braid/workloads/attention_plan.hpp"

namespace braid::workloads {

struct AttentionBlockProblem {
  hopper::DType dtype = hopper::DType::F16;
  int B = 1, S_new = 1, S_cached = 0, S_max = 0, NH = 1, H = 128;
  const void* X = nullptr;     // [B*S_new, H]
  const void* Wqkv = nullptr;  // [H, 3*NH*128]: Q heads | K heads | V heads
  const void* Wo = nullptr;    // [NH*128, H]
  void* QKV = nullptr;         // [B*S_new, 3*NH*128]
  void* k_cache = nullptr;     // [B, S_max, NH*128] (S_cached > 0 or update_cache)
  void* v_cache = nullptr;
  void* Attn = nullptr;  // [B*S_new, NH*128]
  void* Y = nullptr;     // [B*S_new, H]
  // Rows allocated (>= B*S_new; 0: B*S_new) of X and of Attn: the QKV and output GEMMs read whole row tiles of them
  // without crossing the tensor's edge (GemmArgs::a_rows; padded_rows covers every tile). What those rows hold never
  // reaches the outputs.
  int x_rows = 0, attn_rows = 0;
  bool causal = true;
  float dropout_p = 0;
  uint64_t seed = 0;
  bool update_cache = false;
  uint64_t* attn_phase_ns = nullptr;  // diagnostic: the Hopper prompt kernel's phase stamps (AttentionArgs::phase_ns)
  // Diagnostic: skinny QKV / output GEMMs' per-CTA phase stamps (SkinnyGemmOp::set_phases; Hopper GEMMs: ignored).
  unsigned long long* qkv_phase_ns = nullptr;
  unsigned long long* out_phase_ns = nullptr;
};

struct AttentionBlockVariant {
  GemmChoice qkv, out;  // braid's Hopper GEMM configuration, or the skinny GEMM (decode)
  attention::AttentionConfig attn;
  enum class Sync : uint8_t { TileSync, RowSync, StridedSync } sync = Sync::TileSync;
  Ordering ordering = Ordering::PDL;  // StreamOrder: braid's kernels, stream-ordered, no tile sync
  bool pdl_only = false;              // with StreamOrder: each kernel PDL-launched (prologue overlap)
  bool weights_first = true;          // R: the output GEMM loads Wo before waiting
  // "-dyn": the output GEMM takes its tiles by ticket (the stage's dynamic order) instead of a static persistent
  // schedule. Its CTAs become resident as the QKV GEMM's leave, beside the attention's (a causal prompt's query
  // blocks hold only NH x S / 128 SMs, the short ones briefly); with a static schedule each CTA still owes its
  // fixed share of tiles, so the CTAs resident late decide the end. By ticket (in the output configuration's order;
  // braid-bench-attn tries its default and row-major, a query block's rows first) the early CTAs can take more tiles
  // -- where the attention finishes some query blocks early, which at the measured prompts it does not
  // (bench/results/early-weights-h100-20261128/README.md, section 3).
  bool dynamic = false;
  // false: the paper's chain -- P = Q.K^T, R = dropout(softmax(P)), T = R.V as three kernels
  // (unfused_kernels.cuh) instead of the fused attention kernel; names get the prefix "unfused-".
  bool fused = true;

  static const char* sync_name(Sync s) {
    return s == Sync::RowSync ? "rowsync" : s == Sync::StridedSync ? "stridedsync" : "tilesync";
  }
  std::string name() const {
    const std::string pre = fused ? "" : "unfused-";
    if (ordering == Ordering::StreamOrder) return pre + (pdl_only ? "pdl-only" : "stream");
    return pre + sync_name(sync) + "-" + ordering_name(ordering) + (weights_first ? "" : "-noR") + (dynamic ? "-dyn" : "");
  }
  // The inverse of name(): [unfused-]stream, [unfused-]pdl-only,
  // [unfused-]<tilesync|rowsync|stridedsync>-<ordering>[-noR][-dyn].
  static AttentionBlockVariant parse(const std::string& full) {
    AttentionBlockVariant v;
    std::string text = full;
    if (text.rfind("unfused-", 0) == 0) {
      v.fused = false;
      text = text.substr(8);
    }
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
    const std::string s = rest.substr(0, dash);
    if (dash == std::string::npos || (s != "tilesync" && s != "rowsync" && s != "stridedsync"))
      throw PlanError("attention variant '" + full + "': expected [unfused-]stream, [unfused-]pdl-only or "
                      "[unfused-]<tilesync|rowsync|stridedsync>-<ordering>[-noR][-dyn]");
    v.sync = s == "rowsync" ? Sync::RowSync : s == "stridedsync" ? Sync::StridedSync : Sync::TileSync;
    v.ordering = parse_ordering(rest.substr(dash + 1));
    if (v.ordering == Ordering::StreamOrder) throw PlanError("attention variant '" + full + "': a policy needs an overlapping ordering");
    return v;
  }
};

class AttentionBlock {
 public:
  AttentionBlock(const AttentionBlockProblem& p, const AttentionBlockVariant& v, ChainOptions opt = {}) : p_(p), v_(v) {
    using hopper::Activation;
    const int D = kAttnHeadDim, HD = p.NH * D, M = p.B * p.S_new;
    BRAID_REQUIRE(p.x_rows == 0 || p.x_rows >= M, "AttentionBlock: x_rows must be 0 or at least B * S_new");
    BRAID_REQUIRE(p.attn_rows == 0 || p.attn_rows >= M, "AttentionBlock: attn_rows must be 0 or at least B * S_new");
    hopper::GemmArgs qa{p.dtype, p.X, p.Wqkv, p.QKV, M, 3 * HD, p.H, Activation::None};
    qa.a_rows = p.x_rows;
    if (auto why = qkv_.prepare(qa, v.qkv); !why.empty())
      throw PlanError("AttentionBlock QKV GEMM: " + why);
    attention::AttentionArgs a;
    a.dtype = p.dtype;
    a.qkv = p.QKV;
    a.k_cache = p.k_cache;
    a.v_cache = p.v_cache;
    a.S_max = p.S_max;
    a.out = p.Attn;
    a.B = p.B;
    a.S_new = p.S_new;
    a.S_cached = p.S_cached;
    a.NH = p.NH;
    a.causal = p.causal;
    a.dropout_p = p.dropout_p;
    a.seed = p.seed;
    a.update_cache = p.update_cache;
    a.phase_ns = p.attn_phase_ns;
    if (v.fused) {
      if (auto why = attn_.prepare(a, v.attn); !why.empty()) throw PlanError("AttentionBlock attention: " + why);
    } else if (auto why = unfused_.prepare(a); !why.empty()) {
      throw PlanError("AttentionBlock unfused attention: " + why);
    }
    hopper::GemmArgs oa{p.dtype, p.Attn, p.Wo, p.Y, M, p.H, HD, Activation::None};
    oa.a_rows = p.attn_rows;
    if (auto why = out_.prepare(oa, v.out); !why.empty())
      throw PlanError("AttentionBlock output GEMM: " + why);
    qkv_.set_skinny_phases(p.qkv_phase_ns);
    out_.set_skinny_phases(p.out_phase_ns);

    using attention::UnfusedAttention;
    AttentionBlockDesc d;
    d.B = p.B;
    d.S_new = p.S_new;
    d.S_cached = p.S_cached;
    d.NH = p.NH;
    d.H = p.H;
    d.causal = p.causal;
    d.fused = v.fused;
    d.update_cache = p.update_cache;
    d.q_rows = int(v.fused ? attn_.tile().rows : unfused_.tile(UnfusedAttention::kValues).rows);
    d.qkv_tile_m = int(qkv_.tile().rows);
    d.qkv_tile_n = int(qkv_.tile().cols);
    d.out_tile_m = int(out_.tile().rows);
    d.out_tile_n = int(out_.tile().cols);
    d.qkv_policy = v.sync == AttentionBlockVariant::Sync::RowSync      ? RowSync()
                   : v.sync == AttentionBlockVariant::Sync::StridedSync ? qkv_strided_policy(p.NH, d.qkv_tile_n)
                                                                         : TileSync();
    d.attn_policy = v.sync == AttentionBlockVariant::Sync::RowSync ? RowSync() : TileSync();
    d.qkv_order = v.qkv.order();
    d.out_order = v.out.order();
    d.qkv_ctas = uint32_t(qkv_.ctas());
    d.attn_ctas = uint32_t(v.fused ? attn_.ctas() : 0);
    d.softmax_ctas = uint32_t(v.fused ? 0 : unfused_.ctas(UnfusedAttention::kSoftmax));
    d.out_ctas = uint32_t(out_.ctas());
    opt.weights_first = v.weights_first;
    std::vector<TileShape> shapes{qkv_.tile()};
    if (v.fused) {
      shapes.push_back(attn_.tile());
    } else {
      for (auto part : {UnfusedAttention::kScores, UnfusedAttention::kSoftmax, UnfusedAttention::kValues})
        shapes.push_back(unfused_.tile(part));
    }
    shapes.push_back(out_.tile());
    Plan plan = make_attention_block_plan("attention-block", d);
    if (v.dynamic) {  // (parse refuses -dyn without a policy; a variant built by hand is checked here)
      if (const std::string why = dynamic_stage_refusal(v.out, v.ordering); !why.empty())
        throw PlanError("AttentionBlock " + v.name() + " output GEMM: " + why);
      plan.stages.back().dynamic_order = true;
    }
    plan.stages.front().occupancy = uint32_t(qkv_.occupancy());  // (the simulator's and the W advice's view)
    plan.stages.back().occupancy = uint32_t(out_.occupancy());
    chain_ = std::make_unique<Chain>(plan, shapes, opt);
    const int last = int(shapes.size()) - 1;
    chain_->set_launcher(0, [this](const LaunchCtx& c) { qkv_.launch(c); });
    if (v.fused) {
      chain_->set_launcher(1, [this](const LaunchCtx& c) { attn_.launch(c); });
    } else {
      for (auto part : {UnfusedAttention::kScores, UnfusedAttention::kSoftmax, UnfusedAttention::kValues})
        chain_->set_launcher(1 + int(part), [this, part](const LaunchCtx& c) { unfused_.launch(part, c); });
    }
    chain_->set_launcher(last, [this](const LaunchCtx& c) { out_.launch(c); });
  }

  void run(cudaStream_t s) {
    if (v_.ordering == Ordering::StreamOrder && v_.pdl_only) chain_->run_pdl_only(s);
    else chain_->run(s, v_.ordering);
  }
  void check(cudaStream_t s) { chain_->check(s); }

  Chain& chain() { return *chain_; }
  const GemmStage& qkv() const { return qkv_; }
  const attention::AttentionOp& attention() const { return attn_; }  // fused variants
  const attention::UnfusedAttention& unfused() const { return unfused_; }  // unfused variants
  const GemmStage& out() const { return out_; }
  const AttentionBlockProblem& problem() const { return p_; }
  const AttentionBlockVariant& variant() const { return v_; }

 private:
  AttentionBlockProblem p_;
  AttentionBlockVariant v_;
  GemmStage qkv_, out_;
  attention::AttentionOp attn_;
  attention::UnfusedAttention unfused_;
  std::unique_ptr<Chain> chain_;
};

}  // namespace braid::workloads
