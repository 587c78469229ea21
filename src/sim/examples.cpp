#include "sim/examples.hpp"

#include <string>
#include <vector>

namespace braid::sim {

Plan make_mlp_plan(uint32_t T, uint32_t H, uint32_t F, uint32_t tile_m, uint32_t tile_n, GroupPolicy gemm1_policy,
                   const MlpOptions& opt) {
  BRAID_REQUIRE(T > 0 && H > 0 && F > 0, "MLP: T, H and F must be positive");
  BRAID_REQUIRE(tile_m > 0 && tile_n > 0, "MLP: tile sizes must be positive");
  BRAID_REQUIRE(opt.flops_per_time_unit > 0, "MLP: flops_per_time_unit must be positive");
  BRAID_REQUIRE(opt.order.kind != OrderKind::Table, "MLP: table orders are not supported by this builder");
  Plan plan;
  plan.name = "mlp T=" + std::to_string(T) + " H=" + std::to_string(H) + " F=" + std::to_string(F) + " tile " +
              std::to_string(tile_m) + "x" + std::to_string(tile_n);
  const double tile_flops = 2.0 * tile_m * tile_n;
  StageSpec g1;
  g1.name = "gemm1";
  g1.grid = Grid{ceil_div(F, tile_n), ceil_div(T, tile_m), 1};
  g1.policy = gemm1_policy;
  g1.order = opt.order;
  g1.dynamic_order = opt.dynamic_order;
  g1.occupancy = opt.occupancy;
  g1.tile_time = tile_flops * H / opt.flops_per_time_unit;  // K = H
  StageSpec g2 = g1;
  g2.name = "gemm2";
  g2.grid = Grid{ceil_div(H, tile_n), ceil_div(T, tile_m), 1};
  g2.policy = opt.gemm2_policy;
  g2.tile_time = tile_flops * F / opt.flops_per_time_unit;  // K = F
  const int p = plan.add_stage(g1);
  const int c = plan.add_stage(g2);
  const uint32_t kx = g1.grid.x;
  plan.add_dep(c, p, [kx](Tile t, std::vector<Tile>& out) {
    for (uint32_t k = 0; k < kx; ++k) out.push_back(Tile{k, t.y, 0});
  });
  plan.validate();
  return plan;
}

}  // namespace braid::sim
