// C++ reference plans for the simulator's examples (the generator produces the same plans from
// text specs; these are what its output is checked against).
#pragma once
#include <cstdint>

#include "braid/plan/plan.hpp"

namespace braid::sim {

// The GPT-3 MLP of one model-parallel shard (the paper's main example):
//   GEMM1: X[T, H] . W1[H, F] -> [T, F]   (then GeLU, fused)       grid (F/tile_n, T/tile_m)
//   GEMM2: G[T, F] . W2[F, H] -> [T, H]                               grid (H/tile_n, T/tile_m)
// GPT-3: H = 12288, F = 4H/8 = 6144 (8-way model parallel). GEMM2 tile (x, y) reads GEMM1 tiles
// (k, y) for k = 0, 1, ... in K order (the reduction dimension). tile_time is proportional to the
// tile's FLOPs 2*tile_m*tile_n*K; the unit is chosen so that a 128x256 tile with K = 1 takes 1, i.e.
// a 128x256 tile of GEMM1 takes H units and one of GEMM2 takes F units. Occupancy 1, one block per tile.
struct MlpOptions {
  GroupPolicy gemm2_policy = TileSync();  // GEMM2's output policy (nothing consumes it here)
  TileOrder order = RowMajorOrder();      // tile order of both stages
  bool dynamic_order = false;
  uint32_t occupancy = 1;
  double flops_per_time_unit = 2.0 * 128 * 256;
};

Plan make_mlp_plan(uint32_t T, uint32_t H, uint32_t F, uint32_t tile_m, uint32_t tile_n, GroupPolicy gemm1_policy,
                   const MlpOptions& opt = {});

// Shorthand for GPT-3 (H = 12288, F = 6144).
inline Plan make_gpt3_mlp_plan(uint32_t tokens, uint32_t tile_m, uint32_t tile_n, GroupPolicy gemm1_policy,
                               const MlpOptions& opt = {}) {
  return make_mlp_plan(tokens, 12288, 6144, tile_m, tile_n, gemm1_policy, opt);
}

}  // namespace braid::sim
