// The Conv2D chain plan (workloads/conv_chain_plan.hpp): grids, the window dependency each consumer
// tile declares (what the Hopper convolution's producer warp waits for), validation of policies, and
// clear errors on inconsistent layers.
#include <gtest/gtest.h>

#include <set>

#include "braid/workloads/conv_chain_plan.hpp"

using namespace braid;
using braid::workloads::ConvImage;
using braid::workloads::ConvStageDesc;
using braid::workloads::make_conv_chain_plan;

namespace {

std::set<std::pair<uint32_t, uint32_t>> deps_of(const Plan& p, Tile consumer) {
  std::vector<Tile> out;
  p.deps.at(0).reads(consumer, out);
  std::set<std::pair<uint32_t, uint32_t>> s;
  for (Tile t : out) s.insert({t.x, t.y});
  return s;
}

}  // namespace

TEST(ConvPlan, GridsFollowPixelsAndFilters) {
  const ConvImage img{4, 28, 28};  // 3136 pixels
  const Plan p = make_conv_chain_plan("pair", img, {{"conv1", 128, 256, 128, 64}, {"conv2", 256, 128, 64, 128}});
  ASSERT_EQ(p.stages.size(), 2u);
  EXPECT_EQ(p.stages[0].grid, (Grid{4, 25, 1}));  // 256 / 64 filter tiles, ceil(3136 / 128) pixel tiles
  EXPECT_EQ(p.stages[1].grid, (Grid{1, 49, 1}));
  EXPECT_EQ(p.producers_of(1), std::vector<int>{0});
  EXPECT_TRUE(p.producers_of(0).empty());
}

TEST(ConvPlan, ConsumerTileReadsItsWindowRowsAndEveryChannelTile) {
  // 56-wide image, 128-pixel tiles on both sides: consumer tile y covers pixels [128y, 128y+127]; its
  // window reaches W+1 = 57 pixels up and down.
  const ConvImage img{1, 56, 56};
  const Plan p = make_conv_chain_plan("pair", img, {{"conv1", 64, 128, 128, 64}, {"conv2", 128, 64, 128, 64}});
  // y = 0: pixels [0, 127] + 57 -> 184: producer row tiles 0 and 1, both filter tiles.
  EXPECT_EQ(deps_of(p, Tile{0, 0, 0}), (std::set<std::pair<uint32_t, uint32_t>>{{0, 0}, {1, 0}, {0, 1}, {1, 1}}));
  // y = 5: pixels [640, 767] - 57 = 583 (tile 4) .. + 57 = 824 (tile 6).
  std::set<std::pair<uint32_t, uint32_t>> want;
  for (uint32_t y = 4; y <= 6; ++y)
    for (uint32_t x = 0; x < 2; ++x) want.insert({x, y});
  EXPECT_EQ(deps_of(p, Tile{0, 5, 0}), want);
  // The last tile (pixels 3072..3135) reaches back to 3015 (tile 23), never past the image.
  const uint32_t last = p.stages[1].grid.y - 1;
  EXPECT_EQ(deps_of(p, Tile{0, last, 0}), (std::set<std::pair<uint32_t, uint32_t>>{{0, 23}, {1, 23}, {0, 24}, {1, 24}}));
}

TEST(ConvPlan, RowSyncProducerValidates) {
  const ConvImage img{2, 14, 14};
  ConvStageDesc a{"conv1", 64, 128, 64, 64, RowSync()}, b{"conv2", 128, 128, 128, 128};
  const Plan p = make_conv_chain_plan("pair", img, {a, b});
  EXPECT_EQ(p.stages[0].policy.kind, PolicyKind::RowSync);
  EXPECT_NO_THROW(p.validate());
}

TEST(ConvPlan, RejectsMismatchedChannelsAndBadFilters) {
  EXPECT_THROW(make_conv_chain_plan("bad", ConvImage{1, 7, 7}, {{"conv1", 64, 128}, {"conv2", 64, 64}}), PlanError);
  EXPECT_THROW(make_conv_chain_plan("bad", ConvImage{1, 7, 7, 3, 0}, {{"conv1", 64, 64}}), PlanError);
  EXPECT_THROW(make_conv_chain_plan("bad", ConvImage{0, 7, 7}, {{"conv1", 64, 64}}), PlanError);
}
