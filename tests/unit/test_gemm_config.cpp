// GemmConfig names round-trip through parse_gemm_config (the autotuner cache and braid-gemm read
// them back), and malformed names are refused with a reason.
#include <gtest/gtest.h>

#include "braid/kernels/hopper/gemm_config.hpp"

using namespace braid;
using namespace braid::hopper;

TEST(GemmConfig, NamesRoundTrip) {
  std::vector<GemmConfig> configs = {{128, 1, 0, OrderKind::ColumnMajor}, {256, 3, 0, OrderKind::ColumnMajor},
                                     {128, 1, 66, OrderKind::RowMajor}, {256, 12, 7, OrderKind::RowMajor}};
  GemmConfig sk{256, 1, 0, OrderKind::RowMajor};
  sk.stream_k = true;
  configs.push_back(sk);
  GemmConfig short_tile{128, 2, 0, OrderKind::ColumnMajor};
  short_tile.tile_m = 64;
  configs.push_back(short_tile);
  GemmConfig direct{128, 1, 0, OrderKind::RowMajor};  // a 128x128 tile stages by default
  direct.store = EpilogueStore::Direct;
  configs.push_back(direct);
  GemmConfig staged{128, 2, 0, OrderKind::ColumnMajor};  // other tiles store directly by default
  staged.tile_n = 64;
  staged.store = EpilogueStore::Staged;
  configs.push_back(staged);
  GemmConfig rs{128, 3, 0, OrderKind::RowMajor};  // reduce-scatter split-K
  rs.reduce_scatter = true;
  configs.push_back(rs);
  GemmConfig dsm{128, 2, 0, OrderKind::RowMajor};  // split 2 exchanged in clusters
  dsm.dsmem_reduce = true;
  configs.push_back(dsm);
  GemmConfig pp{128, 1, 0, OrderKind::RowMajor};  // pingpong warpgroups
  pp.pingpong = true;
  configs.push_back(pp);
  GemmConfig grouped{192, 1, 0, OrderKind::ColumnMajor};  // stream-K over groups of 4 CTAs in step
  grouped.stream_k = true;
  grouped.group = 4;
  EXPECT_EQ(grouped.name(), "128x192-g4-streamk");
  configs.push_back(grouped);
  GemmConfig fit{192, 2, 0, OrderKind::ColumnMajor};  // three consumer warpgroups, 192-wide: direct stores
  fit.tile_m = 192;
  EXPECT_FALSE(fit.staged());
  EXPECT_EQ(fit.name(), "192x192-sk2");
  configs.push_back(fit);
  GemmConfig two{64, 3, 0, OrderKind::RowMajor};  // two CTAs per SM (convolutions)
  two.tile_m = 64;
  two.ctas_per_sm = 2;
  EXPECT_EQ(two.name(), "64x64-sk3-o2-rowmajor");
  configs.push_back(two);
  for (const GemmConfig& c : configs) {
    GemmConfig back;
    ASSERT_EQ(parse_gemm_config(c.name(), back), "") << c.name();
    EXPECT_EQ(back.tile_n, c.tile_n) << c.name();
    EXPECT_EQ(back.splits, c.splits) << c.name();
    EXPECT_EQ(back.ctas, c.ctas) << c.name();
    EXPECT_EQ(back.order, c.order) << c.name();
    EXPECT_EQ(back.stream_k, c.stream_k) << c.name();
    EXPECT_EQ(back.reduce_scatter, c.reduce_scatter) << c.name();
    EXPECT_EQ(back.dsmem_reduce, c.dsmem_reduce) << c.name();
    EXPECT_EQ(back.segments_wait_for_peers(), c.reduce_scatter || c.dsmem_reduce) << c.name();
    EXPECT_EQ(back.tile_m, c.tile_m) << c.name();
    EXPECT_EQ(back.staged(), c.staged()) << c.name();
    EXPECT_EQ(back.pingpong, c.pingpong) << c.name();
    EXPECT_EQ(back.group, c.group) << c.name();
    EXPECT_EQ(back.ctas_per_sm, c.ctas_per_sm) << c.name();
    EXPECT_EQ(back.name(), c.name());
  }
}

TEST(GemmConfig, MalformedNamesAreRefused) {
  GemmConfig c;
  for (const char* bad : {"", "128", "x128", "128x", "128x128-", "128x128-sk", "128x128-fast", "128x128streamk", "128x128-sk3rs",
                          "128x128-c", "128x128-g", "128x128-gx", "64x64-o"}) {
    const std::string why = parse_gemm_config(bad, c);
    EXPECT_FALSE(why.empty()) << "'" << bad << "' was accepted";
  }
}

TEST(GemmConfig, EpilogueStoreNamedOnlyWhereItDiffersFromTheTileDefault) {
  GemmConfig c;  // 128x128: staged by default
  EXPECT_TRUE(c.staged());
  EXPECT_EQ(c.name(), "128x128");
  c.store = EpilogueStore::Staged;
  EXPECT_EQ(c.name(), "128x128");  // the same kernel as the default
  c.store = EpilogueStore::Direct;
  EXPECT_FALSE(c.staged());
  EXPECT_EQ(c.name(), "128x128-direct");
  c.tile_n = 256;
  EXPECT_EQ(c.name(), "128x256");  // 128x256 stores directly by default
  c.store = EpilogueStore::Staged;
  EXPECT_EQ(c.name(), "128x256-staged");
  GemmConfig back;
  ASSERT_EQ(parse_gemm_config("64x64-staged-sk2-rowmajor", back), "");
  EXPECT_TRUE(back.staged());
  EXPECT_EQ(back.splits, 2);
  EXPECT_EQ(back.order, OrderKind::RowMajor);
}

// Pingpong tiles store directly by default: "-pp" alone names them; "-staged-pp" stages them (per
// warpgroup, 64-column panels stored by TMA) and is a kernel function of its own.
TEST(GemmConfig, PingpongStoresDirectlyUnlessStaged) {
  GemmConfig pp;
  pp.pingpong = true;
  EXPECT_FALSE(pp.staged());
  EXPECT_EQ(pp.name(), "128x128-pp");
  pp.store = EpilogueStore::Direct;
  EXPECT_EQ(pp.name(), "128x128-pp");
  const std::string direct_function = pp.kernel_function();
  pp.store = EpilogueStore::Staged;
  EXPECT_TRUE(pp.staged());
  EXPECT_EQ(pp.name(), "128x128-staged-pp");
  EXPECT_NE(pp.kernel_function(), direct_function);
  GemmConfig back;
  ASSERT_EQ(parse_gemm_config("128x128-staged-pp", back), "");
  EXPECT_TRUE(back.pingpong);
  EXPECT_EQ(back.store, EpilogueStore::Staged);
  ASSERT_EQ(parse_gemm_config("128x128-pp-rowmajor", back), "");
  EXPECT_TRUE(back.pingpong);
  EXPECT_EQ(back.order, OrderKind::RowMajor);
}
