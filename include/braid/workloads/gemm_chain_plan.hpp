// Plans for chains of GEMMs (host only): stage i computes C_i[M, N_i] = A_i[M, K_i] . B_i (+ R_i),
// where A_i and R_i are external or the output of an earlier stage. The dependency functions mirror
// exactly what the GEMM kernels wait on (wait_rect over the element rectangle they read), so the
// simulator and Plan::validate() check the same dependencies the device enforces.
#pragma once
#include <algorithm>
#include <string>
#include <utility>
#include <vector>

#include "braid/plan/plan.hpp"

namespace braid::workloads {

struct GemmStageDesc {
  std::string name;
  int M = 0, N = 0, K = 0;
  int a_from = -1;  // stage producing A (its output must be [M, K]); -1: external
  int r_from = -1;  // stage producing the residual R ([M, N]); -1: none / external
  GroupPolicy policy = TileSync();  // output policy
  OrderKind order = OrderKind::RowMajor;
  bool dynamic_order = false;
  std::vector<uint32_t> order_table;  // for OrderKind::Table: a permutation of the stage's tiles
  int tile_m = 0, tile_n = 0;  // this stage's output tile; 0: the chain's GemmTile
};

struct GemmTile {
  int m = 64, n = 64, k = 32;
};

// Producer tiles (tile_m x tile_n) intersecting rows [r0, r1] x cols [c0, c1], column-tile outermost
// (k order).
inline void rect_tiles(uint32_t tile_m, uint32_t tile_n, uint32_t r0, uint32_t r1, uint32_t c0, uint32_t c1,
                       std::vector<Tile>& out) {
  for (uint32_t x = c0 / tile_n; x <= c1 / tile_n; ++x)
    for (uint32_t y = r0 / tile_m; y <= r1 / tile_m; ++y) out.push_back(Tile{x, y, 0});
}

inline Plan make_gemm_chain_plan(const std::string& name, const std::vector<GemmStageDesc>& g, GemmTile tile,
                                 double flops_per_time_unit = 0) {
  Plan plan;
  plan.name = name;
  BRAID_REQUIRE(tile.m > 0 && tile.n > 0 && tile.k > 0, "GEMM tile sizes must be positive");
  for (size_t i = 0; i < g.size(); ++i) {
    const auto& d = g[i];
    const std::string n = "GEMM stage '" + d.name + "'";
    BRAID_REQUIRE(d.M > 0 && d.N > 0 && d.K > 0, n + ": M, N, K must be positive (got " + std::to_string(d.M) +
                                                     ", " + std::to_string(d.N) + ", " + std::to_string(d.K) + ")");
    // An operand taken from stage `from` must be an earlier stage's output of shape [rows, cols].
    auto check_operand = [&](const char* what, int from, int rows, int cols) {
      if (from < 0) return;
      BRAID_REQUIRE(from < int(i), n + ": " + what + " must come from an earlier stage");
      const auto& p = g[from];
      BRAID_REQUIRE(p.M == rows && p.N == cols, n + ": " + what + " is [" + std::to_string(rows) + "," +
                                                    std::to_string(cols) + "] but stage '" + p.name + "' produces [" +
                                                    std::to_string(p.M) + "," + std::to_string(p.N) + "]");
    };
    check_operand("A", d.a_from, d.M, d.K);
    check_operand("R", d.r_from, d.M, d.N);
    StageSpec s;
    s.name = d.name;
    const uint32_t stm = uint32_t(d.tile_m ? d.tile_m : tile.m), stn = uint32_t(d.tile_n ? d.tile_n : tile.n);
    s.grid = Grid{ceil_div(uint32_t(d.N), stn), ceil_div(uint32_t(d.M), stm), 1};
    s.policy = d.policy;
    s.order.kind = d.order;
    s.order_table = d.order_table;  // validated below (a permutation of the tiles)
    s.dynamic_order = d.dynamic_order;
    s.tile_time = flops_per_time_unit > 0 ? 2.0 * stm * stn * d.K / flops_per_time_unit : double(d.K);
    plan.add_stage(s);
  }
  auto tile_of = [&](const GemmStageDesc& d) {
    return std::pair<uint32_t, uint32_t>{uint32_t(d.tile_m ? d.tile_m : tile.m), uint32_t(d.tile_n ? d.tile_n : tile.n)};
  };
  for (size_t i = 0; i < g.size(); ++i) {
    const auto d = g[i];
    const uint32_t tm = tile_of(d).first, tn = tile_of(d).second;  // the consumer's tile: what it reads
    // Dependencies in input order: A's producer first, then R's (StageParams::inputs follows
    // Plan::producers_of, which lists producers in dependency order). Producer tiles are counted in
    // the producer's tile shape.
    if (d.a_from >= 0) {
      const uint32_t pm = tile_of(g[d.a_from]).first, pn = tile_of(g[d.a_from]).second;
      plan.add_dep(int(i), d.a_from, [d, tm, pm, pn](Tile c, std::vector<Tile>& out) {
        const uint32_t r0 = c.y * tm, r1 = std::min<uint32_t>(r0 + tm, uint32_t(d.M)) - 1;
        rect_tiles(pm, pn, r0, r1, 0, uint32_t(d.K) - 1, out);
      });
    }
    if (d.r_from >= 0 && d.r_from != d.a_from) {
      const uint32_t pm = tile_of(g[d.r_from]).first, pn = tile_of(g[d.r_from]).second;
      plan.add_dep(int(i), d.r_from, [d, tm, tn, pm, pn](Tile c, std::vector<Tile>& out) {
        const uint32_t r0 = c.y * tm, r1 = std::min<uint32_t>(r0 + tm, uint32_t(d.M)) - 1;
        const uint32_t c0 = c.x * tn, c1 = std::min<uint32_t>(c0 + tn, uint32_t(d.N)) - 1;
        rect_tiles(pm, pn, r0, r1, c0, c1, out);
      });
    }
  }
  plan.validate();
  return plan;
}

}  // namespace braid::workloads
