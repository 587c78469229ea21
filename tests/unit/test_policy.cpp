// Policy math: semaphore index and value for every named policy, checked by brute force against
// the definition "value(t) = number of tiles mapped to sem(t)".
#include <gtest/gtest.h>

#include <map>
#include <random>
#include <vector>

#include "braid/plan/plan.hpp"
#include "braid/policy/conv2d.hpp"
#include "braid/policy/policy.hpp"

using namespace braid;

static void expect_consistent(const GroupPolicy& p, Grid g) {
  std::map<uint32_t, uint32_t> count;
  const uint32_t n = p.num_sems(g);
  for (uint32_t i = 0; i < num_tiles(g); ++i) {
    Tile t = delinear(i, g);
    uint32_t s = p.sem(t, g);
    ASSERT_LT(s, n) << describe(p);
    ++count[s];
  }
  EXPECT_EQ(count.size(), n) << describe(p) << ": some semaphore has no tile";
  for (uint32_t i = 0; i < num_tiles(g); ++i) {
    Tile t = delinear(i, g);
    EXPECT_EQ(p.value(t, g), count[p.sem(t, g)]) << describe(p) << " tile " << t.x << "," << t.y;
  }
}

TEST(Policy, TileSyncIsOnePerTile) {
  Grid g{5, 3, 2};
  GroupPolicy p = TileSync();
  EXPECT_EQ(p.num_sems(g), 30u);
  for (uint32_t i = 0; i < 30; ++i) {
    EXPECT_EQ(p.sem(delinear(i, g), g), i);
    EXPECT_EQ(p.value(delinear(i, g), g), 1u);
  }
  EXPECT_TRUE(p.one_tile_per_sem(g));
}

TEST(Policy, RowSyncIsOnePerRow) {
  Grid g{7, 4, 1};
  GroupPolicy p = RowSync();
  EXPECT_EQ(p.num_sems(g), 4u);
  EXPECT_EQ(p.sem(Tile{6, 2, 0}, g), 2u);
  EXPECT_EQ(p.value(Tile{3, 3, 0}, g), 7u);
  EXPECT_FALSE(p.one_tile_per_sem(g));
  expect_consistent(p, g);
}

TEST(Policy, StridedSyncGroupsQKV) {
  // QKV output: 3 * 4 column tiles; Q tile x, K tile x+4, V tile x+8 share a semaphore.
  Grid g{12, 2, 1};
  GroupPolicy p = StridedSync(4, 3);
  EXPECT_EQ(p.num_sems(g), 8u);
  EXPECT_EQ(p.sem(Tile{1, 0, 0}, g), p.sem(Tile{5, 0, 0}, g));
  EXPECT_EQ(p.sem(Tile{1, 0, 0}, g), p.sem(Tile{9, 0, 0}, g));
  EXPECT_NE(p.sem(Tile{1, 0, 0}, g), p.sem(Tile{2, 0, 0}, g));
  EXPECT_NE(p.sem(Tile{1, 0, 0}, g), p.sem(Tile{1, 1, 0}, g));
  EXPECT_EQ(p.value(Tile{9, 1, 0}, g), 3u);
  expect_consistent(p, g);
}

TEST(Policy, RandomGroupingsAreConsistentIncludingShortEdgeGroups) {
  std::mt19937 rng(1234);  // 32-bit engine: results fit uint32_t
  for (int it = 0; it < 400; ++it) {
    auto r = [&] { return uint32_t(rng()); };
    Grid g{1 + r() % 13, 1 + r() % 9, 1 + r() % 3};
    GroupPolicy p = GenericPolicy(DimGroup{1 + r() % 4, r() % 5}, DimGroup{1 + r() % 3, r() % 4},
                                  DimGroup{1, r() % 3});
    expect_consistent(p, g);
  }
}

TEST(Policy, Conv2DWindowCoversNeighbourRows) {
  Conv2DWindow w;
  w.N = 2; w.H = 8; w.W = 8; w.C = 64; w.tile_m = 16; w.tile_n = 32;
  Grid pg = w.producer_grid();
  EXPECT_EQ(pg.x, 2u);
  EXPECT_EQ(pg.y, 8u);
  // Consumer row-tile 3 covers pixels 48..63 (image 0, rows 6-7); its 3x3 window reads rows 5..8,
  // i.e. pixels 39..72 -> producer row tiles 2..4.
  uint32_t lo, hi;
  w.row_tiles(3, 16, lo, hi);
  EXPECT_EQ(lo, 2u);
  EXPECT_EQ(hi, 4u);
  // Brute force: every pixel a consumer tile's outputs read lies in a producer tile it depends on.
  for (uint32_t y = 0; y < 8; ++y) {
    w.row_tiles(y, 16, lo, hi);
    for (uint32_t m = y * 16; m < y * 16 + 16; ++m) {
      uint32_t n = m / 64, h = (m / 8) % 8, x = m % 8;
      for (int dr = -1; dr <= 1; ++dr)
        for (int ds = -1; ds <= 1; ++ds) {
          int hh = int(h) + dr, xx = int(x) + ds;
          if (hh < 0 || hh >= 8 || xx < 0 || xx >= 8) continue;
          uint32_t src = (n * 8 + hh) * 8 + xx;
          EXPECT_GE(src / 16, lo);
          EXPECT_LE(src / 16, hi);
        }
    }
  }
}

// The kernels' form of a policy (IndexedPolicy: divisors precomputed, no grid-dependent division)
// gives the same semaphore, value and extents as the GroupPolicy on every tile of the grid.
TEST(Policy, IndexedPolicyMatchesGroupPolicyOnEveryTile) {
  std::mt19937 rng(4321);
  std::vector<GroupPolicy> policies = {NoSync(), TileSync(), RowSync(), StridedSync(4, 3), StridedSync(3, 0),
                                       StridedSync(96, 3)};
  for (int it = 0; it < 600; ++it) {
    auto r = [&] { return uint32_t(rng()); };
    policies.push_back(GenericPolicy(DimGroup{1 + r() % 5, r() % 6}, DimGroup{1 + r() % 4, r() % 5},
                                     DimGroup{1 + r() % 2, r() % 3}));
  }
  std::mt19937 grid_rng(99);
  for (const GroupPolicy& p : policies) {
    const IndexedPolicy ip(p);
    for (int k = 0; k < 4; ++k) {
      const Grid g{1 + uint32_t(grid_rng()) % 40, 1 + uint32_t(grid_rng()) % 17, 1 + uint32_t(grid_rng()) % 3};
      for (int d = 0; d < 3; ++d) {
        const uint32_t G = component(g, d);
        ASSERT_EQ(ip.extent(d, G), p.extent(d, G)) << describe(p) << " d=" << d << " G=" << G;
        ASSERT_EQ(ip.count_of(d, G), p.count_of(d, G)) << describe(p);
        for (uint32_t x = 0; x < G; ++x) {
          ASSERT_EQ(ip.coord(d, x), p.coord(d, x, G)) << describe(p) << " d=" << d << " x=" << x << " G=" << G;
          ASSERT_EQ(ip.members(d, x, G), p.members(d, x, G)) << describe(p) << " d=" << d << " x=" << x << " G=" << G;
        }
      }
      const IndexedGrid ig(g);
      for (uint32_t i = 0; i < num_tiles(g); ++i) {
        const Tile t = delinear(i, g);
        ASSERT_EQ(ip.sem(t, ig), p.sem(t, g)) << describe(p);
        ASSERT_EQ(ip.value(t, ig), p.value(t, g)) << describe(p);
      }
    }
  }
}

// ColumnWaiter's ready range: with stride-1 groups along x, a complete semaphore completes its whole
// group of n = count_of(0, G) column tiles -- IndexedPolicy::group_end_x against x / n * n + n.
TEST(Policy, GroupEndAlongXMatchesThePlainFormula) {
  std::vector<GroupPolicy> policies = {TileSync(), RowSync(), StridedSync(1, 3), GenericPolicy(DimGroup{1, 2}, DimGroup{})};
  for (uint32_t n = 1; n <= 9; ++n) policies.push_back(GenericPolicy(DimGroup{1, n}, DimGroup{1, 1 + n % 3}));
  for (const GroupPolicy& p : policies) {
    const IndexedPolicy ip(p);
    for (uint32_t G = 1; G <= 70; ++G) {
      const uint32_t n = p.count_of(0, G);
      for (uint32_t x = 0; x < G; ++x) ASSERT_EQ(ip.group_end_x(x, G), x / n * n + n) << describe(p) << " G=" << G << " x=" << x;
    }
  }
}
