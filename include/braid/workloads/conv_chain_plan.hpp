// Plans for chains of 3x3 (R x S) convolutions (host only): stage i convolves stage i-1's output
// (stage 0: an external input) over the same N x H x W image, stride 1, same padding. A consumer tile
// (tile_m pixels x tile_n filters) reads the producer tiles under its whole filter window, all
// channels: Conv2DWindow::for_each_producer_tile, the same rows the kernel's producer warp waits for
// (ConvTraits::a_rows), so the simulator and Plan::validate() check what the device enforces.
#pragma once
#include <string>
#include <vector>

#include "braid/plan/plan.hpp"
#include "braid/policy/conv2d.hpp"

namespace braid::workloads {

struct ConvImage {
  int N = 1, H = 1, W = 1;
  int R = 3, pad = 1;
  int pixels() const { return N * H * W; }
};

struct ConvStageDesc {
  std::string name;
  int C = 0, K = 0;                  // input channels, filters (= output channels)
  int tile_m = 128, tile_n = 64;     // output tile: pixels x filters
  GroupPolicy policy = Conv2DTileSync();  // how its tiles post (RowSync: one semaphore per pixel block)
  OrderKind order = OrderKind::RowMajor;  // filter blocks of a pixel block consecutively
};

inline Plan make_conv_chain_plan(const std::string& name, const ConvImage& img, const std::vector<ConvStageDesc>& s) {
  Plan plan;
  plan.name = name;
  BRAID_REQUIRE(img.N > 0 && img.H > 0 && img.W > 0, "conv chain '" + name + "': N, H, W must be positive");
  BRAID_REQUIRE(img.R >= 1 && img.R % 2 == 1 && 2 * img.pad == img.R - 1,
                "conv chain '" + name + "': filters must be odd with same padding");
  for (size_t i = 0; i < s.size(); ++i) {
    const auto& d = s[i];
    BRAID_REQUIRE(d.C > 0 && d.K > 0 && d.tile_m > 0 && d.tile_n > 0,
                  "conv stage '" + d.name + "': C, K and the tile must be positive");
    if (i > 0)
      BRAID_REQUIRE(d.C == s[i - 1].K, "conv stage '" + d.name + "' reads " + std::to_string(d.C) + " channels but '" +
                                           s[i - 1].name + "' produces " + std::to_string(s[i - 1].K));
    StageSpec st;
    st.name = d.name;
    st.grid = Grid{ceil_div(uint32_t(d.K), uint32_t(d.tile_n)), ceil_div(uint32_t(img.pixels()), uint32_t(d.tile_m)), 1};
    st.policy = d.policy;
    st.order.kind = d.order;
    st.tile_time = double(img.R) * img.R * d.C;  // k-steps per tile (simulator units)
    plan.add_stage(st);
  }
  for (size_t i = 1; i < s.size(); ++i) {
    const auto& p = s[i - 1];
    Conv2DWindow win;
    win.N = uint32_t(img.N);
    win.H = uint32_t(img.H);
    win.W = uint32_t(img.W);
    win.R = win.S = uint32_t(img.R);
    win.pad = uint32_t(img.pad);
    win.tile_m = uint32_t(p.tile_m);
    win.tile_n = uint32_t(p.tile_n);
    win.C = uint32_t(p.K);
    const uint32_t cons_tm = uint32_t(s[i].tile_m);
    plan.add_dep(int(i), int(i - 1), [win, cons_tm](Tile c, std::vector<Tile>& out) {
      win.for_each_producer_tile(c, cons_tm, [&](Tile t) { out.push_back(t); });
    });
  }
  plan.validate();
  return plan;
}

}  // namespace braid::workloads
