// The plan of the tensor-parallel attention block as three stages (host only):
//   qkv  = X[M, H] . Wqkv[H, 3*NH*128]        (braid's Hopper GEMM; M = B * S_new)
//   attn = attention(Q, [cache K | new K], [cache V | new V])   (flash_kernel.cuh)
//   out  = attn[M, NH*128] . Wo[NH*128, H]    (braid's Hopper GEMM)
// An attention tile (head h, block of q_rows query rows of batch b) reads the QKV tiles holding its
// Q rows and the K and V rows of the new keys it sees (causal: up to its last query); an output-GEMM
// tile reads the attention tiles of its rows, all heads. The dependency functions list exactly the
// element rectangles the kernels wait on, so the simulator and Plan::validate() check what the device
// enforces. StridedSync on the QKV GEMM makes one semaphore cover a head's Q, K and V column tiles
// (NH*128 / tile_n apart).
#pragma once
#include <algorithm>
#include <string>
#include <vector>

#include "braid/workloads/gemm_chain_plan.hpp"

namespace braid::workloads {

struct AttentionBlockDesc {
  int B = 1, S_new = 1, S_cached = 0, NH = 1, H = 128;
  bool causal = true;
  int q_rows = 64;                    // the attention stage's tile rows (min(rows per CTA, S_new))
  int qkv_tile_m = 128, qkv_tile_n = 128;
  int out_tile_m = 128, out_tile_n = 128;
  GroupPolicy qkv_policy = TileSync();   // how QKV tiles post (TileSync, RowSync, StridedSync)
  GroupPolicy attn_policy = TileSync();  // how attention tiles post (TileSync, RowSync)
  OrderKind qkv_order = OrderKind::RowMajor, out_order = OrderKind::RowMajor;
  uint32_t qkv_ctas = 0, attn_ctas = 0, out_ctas = 0;  // blocks launched (0: one per tile)
  // false: the paper's unfused chain (qkv, scores P, softmax-dropout R, values T, out) with 64-key
  // tiles of P and R; attn_policy then applies to P, R and T. With update_cache the values stage also
  // reads its own tokens' K and V rows (it performs the cache update).
  bool fused = true;
  bool update_cache = false;
  uint32_t softmax_ctas = 0;
};

constexpr int kAttnHeadDim = 128;

// StridedSync for the QKV GEMM's output: Q, K and V column tiles of one head share a semaphore.
inline GroupPolicy qkv_strided_policy(int NH, int tile_n) {
  BRAID_REQUIRE(tile_n > 0 && (NH * kAttnHeadDim) % tile_n == 0,
                "StridedSync over Q|K|V needs NH*128 (" + std::to_string(NH * kAttnHeadDim) + ") to be a multiple of the "
                "QKV tile width " + std::to_string(tile_n));
  return StridedSync(uint32_t(NH * kAttnHeadDim / tile_n), 3);
}

namespace detail {

// The two GEMM stages every attention plan has.
inline StageSpec attention_qkv_stage(const AttentionBlockDesc& d) {
  const int HD = d.NH * kAttnHeadDim, M = d.B * d.S_new;
  StageSpec qkv;
  qkv.name = "qkv";
  qkv.grid = Grid{ceil_div(uint32_t(3 * HD), uint32_t(d.qkv_tile_n)), ceil_div(uint32_t(M), uint32_t(d.qkv_tile_m)), 1};
  qkv.policy = d.qkv_policy;
  qkv.order.kind = d.qkv_order;
  qkv.tile_time = 2.0 * d.qkv_tile_m * d.qkv_tile_n * d.H;  // flops
  qkv.block_count = d.qkv_ctas;
  return qkv;
}
inline StageSpec attention_out_stage(const AttentionBlockDesc& d) {
  const int HD = d.NH * kAttnHeadDim, M = d.B * d.S_new;
  StageSpec out;
  out.name = "out";
  out.grid = Grid{ceil_div(uint32_t(d.H), uint32_t(d.out_tile_n)), ceil_div(uint32_t(M), uint32_t(d.out_tile_m)), 1};
  out.policy = NoSync();  // nobody waits on the block's output
  out.order.kind = d.out_order;
  out.tile_time = 2.0 * d.out_tile_m * d.out_tile_n * HD;
  out.block_count = d.out_ctas;
  return out;
}
// The output GEMM's tile reads its rows of every head from the stage before it (tiles q_rows x 128).
inline void add_out_dep(Plan& plan, int out, int attn, const AttentionBlockDesc& d) {
  const uint32_t otm = uint32_t(d.out_tile_m), M = uint32_t(d.B * d.S_new), HD = uint32_t(d.NH * kAttnHeadDim);
  const uint32_t qr = uint32_t(d.q_rows);
  plan.add_dep(out, attn, [otm, M, HD, qr](Tile c, std::vector<Tile>& v) {
    const uint32_t r0 = c.y * otm, r1 = std::min<uint32_t>(r0 + otm, M) - 1;
    rect_tiles(qr, uint32_t(kAttnHeadDim), r0, r1, 0, HD - 1, v);
  });
}

}  // namespace detail

Plan make_unfused_attention_plan(const std::string& name, const AttentionBlockDesc& d);

inline Plan make_attention_block_plan(const std::string& name, const AttentionBlockDesc& d) {
  if (!d.fused) return make_unfused_attention_plan(name, d);
  const int D = kAttnHeadDim, HD = d.NH * D;
  BRAID_REQUIRE(d.B > 0 && d.S_new > 0 && d.NH > 0 && d.H > 0 && d.S_cached >= 0,
                "attention block '" + name + "': B, S_new, NH, H must be positive, S_cached >= 0");
  BRAID_REQUIRE(d.q_rows > 0 && d.S_new % d.q_rows == 0,
                "attention block '" + name + "': S_new (" + std::to_string(d.S_new) + ") must be a multiple of q_rows (" +
                    std::to_string(d.q_rows) + ")");
  Plan plan;
  plan.name = name;
  const StageSpec qkv = detail::attention_qkv_stage(d);
  StageSpec attn;
  attn.name = "attention";
  const int q_blocks = d.S_new / d.q_rows;
  attn.grid = Grid{uint32_t(d.NH), uint32_t(d.B * q_blocks), 1};
  attn.policy = d.attn_policy;
  attn.tile_time = 4.0 * d.q_rows * D * (d.S_cached + (d.causal ? d.S_new / 2.0 : d.S_new));
  attn.block_count = d.attn_ctas;
  const StageSpec out = detail::attention_out_stage(d);
  plan.add_stage(qkv);
  plan.add_stage(attn);
  plan.add_stage(out);

  const uint32_t tm = uint32_t(d.qkv_tile_m), tn = uint32_t(d.qkv_tile_n);
  plan.add_dep(1, 0, [d, q_blocks, tm, tn, D, HD](Tile c, std::vector<Tile>& v) {
    const uint32_t h = c.x, b = c.y / uint32_t(q_blocks), q0 = (c.y % uint32_t(q_blocks)) * uint32_t(d.q_rows);
    const uint32_t row0 = b * uint32_t(d.S_new) + q0;
    rect_tiles(tm, tn, row0, row0 + uint32_t(d.q_rows) - 1, h * D, h * D + D - 1, v);  // Q
    // New keys seen by the tile (causal: up to its last query), K then V.
    const uint32_t last = d.causal ? q0 + uint32_t(d.q_rows) - 1 : uint32_t(d.S_new) - 1;
    const uint32_t r0 = b * uint32_t(d.S_new), r1 = r0 + last;
    rect_tiles(tm, tn, r0, r1, uint32_t(HD) + h * D, uint32_t(HD) + h * D + D - 1, v);
    rect_tiles(tm, tn, r0, r1, 2u * HD + h * D, 2u * HD + h * D + D - 1, v);
  });
  detail::add_out_dep(plan, 2, 1, d);
  plan.validate();
  return plan;
}

// The unfused chain: 0 qkv, 1 scores (P tiles: key tile x, query block y, head z), 2 softmax (same
// tiles), 3 values (T tiles: head x, query block y), 4 out. Mirrors unfused_kernels.cuh's waits.
inline Plan make_unfused_attention_plan(const std::string& name, const AttentionBlockDesc& d) {
  const int D = kAttnHeadDim, HD = d.NH * D, KB = 64;
  BRAID_REQUIRE(d.B > 0 && d.S_new > 0 && d.NH > 0 && d.H > 0 && d.S_cached >= 0,
                "attention chain '" + name + "': B, S_new, NH, H must be positive, S_cached >= 0");
  BRAID_REQUIRE(d.q_rows > 0 && d.S_new % d.q_rows == 0,
                "attention chain '" + name + "': S_new must be a multiple of q_rows");
  const int q_blocks = d.S_new / d.q_rows, n_keys = d.S_cached + d.S_new;
  const uint32_t key_tiles = ceil_div(uint32_t(n_keys), uint32_t(KB));
  Plan plan;
  plan.name = name;
  const StageSpec qkv = detail::attention_qkv_stage(d);
  StageSpec sc;
  sc.name = "scores";
  sc.grid = Grid{key_tiles, uint32_t(d.B * q_blocks), uint32_t(d.NH)};
  sc.policy = d.attn_policy;
  sc.tile_time = 2.0 * d.q_rows * KB * D;
  StageSpec sm = sc;
  sm.name = "softmax";
  sm.tile_time = 8.0 * d.q_rows * KB;
  sm.block_count = d.softmax_ctas;
  StageSpec vals;
  vals.name = "values";
  vals.grid = Grid{uint32_t(d.NH), uint32_t(d.B * q_blocks), 1};
  vals.policy = d.attn_policy;
  vals.tile_time = 2.0 * d.q_rows * D * (d.S_cached + (d.causal ? d.S_new / 2.0 : d.S_new));
  const StageSpec out = detail::attention_out_stage(d);
  for (const StageSpec& st : {qkv, sc, sm, vals, out}) plan.add_stage(st);

  const uint32_t tm = uint32_t(d.qkv_tile_m), tn = uint32_t(d.qkv_tile_n), qr = uint32_t(d.q_rows), S = uint32_t(d.S_new),
                 Sc = uint32_t(d.S_cached);
  auto block_of = [q_blocks, qr](uint32_t y) {  // (batch, first query, last visible key + 1 is computed by callers)
    return std::pair<uint32_t, uint32_t>{y / uint32_t(q_blocks), (y % uint32_t(q_blocks)) * qr};
  };
  auto visible_end = [d, qr, Sc, S](uint32_t q0) { return d.causal ? Sc + q0 + qr : Sc + S; };
  // New keys [lo, hi] (key positions) of batch b as QKV rows, column block `col0`.
  auto new_key_rows = [tm, tn, S, Sc](uint32_t b, uint32_t lo, uint32_t hi, uint32_t col0, std::vector<Tile>& v) {
    lo = std::max(lo, Sc);
    if (lo > hi) return;
    rect_tiles(tm, tn, b * S + lo - Sc, b * S + hi - Sc, col0, col0 + kAttnHeadDim - 1, v);
  };
  plan.add_dep(1, 0, [=](Tile c, std::vector<Tile>& v) {  // P tile: its Q rows, its keys' K rows
    const auto [b, q0] = block_of(c.y);
    const uint32_t kb = c.x * KB, vis = std::min(visible_end(q0), uint32_t(n_keys));
    if (kb >= vis) return;  // wholly masked: computes nothing, waits for nothing
    rect_tiles(tm, tn, b * S + q0, b * S + q0 + qr - 1, c.z * D, c.z * D + D - 1, v);
    new_key_rows(b, kb, std::min(kb + KB, vis) - 1, uint32_t(HD) + c.z * D, v);
  });
  plan.add_dep(2, 1, [=](Tile c, std::vector<Tile>& v) {  // R tile: every visible P tile of its rows
    const auto [b, q0] = block_of(c.y);
    (void)b;
    const uint32_t vis = std::min(visible_end(q0), uint32_t(n_keys));
    for (uint32_t x = 0; x * KB < vis; ++x) v.push_back(Tile{x, c.y, c.z});
  });
  plan.add_dep(3, 2, [=](Tile c, std::vector<Tile>& v) {  // T tile: the visible R tiles of its rows
    const auto [b, q0] = block_of(c.y);
    (void)b;
    const uint32_t vis = std::min(visible_end(q0), uint32_t(n_keys));
    for (uint32_t x = 0; x * KB < vis; ++x) v.push_back(Tile{x, c.y, c.x});
  });
  plan.add_dep(3, 0, [=](Tile c, std::vector<Tile>& v) {  // ... the V rows of its new keys (+ own K, V: cache)
    const auto [b, q0] = block_of(c.y);
    const uint32_t vis = std::min(visible_end(q0), uint32_t(n_keys));
    new_key_rows(b, 0, vis - 1, 2u * HD + c.x * D, v);
    if (d.update_cache) {
      rect_tiles(tm, tn, b * S + q0, b * S + q0 + qr - 1, uint32_t(HD) + c.x * D, uint32_t(HD) + c.x * D + D - 1, v);
      rect_tiles(tm, tn, b * S + q0, b * S + q0 + qr - 1, 2u * HD + c.x * D, 2u * HD + c.x * D + D - 1, v);
    }
  });
  detail::add_out_dep(plan, 4, 3, d);
  plan.validate();
  return plan;
}

}  // namespace braid::workloads
