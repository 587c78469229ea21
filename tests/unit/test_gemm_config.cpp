// GemmConfig names round-trip through parse_gemm_config (the autotuner cache and braid-gemm read
// them back), and malformed names are refused with a reason.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "braid/kernels/hopper/gemm_config.hpp"
#include "braid/workloads/dynamic_dispatch.hpp"

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
  GemmConfig capped{128, 1, 0, OrderKind::ColumnMajor};  // at most 4 k-tiles of loads in flight
  capped.tile_m = 64;
  capped.store = EpilogueStore::Staged;
  capped.inflight = 4;
  EXPECT_EQ(capped.name(), "64x128-staged-f4");
  configs.push_back(capped);
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
  GemmConfig tr{192, 1, 0, OrderKind::RowMajor};  // transposed: D^T = B^T A^T, whole tiles
  tr.tile_m = 192;
  tr.transposed = true;
  EXPECT_EQ(tr.name(), "192x192-t-rowmajor");
  configs.push_back(tr);
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
    EXPECT_EQ(back.inflight, c.inflight) << c.name();
    EXPECT_EQ(back.staged(), c.staged()) << c.name();
    EXPECT_EQ(back.pingpong, c.pingpong) << c.name();
    EXPECT_EQ(back.group, c.group) << c.name();
    EXPECT_EQ(back.ctas_per_sm, c.ctas_per_sm) << c.name();
    EXPECT_EQ(back.transposed, c.transposed) << c.name();
    EXPECT_EQ(back.name(), c.name());
  }
}

TEST(GemmConfig, MalformedNamesAreRefused) {
  GemmConfig c;
  for (const char* bad : {"", "128", "x128", "128x", "128x128-", "128x128-sk", "128x128-fast", "128x128streamk", "128x128-sk3rs",
                          "128x128-c", "128x128-g", "128x128-gx", "64x64-o", "192x192-tt", "192x192-table", "64x128-f",
                          "64x128-f0"}) {
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

// SwiGLU weights packed per tile width: every gate column j lands at (j / h) * tile_n + j % h and its up
// column h further, for widths that divide F and widths that do not (then the last block is padded with
// zeros up to swiglu_packed_cols, and nothing else is zero unless the input was).
TEST(GemmConfig, SwigluPackingPadsToWholeBlocks) {
  EXPECT_EQ(swiglu_packed_cols(2752, 128), 2 * 2752);       // LLaMA-65B: 43 blocks of 64
  EXPECT_EQ(swiglu_packed_cols(2752, 192), 29 * 192);       // 28.7 blocks of 96 -> 29
  EXPECT_EQ(swiglu_packed_cols(2752, 256), 22 * 256);       // 21.5 blocks of 128 -> 22
  EXPECT_EQ(swiglu_packed_cols(6144, 192), 2 * 6144);
  EXPECT_EQ(swiglu_packed_cols(1, 64), 64);
  for (int F : {1, 31, 64, 96, 176, 200}) {
    const int K = 3;
    std::vector<uint16_t> w(size_t(K) * 2 * F);
    for (size_t i = 0; i < w.size(); ++i) w[i] = uint16_t(1 + i);  // distinct and non-zero
    for (int tile_n : {64, 96, 128, 192, 256}) {
      SCOPED_TRACE("F=" + std::to_string(F) + " tile_n=" + std::to_string(tile_n));
      const int P = swiglu_packed_cols(F, tile_n), h = tile_n / 2;
      ASSERT_EQ(P % tile_n, 0);
      ASSERT_GE(P, 2 * F);
      ASSERT_LT(P - 2 * F, tile_n);  // less than one block of padding
      std::vector<uint16_t> packed(size_t(K) * P, 0xbeef);
      pack_swiglu_columns(w.data(), packed.data(), K, F, tile_n);
      std::vector<int> filled(packed.size(), 0);
      for (int k = 0; k < K; ++k)
        for (int j = 0; j < F; ++j) {
          const size_t g = size_t(k) * P + size_t(j / h) * tile_n + j % h, u = g + h;
          EXPECT_EQ(packed[g], w[size_t(k) * 2 * F + j]);
          EXPECT_EQ(packed[u], w[size_t(k) * 2 * F + F + j]);
          filled[g] = filled[u] = 1;
        }
      for (size_t i = 0; i < packed.size(); ++i)
        if (!filled[i]) EXPECT_EQ(packed[i], 0) << "padding at " << i;
    }
  }
}

// The transposed instances -- the list GemmOp::can_implement and make_gemm_kernel both read: the tiles, and
// the cluster sizes their weights are multicast to -- nothing else, and their names parse back.
TEST(GemmConfig, TransposedInstanceList) {
  struct Instance {
    int m, n, mc;
  };
  for (auto [m, n, mc] : {Instance{192, 192, 1}, {128, 192, 1}, {128, 256, 1}, {256, 128, 1}, {128, 320, 1},
                          {128, 320, 4}, {64, 320, 1}, {64, 320, 4}}) {
    EXPECT_TRUE(is_transposed_tile(m, n, mc)) << m << "x" << n << " mc" << mc;
    GemmConfig c{n, 1, 0};
    c.tile_m = m;
    c.transposed = true;
    c.multicast = mc;
    GemmConfig back;
    ASSERT_EQ(parse_gemm_config(c.name(), back), "") << c.name();
    EXPECT_TRUE(back.transposed && back.tile_m == m && back.tile_n == n && back.multicast == mc) << c.name();
    GemmConfig own = c;  // a kernel function of its own per cluster size
    own.multicast = 1;
    if (mc > 1) EXPECT_NE(c.kernel_function(), own.kernel_function());
  }
  for (auto [m, n] : {std::pair{192, 320}, {256, 320}, {128, 128}, {128, 384}, {320, 64}, {64, 256}, {64, 192}})
    EXPECT_FALSE(is_transposed_tile(m, n)) << m << "x" << n;
  for (auto [m, n, mc] : {Instance{192, 192, 2}, {128, 192, 2}, {128, 320, 2}, {64, 320, 2}, {128, 192, 4},
                          {64, 192, 4}, {64, 320, 8}, {64, 320, 3}})
    EXPECT_FALSE(is_transposed_tile(m, n, mc)) << m << "x" << n << " mc" << mc;
  EXPECT_NE(std::string(transposed_tile_list()).find("64x320"), std::string::npos);
}

// A transposed kernel is a kernel function of its own, stores through its own staging (no store option
// named), and reads a SwiGLU weight packed in 16-column blocks whatever its tile width: 8 gate columns,
// then their 8 up columns (wgmma's fragment holds rows r and r + 8 of each 16-row group in one thread).
TEST(GemmConfig, TransposedKernelsPackSwigluInSixteenColumnBlocks) {
  GemmConfig row{192, 1, 0};
  row.tile_m = 192;
  GemmConfig tr = row;
  tr.transposed = true;
  EXPECT_NE(tr.kernel_function(), row.kernel_function());
  EXPECT_FALSE(tr.staged());
  EXPECT_TRUE(tr.default_store());
  EXPECT_EQ(row.swiglu_block(), 192);
  EXPECT_EQ(tr.swiglu_block(), kTransposedSwigluBlock);
  EXPECT_EQ(swiglu_packed_cols(2752, kTransposedSwigluBlock), 2 * 2752);  // LLaMA-65B: 344 blocks of 8
  EXPECT_EQ(swiglu_packed_cols(6146, kTransposedSwigluBlock), 2 * 6152);  // padded to whole blocks of 8
  const int K = 3, F = 20;
  std::vector<int> w(size_t(K) * 2 * F), packed(size_t(K) * swiglu_packed_cols(F, 16), -1);
  for (size_t i = 0; i < w.size(); ++i) w[i] = int(i) + 1;
  pack_swiglu_columns(w.data(), packed.data(), K, F, 16);
  const int P = swiglu_packed_cols(F, 16);
  ASSERT_EQ(P, 48);
  for (int k = 0; k < K; ++k)
    for (int p = 0; p < P; ++p) {
      const int j = (p / 16) * 8 + p % 8;  // the output column of packed column p
      const bool up = (p / 8) % 2 == 1;
      const int want = j < F ? w[size_t(k) * 2 * F + (up ? F : 0) + j] : 0;
      EXPECT_EQ(packed[size_t(k) * P + p], want) << "k=" << k << " p=" << p;
    }
}

// Which configurations a chain stage may run under dynamic dispatch (tickets), and the reason for the others:
// the one check the conv chain and the attention block's -dyn variants share (workloads/dynamic_dispatch.hpp).
TEST(GemmConfig, DynamicDispatchRefusals) {
  auto refusal = [](const std::string& name) {
    GemmConfig c;
    EXPECT_EQ(parse_gemm_config(name, c), "") << name;
    return workloads::dynamic_dispatch_refusal(c);
  };
  for (const char* ok : {"128x128", "128x128-staged", "128x256-sk3", "64x192-staged", "192x192-t", "128x128-rowmajor"})
    EXPECT_EQ(refusal(ok), "") << ok;
  const std::vector<std::pair<const char*, const char*>> refused = {{"128x128-streamk", "stream-K"},
                                                                    {"128x128-staged-pp", "pingpong"},
                                                                    {"128x128-mc2", "clusters"},
                                                                    {"128x192-g4-streamk", "stream-K"},
                                                                    {"128x128-sk3-rs", "reduce-scatter"},
                                                                    {"64x320-t-mc4", "clusters"}};
  for (const auto& [name, why] : refused) {
    const std::string r = refusal(name);
    EXPECT_NE(r.find(why), std::string::npos) << name << ": " << r;
    EXPECT_NE(r.find(name), std::string::npos) << "the reason names the configuration: " << r;
  }
}

// The in-flight caps the tuners try: 64 and 80 KB of weights per CTA, in k-tiles of the tile's width.
TEST(GemmConfig, InflightCandidatesHoldTheSameWeightBytes) {
  EXPECT_EQ(inflight_candidates(64), (std::vector<int>{8, 10}));
  EXPECT_EQ(inflight_candidates(128), (std::vector<int>{4, 5}));
  EXPECT_EQ(inflight_candidates(192), (std::vector<int>{2, 3}));
  EXPECT_EQ(inflight_candidates(1024), (std::vector<int>{2}));  // (never below the least cap the op accepts)
  for (int tn = 8; tn <= 2048; tn += 8)  // (PersistentOp::check_schedule refuses -f1: GPU test GemmMatchesReference)
    for (int f : inflight_candidates(tn)) EXPECT_GE(f, 2) << "tile_n " << tn;
}
