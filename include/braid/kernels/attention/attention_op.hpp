// braid::attention::AttentionOp: the fused attention kernel (flash_kernel.cuh) behind a plain host
// interface, like hopper::GemmOp: prepare() checks the problem and says why it cannot run, launch()
// runs it as a stage of a braid::Chain, run() stream-ordered.
//
//   attention::AttentionOp a;
//   if (auto why = a.prepare({DType::F16, qkv, kc, vc, S_max, o, B, S_new, S_cached, NH}, {4, 0}); !why.empty()) ...
//   a.run(stream);
//
// braid's tiles are (head, block of q_rows query rows of one batch) over O = [B * S_new, NH * 128]:
// grid() = (NH, B * S_new / q_rows), tile() = q_rows x 128.
#pragma once
#include <cuda_runtime.h>

#include <memory>
#include <string>

#include "braid/core/stage.cuh"
#include "braid/kernels/hopper/gemm_config.hpp"

namespace braid {
struct LaunchCtx;
}

namespace braid::attention {

using hopper::DType;

// Stamps per CTA of AttentionArgs::phase_ns (FlashSm90Params::phase_ns names them).
inline constexpr int kPromptKernelPhases = 8;

struct AttentionArgs {
  DType dtype = DType::F16;
  const void* qkv = nullptr;  // [B * S_new, 3 * NH * 128]: Q heads | K heads | V heads
  void* k_cache = nullptr;    // [B, S_max, NH * 128] (needed when S_cached > 0 or update_cache)
  void* v_cache = nullptr;
  int S_max = 0;
  void* out = nullptr;  // [B * S_new, NH * 128]
  int B = 0, S_new = 0, S_cached = 0, NH = 0;
  bool causal = true;      // query i (position S_cached + i) sees keys 0 .. S_cached + i
  float dropout_p = 0;     // on the softmax probabilities, counter-based (dropout.hpp); 0: none
  uint64_t seed = 0;
  bool update_cache = false;  // write the new tokens' K, V into the cache at S_cached ..
  float scale = 0;            // softmax scale; 0: 1 / sqrt(128)
  // Diagnostic, the Hopper prompt kernel and the decode kernel (null: off): per CTA, kPromptKernelPhases
  // %globaltimer stamps (FlashSm90Params::phase_ns, FlashParams::phase_ns say which), indexed by the linear block
  // index of the launch grid; the decode kernel's only in its general form (AttentionOp launches that one then).
  uint64_t* phase_ns = nullptr;
};

struct AttentionConfig {
  int warps = 4;       // 16 query rows per warp: 4 (prompts) or 1 (decode)
  int split_keys = 0;  // keys per split (a multiple of 64; decode: more CTAs per head); 0: one split
  bool reverse = false;  // launch the last query blocks (the most keys, causal) first
  // The Hopper kernel (flash_sm90_kernel.cuh: TMA + wgmma, 128 query rows per CTA; prompts without
  // cached keys, S_new a multiple of 128); `warps` and `split_keys` do not apply.
  bool hopper = false;
  // The decode kernel (flash_decode_kernel.cuh: 16 lanes per key, K and V streamed into registers; at most
  // kDecodeMaxRows = 4 new tokens per sequence); `warps` 4 or 8 per CTA, `split_keys` as above.
  bool decode = false;
  // Decode kernel: the keys split over a thread-block cluster of this many CTAs (2..16), merged through
  // distributed shared memory instead of global memory (split_keys then follows from it). Hopper kernel
  // (wg-c2): 2 -- each tile's key blocks halved between a cluster's two CTAs.
  int cluster = 0;
  // The Hopper kernel (wg-s): the long causal query blocks' key blocks split between two CTAs, from the query block
  // whose split gives the shortest modelled kernel time, longest first (long_query_split.hpp); the later CTA of a
  // pair merges.
  bool split_long = false;
  // The Hopper kernel ("-lt"): under PDL, each CTA lets the dependent grid launch once its key loop is done instead of
  // at its start, so that the next stage's CTAs (the output GEMM's, loading their first weights) are not resident
  // beside it while it loads and computes (bench/results/early-weights-h100-20261128/README.md, section 6).
  bool late_trigger = false;
  std::string name() const {
    if (hopper)
      return std::string("wg") + (reverse ? "-r" : "") + (cluster == 2 ? "-c2" : "") + (split_long ? "-s" : "") +
             (late_trigger ? "-lt" : "");
    if (decode)
      return "d" + std::to_string(warps) + (split_keys ? "-s" + std::to_string(split_keys) : std::string()) +
             (cluster ? "-c" + std::to_string(cluster) : std::string());
    return "w" + std::to_string(warps) + (split_keys ? "-s" + std::to_string(split_keys) : std::string()) +
           (reverse ? "-r" : "");
  }
};
// Parses what AttentionConfig::name() prints ("w4", "w1-s256", "w4-r", "wg", "wg-r", "wg-r-c2", "wg-s", "wg-r-lt", "d4-s256",
// "d8-c8"); "" or what is wrong.
std::string parse_attention_config(const std::string& text, AttentionConfig& out);

class AttentionOp {
 public:
  AttentionOp();
  ~AttentionOp();
  AttentionOp(AttentionOp&&) noexcept;
  AttentionOp& operator=(AttentionOp&&) noexcept;

  static std::string can_implement(const AttentionArgs& a, const AttentionConfig& c);
  // Checks, allocates the split workspace. "" or why it cannot run (nothing launched then).
  std::string prepare(const AttentionArgs& a, const AttentionConfig& c);

  Grid grid() const;       // braid's tiles
  TileShape tile() const;  // q_rows x 128
  int ctas() const;        // CTAs launched (tiles x splits)
  int splits() const;
  const AttentionArgs& args() const;
  const AttentionConfig& config() const;
  std::string name() const;

  void launch(const LaunchCtx& ctx) const;  // as a stage of a braid::Chain
  void run(cudaStream_t s, bool pdl = false, bool trigger = false) const;

  struct Impl;

 private:
  std::unique_ptr<Impl> impl_;
};

// The paper's unfused chain after the QKV GEMM (unfused_kernels.cuh): P = scale * Q.K^T, R =
// dropout(softmax(P)), T = R.V, three stages with their own tile grids; P and R are allocated here.
// Same arguments and results as AttentionOp (the config's warps must be 4; no key splits).
class UnfusedAttention {
 public:
  UnfusedAttention();
  ~UnfusedAttention();
  UnfusedAttention(UnfusedAttention&&) noexcept;
  UnfusedAttention& operator=(UnfusedAttention&&) noexcept;

  static std::string can_implement(const AttentionArgs& a);
  std::string prepare(const AttentionArgs& a);

  enum Part { kScores = 0, kSoftmax = 1, kValues = 2 };
  Grid grid(Part part) const;       // braid's tiles of each stage
  TileShape tile(Part part) const;  // P, R: q_rows x 64 (query rows x keys); T: q_rows x 128
  int ctas(Part part) const;
  int key_tiles() const;
  const AttentionArgs& args() const;

  void launch(Part part, const LaunchCtx& ctx) const;
  void run(cudaStream_t s, bool pdl = false, bool trigger = false) const;  // the three, stream order

  struct Impl;

 private:
  std::unique_ptr<Impl> impl_;
};

}  // namespace braid::attention
